/*
 * Finding and binding the inner plugin. The name is looked up as NCCL looks up
 * NCCL_NET_PLUGIN (base/plugin_open.h, shared with the shim). The highest ncclNetPlugin_vN wins,
 * as in NCCL's loader; v5 (NCCL 2.12..2.25, fastsocket) is accepted as the
 * oldest, although fabriclab itself no longer exports it. Like NCCL, only the
 * name and init are read at load; the other slots once init returned
 * (ext_inner_bind), since some plugins fill them inside init.
 */
#include "ext_inner.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "abi/net_slots.h"
#include "base/plugin_open.h"

#define EXT_ENV "FABRICLAB_TRANSPORT=ext:"

static const int versions[] = { 12, 11, 10, 9, 8, 7, 6, 5 }; /* highest first */

static int open_lib(struct ext_inner *in)
{
	char why[EXT_PATH_LEN + 640];

	in->lib = fl_plugin_open(in->spec, "net", why, sizeof(why));
	return in->lib ? FL_OK : fl_fail(FL_ERR_USAGE, EXT_ENV "%s: %s", in->spec, why);
}

/* Slots at the same place in one group of versions: v5, or v6 and every later one. */
#define BIND_COMMON(in, t)                              \
	do {                                            \
		(in)->devices = (t)->devices;           \
		(in)->dereg_mr = (t)->dereg_mr;         \
		(in)->iflush = (t)->iflush;             \
		(in)->test = (t)->test;                 \
		(in)->close_send = (t)->close_send;     \
		(in)->close_recv = (t)->close_recv;     \
		(in)->close_listen = (t)->close_listen; \
	} while (0)

static void bind_slots(struct ext_inner *in)
{
	const struct fl_abi_net_v6 *t = in->table;
	const struct fl_abi_net_v9 *t9 = in->table;
	const struct fl_abi_net_v7 *t7 = in->table;

	if (in->version == 5) {
		const struct fl_abi_net_v5 *t5 = in->table;

		BIND_COMMON(in, t5);
		return;
	}
	BIND_COMMON(in, t);
	in->reg_mr_dmabuf = t->reg_mr_dmabuf;
	if (in->version >= 7) { /* v7..v12 keep these two at the same place */
		in->get_device_mr = t7->get_device_mr;
		in->irecv_consumed = t7->irecv_consumed;
	}
	if (in->version >= 9)
		in->make_vdevice = (void (*)(void))t9->make_vdevice;
	/*
	 * v10..v12 keep both at the same place with the same shape (2.30.7 src/include/plugin/net/
	 * net_v10.h:77-80, net_v11.h:106-109, net_v12.h:110-113; nccl_abi.h asserts the offsets).
	 */
	if (in->version >= 10) {
		in->isend10 = ((const struct fl_abi_net_v10 *)in->table)->isend;
		in->irecv10 = ((const struct fl_abi_net_v10 *)in->table)->irecv;
	}
	if (in->version >= 11) /* v11 and v12 keep it at the same place */
		in->set_net_attr = ((const struct fl_abi_net_v11 *)in->table)->set_net_attr;
}

/* The highest ncclNetPlugin_vN, its name and init: all NCCL reads before init (net_slots.h). */
static int find_table(struct ext_inner *in)
{
	const struct fl_abi_net_v6 *t;
	char symbol[32];
	Dl_info info;

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]) && !in->table; i++) {
		snprintf(symbol, sizeof(symbol), "ncclNetPlugin_v%d", versions[i]);
		in->table = dlsym(in->lib, symbol);
		in->version = versions[i];
	}
	if (dladdr(in->table ? in->table : (const void *)in->lib, &info) && info.dli_fname)
		snprintf(in->path, sizeof(in->path), "%s", info.dli_fname);
	if (!in->table)
		return fl_fail(FL_ERR_USAGE, EXT_ENV "%s: %s exports no ncclNetPlugin_v5..v12 "
			       "(not an NCCL net plugin)", in->spec, in->path[0] ? in->path :
			       in->spec);
	t = in->table; /* name and init sit at the same place in v5 too */
	in->name = t->name ? t->name : in->spec;
	if (!t->init)
		return fl_fail(FL_ERR_USAGE, EXT_ENV "%s: ncclNetPlugin_v%d of %s in %s has no "
			       "init", in->spec, in->version, in->name, in->path);
	return FL_OK;
}

int ext_inner_bind(struct ext_inner *in)
{
	const char *missing = fl_abi_missing_slot(in->table, in->version);

	if (missing)
		return fl_fail(FL_ERR_USAGE, EXT_ENV "%s: ncclNetPlugin_v%d of %s in %s has no %s "
			       "after its init returned (NCCL would call it)", in->spec,
			       in->version, in->name, in->path, missing);
	bind_slots(in);
	return FL_OK;
}

int ext_inner_load(const char *spec, struct ext_inner *in)
{
	int rc;

	memset(in, 0, sizeof(*in));
	if (!spec || !*spec)
		return fl_fail(FL_ERR_USAGE, EXT_ENV ": no plugin named (a path, or NAME for "
			       "libnccl-net-NAME.so)");
	if (strlen(spec) >= sizeof(in->spec))
		return fl_fail(FL_ERR_USAGE, EXT_ENV "...: plugin name longer than %zu bytes",
			       sizeof(in->spec) - 1);
	snprintf(in->spec, sizeof(in->spec), "%s", spec);
	dlerror();
	rc = open_lib(in);
	if (!rc)
		rc = find_table(in);
	if (rc && in->lib) {
		dlclose(in->lib);
		in->lib = NULL;
	}
	return rc;
}
