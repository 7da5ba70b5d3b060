/* Sockets for the side channel, on the interface the socket transport would choose. */
#include "ib_side.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/log.h"
#include "transport/socket/sock_config.h"
#include "transport/socket/sock_listen.h"
#include "transport/socket/sock_sys.h"

static pthread_mutex_t side_lock = PTHREAD_MUTEX_INITIALIZER;
static int side_ready;
static struct sock_iface side_iface;
static uint64_t side_hello_timeout_ns;

int ib_side_init(void)
{
	struct sock_config cfg;
	int n = 0, rc = FL_OK;

	pthread_mutex_lock(&side_lock);
	if (!side_ready) {
		rc = sock_config_load(&cfg);
		if (!rc)
			rc = sock_iface_discover(&cfg, &side_iface, 1, &n);
		if (!rc && !n)
			rc = fl_fail(FL_ERR_SYSTEM, "ib: no network interface for the side channel "
				     "(check NCCL_SOCKET_IFNAME)");
		if (!rc) {
			char addr[SOCK_ADDR_STRLEN];

			side_ready = 1;
			side_hello_timeout_ns = (uint64_t)cfg.hello_timeout_ms * 1000000ULL;
			sock_addr_format((struct sockaddr *)&side_iface.addr, addr, sizeof(addr));
			FL_INFO("ib: connection setup over %s %s", side_iface.name, addr);
		}
	}
	pthread_mutex_unlock(&side_lock);
	return rc;
}

uint64_t ib_side_hello_timeout_ns(void)
{
	return side_hello_timeout_ns;
}

int ib_side_listen(int *fd, struct sockaddr_storage *addr, socklen_t *addrlen)
{
	int rc = ib_side_init();

	*fd = -1;
	if (rc)
		return rc;
	*fd = socket(side_iface.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return fl_fail(FL_ERR_SYSTEM, "socket: %s", strerror(errno));
	rc = sock_listen_bind(*fd, &side_iface, 0, addr, addrlen);
	if (rc) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}
