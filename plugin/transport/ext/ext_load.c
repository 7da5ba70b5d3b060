/*
 * Finding and binding the inner plugin through the plugin host (host/host_net.h:
 * named as NCCL_NET_PLUGIN names one, the highest ncclNetPlugin_vN first, only
 * name and init read before init, the other slots once init returned). v5
 * (NCCL 2.12..2.25, fastsocket) is accepted as the oldest, although fabriclab
 * itself no longer exports it. What is ext's own here: the messages, which
 * name FABRICLAB_TRANSPORT and the file.
 */
#include "ext_inner.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"

#define EXT_ENV "FABRICLAB_TRANSPORT=ext:"

int ext_inner_load(const char *spec, struct fl_host_net *in)
{
	char why[EXT_PATH_LEN + 640];

	memset(in, 0, sizeof(*in));
	if (!spec || !*spec)
		return fl_fail(FL_ERR_USAGE, EXT_ENV ": no plugin named (a path, or NAME for "
			       "libnccl-net-NAME.so)");
	if (strlen(spec) >= sizeof(in->spec))
		return fl_fail(FL_ERR_USAGE, EXT_ENV "...: plugin name longer than %zu bytes",
			       sizeof(in->spec) - 1);
	if (!fl_host_load(spec, 0, FL_HOST_MIN_VERSION, FL_HOST_MAX_VERSION, in, why,
			  sizeof(why)))
		return FL_OK;
	if (!in->opened)
		return fl_fail(FL_ERR_USAGE, EXT_ENV "%s: %s", spec, why);
	if (!in->name) /* no table */
		return fl_fail(FL_ERR_USAGE, EXT_ENV "%s: %s %s (not an NCCL net plugin)", spec,
			       in->path[0] ? in->path : spec, why);
	return fl_fail(FL_ERR_USAGE, EXT_ENV "%s: ncclNetPlugin_v%d of %s in %s has no init",
		       spec, in->version, in->name ? in->name : spec, in->path);
}

int ext_inner_bind(struct fl_host_net *in)
{
	const char *missing = fl_host_bind(in);

	if (missing)
		return fl_fail(FL_ERR_USAGE, EXT_ENV "%s: ncclNetPlugin_v%d of %s in %s has no %s "
			       "after its init returned (NCCL would call it)", in->spec,
			       in->version, in->name, in->path, missing);
	return FL_OK;
}
