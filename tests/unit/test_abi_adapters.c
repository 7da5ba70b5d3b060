/*
 * Every slot of every exported ncclNetPlugin_vN table, called the way NCCL
 * calls it, over a fake transport that records what reaches it: sizes widened
 * (or refused) per version, tags, counts, handle bytes and comms passed down,
 * results and properties handed back in each version's shape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <limits.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin/entry/net_abi.h"
#include "plugin/wrap/wrap.h"
#include "plugin/wrap/wrap_internal.h"

#define GIB (1ULL << 30)
#define TAIL_BYTES 32 /* canary after a props struct: a version must not write past its own */
#define CANARY 0xab

/* ---- the recording fake transport ---- */

enum op {
	OP_INIT, OP_LISTEN, OP_CONNECT, OP_ACCEPT, OP_REG_MR, OP_REG_MR_DMABUF, OP_DEREG_MR,
	OP_ISEND, OP_IRECV, OP_IFLUSH, OP_TEST, OP_CLOSE_SEND, OP_CLOSE_RECV, OP_CLOSE_LISTEN,
	OP_COUNT
};

struct call {
	const void *comm; /* the transport object (or request) it was handed */
	int dev;
	uint64_t comm_hash; /* listen/connect: the endpoint the wrap described */
	unsigned char handle[FL_HANDLE_SIZE];
	void *data;
	size_t size;
	int type;
	uint64_t offset;
	int fd;
	int tag;
	int n;
	void *datas[FL_MAX_RECVS];
	size_t sizes[FL_MAX_RECVS];
	int tags[FL_MAX_RECVS];
	void *mhandles[FL_MAX_RECVS];
	void *mhandle;
};

static struct {
	int calls[OP_COUNT];
	struct call last[OP_COUNT];
	int init_result;
	int done_sizes[FL_MAX_RECVS]; /* what test() reports as moved */
} fake;

/* Addresses the fake hands out and must get back. */
static char listen_obj, send_obj, recv_obj, mr_obj, req_obj;

static const int fake_vdevs[] = { 3, 4, 5, 6, 7, 9 };

static const struct fl_props fake_props = {
	.name = "fake-nic",
	.pci_path = "/sys/devices/fake/0000:17:00.0",
	.guid = 0x1122334455667788ULL,
	.ptr_support = FL_PTR_HOST | FL_PTR_CUDA,
	.reg_is_global = 1,
	.force_flush = 1,
	.speed_mbps = 123456,
	.port = 3,
	.latency_us = 4.5f,
	.max_comms = 777,
	.max_recvs = 8,
	.vdev_count = 6, /* more than v9-v11 can carry: they keep the first 4 */
	.vdevs = { 3, 4, 5, 6, 7, 9 },
	.max_p2p_bytes = 3 * GIB,
	.max_coll_bytes = 256ULL << 20,
	.max_multi_request_size = 4,
	.rail_id = 2,
	.plane_id = 1,
};

static struct call *record(enum op op)
{
	fake.calls[op]++;
	memset(&fake.last[op], 0, sizeof(fake.last[op]));
	return &fake.last[op];
}

static int f_init(void)
{
	record(OP_INIT);
	return fake.init_result;
}

static int f_devices(int *ndev)
{
	*ndev = 2;
	return FL_OK;
}

static int f_props(int dev, struct fl_props *props)
{
	(void)dev;
	*props = fake_props;
	return FL_OK;
}

static int f_listen(int dev, const struct fl_endpoint *self, void *handle, void **listen_comm)
{
	struct call *c = record(OP_LISTEN);
	unsigned char *h = handle;

	c->dev = dev;
	c->comm_hash = self->comm_hash;
	for (int i = 0; i < FL_HANDLE_SIZE; i++)
		h[i] = (unsigned char)(0xa0 ^ i);
	*listen_comm = &listen_obj;
	return FL_OK;
}

static int f_connect(int dev, const struct fl_endpoint *self, void *handle, void **send_comm)
{
	struct call *c = record(OP_CONNECT);

	c->dev = dev;
	c->comm_hash = self->comm_hash;
	memcpy(c->handle, handle, FL_HANDLE_SIZE);
	*send_comm = &send_obj;
	return FL_OK;
}

static int f_accept(void *listen_comm, void **recv_comm)
{
	record(OP_ACCEPT)->comm = listen_comm;
	*recv_comm = &recv_obj;
	return FL_OK;
}

static int f_peer(void *comm, struct fl_endpoint *peer)
{
	(void)comm;
	memset(peer, 0, sizeof(*peer));
	peer->rank = -1;
	return FL_OK;
}

static int f_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct call *c = record(OP_REG_MR);

	c->comm = comm;
	c->data = data;
	c->size = size;
	c->type = type;
	*mhandle = &mr_obj;
	return FL_OK;
}

static int f_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			   void **mhandle)
{
	struct call *c = record(OP_REG_MR_DMABUF);

	c->comm = comm;
	c->data = data;
	c->size = size;
	c->type = type;
	c->offset = offset;
	c->fd = fd;
	*mhandle = &mr_obj;
	return FL_OK;
}

static int f_dereg_mr(void *comm, void *mhandle)
{
	struct call *c = record(OP_DEREG_MR);

	c->comm = comm;
	c->mhandle = mhandle;
	return FL_OK;
}

static int f_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		   void **request)
{
	struct call *c = record(OP_ISEND);

	c->comm = send_comm;
	c->data = data;
	c->size = size;
	c->tag = tag;
	c->mhandle = mhandle;
	*request = &req_obj;
	return FL_OK;
}

static int f_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		   void **request)
{
	struct call *c = record(OP_IRECV);

	c->comm = recv_comm;
	c->n = n;
	for (int i = 0; i < n && i < FL_MAX_RECVS; i++) {
		c->datas[i] = data[i];
		c->sizes[i] = sizes[i];
		c->tags[i] = tags[i];
		c->mhandles[i] = mhandles[i];
	}
	*request = &req_obj;
	return FL_OK;
}

static int f_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		    void **request)
{
	struct call *c = record(OP_IFLUSH);

	c->comm = recv_comm;
	c->n = n;
	for (int i = 0; i < n && i < FL_MAX_RECVS; i++) {
		c->datas[i] = data[i];
		c->sizes[i] = (size_t)sizes[i];
		c->mhandles[i] = mhandles[i];
	}
	*request = &req_obj;
	return FL_OK;
}

static int f_test(void *request, int *done, int *sizes, struct fl_xfer_times *times)
{
	(void)times;
	record(OP_TEST)->comm = request;
	*done = 1;
	memcpy(sizes, fake.done_sizes, sizeof(fake.done_sizes));
	return FL_OK;
}

static int f_close(enum op op, void *comm)
{
	record(op)->comm = comm;
	return FL_OK;
}

static int f_close_send(void *comm)
{
	return f_close(OP_CLOSE_SEND, comm);
}

static int f_close_recv(void *comm)
{
	return f_close(OP_CLOSE_RECV, comm);
}

static int f_close_listen(void *comm)
{
	return f_close(OP_CLOSE_LISTEN, comm);
}

static const struct fl_transport fake_transport = {
	.name = "fake",
	.init = f_init,
	.devices = f_devices,
	.get_properties = f_props,
	.listen = f_listen,
	.connect = f_connect,
	.accept = f_accept,
	.peer = f_peer,
	.reg_mr = f_reg_mr,
	.reg_mr_dmabuf = f_reg_mr_dmabuf,
	.dereg_mr = f_dereg_mr,
	.isend = f_isend,
	.irecv = f_irecv,
	.iflush = f_iflush,
	.test = f_test,
	.close_send = f_close_send,
	.close_recv = f_close_recv,
	.close_listen = f_close_listen,
};

static void quiet_logger(int level, unsigned long flags, const char *file, int line,
			 const char *fmt, ...)
{
	(void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

static int never_called_prof(void **event_handle, int type, void *phandle, int64_t plugin_id,
			     void *ext_data)
{
	(void)event_handle, (void)type, (void)phandle, (void)plugin_id, (void)ext_data;
	return FL_ERR_INTERNAL;
}

/* ---- checks shared by versions whose slots have the same shape ---- */

/* One established connection as NCCL holds it: the wrap's objects, not the fake's. */
struct conns {
	unsigned char handle[FL_HANDLE_SIZE];
	void *listen, *send, *recv;
	unsigned char buf[4][64];
};

#define ASSERT_MANDATORY_SLOTS(t)                                                    \
	do {                                                                         \
		assert_string_equal((t)->name, "fabriclab");                         \
		assert_true((t)->init && (t)->devices && (t)->get_properties);       \
		assert_true((t)->listen && (t)->connect && (t)->accept);             \
		assert_true((t)->reg_mr && (t)->reg_mr_dmabuf && (t)->dereg_mr);     \
		assert_true((t)->isend && (t)->irecv && (t)->iflush && (t)->test);   \
		assert_true((t)->close_send && (t)->close_recv && (t)->close_listen); \
	} while (0)

/* v7+ optional slots: we support none of them (NULL = "not supported" to NCCL). */
#define ASSERT_NO_DEVICE_SLOTS(t)                \
	do {                                     \
		assert_null((t)->get_device_mr); \
		assert_null((t)->irecv_consumed); \
	} while (0)

static void expect_listened(struct conns *c, int dev, uint64_t comm_hash)
{
	assert_non_null(c->listen);
	assert_ptr_not_equal(c->listen, &listen_obj); /* the wrap's own object */
	assert_int_equal(fake.last[OP_LISTEN].dev, dev);
	assert_int_equal(fake.last[OP_LISTEN].comm_hash, comm_hash);
	for (int i = 0; i < FL_HANDLE_SIZE; i++)
		assert_int_equal(c->handle[i], (unsigned char)(0xa0 ^ i));
	/* What NCCL's bootstrap delivers to the connecting side may differ byte by byte. */
	c->handle[FL_HANDLE_SIZE - 1] = 0x42;
}

static void expect_connected(const struct conns *c, int dev, uint64_t comm_hash)
{
	assert_non_null(c->send);
	assert_int_equal(fake.last[OP_CONNECT].dev, dev);
	assert_int_equal(fake.last[OP_CONNECT].comm_hash, comm_hash);
	assert_memory_equal(fake.last[OP_CONNECT].handle, c->handle, FL_HANDLE_SIZE);
}

static void expect_accepted(const struct conns *c)
{
	assert_non_null(c->recv);
	assert_ptr_equal(fake.last[OP_ACCEPT].comm, &listen_obj);
}

static void expect_reg_mr(const void *comm, void *data, size_t size, int type, void *mhandle)
{
	const struct call *c = &fake.last[OP_REG_MR];

	assert_ptr_equal(c->comm, comm);
	assert_ptr_equal(c->data, data);
	assert_int_equal(c->size, size);
	assert_int_equal(c->type, type);
	assert_ptr_equal(mhandle, &mr_obj);
}

static void expect_isend(void *data, size_t size, int tag)
{
	const struct call *c = &fake.last[OP_ISEND];

	assert_ptr_equal(c->comm, &send_obj);
	assert_ptr_equal(c->data, data);
	assert_int_equal(c->size, size);
	assert_int_equal(c->tag, tag);
	assert_ptr_equal(c->mhandle, &mr_obj);
}

static void expect_irecv(int n, void **data, const size_t *sizes, const int *tags)
{
	const struct call *c = &fake.last[OP_IRECV];

	assert_ptr_equal(c->comm, &recv_obj);
	assert_int_equal(c->n, n);
	for (int i = 0; i < n; i++) {
		assert_ptr_equal(c->datas[i], data[i]);
		assert_int_equal(c->sizes[i], sizes[i]);
		assert_int_equal(c->tags[i], tags[i]);
		assert_ptr_equal(c->mhandles[i], &mr_obj);
	}
}

/* test() on a request returns the fake's completion sizes, n of them. */
static void expect_completion(int (*test)(void *, int *, int *), void *request, int n)
{
	int sizes[FL_MAX_RECVS];
	int done = 0;

	assert_non_null(request);
	for (int i = 0; i < FL_MAX_RECVS; i++) {
		fake.done_sizes[i] = 1000 + 7 * i;
		sizes[i] = -1;
	}
	assert_int_equal(test(request, &done, sizes), FL_OK);
	assert_int_equal(done, 1);
	assert_ptr_equal(fake.last[OP_TEST].comm, &req_obj);
	for (int i = 0; i < n; i++)
		assert_int_equal(sizes[i], 1000 + 7 * i);
	for (int i = n; i < FL_MAX_RECVS; i++)
		assert_int_equal(sizes[i], -1);
}

typedef int (*reg_mr_int_fn)(void *, void *, int, int, void **);
typedef int (*reg_mr_wide_fn)(void *, void *, size_t, int, void **);
typedef int (*isend_int_fn)(void *, void *, int, int, void *, void **);
typedef int (*irecv_int_fn)(void *, int, void **, int *, int *, void **, void **);
typedef int (*test_fn)(void *, int *, int *);

static void check_reg_mr_int(reg_mr_int_fn reg_mr, struct conns *c)
{
	int before = fake.calls[OP_REG_MR];
	void *mh = NULL;

	assert_int_equal(reg_mr(c->send, c->buf[0], INT_MAX, FL_PTR_HOST, &mh), FL_OK);
	expect_reg_mr(&send_obj, c->buf[0], (size_t)INT_MAX, FL_PTR_HOST, mh);
	assert_int_equal(reg_mr(c->recv, c->buf[1], 64, FL_PTR_CUDA, &mh), FL_OK);
	expect_reg_mr(&recv_obj, c->buf[1], 64, FL_PTR_CUDA, mh);
	assert_int_not_equal(reg_mr(c->send, c->buf[0], -1, FL_PTR_HOST, &mh), FL_OK);
	assert_int_equal(fake.calls[OP_REG_MR], before + 2);
}

static void check_reg_mr_wide(reg_mr_wide_fn reg_mr, struct conns *c)
{
	void *mh = NULL;

	assert_int_equal(reg_mr(c->send, c->buf[0], 3 * GIB, FL_PTR_HOST, &mh), FL_OK);
	expect_reg_mr(&send_obj, c->buf[0], 3 * GIB, FL_PTR_HOST, mh);
	assert_int_equal(reg_mr(c->recv, c->buf[1], 64, FL_PTR_CUDA, &mh), FL_OK);
	expect_reg_mr(&recv_obj, c->buf[1], 64, FL_PTR_CUDA, mh);
}

static void check_isend_int(isend_int_fn isend, test_fn test, struct conns *c)
{
	int before = fake.calls[OP_ISEND];
	void *req = NULL;

	assert_int_equal(isend(c->send, c->buf[0], INT_MAX, 42, &mr_obj, &req), FL_OK);
	expect_isend(c->buf[0], (size_t)INT_MAX, 42);
	expect_completion(test, req, 1);
	assert_int_equal(isend(c->send, c->buf[0], 0, 3, &mr_obj, &req), FL_OK);
	expect_isend(c->buf[0], 0, 3);
	expect_completion(test, req, 1);
	assert_int_not_equal(isend(c->send, c->buf[0], -5, 3, &mr_obj, &req), FL_OK);
	assert_int_equal(fake.calls[OP_ISEND], before + 2);
}

static void check_irecv_int(irecv_int_fn irecv, test_fn test, struct conns *c)
{
	void *data[FL_MAX_RECVS + 1] = { c->buf[0], c->buf[1], c->buf[2] };
	void *mhs[FL_MAX_RECVS + 1] = { &mr_obj, &mr_obj, &mr_obj };
	int sizes[FL_MAX_RECVS + 1] = { 10, 0, INT_MAX };
	int tags[FL_MAX_RECVS + 1] = { 5, 6, 7 };
	const size_t wide[3] = { 10, 0, (size_t)INT_MAX };
	int before;
	void *req = NULL;

	assert_int_equal(irecv(c->recv, 3, data, sizes, tags, mhs, &req), FL_OK);
	expect_irecv(3, data, wide, tags);
	expect_completion(test, req, 3);

	before = fake.calls[OP_IRECV];
	assert_int_not_equal(irecv(c->recv, FL_MAX_RECVS + 1, data, sizes, tags, mhs, &req),
			     FL_OK);
	sizes[1] = -1;
	assert_int_not_equal(irecv(c->recv, 3, data, sizes, tags, mhs, &req), FL_OK);
	assert_int_equal(fake.calls[OP_IRECV], before);
}

/* Slots with one shape in every version. */
struct common_slots {
	int (*devices)(int *ndev);
	int (*reg_mr_dmabuf)(void *, void *, size_t, int, uint64_t, int, void **);
	int (*dereg_mr)(void *, void *);
	int (*iflush)(void *, int, void **, int *, void **, void **);
	test_fn test;
	int (*close_send)(void *);
	int (*close_recv)(void *);
	int (*close_listen)(void *);
};

#define COMMON_SLOTS(t)                                                                   \
	(&(const struct common_slots){ (t)->devices, (t)->reg_mr_dmabuf, (t)->dereg_mr,   \
				       (t)->iflush, (t)->test, (t)->close_send,           \
				       (t)->close_recv, (t)->close_listen })

static void check_common_slots(const struct common_slots *s, struct conns *c)
{
	void *data[1] = { c->buf[3] };
	void *mhs[1] = { &mr_obj };
	int flush_sizes[1] = { 64 };
	void *mh = NULL, *req = NULL;
	int ndev = -1, done = 0;

	assert_int_equal(s->devices(&ndev), FL_OK);
	assert_int_equal(ndev, 2);

	assert_int_equal(s->reg_mr_dmabuf(c->recv, c->buf[3], 5 * GIB, FL_PTR_CUDA, 0x1000, 9, &mh),
			 FL_OK);
	assert_ptr_equal(mh, &mr_obj);
	assert_ptr_equal(fake.last[OP_REG_MR_DMABUF].comm, &recv_obj);
	assert_ptr_equal(fake.last[OP_REG_MR_DMABUF].data, c->buf[3]);
	assert_int_equal(fake.last[OP_REG_MR_DMABUF].size, 5 * GIB);
	assert_int_equal(fake.last[OP_REG_MR_DMABUF].type, FL_PTR_CUDA);
	assert_int_equal(fake.last[OP_REG_MR_DMABUF].offset, 0x1000);
	assert_int_equal(fake.last[OP_REG_MR_DMABUF].fd, 9);

	assert_int_equal(s->iflush(c->recv, 1, data, flush_sizes, mhs, &req), FL_OK);
	assert_ptr_equal(fake.last[OP_IFLUSH].comm, &recv_obj);
	assert_int_equal(fake.last[OP_IFLUSH].n, 1);
	assert_int_equal(fake.last[OP_IFLUSH].sizes[0], 64);
	assert_ptr_equal(fake.last[OP_IFLUSH].datas[0], c->buf[3]);
	assert_non_null(req);
	assert_int_equal(s->test(req, &done, NULL), FL_OK); /* NCCL tests a flush without sizes */
	assert_int_equal(done, 1);

	assert_int_equal(s->dereg_mr(c->send, &mr_obj), FL_OK);
	assert_ptr_equal(fake.last[OP_DEREG_MR].comm, &send_obj);
	assert_ptr_equal(fake.last[OP_DEREG_MR].mhandle, &mr_obj);

	assert_int_equal(s->close_send(c->send), FL_OK);
	assert_ptr_equal(fake.last[OP_CLOSE_SEND].comm, &send_obj);
	assert_int_equal(s->close_recv(c->recv), FL_OK);
	assert_ptr_equal(fake.last[OP_CLOSE_RECV].comm, &recv_obj);
	assert_int_equal(s->close_listen(c->listen), FL_OK);
	assert_ptr_equal(fake.last[OP_CLOSE_LISTEN].comm, &listen_obj);
}

/* ---- properties: each version gets its own fields, nothing past its struct ---- */

#define PROPS_BOX(type)                           \
	struct {                                  \
		struct type props;                \
		unsigned char tail[TAIL_BYTES];   \
	}

static void expect_tail_untouched(const unsigned char *tail)
{
	for (int i = 0; i < TAIL_BYTES; i++)
		assert_int_equal(tail[i], CANARY);
}

#define ASSERT_V6_PROPS(p)                                              \
	do {                                                            \
		assert_string_equal((p)->name, fake_props.name);        \
		assert_string_equal((p)->pci_path, fake_props.pci_path); \
		assert_int_equal((p)->guid, fake_props.guid);           \
		assert_int_equal((p)->ptr_support, FL_PTR_HOST | FL_PTR_CUDA); \
		assert_int_equal((p)->speed, 123456);                   \
		assert_int_equal((p)->port, 3);                         \
		assert_true((p)->latency == 4.5f);                      \
		assert_int_equal((p)->max_comms, 777);                  \
		assert_int_equal((p)->max_recvs, 8);                    \
	} while (0)

#define ASSERT_HOST_DEVICE(p)                                                       \
	do {                                                                        \
		assert_int_equal((p)->net_device_type, FL_ABI_DEVICE_HOST);         \
		assert_int_equal((p)->net_device_version, FL_ABI_DEVICE_INVALID_VERSION); \
	} while (0)

#define ASSERT_V9_PROPS(p, n_vdevs)                                                       \
	do {                                                                            \
		ASSERT_V6_PROPS(p);                                                     \
		ASSERT_HOST_DEVICE(p);                                                  \
		assert_int_equal((p)->reg_is_global, 1);                                \
		assert_int_equal((p)->force_flush, 1);                                  \
		assert_int_equal((p)->vprops.ndevs, n_vdevs);                             \
		assert_memory_equal((p)->vprops.devs, fake_vdevs, (n_vdevs) * sizeof(int)); \
		assert_int_equal((p)->max_p2p_bytes, 3 * GIB);                          \
		assert_int_equal((p)->max_coll_bytes, 256ULL << 20);                    \
	} while (0)

#define GET_PROPS(get_properties, box)                                  \
	do {                                                            \
		memset(&(box), CANARY, sizeof(box));                    \
		assert_int_equal(get_properties(1, &(box).props), FL_OK); \
		expect_tail_untouched((box).tail);                      \
	} while (0)

static void check_props_v6(const struct fl_abi_net_v6 *t)
{
	PROPS_BOX(fl_abi_props_v6) box;

	GET_PROPS(t->get_properties, box);
	ASSERT_V6_PROPS(&box.props);
}

static void check_props_v7(const struct fl_abi_net_v7 *t)
{
	PROPS_BOX(fl_abi_props_v7) box;

	GET_PROPS(t->get_properties, box);
	ASSERT_V6_PROPS(&box.props);
	ASSERT_HOST_DEVICE(&box.props);
}

static void check_props_v8(const struct fl_abi_net_v8 *t)
{
	PROPS_BOX(fl_abi_props_v8) box;

	GET_PROPS(t->get_properties, box);
	ASSERT_V6_PROPS(&box.props);
	ASSERT_HOST_DEVICE(&box.props);
	assert_int_equal(box.props.reg_is_global, 1);
}

static void check_props_v9(int (*get_properties)(int, struct fl_abi_props_v9 *))
{
	PROPS_BOX(fl_abi_props_v9) box;

	GET_PROPS(get_properties, box);
	ASSERT_V9_PROPS(&box.props, FL_ABI_VDEVS_V9);
}

static void check_props_v11(const struct fl_abi_net_v11 *t)
{
	PROPS_BOX(fl_abi_props_v11) box;

	GET_PROPS(t->get_properties, box);
	ASSERT_V9_PROPS(&box.props, FL_ABI_VDEVS_V9);
	assert_int_equal(box.props.max_multi_request_size, 4);
}

static void check_props_v12(const struct fl_abi_net_v12 *t)
{
	PROPS_BOX(fl_abi_props_v12) box;

	GET_PROPS(t->get_properties, box);
	ASSERT_V9_PROPS(&box.props, 6);
	assert_int_equal(box.props.max_multi_request_size, 4);
	assert_int_equal(box.props.rail_id, 2);
	assert_int_equal(box.props.plane_id, 1);
}

/*
 * ---- v7+: our own (host-driven) transports leave NCCL's device-handle pointer as
 * NCCL set it, as NCCL's own socket and IB transports ignore it (NCCL sets it NULL
 * for host devices: 2.30.7 src/transport/net.cc:817-836); with or without the out-param ----
 */

typedef int (*accept_v7_fn)(void *, void **, struct fl_abi_dev_handle **);

static void check_accept_v7(accept_v7_fn accept, struct conns *c)
{
	struct fl_abi_dev_handle junk;
	struct fl_abi_dev_handle *dev_comm = &junk;
	void *extra = NULL;

	assert_int_equal(accept(c->listen, &c->recv, &dev_comm), FL_OK);
	expect_accepted(c);
	assert_ptr_equal(dev_comm, &junk);
	assert_int_equal(accept(c->listen, &extra, NULL), FL_OK);
	assert_non_null(extra);
	assert_int_equal(fl_wrap_close_recv(extra), FL_OK);
}

/* ---- one test per version ---- */

static void test_v6(void **state)
{
	const struct fl_abi_net_v6 *t = &ncclNetPlugin_v6;
	struct conns c = { 0 };

	(void)state;
	ASSERT_MANDATORY_SLOTS(t);
	assert_int_equal(t->init(quiet_logger), FL_OK);
	check_props_v6(t);
	assert_int_equal(t->listen(1, c.handle, &c.listen), FL_OK);
	expect_listened(&c, 1, 0);
	assert_int_equal(t->connect(1, c.handle, &c.send), FL_OK);
	expect_connected(&c, 1, 0);
	assert_int_equal(t->accept(c.listen, &c.recv), FL_OK);
	expect_accepted(&c);
	check_reg_mr_int(t->reg_mr, &c);
	check_isend_int(t->isend, t->test, &c);
	check_irecv_int(t->irecv, t->test, &c);
	check_common_slots(COMMON_SLOTS(t), &c);
}

static void test_v7(void **state)
{
	const struct fl_abi_net_v7 *t = &ncclNetPlugin_v7;
	struct fl_abi_dev_handle junk;
	struct fl_abi_dev_handle *dev_comm = &junk;
	struct conns c = { 0 };

	(void)state;
	ASSERT_MANDATORY_SLOTS(t);
	ASSERT_NO_DEVICE_SLOTS(t);
	assert_int_equal(t->init(quiet_logger), FL_OK);
	check_props_v7(t);
	assert_int_equal(t->listen(0, c.handle, &c.listen), FL_OK);
	expect_listened(&c, 0, 0);
	assert_int_equal(t->connect(0, c.handle, &c.send, &dev_comm), FL_OK);
	expect_connected(&c, 0, 0);
	assert_ptr_equal(dev_comm, &junk); /* untouched: NCCL sets NULL for a host device */
	check_accept_v7(t->accept, &c);
	check_reg_mr_int(t->reg_mr, &c);
	check_isend_int(t->isend, t->test, &c);
	check_irecv_int(t->irecv, t->test, &c);
	check_common_slots(COMMON_SLOTS(t), &c);
}

static void test_v8(void **state)
{
	const struct fl_abi_net_v8 *t = &ncclNetPlugin_v8;
	struct fl_abi_dev_handle junk;
	struct fl_abi_dev_handle *dev_comm = &junk;
	struct conns c = { 0 };
	void *extra = NULL;

	(void)state;
	ASSERT_MANDATORY_SLOTS(t);
	ASSERT_NO_DEVICE_SLOTS(t);
	assert_int_equal(t->init(quiet_logger), FL_OK);
	check_props_v8(t);
	assert_int_equal(t->listen(1, c.handle, &c.listen), FL_OK);
	expect_listened(&c, 1, 0);
	assert_int_equal(t->connect(1, c.handle, &c.send, &dev_comm), FL_OK);
	expect_connected(&c, 1, 0);
	assert_ptr_equal(dev_comm, &junk); /* untouched: NCCL sets NULL for a host device */
	assert_int_equal(t->connect(1, c.handle, &extra, NULL), FL_OK);
	assert_int_equal(t->close_send(extra), FL_OK);
	check_accept_v7(t->accept, &c);
	check_reg_mr_wide(t->reg_mr, &c);
	check_isend_int(t->isend, t->test, &c);
	check_irecv_int(t->irecv, t->test, &c);
	check_common_slots(COMMON_SLOTS(t), &c);
}

/* v9+ sizes are size_t end to end: values above 4 GiB must arrive unchanged. */
static void check_wide_data_path_v9(const struct fl_abi_net_v9 *t, struct conns *c)
{
	void *data[2] = { c->buf[0], c->buf[1] };
	void *mhs[2] = { &mr_obj, &mr_obj };
	size_t sizes[2] = { 5 * GIB, 1 };
	int tags[2] = { 11, 12 };
	void *req = NULL;

	assert_int_equal(t->isend(c->send, c->buf[2], 5 * GIB + 3, 9, &mr_obj, &req), FL_OK);
	expect_isend(c->buf[2], 5 * GIB + 3, 9);
	expect_completion(t->test, req, 1);
	assert_int_equal(t->irecv(c->recv, 2, data, sizes, tags, mhs, &req), FL_OK);
	expect_irecv(2, data, sizes, tags);
	expect_completion(t->test, req, 2);
}

static void test_v9(void **state)
{
	const struct fl_abi_net_v9 *t = &ncclNetPlugin_v9;
	struct fl_abi_dev_handle junk;
	struct fl_abi_dev_handle *dev_comm = &junk;
	struct conns c = { 0 };

	(void)state;
	ASSERT_MANDATORY_SLOTS(t);
	ASSERT_NO_DEVICE_SLOTS(t);
	assert_null(t->make_vdevice);
	assert_int_equal(t->init(quiet_logger), FL_OK);
	check_props_v9(t->get_properties);
	assert_int_equal(t->listen(0, c.handle, &c.listen), FL_OK);
	expect_listened(&c, 0, 0);
	assert_int_equal(t->connect(0, c.handle, &c.send, &dev_comm), FL_OK);
	expect_connected(&c, 0, 0);
	assert_ptr_equal(dev_comm, &junk); /* untouched: NCCL sets NULL for a host device */
	check_accept_v7(t->accept, &c);
	check_reg_mr_wide(t->reg_mr, &c);
	check_wide_data_path_v9(t, &c);
	check_common_slots(COMMON_SLOTS(t), &c);
}

/* v10+ isend/irecv: size_t sizes plus profiler handles, which are accepted and ignored. */
typedef int (*isend_v10_fn)(void *, void *, size_t, int, void *, void *, void **);
typedef int (*irecv_v10_fn)(void *, int, void **, size_t *, int *, void **, void **, void **);

static void check_data_path_v10(isend_v10_fn isend, irecv_v10_fn irecv, test_fn test,
				struct conns *c)
{
	void *data[FL_MAX_RECVS];
	void *mhs[FL_MAX_RECVS];
	void *phandles[FL_MAX_RECVS];
	size_t sizes[FL_MAX_RECVS];
	int tags[FL_MAX_RECVS];
	void *req = NULL;

	for (int i = 0; i < FL_MAX_RECVS; i++) {
		data[i] = c->buf[i % 4];
		mhs[i] = &mr_obj;
		phandles[i] = &c->buf[i % 4][1];
		sizes[i] = (size_t)i * GIB;
		tags[i] = 100 + i;
	}
	assert_int_equal(isend(c->send, c->buf[2], 6 * GIB, 77, &mr_obj, phandles[0], &req), FL_OK);
	expect_isend(c->buf[2], 6 * GIB, 77);
	expect_completion(test, req, 1);
	assert_int_equal(irecv(c->recv, FL_MAX_RECVS, data, sizes, tags, mhs, phandles, &req),
			 FL_OK);
	expect_irecv(FL_MAX_RECVS, data, sizes, tags);
	expect_completion(test, req, FL_MAX_RECVS);
	assert_int_equal(irecv(c->recv, 1, data, sizes, tags, mhs, NULL, &req), FL_OK);
	expect_irecv(1, data, sizes, tags);
	expect_completion(test, req, 1);
}

static void test_v10(void **state)
{
	const struct fl_abi_net_v10 *t = &ncclNetPlugin_v10;
	struct fl_abi_comm_config config = { .traffic_class = 5 };
	struct fl_abi_dev_handle junk;
	struct fl_abi_dev_handle *dev_comm = &junk;
	struct conns c = { 0 };

	(void)state;
	ASSERT_MANDATORY_SLOTS(t);
	ASSERT_NO_DEVICE_SLOTS(t);
	assert_null(t->make_vdevice);
	assert_int_equal(t->init(quiet_logger, never_called_prof), FL_OK);
	check_props_v9(t->get_properties);
	assert_int_equal(t->listen(1, c.handle, &c.listen), FL_OK);
	expect_listened(&c, 1, 0);
	assert_int_equal(t->connect(1, &config, c.handle, &c.send, &dev_comm), FL_OK);
	expect_connected(&c, 1, 0);
	assert_ptr_equal(dev_comm, &junk); /* untouched: NCCL sets NULL for a host device */
	check_accept_v7(t->accept, &c);
	check_reg_mr_wide(t->reg_mr, &c);
	check_data_path_v10(t->isend, t->irecv, t->test, &c);
	check_common_slots(COMMON_SLOTS(t), &c);
}

/* v11/v12: a ctx per communicator carrying commId and the traffic class into the wrap. */
typedef int (*init_v11_fn)(void **, uint64_t, struct fl_abi_comm_config *, fl_abi_logger_fn,
			   fl_abi_prof_callback_fn);

static void *init_comm(init_v11_fn init, uint64_t comm_id, struct fl_abi_comm_config *config,
		       int expect_class)
{
	void *ctx = &ctx; /* garbage NCCL might leave there */
	const struct fl_wrap_ctx *w;

	assert_int_equal(init(&ctx, comm_id, config, quiet_logger, never_called_prof), FL_OK);
	assert_non_null(ctx);
	assert_ptr_not_equal(ctx, &ctx);
	w = ctx;
	assert_int_equal(w->comm_id, comm_id);
	assert_int_equal(w->traffic_class, expect_class);
	assert_false(w->process_wide);
	return ctx;
}

static void check_net_attr(int (*set_net_attr)(void *, struct fl_abi_net_attr *), void *ctx)
{
	struct fl_abi_net_attr attr;

	memset(&attr, 0xff, sizeof(attr)); /* NCCL's "undefined" is all -1 */
	attr.send_comm_attr.max_concurrent_peers = 4;
	attr.op = 1u << 3;
	assert_non_null(set_net_attr);
	assert_int_equal(set_net_attr(ctx, &attr), FL_OK);
}

static void test_v11(void **state)
{
	const struct fl_abi_net_v11 *t = &ncclNetPlugin_v11;
	struct fl_abi_comm_config config = { .traffic_class = 106 };
	struct fl_abi_dev_handle junk;
	struct fl_abi_dev_handle *dev_comm = &junk;
	struct conns c = { 0 };
	void *ctx, *other;

	(void)state;
	ASSERT_MANDATORY_SLOTS(t);
	ASSERT_NO_DEVICE_SLOTS(t);
	assert_null(t->make_vdevice);
	assert_non_null(t->finalize);
	ctx = init_comm(t->init, 0xc0ffee11ULL, &config, 106);
	other = init_comm(t->init, 0xbeef, NULL, FL_ABI_TRAFFIC_CLASS_UNDEF);
	assert_ptr_not_equal(ctx, other);
	assert_int_equal(t->finalize(other), FL_OK);
	check_props_v11(t);
	assert_int_equal(t->listen(ctx, 1, c.handle, &c.listen), FL_OK);
	expect_listened(&c, 1, 0xc0ffee11ULL);
	assert_int_equal(t->connect(ctx, 1, c.handle, &c.send, &dev_comm), FL_OK);
	expect_connected(&c, 1, 0xc0ffee11ULL);
	assert_ptr_equal(dev_comm, &junk); /* untouched: NCCL sets NULL for a host device */
	check_accept_v7(t->accept, &c);
	check_reg_mr_wide(t->reg_mr, &c);
	check_data_path_v10(t->isend, t->irecv, t->test, &c);
	check_net_attr(t->set_net_attr, ctx);
	check_common_slots(COMMON_SLOTS(t), &c);
	assert_int_equal(t->finalize(ctx), FL_OK);
	assert_int_equal(t->finalize(NULL), FL_OK);
}

static void test_v12(void **state)
{
	const struct fl_abi_net_v12 *t = &ncclNetPlugin_v12;
	struct fl_abi_dev_handle junk;
	struct fl_abi_dev_handle *dev_comm = &junk;
	struct conns c = { 0 };
	void *ctx;

	(void)state;
	ASSERT_MANDATORY_SLOTS(t);
	ASSERT_NO_DEVICE_SLOTS(t);
	assert_null(t->make_vdevice);
	assert_non_null(t->finalize);
	ctx = init_comm(t->init, 0x12121212ULL, NULL, FL_ABI_TRAFFIC_CLASS_UNDEF);
	check_props_v12(t);
	assert_int_equal(t->listen(ctx, 0, c.handle, &c.listen), FL_OK);
	expect_listened(&c, 0, 0x12121212ULL);
	assert_int_equal(t->connect(ctx, 0, c.handle, &c.send, &dev_comm), FL_OK);
	expect_connected(&c, 0, 0x12121212ULL);
	assert_ptr_equal(dev_comm, &junk); /* untouched: NCCL sets NULL for a host device */
	check_accept_v7(t->accept, &c);
	check_reg_mr_wide(t->reg_mr, &c);
	check_data_path_v10(t->isend, t->irecv, t->test, &c);
	check_net_attr(t->set_net_attr, ctx);
	check_common_slots(COMMON_SLOTS(t), &c);
	assert_int_equal(t->finalize(ctx), FL_OK);
	assert_int_equal(t->finalize(NULL), FL_OK);
}

/*
 * The transport's init runs once per process, so a failing one is tried in a
 * child before any test here has initialised. Exit codes name the broken check.
 */
static int failing_init_in_child(void)
{
	void *ctx = &ctx;

	fake.init_result = FL_ERR_SYSTEM;
	fl_wrap_use_transport(&fake_transport);
	if (ncclNetPlugin_v11.init(&ctx, 1, NULL, quiet_logger, NULL) == FL_OK)
		return 1;
	if (fake.calls[OP_INIT] != 1)
		return 2;
	if (ctx != NULL)
		return 3;
	if (ncclNetPlugin_v11.finalize(ctx) != FL_OK) /* 2.28.9 does call it */
		return 4;
	ctx = &ctx;
	if (ncclNetPlugin_v12.init(&ctx, 2, NULL, quiet_logger, NULL) == FL_OK || ctx != NULL)
		return 5;
	if (ncclNetPlugin_v6.init(quiet_logger) == FL_OK)
		return 6;
	return 0;
}

static void test_failed_init_leaves_ctx_null(void **state)
{
	int status = 0;
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(failing_init_in_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("failing init: check %d in the child went wrong", WEXITSTATUS(status));
}

static int use_fake(void **state)
{
	(void)state;
	fl_wrap_use_transport(&fake_transport);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: it needs a process in which no init has run yet */
		cmocka_unit_test(test_failed_init_leaves_ctx_null),
		cmocka_unit_test(test_v6),
		cmocka_unit_test(test_v7),
		cmocka_unit_test(test_v8),
		cmocka_unit_test(test_v9),
		cmocka_unit_test(test_v10),
		cmocka_unit_test(test_v11),
		cmocka_unit_test(test_v12),
	};

	return cmocka_run_group_tests(tests, use_fake, NULL);
}
