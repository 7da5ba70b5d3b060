#include "sock_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/config.h"
#include "base/error.h"
#include "base/fl_types.h"
#include "base/sysfs_read.h"

struct sock_config sock_cfg;

static int load_family(int *family)
{
	static const char *const names[] = { "AF_INET", "AF_INET6", NULL };
	int choice;
	int rc = fl_env_choice("NCCL_SOCKET_FAMILY", names, -1, &choice);

	if (rc)
		return rc;
	*family = choice == 0 ? AF_INET : choice == 1 ? AF_INET6 : AF_UNSPEC;
	return FL_OK;
}

static const char *const ifspec_names[] = { "FABRICLAB_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME",
					    NULL };

const char *sock_ifspec_variable(void)
{
	const char *first = fl_env_first(ifspec_names);

	return first && first == getenv(ifspec_names[1]) ? ifspec_names[1] : ifspec_names[0];
}

static int load_ifspec(char *out, size_t len)
{
	const char *spec = fl_env_first(ifspec_names);

	out[0] = '\0';
	if (!spec)
		return FL_OK;
	if (strlen(spec) >= len)
		return fl_fail(FL_ERR_USAGE, "%s is longer than %zu characters",
			       sock_ifspec_variable(), len - 1);
	strcpy(out, spec);
	return FL_OK;
}

int sock_config_load(struct sock_config *cfg)
{
	long nstreams;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	rc = fl_env_long("FABRICLAB_SOCKET_NSTREAMS", SOCK_DEFAULT_NSTREAMS, 0, SOCK_MAX_STREAMS,
			 &nstreams);
	if (!rc)
		rc = fl_env_bytes("FABRICLAB_SOCKET_INLINE", SOCK_DEFAULT_INLINE, 0,
				  SOCK_MAX_INLINE, &cfg->inline_max);
	if (!rc)
		rc = fl_env_bytes("FABRICLAB_SOCKET_MIN_CHUNK", SOCK_DEFAULT_MIN_CHUNK,
				  SOCK_MIN_CHUNK_FLOOR, SOCK_MIN_CHUNK_CEIL, &cfg->min_chunk);
	if (!rc)
		rc = fl_env_long("FABRICLAB_SOCKET_HELLO_TIMEOUT_MS",
				 SOCK_DEFAULT_HELLO_TIMEOUT_MS, 1, 3600 * 1000L,
				 &cfg->hello_timeout_ms);
	if (!rc)
		rc = fl_env_bytes("FABRICLAB_SOCKET_BUF", 0, 0, 1UL << 30, &cfg->sock_buf);
	if (!rc)
		rc = load_family(&cfg->family);
	if (!rc)
		rc = load_ifspec(cfg->ifspec, sizeof(cfg->ifspec));
	if (!rc)
		rc = fl_sysfs_root_copy(cfg->sysfs_root, sizeof(cfg->sysfs_root));
	cfg->nstreams = (int)nstreams;
	return rc;
}
