/*
 * A test artifact: the project's socket transport as a standalone NCCL net
 * plugin exporting exactly one ncclNetPlugin_vN (FLSOCK_VERSION), so that
 * fabriclab's ext transport can wrap it like any third-party plugin. Never
 * installed. Built with one misbehaviour at most, to stand in for plugins
 * NCCL tolerates:
 *   FLSOCK_NO_SIZES      test never writes sizes (NCCL zero-fills them)
 *   FLSOCK_NULL_REQUESTS isend/irecv say "not now" (NULL request) two calls in three,
 *                        connect/accept need several calls
 *   FLSOCK_INIT_FAILS    init fails (FL_ERR_SYSTEM, ncclSystemError: 2)
 *   FLSOCK_NO_DEVICES    init succeeds, devices says 0 (NCCL 2.28.9 net.cc:181 then skips it)
 *   FLSOCK_FILLS_IN_INIT exports only name and init; init fills the rest (IBext, flsock_abi.h)
 *   FLSOCK_FILL_MISSES_TEST  ... and leaves test NULL
 *   FLSOCK_READS_CONFIG  init (v11+) and connect (v10) dereference the config with no
 *                        NULL check, as NCCL's own IB plugin does in init (2.28.9
 *                        src/transport/net_ib.cc:854, 2.30.7 net_ib/init.cc:529) and as
 *                        aws-ofi-nccl's init_v12 did when the shim passed NULL (issue 28).
 *                        With FLSOCK_WANT_TRAFFIC_CLASS=N, a config whose traffic class
 *                        is not N fails the call with a WARN saying what came.
 *   FLSOCK_RECORDS       records what init, connect, irecv and setNetAttr were given, and
 *                        counts inits and finalizes (what aws-ofi-nccl counts)
 *                        (flsock_record.h), for tests that check what ext forwards
 *   FLSOCK_WAIT_ACCEPT   google fastsocket's connection: connect returns at once, the
 *                        first test of a send blocks until the peer accepted
 *                        (flsock_gate.h says where fastsocket does so)
 *   FLSOCK_WAIT_CTS      NCCL IB's and IBext's isend: no request until the receiver posted
 *                        the buffer (flsock_cts.h says where NCCL does so)
 *   FLSOCK_IN_ORDER      fastsocket's tests: test() on any but a comm's oldest outstanding
 *                        request fails (flsock_order.h says where fastsocket does so)
 *   FLSOCK_EXTRAS        also exports a tuner, CollNet and GIN tables (flsock_extras.h)
 */
#include <stdatomic.h>
#include <string.h>

#include "plugin/abi/nccl_abi.h"
#include "plugin/base/identity.h"
#include "plugin/base/log.h"
#include "plugin/transport/transport.h"

#ifndef FLSOCK_VERSION
#error "FLSOCK_VERSION (5..12) must be defined"
#endif
#define V FLSOCK_VERSION
#define EXPORT __attribute__((visibility("default")))

static const struct fl_transport *const tp = &fl_socket_transport;

#ifdef FLSOCK_RECORDS
#include "flsock_record.h"
EXPORT struct flsock_record flsock_record;
#define RECORD(stmt) stmt
#else
#define RECORD(stmt)
#endif

#ifdef FLSOCK_WAIT_ACCEPT
#include "flsock_gate.h"
#else
static int gate_listen(const void *handle, void *listen_comm)
{
	(void)handle, (void)listen_comm;
	return FL_OK;
}

static int gate_join(const void *handle, void *send_comm)
{
	(void)handle, (void)send_comm;
	return FL_OK;
}

static int gate_answer(void *listen_comm)
{
	(void)listen_comm;
	return FL_OK;
}

static void gate_close_listen(void *listen_comm)
{
	(void)listen_comm;
}

static void gate_note_send(void *send_comm, void *request)
{
	(void)send_comm, (void)request;
}

static int gate_wait(void *request)
{
	(void)request;
	return FL_OK;
}

static void gate_close_send(void *send_comm)
{
	(void)send_comm;
}
#endif

#ifdef FLSOCK_IN_ORDER
#include "flsock_order.h"
#else
static int order_note(const void *comm, const void *request)
{
	(void)comm, (void)request;
	return FL_OK;
}

static int order_check(const void *request)
{
	(void)request;
	return FL_OK;
}

static void order_done(const void *request)
{
	(void)request;
}

static void order_close(const void *comm)
{
	(void)comm;
}
#endif

#ifdef FLSOCK_WAIT_CTS
#include "flsock_cts.h"
#else
#define cts_listen(handle, comm) FL_OK
#define cts_join(handle, comm) FL_OK
#define cts_accept(listen_comm, comm) FL_OK
#define cts_grant(comm) FL_OK
#define cts_take(comm) 1
#define cts_give_back(comm) ((void)0)
#define cts_close(comm) ((void)0)
#endif

#ifdef FLSOCK_NULL_REQUESTS
static _Atomic unsigned calls;
/* true two calls in three: the caller must come back */
static int not_now(void)
{
	return atomic_fetch_add(&calls, 1) % 3 != 0;
}
#else
static int not_now(void)
{
	return 0;
}
#endif

#ifdef FLSOCK_READS_CONFIG
#include <stdlib.h>

/*
 * Reads the traffic class with no NULL check, as the plugin it stands for.
 * comm_id 0 is the ext transport's own process-wide init (no communicator,
 * no config of NCCL's to pass on), where UNDEF is the right value.
 */
static int read_config(const char *call, uint64_t comm_id, const struct fl_abi_comm_config *cfg)
{
	const char *want = getenv("FLSOCK_WANT_TRAFFIC_CLASS");
	int tc = ((const volatile struct fl_abi_comm_config *)cfg)->traffic_class;

	if (!want || !comm_id || tc == atoi(want))
		return 0;
	FL_WARN("flsock: %s got traffic class %d, FLSOCK_WANT_TRAFFIC_CLASS=%s", call, tc, want);
	return 1;
}
#endif

static int flsock_init(fl_logger_fn logger)
{
	int ndev = 0;

	fl_log_set_logger(logger);
#ifdef FLSOCK_INIT_FAILS
	FL_WARN("flsock: init fails on purpose (a test plugin)");
	return FL_ERR_SYSTEM;
#endif
	if (tp->init() || tp->devices(&ndev))
		return FL_ERR_SYSTEM;
	FL_INFO("flsock: the socket transport as ncclNetPlugin_v%d, %d device(s)", V, ndev);
	return FL_OK;
}

static void self_of(int dev, struct fl_endpoint *self)
{
	struct fl_props p = { 0 };

	if (tp->get_properties(dev, &p))
		p.name = "";
	fl_identity_local(self, dev, p.name, 0);
}

static int flsock_listen(int dev, void *handle, void **listen_comm)
{
	struct fl_endpoint self;

	int rc;

	self_of(dev, &self);
	rc = tp->listen(dev, &self, handle, listen_comm);
	if (!rc && (gate_listen(handle, *listen_comm) || cts_listen(handle, *listen_comm))) {
		tp->close_listen(*listen_comm);
		*listen_comm = NULL;
		return FL_ERR_SYSTEM;
	}
	return rc;
}

static int flsock_connect(int dev, void *handle, void **send_comm)
{
	struct fl_endpoint self;

	*send_comm = NULL;
	if (not_now())
		return FL_OK;
	int rc;

	self_of(dev, &self);
	rc = tp->connect(dev, &self, handle, send_comm);
	if (!rc && *send_comm && (gate_join(handle, *send_comm) || cts_join(handle, *send_comm))) {
		tp->close_send(*send_comm);
		*send_comm = NULL;
		return FL_ERR_SYSTEM;
	}
	return rc;
}

static int flsock_accept(void *listen_comm, void **recv_comm)
{
	int rc;

	*recv_comm = NULL;
	if (not_now())
		return FL_OK;
	rc = tp->accept(listen_comm, recv_comm);
	if (!rc && *recv_comm)
		rc = cts_accept(listen_comm, *recv_comm);
	return !rc && *recv_comm ? gate_answer(listen_comm) : rc;
}

static int flsock_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	return tp->reg_mr(comm, data, size, type, mhandle);
}

static int flsock_isend(void *comm, void *data, size_t size, int tag, void *mh, void **request)
{
	int rc;

	*request = NULL;
	if (not_now() || !cts_take(comm))
		return FL_OK;
	rc = tp->isend(comm, data, size, tag, mh, request);
	if (!rc && !*request)
		cts_give_back(comm);
	if (!rc)
		gate_note_send(comm, *request);
	return rc ? rc : order_note(comm, *request);
}

static int flsock_irecv(void *comm, int n, void **data, size_t *sizes, int *tags, void **mhs,
			void **request)
{
	int rc;

	RECORD(flsock_record.irecvs++);
	RECORD(flsock_record.irecv_request_in = *request);
	*request = NULL;
	if (not_now())
		return FL_OK;
	rc = tp->irecv(comm, n, data, sizes, tags, mhs, request);
	if (!rc && *request)
		rc = cts_grant(comm);
	return rc ? rc : order_note(comm, *request);
}

static int flsock_test(void *request, int *done, int *sizes)
{
	struct fl_xfer_times times = { 0 };
	int got[FL_MAX_RECVS] = { 0 };
	int rc = order_check(request);

	if (!rc)
		rc = gate_wait(request);
	if (rc)
		return rc;
	rc = tp->test(request, done, got, &times);
	if (!rc && *done)
		order_done(request);

#ifndef FLSOCK_NO_SIZES
	if (!rc && *done && sizes)
		sizes[0] = got[0]; /* the socket transport advertises maxRecvs 1 here */
#else
	(void)sizes;
#endif
	return rc;
}

#include "flsock_abi.h"

#ifdef FLSOCK_EXTRAS
#include "flsock_extras.h"
#endif
