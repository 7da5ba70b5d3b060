/*
 * Loading a plugin as NCCL loads one (2.30.7 src/plugin/net.cc:97-106): the
 * library opened by its name (base/plugin_open.h: the name as given, then
 * libnccl-net-NAME.so), then the table of the highest version first
 * (ncclNetVersion[] = {12, ..., 6}, net.cc:40; 2.28.9 stops at 11; 2.25 and
 * older also take v5, which fastsocket exports). Only the name and init are
 * read before init: NCCL calls init, then devices (net.cc:173-181), its v6-v10
 * adapters copy the other slots after the plugin's init (2.28.9
 * src/plugin/net/net_v10.cc:81-101) and v11+ read them at each use, so a
 * plugin may fill its table inside init (IBext, src/p2p_plugin.c). What stays
 * NULL where NCCL would call it is abi/net_slots.h's to say.
 */
#include "host_net.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "abi/net_slots.h"
#include "base/error.h"
#include "base/plugin_open.h"

static int say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return FL_ERR_USAGE;
}

static const void *table_of(void *lib, int version)
{
	char symbol[32];

	snprintf(symbol, sizeof(symbol), "ncclNetPlugin_v%d", version);
	return dlsym(lib, symbol);
}

/* version: exactly that one; else (0) the highest of min..max, as NCCL's loop finds it. */
static int find_table(struct fl_host_net *net, int version, int min, int max, char *why,
		      size_t len)
{
	Dl_info info;

	if (version)
		net->table = table_of(net->lib, version);
	for (int v = max; !version && v >= min && !net->table; v--)
		if ((net->table = table_of(net->lib, v)))
			version = v;
	net->version = version;
	if (dladdr(net->table ? net->table : (const void *)net->lib, &info) && info.dli_fname)
		snprintf(net->path, sizeof(net->path), "%s", info.dli_fname);
	if (!net->table && net->version)
		return say(why, len, "has no ncclNetPlugin_v%d", net->version);
	if (!net->table)
		return say(why, len, "exports no ncclNetPlugin_v%d..v%d", min, max);
	return FL_OK;
}

int fl_host_load(const char *spec, int version, int min, int max, struct fl_host_net *net,
		 char *why, size_t why_len)
{
	const struct fl_abi_net_v6 *t;
	int rc;

	memset(net, 0, sizeof(*net));
	if (!spec || strlen(spec) >= sizeof(net->spec))
		return say(why, why_len, "plugin name longer than %zu bytes", sizeof(net->spec) - 1);
	if (version && (version < min || version > max))
		return say(why, why_len, "net ABI version %d is not one of %d..%d", version, min,
			   max);
	snprintf(net->spec, sizeof(net->spec), "%s", spec);
	dlerror();
	net->lib = fl_plugin_open(spec, "net", why, why_len);
	if (!net->lib)
		return FL_ERR_USAGE;
	net->opened = 1;
	rc = find_table(net, version, min, max, why, why_len);
	t = net->table; /* name and init sit at the same place in every version, v5 too */
	if (!rc) {
		net->name = t->name ? t->name : spec;
		if (!t->init)
			rc = say(why, why_len, "ncclNetPlugin_v%d has no init", net->version);
	}
	if (rc) { /* the spec and path stay, for the caller's message */
		dlclose(net->lib);
		net->lib = NULL;
		net->table = NULL;
	}
	return rc;
}

/* Slots at the same place in one group of versions: v5, or v6 and every later one. */
#define BIND_COMMON(net, t)                              \
	do {                                             \
		(net)->devices = (t)->devices;           \
		(net)->dereg_mr = (t)->dereg_mr;         \
		(net)->iflush = (t)->iflush;             \
		(net)->test = (t)->test;                 \
		(net)->close_send = (t)->close_send;     \
		(net)->close_recv = (t)->close_recv;     \
		(net)->close_listen = (t)->close_listen; \
	} while (0)

static void bind_slots(struct fl_host_net *net)
{
	const struct fl_abi_net_v6 *t = net->table;

	if (net->version == 5) {
		const struct fl_abi_net_v5 *t5 = net->table;

		BIND_COMMON(net, t5);
		return;
	}
	BIND_COMMON(net, t);
	net->reg_mr_dmabuf = t->reg_mr_dmabuf;
	if (net->version >= 7) { /* v7..v12 keep these two at the same place */
		net->get_device_mr = ((const struct fl_abi_net_v7 *)net->table)->get_device_mr;
		net->irecv_consumed = ((const struct fl_abi_net_v7 *)net->table)->irecv_consumed;
	}
	if (net->version >= 9)
		net->make_vdevice = (void (*)(void))((const struct fl_abi_net_v9 *)net->table)
					    ->make_vdevice;
	/*
	 * v10..v12 keep both at the same place with the same shape (2.30.7 src/include/plugin/net/
	 * net_v10.h:77-80, net_v11.h:106-109, net_v12.h:110-113; nccl_abi.h asserts the offsets).
	 */
	if (net->version >= 10) {
		net->isend10 = ((const struct fl_abi_net_v10 *)net->table)->isend;
		net->irecv10 = ((const struct fl_abi_net_v10 *)net->table)->irecv;
	}
	if (net->version >= 11) /* v11 and v12 keep it at the same place */
		net->set_net_attr = ((const struct fl_abi_net_v11 *)net->table)->set_net_attr;
}

const char *fl_host_bind(struct fl_host_net *net)
{
	const char *missing = fl_abi_missing_slot(net->table, net->version);

	if (!missing)
		bind_slots(net);
	return missing;
}

void fl_host_unload(struct fl_host_net *net)
{
	if (net->lib)
		dlclose(net->lib);
	memset(net, 0, sizeof(*net));
}
