/*
 * What NCCL hands fabriclab beyond the data reaches a plugin wrapped by
 * FABRICLAB_TRANSPORT=ext unchanged: fabriclab's own tables driven as NCCL
 * drives them, over flsock built with FLSOCK_RECORDS (tests/inner), which
 * records what it was given.
 *   - the v11+ init config (traffic class) of the communicator (2.30.7 src/plugin/net.cc:170-173);
 *   - setNetAttr's hints with the inner's own ctx (2.30.7 src/transport/net.cc:223-224);
 *   - NCCL_NET_OPTIONAL_RECV_COMPLETION left in *request before an LL/LL128
 *     irecv (2.30.7 src/transport/net.cc:1589), and nothing where NCCL left NULL;
 *   - v10: the config pointer NCCL passes with each connect, itself
 *     (2.27.7 src/transport/net.cc:714).
 * Each case runs in a child process: the transport is chosen once per process.
 */
#include "ext_nccl.h"
#include "tests/inner/flsock_record.h"

#define BYTES 4096

static const struct flsock_record *record_of(const char *inner)
{
	return ext_inner_symbol(inner, "flsock_record");
}

/* One message; the receive posted with *request preset to `preset` (each try, as NCCL does). */
static void one_message(void *sc, void *rc, void *preset, const struct flsock_record *rec)
{
	static unsigned char out[BYTES], in[BYTES];
	void *smh = NULL, *rmh = NULL, *sreq = NULL, *rreq = NULL, *data = in, *ph = NULL;
	size_t size = BYTES;
	int tag = 1, sd = 0, rd = 0, ssz = 0, rsz = 0, guard = 0;

	memset(out, 0x5a, sizeof(out));
	memset(in, 0, sizeof(in));
	CHECK(ncclNetPlugin_v12.reg_mr(sc, out, BYTES, FL_PTR_HOST, &smh) == 0, "regMr");
	CHECK(ncclNetPlugin_v12.reg_mr(rc, in, BYTES, FL_PTR_HOST, &rmh) == 0, "regMr");
	while (!rreq && guard++ < 100000) {
		rreq = preset;
		CHECK(ncclNetPlugin_v12.irecv(rc, 1, &data, &size, &tag, &rmh, &ph, &rreq) == 0,
		      "irecv");
	}
	CHECK(rec->irecv_request_in == preset, "the inner's irecv found %p in *request, NCCL "
	      "left %p", rec->irecv_request_in, preset);
	while (!sreq && guard++ < 200000)
		CHECK(ncclNetPlugin_v12.isend(sc, out, BYTES, tag, smh, NULL, &sreq) == 0, "isend");
	while ((!sd || !rd) && sreq && rreq && guard++ < 2000000) {
		if (!rd)
			CHECK(ncclNetPlugin_v12.test(rreq, &rd, &rsz) == 0, "test recv");
		if (!sd)
			CHECK(ncclNetPlugin_v12.test(sreq, &sd, &ssz) == 0, "test send");
	}
	CHECK(sd && rd && rsz == BYTES && in[0] == 0x5a && in[BYTES - 1] == 0x5a,
	      "the message arrived (done %d/%d, %d bytes)", sd, rd, rsz);
	CHECK(ncclNetPlugin_v12.dereg_mr(sc, smh) == 0, "deregMr");
	CHECK(ncclNetPlugin_v12.dereg_mr(rc, rmh) == 0, "deregMr");
}

static void nccl_v12_case(void)
{
	struct fl_abi_comm_config cfg = { .traffic_class = 5 };
	struct fl_abi_net_attr attr = { .send_comm_attr = { .max_concurrent_peers = 3 },
					 .op = 7, .algo = 2, .proto = 1 };
	const struct flsock_record *rec;
	void *ctx = NULL, *sc = NULL, *rc = NULL;
	int seen = 0;

	ext_choose_inner("flsock-record");
	CHECK(ncclNetPlugin_v12.init(&ctx, 42, &cfg, ext_logger, NULL) == 0, "init");
	rec = record_of("flsock-record");
	if (!rec) {
		CHECK(0, "flsock-record not loaded by fabriclab, or no flsock_record");
		return;
	}
	for (int i = 0; i < rec->inits && i < FLSOCK_RECORD_INITS; i++)
		seen |= rec->init_comm[i] == 42 && rec->init_tc[i] == 5;
	CHECK(seen, "no inner init for communicator 42 with traffic class 5 (%d inits)", rec->inits);
	CHECK(ncclNetPlugin_v12.set_net_attr(ctx, &attr) == 0, "setNetAttr");
	CHECK(rec->attr_calls == 1 && rec->attr_ctx_ok, "setNetAttr reached the inner %d times, "
	      "its ctx %s", rec->attr_calls, rec->attr_ctx_ok ? "right" : "wrong");
	CHECK(rec->attr.op == 7 && rec->attr.algo == 2 && rec->attr.proto == 1 &&
	      rec->attr.send_comm_attr.max_concurrent_peers == 3, "the hints arrived unchanged");
	if (ext_pair_v12(ctx, 0, &sc, &rc)) {
		CHECK(0, "connect/accept over flsock-record");
		return;
	}
	one_message(sc, rc, FL_OPTIONAL_RECV_COMPLETION, rec);
	one_message(sc, rc, NULL, rec);
	CHECK(ncclNetPlugin_v12.close_send(sc) == 0, "closeSend");
	CHECK(ncclNetPlugin_v12.close_recv(rc) == 0, "closeRecv");
	CHECK(ncclNetPlugin_v12.finalize(ctx) == 0, "finalize");
}

static void nccl_v10_case(void)
{
	struct fl_abi_comm_config cfg = { .traffic_class = 9 };
	unsigned char handle[FL_HANDLE_SIZE] = { 0 };
	struct fl_abi_dev_handle *sdc = NULL, *rdc = NULL;
	const struct flsock_record *rec;
	void *lc = NULL, *sc = NULL, *rc = NULL;
	int err;

	ext_choose_inner("flsock-record-v10");
	CHECK(ncclNetPlugin_v10.init(ext_logger, NULL) == 0, "init");
	rec = record_of("flsock-record-v10");
	if (!rec) {
		CHECK(0, "flsock-record-v10 not loaded by fabriclab, or no flsock_record");
		return;
	}
	err = ncclNetPlugin_v10.listen(0, handle, &lc);
	for (int i = 0; !err && (!sc || !rc) && i < 200000; i++) {
		if (!sc)
			err = ncclNetPlugin_v10.connect(0, &cfg, handle, &sc, &sdc);
		if (!err && !rc)
			err = ncclNetPlugin_v10.accept(lc, &rc, &rdc);
	}
	CHECK(!err && sc && rc, "connect/accept (error %d)", err);
	CHECK(rec->connects > 0 && rec->connect_config == &cfg && rec->connect_tc == 9,
	      "the inner's connect got config %p (traffic class %d), NCCL passed %p (9)",
	      rec->connect_config, rec->connect_tc, (void *)&cfg);
	if (sc)
		CHECK(ncclNetPlugin_v10.close_send(sc) == 0, "closeSend");
	if (rc)
		CHECK(ncclNetPlugin_v10.close_recv(rc) == 0, "closeRecv");
}

int main(int argc, char **argv)
{
	int bad = 0;

	(void)argc, (void)argv;
	if (ext_find_dirs())
		return 1;
	setenv("FABRICLAB_REPORT", "off", 1);
	bad += ext_run_case("NCCL v12 -> ext: init config, setNetAttr, optional-recv hint reach the "
			"inner", nccl_v12_case);
	bad += ext_run_case("NCCL v10 -> ext v10 inner: NCCL's own connect config pointer",
			nccl_v10_case);
	return bad ? 1 : 0;
}
