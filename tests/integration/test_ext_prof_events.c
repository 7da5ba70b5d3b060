/*
 * An inner that emits net-plugin profiler events, as NCCL's IB plugin does by
 * default (2.30.7 src/transport/net_ib/p2p.cc:319, 216-219, 489-490;
 * makefiles/common.mk:192), on the handle each isend and irecv buffer gets.
 * NCCL's callback takes that handle for its own proxy-event handle and reads
 * the step's sub-args through it at every start (2.30.7
 * src/plugin/profiler.cc:782-800); `nccl_callback` below does the same, so an
 * event on a handle NCCL never made reads garbage or NULL, as in NCCL.
 *
 * fabriclab's hidden hello is a request NCCL never made: its events must not
 * reach NCCL's callback, and the inner must still get a handle it may emit on.
 * NCCL's own requests keep NCCL's handles, their events reach NCCL unchanged.
 * An NCCL before v10 passes neither a callback nor handles: the inner (v12)
 * still gets a callback at init and handles on every request, as NCCL v10+
 * always gives it.
 */
#include "ext_nccl.h"
#include "tests/inner/mimic_record.h"

#define BYTES 4096
#define MESSAGES 3
#define NET_PLUGIN_EVENTS 0x1000 /* ncclProfileNetPlugin's bit in the activation mask */

/* NCCL's proxy-event handle and the sub-args it points to: what the callback reads. */
struct fake_sub {
	int activation_mask;
};

struct fake_proxy_handle {
	void *step_event;
	struct fake_sub *sub;
};

static struct fake_sub sub = { NET_PLUGIN_EVENTS };
static struct fake_proxy_handle handles[2 * MESSAGES];
static int starts, stops, foreign;
static char event_token;

static int nccl_callback(void **event, int type, void *phandle, int64_t plugin_id, void *data)
{
	struct fake_proxy_handle *p = phandle;

	(void)plugin_id, (void)data;
	if (type == 0) { /* start: NCCL follows the handle to the sub-args, unchecked */
		if (p->sub->activation_mask & NET_PLUGIN_EVENTS) {
			foreign += p < handles || p >= handles + 2 * MESSAGES;
			starts++;
			*event = &event_token;
		}
		return 0;
	}
	stops += type == 1 && *event == &event_token;
	return 0;
}

static void send_messages_v12(void *sc, void *rc)
{
	static unsigned char out[BYTES], in[BYTES];
	void *smh = NULL, *rmh = NULL;

	CHECK(ncclNetPlugin_v12.reg_mr(sc, out, BYTES, FL_PTR_HOST, &smh) == 0, "regMr");
	CHECK(ncclNetPlugin_v12.reg_mr(rc, in, BYTES, FL_PTR_HOST, &rmh) == 0, "regMr");
	for (int i = 0; i < MESSAGES; i++) {
		int got = 0;

		handles[2 * i].sub = handles[2 * i + 1].sub = &sub;
		CHECK(ext_transfer_v12(sc, rc, out, smh, in, rmh, BYTES, BYTES, NULL,
				       &handles[2 * i], &handles[2 * i + 1], &got) == 0,
		      "message %d", i);
	}
	ncclNetPlugin_v12.dereg_mr(sc, smh);
	ncclNetPlugin_v12.dereg_mr(rc, rmh);
}

static void check_inner(int data_requests)
{
	const struct mimic_record *rec = ext_inner_symbol("mimic-v12", "mimic_record");

	if (!rec) {
		CHECK(0, "mimic-v12 not loaded by fabriclab");
		return;
	}
	CHECK(rec->init_prof_null == 0, "the inner was given no profiler callback (%d of %d "
	      "inits)", rec->init_prof_null, rec->inits);
	CHECK(rec->event_starts == data_requests + 2 && rec->event_stops == rec->event_starts,
	      "the inner started %d events (%d requests and the hello's 2), stopped %d",
	      rec->event_starts, data_requests, rec->event_stops);
}

static void nccl_v12(void)
{
	struct fl_abi_comm_config cfg = { .traffic_class = -1 };
	void *ctx = NULL, *sc = NULL, *rc = NULL;

	ext_choose_inner("mimic-v12");
	setenv("FABRICLAB_MIMIC", "events", 1);
	CHECK(ncclNetPlugin_v12.init(&ctx, 42, &cfg, ext_logger, nccl_callback) == 0, "init");
	if (ext_pair_v12(ctx, 0, &sc, &rc)) {
		CHECK(0, "connect/accept over mimic-v12");
		return;
	}
	send_messages_v12(sc, rc);
	ncclNetPlugin_v12.close_send(sc);
	ncclNetPlugin_v12.close_recv(rc);
	ncclNetPlugin_v12.finalize(ctx);
	CHECK(starts == 2 * MESSAGES && stops == starts && !foreign, "NCCL's callback saw %d "
	      "starts (%d on handles it never made), %d stops; want the %d of its requests",
	      starts, foreign, stops, 2 * MESSAGES);
	check_inner(2 * MESSAGES);
}

/* NCCL 2.23 (v9): no callback at init, no handles on isend/irecv. */
static void nccl_v9(void)
{
	static unsigned char out[BYTES], in[BYTES];
	unsigned char handle[FL_HANDLE_SIZE] = { 0 };
	struct fl_abi_dev_handle *sdc = NULL, *rdc = NULL;
	void *lc = NULL, *sc = NULL, *rc = NULL, *smh = NULL, *rmh = NULL, *data = in;
	size_t size = BYTES;
	int err, tag = 1;

	ext_choose_inner("mimic-v12");
	setenv("FABRICLAB_MIMIC", "events", 1);
	CHECK(ncclNetPlugin_v9.init(ext_logger) == 0, "init");
	err = ncclNetPlugin_v9.listen(0, handle, &lc);
	for (int i = 0; !err && (!sc || !rc) && i < 200000; i++) {
		if (!sc)
			err = ncclNetPlugin_v9.connect(0, handle, &sc, &sdc);
		if (!err && !rc)
			err = ncclNetPlugin_v9.accept(lc, &rc, &rdc);
	}
	CHECK(!err && sc && rc, "connect/accept (error %d)", err);
	if (!sc || !rc)
		return;
	ncclNetPlugin_v9.reg_mr(sc, out, BYTES, FL_PTR_HOST, &smh);
	ncclNetPlugin_v9.reg_mr(rc, in, BYTES, FL_PTR_HOST, &rmh);
	for (int m = 0; m < MESSAGES; m++) {
		void *sreq = NULL, *rreq = NULL;
		int sd = 0, rd = 0, sz = 0;

		while (!rreq)
			CHECK(ncclNetPlugin_v9.irecv(rc, 1, &data, &size, &tag, &rmh, &rreq) == 0,
			      "irecv");
		while (!sreq)
			CHECK(ncclNetPlugin_v9.isend(sc, out, BYTES, tag, smh, &sreq) == 0, "isend");
		for (int i = 0; (!sd || !rd) && i < 1000000; i++) {
			if (!rd)
				CHECK(ncclNetPlugin_v9.test(rreq, &rd, &sz) == 0, "test recv");
			if (!sd)
				CHECK(ncclNetPlugin_v9.test(sreq, &sd, &sz) == 0, "test send");
		}
		CHECK(sd && rd, "message %d", m);
	}
	ncclNetPlugin_v9.close_send(sc);
	ncclNetPlugin_v9.close_recv(rc);
	check_inner(2 * MESSAGES);
	{
		const struct mimic_record *rec = ext_inner_symbol("mimic-v12", "mimic_record");

		CHECK(rec && rec->last_event_phandle != NULL, "the inner's last request had no "
		      "profiler handle to emit on");
	}
}

int main(void)
{
	int bad = 0;

	if (ext_find_dirs())
		return 1;
	setenv("FABRICLAB_REPORT", "off", 1);
	bad += ext_run_case("NCCL v12: the hidden hello's events stay out of NCCL's callback, "
			    "NCCL's requests' reach it", nccl_v12);
	bad += ext_run_case("NCCL v9 (no callback, no handles): the v12 inner still gets both",
			    nccl_v9);
	return bad ? 1 : 0;
}
