/*
 * FABRICLAB_TRANSPORT=ext: the inner's inits and finalizes balance as they
 * would under NCCL alone. NCCL inits a v11+ plugin per communicator and
 * finalizes each (2.30.7 src/plugin/net.cc:173, 309), unloading it when the
 * last is gone (:314-316) and initing it again for a later communicator; an
 * inner such as aws-ofi-nccl counts its inits and tears down at 0 (its
 * finalize_v11). ext's own process-wide init (comm id 0) must end with the
 * last communicator and come back with the next, and fabriclab's devices and
 * properties (the final report reads them) must not call the finalized inner.
 * Driven through fabriclab's ncclNetPlugin_v12 over flsock built with
 * FLSOCK_RECORDS (tests/inner), which counts inits and finalizes. Each case
 * runs in a child process: the transport is chosen once per process.
 */
#include "ext_nccl.h"
#include "tests/inner/flsock_record.h"

static const struct flsock_record *record_of(const char *inner)
{
	return ext_inner_symbol(inner, "flsock_record");
}

static void *comm_init(uint64_t comm_id)
{
	struct fl_abi_comm_config cfg = { .traffic_class = -1 };
	void *ctx = NULL;

	CHECK(ncclNetPlugin_v12.init(&ctx, comm_id, &cfg, ext_logger, NULL) == 0 && ctx,
	      "init of communicator %llu", (unsigned long long)comm_id);
	return ctx;
}

/* A connection on the communicator, opened and closed: the inner is usable. */
static void connect_once(void *ctx)
{
	unsigned char handle[FL_HANDLE_SIZE] = { 0 };
	struct fl_abi_dev_handle *sdc = NULL, *rdc = NULL;
	void *lc = NULL, *sc = NULL, *rc = NULL;
	int err = ncclNetPlugin_v12.listen(ctx, 0, handle, &lc);

	for (int i = 0; !err && (!sc || !rc) && i < 200000; i++) {
		if (!sc)
			err = ncclNetPlugin_v12.connect(ctx, 0, handle, &sc, &sdc);
		if (!err && !rc)
			err = ncclNetPlugin_v12.accept(lc, &rc, &rdc);
	}
	CHECK(!err && sc && rc, "connect/accept (error %d)", err);
	if (sc)
		CHECK(ncclNetPlugin_v12.close_send(sc) == 0, "closeSend");
	if (rc)
		CHECK(ncclNetPlugin_v12.close_recv(rc) == 0, "closeRecv");
	if (lc)
		CHECK(ncclNetPlugin_v12.close_listen(lc) == 0, "closeListen");
}

static void balanced_case(void)
{
	const struct flsock_record *rec;
	struct fl_abi_props_v12 before, after;
	int ndev = 0, ndev_after = -1;
	void *a, *b, *c;

	ext_choose_inner("flsock-record");
	a = comm_init(41);
	b = comm_init(42);
	rec = record_of("flsock-record");
	if (!rec || !a || !b) {
		CHECK(0, "flsock-record not loaded by fabriclab, or no flsock_record");
		return;
	}
	/* ext's own init for the process, then one per communicator */
	CHECK(rec->inits == 3 && rec->finalizes == 0, "%d inits, %d finalizes", rec->inits,
	      rec->finalizes);
	CHECK(rec->init_comm[0] == 0, "the process-wide init first (comm %llu)",
	      (unsigned long long)rec->init_comm[0]);
	CHECK(ncclNetPlugin_v12.devices(&ndev) == 0 && ndev > 0, "devices");
	memset(&before, 0, sizeof(before));
	CHECK(ncclNetPlugin_v12.get_properties(0, &before) == 0 && before.name, "getProperties");
	connect_once(a);
	CHECK(ncclNetPlugin_v12.finalize(a) == 0, "finalize a");
	CHECK(rec->finalizes == 1, "%d finalizes after the first communicator's", rec->finalizes);
	CHECK(ncclNetPlugin_v12.finalize(b) == 0, "finalize b");
	CHECK(rec->inits == rec->finalizes, "after the last communicator: %d inits, %d "
	      "finalizes: the inner never tears down", rec->inits, rec->finalizes);
	/* What the final report reads, answered without the finalized inner. */
	memset(&after, 0, sizeof(after));
	CHECK(ncclNetPlugin_v12.devices(&ndev_after) == 0 && ndev_after == ndev,
	      "devices after the last finalize: %d (was %d)", ndev_after, ndev);
	CHECK(ncclNetPlugin_v12.get_properties(0, &after) == 0 && after.name && before.name &&
	      !strcmp(after.name, before.name) && after.speed == before.speed,
	      "getProperties after the last finalize: the same device");
	/* A later communicator: the inner inited again for the process, then for it. */
	c = comm_init(43);
	CHECK(rec->inits == 5 && rec->init_comm[3] == 0 && rec->init_comm[4] == 43,
	      "a later communicator: %d inits (comm %llu, %llu)", rec->inits,
	      (unsigned long long)rec->init_comm[3], (unsigned long long)rec->init_comm[4]);
	if (c) {
		connect_once(c);
		CHECK(ncclNetPlugin_v12.finalize(c) == 0, "finalize c");
	}
	CHECK(rec->inits == rec->finalizes, "at the end: %d inits, %d finalizes", rec->inits,
	      rec->finalizes);
}

int main(int argc, char **argv)
{
	char reports[] = "/tmp/fl-ext-finalize.XXXXXX", rm[sizeof(reports) + 16];
	int bad;

	(void)argc, (void)argv;
	if (ext_find_dirs() || !mkdtemp(reports))
		return 1;
	/* Reports on: the final report reads devices and properties after the last finalize. */
	setenv("FABRICLAB_REPORT", "brief", 1);
	setenv("FABRICLAB_REPORT_DIR", reports, 1);
	bad = ext_run_case("NCCL v12 -> ext v12 inner: inits and finalizes balance, the process-wide "
		       "init ends with the last communicator and comes back with the next",
		       balanced_case);
	snprintf(rm, sizeof(rm), "rm -rf '%s'", reports);
	if (system(rm))
		bad = 1;
	return bad ? 1 : 0;
}
