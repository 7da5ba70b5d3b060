/*
 * A test artifact, never installed: an NCCL net plugin exporting one
 * ncclNetPlugin_vN (MIMIC_VERSION 11 or 12) that moves bytes between comms of
 * one process (listen, connect and accept in the same address space) and
 * behaves like real plugins in the ways FABRICLAB_MIMIC (a comma-separated
 * list, read at init) names:
 *   early    aws-ofi-nccl's early completion: a receive whose *request NCCL
 *            preset to NCCL_NET_OPTIONAL_RECV_COMPLETION is done at its first
 *            test, before its data lands (the data still lands when the send
 *            comes), with 0 written as its size. aws-ofi-nccl v1.21.1
 *            src/nccl_ofi_rdma.cpp:3562-3564 takes the hint, :3427 then waits
 *            for one completion, its control message's, which adds 0 bytes
 *            (:494, :2841), and its test writes that size (:2234-2299, :2340-2352);
 *   events   NCCL IB's net-plugin profiler events: one started on the profiler
 *            handle of each isend and of each irecv buffer, through the callback
 *            init was given, and stopped when test says done (2.30.7
 *            src/transport/net_ib/p2p.cc:319 keeps a send's handle, :216-219
 *            and :489-490 start the events, built in by makefiles/common.mk:192);
 *   nosizes  fastsocket's test, which never writes sizes (net_fastsocket.cc:
 *            1432-1475 at b3ff1c6).
 * Its 8 host devices sit under one PCI switch, so NCCL may fuse them. makeVDevice
 * takes as many devices as its version's vProps hold (v11: 4, v12: 8) and
 * refuses more; each virtual device made is counted by devices() after the
 * physical ones and lists its devices in getProperties, as NCCL's IB plugin's.
 * mimic_record (exported) is what it saw.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mimic_record.h"
#include "plugin/abi/nccl_abi.h"

#ifndef MIMIC_VERSION
#error "MIMIC_VERSION (11 or 12) must be defined"
#endif
#define EXPORT __attribute__((visibility("default")))
#define HANDLE_MAGIC 0x4d494d4943000001ull
#define POOL 64
#define OPTIONAL_RECV ((void *)0x1) /* NCCL_NET_OPTIONAL_RECV_COMPLETION */
#define EV_START 0                  /* ncclProfilerNetEventStart; stop is 1 */
#define EV_STOP 1

#if MIMIC_VERSION == 12
#define VPROPS struct fl_abi_vprops_v12
#define PROPS struct fl_abi_props_v12
#define VDEV_WIDTH FL_ABI_VDEVS_V12
#elif MIMIC_VERSION == 11
#define VPROPS struct fl_abi_vprops_v9
#define PROPS struct fl_abi_props_v11
#define VDEV_WIDTH FL_ABI_VDEVS_V9
#else
#error "mimic is built for v11 or v12"
#endif

EXPORT struct mimic_record mimic_record;

struct mm_comm;

struct mm_req {
	struct mm_comm *comm;
	int used, send, landed, reported, early, bytes;
	void *data;
	size_t cap;
	void *event; /* the profiler event started on it (events) */
};

struct mm_comm {
	struct mm_comm *peer; /* the recv comm of a send comm and back */
	struct mm_req reqs[POOL];
	struct mm_req *fifo[POOL]; /* posted and not landed yet, oldest at head */
	unsigned head, tail;
	int mr_token;
};

struct mm_listen {
	struct mm_comm *pending; /* connected, not yet accepted */
};

static struct mm_listen listens[32];
static struct mm_comm comms[64];
static int nlistens, ncomms;
static int early, events, nosizes;
static fl_abi_prof_callback_fn prof;
static char ctx_token;

static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

static int mm_init(void **ctx, uint64_t comm_id, struct fl_abi_comm_config *config,
		   fl_abi_logger_fn log, fl_abi_prof_callback_fn prof_fn)
{
	const char *mimic = getenv("FABRICLAB_MIMIC");

	(void)comm_id, (void)config, (void)log;
	early = has_word(mimic, "early");
	events = has_word(mimic, "events");
	nosizes = has_word(mimic, "nosizes");
	prof = prof_fn;
	mimic_record.inits++;
	mimic_record.init_prof_null += prof_fn == NULL;
	*ctx = &ctx_token;
	return 0;
}

static int mm_finalize(void *ctx)
{
	return ctx == &ctx_token ? 0 : 3;
}

static int mm_devices(int *ndev)
{
	*ndev = MIMIC_NDEV + mimic_record.vdevs;
	return 0;
}

static int mm_props(int dev, PROPS *p)
{
	static char names[MIMIC_NDEV + MIMIC_MAX_VDEVS][8];
	int vdev = dev - MIMIC_NDEV;

	if (dev < 0 || vdev >= mimic_record.vdevs)
		return 4;
	memset(p, 0, sizeof(*p));
	names[dev][0] = vdev < 0 ? 'm' : 'v';
	names[dev][1] = (char)('0' + (vdev < 0 ? dev : vdev));
	p->name = names[dev];
	p->pci_path = "/sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0"; /* one switch */
	p->guid = 0x3131000 + (uint64_t)dev;
	p->ptr_support = 0x1; /* host */
	p->speed = 100000;
	p->max_comms = 1024;
	p->max_recvs = 1;
	p->max_p2p_bytes = 1ull << 30;
	p->max_coll_bytes = 1ull << 30;
	p->max_multi_request_size = 1;
	if (vdev < 0) {
		p->vprops.ndevs = 1;
		p->vprops.devs[0] = dev;
	} else {
		p->vprops.ndevs = mimic_record.vdev_ndevs[vdev];
		for (int i = 0; i < p->vprops.ndevs; i++)
			p->vprops.devs[i] = mimic_record.vdev_devs[vdev][i];
	}
#if MIMIC_VERSION == 12
	p->rail_id = -1;
	p->plane_id = -1;
#endif
	return 0;
}

static int mm_make_vdevice(int *d, VPROPS *props)
{
	int v = mimic_record.vdevs;

	int bad = props->ndevs < 1 || props->ndevs > VDEV_WIDTH || v == MIMIC_MAX_VDEVS;

	mimic_record.vdev_calls++;
	for (int i = 0; !bad && i < props->ndevs; i++)
		bad = props->devs[i] < 0 || props->devs[i] >= MIMIC_NDEV;
	if (bad) {
		mimic_record.vdev_refused++;
		return 4; /* ncclInvalidArgument */
	}
	mimic_record.vdev_ndevs[v] = props->ndevs;
	for (int i = 0; i < props->ndevs; i++)
		mimic_record.vdev_devs[v][i] = props->devs[i];
	mimic_record.vdevs++;
	*d = MIMIC_NDEV + v;
	return 0;
}

static int mm_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
	struct mm_listen *l;
	uint64_t magic = HANDLE_MAGIC;

	(void)dev;
	if (ctx != &ctx_token || nlistens == (int)(sizeof(listens) / sizeof(listens[0])))
		return 3;
	l = &listens[nlistens++];
	memcpy(handle, &magic, sizeof(magic));
	memcpy((char *)handle + 8, &l, sizeof(l)); /* 16 bytes: fabriclab may use the tail */
	*listen_comm = l;
	return 0;
}

static int mm_connect(void *ctx, int dev, void *handle, void **send_comm,
		      struct fl_abi_dev_handle **dc)
{
	struct mm_listen *l;
	struct mm_comm *s, *r;
	uint64_t magic;

	(void)dev;
	*send_comm = NULL;
	if (dc)
		*dc = NULL; /* host-driven */
	memcpy(&magic, handle, sizeof(magic));
	memcpy(&l, (char *)handle + 8, sizeof(l));
	if (ctx != &ctx_token || magic != HANDLE_MAGIC || ncomms + 2 > (int)(sizeof(comms) /
									    sizeof(comms[0])))
		return 3;
	s = &comms[ncomms++];
	r = &comms[ncomms++];
	s->peer = r;
	r->peer = s;
	l->pending = r;
	*send_comm = s;
	return 0;
}

static int mm_accept(void *listen_comm, void **recv_comm, struct fl_abi_dev_handle **dc)
{
	struct mm_listen *l = listen_comm;

	*recv_comm = l->pending;
	l->pending = NULL;
	if (dc && *recv_comm)
		*dc = NULL;
	return 0;
}

static int mm_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct mm_comm *c = comm;

	(void)data, (void)size, (void)type;
	*mhandle = &c->mr_token;
	return 0;
}

static int mm_dereg_mr(void *comm, void *mhandle)
{
	(void)comm, (void)mhandle;
	return 0;
}

static struct mm_req *new_req(struct mm_comm *c)
{
	for (int i = 0; i < POOL; i++)
		if (!c->reqs[i].used) {
			memset(&c->reqs[i], 0, sizeof(c->reqs[i]));
			c->reqs[i].used = 1;
			c->reqs[i].comm = c;
			return &c->reqs[i];
		}
	return NULL;
}

/* As NCCL's IB plugin: an event on the handle NCCL gave the request. */
static void event_start(struct mm_req *q, void *phandle)
{
	if (!events)
		return;
	mimic_record.event_starts++;
	mimic_record.last_event_phandle = phandle;
	if (prof)
		prof(&q->event, EV_START, phandle, 0, NULL);
}

static void event_stop(struct mm_req *q)
{
	if (!events)
		return;
	mimic_record.event_stops++;
	if (prof)
		prof(&q->event, EV_STOP, NULL, 0, NULL);
}

/* A posted request, queued in order; NULL when the comm has no room ("not now"). */
static struct mm_req *post(struct mm_comm *c)
{
	struct mm_req *q = c->tail - c->head < POOL ? new_req(c) : NULL;

	if (q)
		c->fifo[c->tail++ % POOL] = q;
	return q;
}

/* Sends land in the oldest receives, in order, as RDMA writes do, whoever tests. */
static void land(struct mm_comm *r)
{
	struct mm_comm *s = r->peer;

	while (r->head != r->tail && s->head != s->tail) {
		struct mm_req *into = r->fifo[r->head++ % POOL], *q = s->fifo[s->head++ % POOL];

		memcpy(into->data, q->data, (size_t)q->bytes < into->cap ? (size_t)q->bytes
									  : into->cap);
		into->bytes = q->bytes;
		into->landed = q->landed = 1;
		if (into->reported) /* done early: the plugin lets it go once its data landed */
			into->used = 0;
	}
}

static int mm_isend(void *send_comm, void *data, size_t size, int tag, void *mh, void *ph,
		    void **request)
{
	struct mm_req *q = post(send_comm);

	(void)tag, (void)mh;
	*request = q;
	if (!q)
		return 0;
	q->send = 1;
	q->data = data;
	q->bytes = (int)size;
	mimic_record.isends++;
	event_start(q, ph);
	return 0;
}

static int mm_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhs,
		    void **phs, void **request)
{
	int hinted = *request == OPTIONAL_RECV;
	struct mm_req *q;

	(void)tags, (void)mhs;
	if (n != 1)
		return 4;
	q = post(recv_comm);
	*request = q;
	if (!q)
		return 0;
	q->data = data[0];
	q->cap = sizes[0];
	q->early = early && hinted;
	mimic_record.irecvs++;
	mimic_record.hinted_irecvs += hinted;
	event_start(q, phs ? phs[0] : NULL);
	return 0;
}

static int mm_test(void *request, int *done, int *sizes)
{
	struct mm_req *q = request;
	struct mm_comm *r = q->send ? q->comm->peer : q->comm;

	*done = 0;
	if (!q->used || q->reported)
		return 3;
	land(r);
	if (!q->landed && !q->early)
		return 0;
	*done = 1;
	q->reported = 1;
	if (!q->landed)
		mimic_record.early_done++;
	if (sizes && !nosizes)
		sizes[0] = q->landed ? q->bytes : 0;
	event_stop(q);
	if (q->landed)
		q->used = 0;
	return 0;
}

static int mm_iflush(void *comm, int n, void **data, int *sizes, void **mhs, void **request)
{
	(void)comm, (void)n, (void)data, (void)sizes, (void)mhs;
	*request = NULL; /* nothing to flush: host memory */
	return 0;
}

static int mm_close(void *comm)
{
	(void)comm;
	return 0;
}

#define TABLE(v)                                                                                   \
	EXPORT const struct fl_abi_net_v##v ncclNetPlugin_v##v = {                                 \
		.name = "mimic", .init = mm_init, .devices = mm_devices,                           \
		.get_properties = mm_props, .listen = mm_listen, .connect = mm_connect,            \
		.accept = mm_accept, .reg_mr = mm_reg_mr, .dereg_mr = mm_dereg_mr,                 \
		.isend = mm_isend, .irecv = mm_irecv, .iflush = mm_iflush, .test = mm_test,        \
		.close_send = mm_close, .close_recv = mm_close, .close_listen = mm_close,          \
		.make_vdevice = mm_make_vdevice, .finalize = mm_finalize,                          \
	}
#if MIMIC_VERSION == 12
TABLE(12);
#else
TABLE(11);
#endif
