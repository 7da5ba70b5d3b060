/* Loading libibverbs into the function table, once per process. */
#include "verbs_load.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fl_types.h"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static struct fl_verbs table;
static const struct fl_verbs *loaded;
static char load_error[FL_ERROR_LEN];

struct symbol {
	const char *name;
	void **slot;
	int optional;
};

#define REQUIRED(field, sym) { sym, (void **)&table.field, 0 }
#define OPTIONAL(field, sym) { sym, (void **)&table.field, 1 }

static const struct symbol symbols[] = {
	REQUIRED(get_device_list, "ibv_get_device_list"),
	REQUIRED(free_device_list, "ibv_free_device_list"),
	REQUIRED(get_device_name, "ibv_get_device_name"),
	REQUIRED(open_device, "ibv_open_device"),
	REQUIRED(close_device, "ibv_close_device"),
	REQUIRED(query_device, "ibv_query_device"),
	REQUIRED(query_port_compat, "ibv_query_port"),
	REQUIRED(query_gid, "ibv_query_gid"),
	OPTIONAL(query_gid_ex, "_ibv_query_gid_ex"),
	REQUIRED(alloc_pd, "ibv_alloc_pd"),
	REQUIRED(dealloc_pd, "ibv_dealloc_pd"),
	REQUIRED(reg_mr, "ibv_reg_mr"),
	OPTIONAL(reg_mr_iova2, "ibv_reg_mr_iova2"),
	OPTIONAL(reg_dmabuf_mr, "ibv_reg_dmabuf_mr"),
	REQUIRED(dereg_mr, "ibv_dereg_mr"),
	REQUIRED(create_cq, "ibv_create_cq"),
	REQUIRED(destroy_cq, "ibv_destroy_cq"),
	REQUIRED(create_qp, "ibv_create_qp"),
	REQUIRED(modify_qp, "ibv_modify_qp"),
	REQUIRED(destroy_qp, "ibv_destroy_qp"),
	REQUIRED(get_async_event, "ibv_get_async_event"),
	REQUIRED(ack_async_event, "ibv_ack_async_event"),
	REQUIRED(wc_status_str, "ibv_wc_status_str"),
	OPTIONAL(event_type_str, "ibv_event_type_str"),
};

static void remember_failure(void)
{
	strncpy(load_error, fl_error_text(), sizeof(load_error) - 1);
}

/* Versioned libraries export default versions; plain dlsym finds those. */
static int bind_symbols(void *lib, const char *path)
{
	for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		*symbols[i].slot = dlsym(lib, symbols[i].name);
		if (!*symbols[i].slot && !symbols[i].optional)
			return fl_fail(FL_ERR_SYSTEM, "%s has no %s", path, symbols[i].name);
	}
	return FL_OK;
}

static void load(void)
{
	const char *path = getenv("FABRICLAB_IBVERBS_LIB");
	void *lib;

	if (!path || !*path)
		path = FL_VERBS_DEFAULT_LIB;
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();

		fl_fail(FL_ERR_SYSTEM, "cannot load %s: %s", path, why ? why : "unknown reason");
		remember_failure();
		return;
	}
	if (bind_symbols(lib, path)) {
		remember_failure();
		dlclose(lib);
		return;
	}
	table.path = path;
	loaded = &table;
}

const struct fl_verbs *fl_verbs_get(void)
{
	pthread_once(&load_once, load);
	if (!loaded)
		fl_fail(FL_ERR_SYSTEM, "%s", load_error);
	return loaded;
}

int fl_verbs_query_port(const struct fl_verbs *v, struct ibv_context *ctx, uint8_t port,
			struct ibv_port_attr *attr)
{
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);

	memset(attr, 0, sizeof(*attr));
	if (vctx)
		return vctx->query_port(ctx, port, attr, sizeof(*attr));
	return v->query_port_compat(ctx, port, attr);
}
