/* flsock's one exported table, in the shape of ncclNetPlugin_v<FLSOCK_VERSION>. */

static int flsock_props(int dev, struct fl_props *p)
{
	int rc = tp->get_properties(dev, p);

	p->max_recvs = 1; /* flsock_test writes one size */
	return rc;
}

#define FILL_V6(out, p)                                  \
	do {                                             \
		(out)->name = (char *)(p)->name;         \
		(out)->pci_path = (char *)(p)->pci_path; \
		(out)->guid = (p)->guid;                 \
		(out)->ptr_support = (p)->ptr_support;   \
		(out)->speed = (p)->speed_mbps;          \
		(out)->port = (p)->port;                 \
		(out)->latency = (p)->latency_us;        \
		(out)->max_comms = (p)->max_comms;       \
		(out)->max_recvs = (p)->max_recvs;       \
	} while (0)

#if V == 5 || V == 6 /* v5 reports v6's properties */
typedef struct fl_abi_props_v6 props_t;
#elif V == 8
typedef struct fl_abi_props_v8 props_t;
#elif V == 10
typedef struct fl_abi_props_v9 props_t;
#elif V == 11
typedef struct fl_abi_props_v11 props_t;
#elif V == 12
typedef struct fl_abi_props_v12 props_t;
#else
#error "flsock is built for v5, v6, v8, v10, v11 or v12"
#endif

static int get_properties(int dev, props_t *out)
{
	struct fl_props p;
	int rc = flsock_props(dev, &p);

	memset(out, 0, sizeof(*out));
	if (rc)
		return rc;
	FILL_V6(out, &p);
#if V >= 8
	out->reg_is_global = 0;
#endif
#if V >= 10
	out->vprops.ndevs = 1;
	out->vprops.devs[0] = dev;
	out->max_p2p_bytes = p.max_p2p_bytes;
	out->max_coll_bytes = p.max_coll_bytes;
#endif
#if V >= 11
	out->max_multi_request_size = 1;
#endif
#if V >= 12
	out->rail_id = 3; /* distinctive, so a test can see it pass through */
	out->plane_id = -1;
#endif
	return FL_OK;
}

#if V >= 11
static char ctx_token; /* a ctx that is not NULL, so a test can tell it was passed */

static int init(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
		fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof)
{
	(void)prof;
	*ctx = &ctx_token;
#ifdef FLSOCK_RECORDS
	if (flsock_record.inits < FLSOCK_RECORD_INITS) {
		flsock_record.init_comm[flsock_record.inits] = comm_id;
		flsock_record.init_tc[flsock_record.inits] = config->traffic_class;
	}
	flsock_record.inits++;
#endif
#ifdef FLSOCK_READS_CONFIG
	fl_log_set_logger(logger); /* its WARN must reach the caller's log */
	if (read_config("init", comm_id, config))
		return FL_ERR_INTERNAL;
#else
	(void)comm_id;
	(void)config; /* NCCL always passes one */
#endif
	return flsock_init(logger);
}

static int finalize(void *ctx)
{
#ifdef FLSOCK_RECORDS
	flsock_record.finalizes++;
#endif
	return ctx == &ctx_token ? FL_OK : FL_ERR_INTERNAL;
}

#ifdef FLSOCK_RECORDS
static int set_net_attr(void *ctx, struct fl_abi_net_attr *attr)
{
	flsock_record.attr_calls++;
	flsock_record.attr_ctx_ok = ctx == &ctx_token;
	flsock_record.attr = *attr;
	return FL_OK;
}
#define ATTR_SLOT , .set_net_attr = set_net_attr
#else
#define ATTR_SLOT
#endif

static int listen_ctx(void *ctx, int dev, void *handle, void **listen_comm)
{
	return ctx == &ctx_token ? flsock_listen(dev, handle, listen_comm) : FL_ERR_INTERNAL;
}

static int connect_ctx(void *ctx, int dev, void *handle, void **send_comm,
		       struct fl_abi_dev_handle **dev_comm)
{
	(void)dev_comm;
	return ctx == &ctx_token ? flsock_connect(dev, handle, send_comm) : FL_ERR_INTERNAL;
}
#elif V == 10
static int init(fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof)
{
	(void)prof;
	return flsock_init(logger);
}

static int connect_cfg(int dev, struct fl_abi_comm_config *config, void *handle, void **send_comm,
		       struct fl_abi_dev_handle **dev_comm)
{
	(void)dev_comm;
	RECORD(flsock_record.connects++);
	RECORD(flsock_record.connect_config = config);
	RECORD(flsock_record.connect_tc = config ? config->traffic_class : -2);
#ifdef FLSOCK_READS_CONFIG
	if (read_config("connect", 1, config))
		return FL_ERR_INTERNAL;
#endif
	return config ? flsock_connect(dev, handle, send_comm) : FL_ERR_INTERNAL;
}
#else
static int init(fl_abi_logger_fn logger)
{
	return flsock_init(logger);
}
#endif

#if V >= 7 && V < 10
static int connect_dev(int dev, void *handle, void **send_comm, struct fl_abi_dev_handle **dc)
{
	(void)dc;
	return flsock_connect(dev, handle, send_comm);
}
#endif

#if V >= 7
static int accept_dev(void *listen_comm, void **recv_comm, struct fl_abi_dev_handle **dc)
{
	(void)dc;
	return flsock_accept(listen_comm, recv_comm);
}
#endif

#if V < 8
static int reg_mr_int(void *comm, void *data, int size, int type, void **mhandle)
{
	return size < 0 ? FL_ERR_INTERNAL : flsock_reg_mr(comm, data, (size_t)size, type, mhandle);
}
#endif

#if V < 9
static int isend_int(void *comm, void *data, int size, int tag, void *mh, void **request)
{
	if (size < 0)
		return FL_ERR_INTERNAL;
	return flsock_isend(comm, data, (size_t)size, tag, mh, request);
}

static int irecv_int(void *comm, int n, void **data, int *sizes, int *tags, void **mhs,
		     void **request)
{
	size_t wide[FL_MAX_RECVS];

	if (n < 1 || n > FL_MAX_RECVS)
		return FL_ERR_INTERNAL;
	for (int i = 0; i < n; i++)
		wide[i] = (size_t)sizes[i];
	return flsock_irecv(comm, n, data, wide, tags, mhs, request);
}
#else
static int isend_ph(void *comm, void *data, size_t size, int tag, void *mh, void *ph,
		    void **request)
{
	(void)ph;
	return flsock_isend(comm, data, size, tag, mh, request);
}

static int irecv_ph(void *comm, int n, void **data, size_t *sizes, int *tags, void **mhs,
		    void **phs, void **request)
{
	if (!phs)
		return FL_ERR_INTERNAL; /* NCCL v10+ always passes the profiler handles */
	return flsock_irecv(comm, n, data, sizes, tags, mhs, request);
}
#endif

static int iflush(void *comm, int n, void **data, int *sizes, void **mhs, void **request)
{
	return tp->iflush(comm, n, data, sizes, mhs, request);
}

#define COMMON_SLOTS                                   \
	.name = "flsock",                              \
	.devices = tp_devices,                         \
	.get_properties = get_properties,              \
	.dereg_mr = tp_dereg_mr,                       \
	.iflush = iflush,                              \
	.test = flsock_test,                           \
	.close_send = tp_close_send,                   \
	.close_recv = tp_close_recv,                   \
	.close_listen = tp_close_listen

static int tp_devices(int *ndev)
{
#ifdef FLSOCK_NO_DEVICES
	*ndev = 0;
	return FL_OK;
#else
	return tp->devices(ndev);
#endif
}

static int tp_dereg_mr(void *comm, void *mh)
{
	return tp->dereg_mr(comm, mh);
}

static int tp_close_send(void *c)
{
	gate_close_send(c);
	order_close(c);
	cts_close(c);
	return tp->close_send(c);
}

static int tp_close_recv(void *c)
{
	order_close(c);
	cts_close(c);
	return tp->close_recv(c);
}

static int tp_close_listen(void *c)
{
	gate_close_listen(c);
	cts_close(c);
	return tp->close_listen(c);
}

#if V == 5 /* no regMrDmaBuf slot at all: every later slot sits 8 bytes earlier */
#define NET_T struct fl_abi_net_v5
#define TABLE ncclNetPlugin_v5
#define SLOTS COMMON_SLOTS, .init = init, .listen = flsock_listen, .connect = flsock_connect, \
	.accept = flsock_accept, .reg_mr = reg_mr_int, .isend = isend_int, .irecv = irecv_int
#elif V == 6
#define NET_T struct fl_abi_net_v6
#define TABLE ncclNetPlugin_v6
#define SLOTS COMMON_SLOTS, .init = init, .listen = flsock_listen, .connect = flsock_connect, \
	.accept = flsock_accept, .reg_mr = reg_mr_int, .isend = isend_int, .irecv = irecv_int
#elif V == 8
#define NET_T struct fl_abi_net_v8
#define TABLE ncclNetPlugin_v8
#define SLOTS COMMON_SLOTS, .init = init, .listen = flsock_listen, .connect = connect_dev, \
	.accept = accept_dev, .reg_mr = flsock_reg_mr, .isend = isend_int, .irecv = irecv_int
#elif V == 10
#define NET_T struct fl_abi_net_v10
#define TABLE ncclNetPlugin_v10
#define SLOTS COMMON_SLOTS, .init = init, .listen = flsock_listen, .connect = connect_cfg, \
	.accept = accept_dev, .reg_mr = flsock_reg_mr, .isend = isend_ph, .irecv = irecv_ph
#elif V == 11
#define NET_T struct fl_abi_net_v11
#define TABLE ncclNetPlugin_v11
#define SLOTS COMMON_SLOTS, .init = init, .listen = listen_ctx, .connect = connect_ctx, \
	.accept = accept_dev, .reg_mr = flsock_reg_mr, .isend = isend_ph, .irecv = irecv_ph, \
	.finalize = finalize ATTR_SLOT
#else
#define NET_T struct fl_abi_net_v12
#define TABLE ncclNetPlugin_v12
#define SLOTS COMMON_SLOTS, .init = init, .listen = listen_ctx, .connect = connect_ctx, \
	.accept = accept_dev, .reg_mr = flsock_reg_mr, .isend = isend_ph, .irecv = irecv_ph, \
	.finalize = finalize ATTR_SLOT
#endif

#ifndef FLSOCK_FILLS_IN_INIT
EXPORT const NET_T TABLE = { SLOTS };
#else
/*
 * Only name and init are exported; init fills the other slots before it
 * initialises, as IBext does (Mellanox/nccl-rdma-sharp-plugins v2.7, src/p2p_plugin.c:
 * ncclNetPlugin_v* hold name and init; its init copies the IB or UCX table in).
 * NCCL reads the slots only once init returned (2.28.9 src/plugin/net.cc:176-182;
 * the v6-v10 adapters copy them after init, src/plugin/net/net_v10.cc:81-101).
 * FLSOCK_FILL_MISSES_TEST: init leaves test NULL, a broken plugin NCCL would crash on.
 */
static const NET_T full = { SLOTS };
EXPORT NET_T TABLE;

static void fill_slots(void)
{
	__typeof__(TABLE.init) self = TABLE.init;

	TABLE = full;
	TABLE.init = (void *)self;
#ifdef FLSOCK_FILL_MISSES_TEST
	TABLE.test = NULL;
#endif
}

#if V >= 11
static int init_fill(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
		     fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof)
{
	fill_slots();
	return init(ctx, comm_id, config, logger, prof);
}
#elif V == 10
static int init_fill(fl_abi_logger_fn logger, fl_abi_prof_callback_fn prof)
{
	fill_slots();
	return init(logger, prof);
}
#else
static int init_fill(fl_abi_logger_fn logger)
{
	fill_slots();
	return init(logger);
}
#endif
EXPORT NET_T TABLE = { .name = "flsock", .init = init_fill };
#endif
