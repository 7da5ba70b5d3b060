/*
 * aws-ofi-nccl's early receive completion through ext. NCCL presets a
 * receive's *request to NCCL_NET_OPTIONAL_RECV_COMPLETION for LL and LL128
 * steps of one sub (2.30.7 src/transport/net.cc:1585-1589; on by default,
 * :187): it checks the data's flags itself. aws-ofi-nccl v1.21.1 then says the
 * receive is done once its control message went, before the data lands, and
 * writes 0 as its size (src/nccl_ofi_rdma.cpp:3562-3564, 3427, 494, 2234-2299);
 * the mimic inner does the same (tests/inner/mimic_net.c, `early`).
 *
 * fabriclab forwards the hint (NCCL sees what it would see unwrapped) but must
 * not take that completion for the data's: the receive is counted unsized and
 * not timed, on the direct path and through ext's own; an unhinted receive
 * over the same inner stays timed and sized.
 */
#include <time.h>

#include "ext_nccl.h"
#include "tests/inner/mimic_record.h"

#define BYTES 8192
#define LL_SLOT (64 << 10) /* what NCCL posts for an LL step (src/init.cc:810, 1 slice step) */
#define OPTIONAL_RECV ((void *)0x1)

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static unsigned char out[BYTES], in[LL_SLOT];
static void *smh, *rmh;

static void *post_recv(void *rc, void *preset)
{
	void *rreq = NULL, *data = in, *rph = NULL;
	size_t slot = LL_SLOT;
	int tag = 1;

	for (int i = 0; i < 1000 && !rreq; i++) { /* NCCL presets *request before each try */
		rreq = preset;
		CHECK(ncclNetPlugin_v12.irecv(rc, 1, &data, &slot, &tag, &rmh, &rph, &rreq) == 0,
		      "irecv");
	}
	return rreq;
}

/* The send posted, then both tested until done; the receive's last test wrote *got. */
static void finish_step(void *sc, void *rreq, int *rd, int *got)
{
	void *sreq = NULL, *sph = NULL;
	int sd = 0, ssz = 0;

	while (!sreq)
		CHECK(ncclNetPlugin_v12.isend(sc, out, BYTES, 1, smh, sph, &sreq) == 0, "isend");
	for (int i = 0; (!sd || !*rd) && i < 1000000; i++) {
		if (!*rd)
			CHECK(ncclNetPlugin_v12.test(rreq, rd, got) == 0, "test recv");
		if (!sd)
			CHECK(ncclNetPlugin_v12.test(sreq, &sd, &ssz) == 0, "test send");
	}
	CHECK(sd && *rd, "both done");
}

/* The first step carries the hidden hello ahead of it; *took: its posted -> done, at most. */
static void warm_up(void *sc, void *rc, uint64_t *took)
{
	uint64_t t0 = now_ns();
	int rd = 0, got = 0;

	finish_step(sc, post_recv(rc, NULL), &rd, &got);
	*took = now_ns() - t0;
	CHECK(got == BYTES, "the warm-up step moved %d bytes", got);
}

/*
 * One LL step: the receive posted (hinted or not) and tested `wait` ns later,
 * the send only after that. *early: the receive was done before the send.
 */
static void one_step(void *sc, void *rc, void *preset, uint64_t wait, int *early)
{
	struct timespec pause = { (time_t)(wait / 1000000000u), (long)(wait % 1000000000u) };
	void *rreq;
	int rd = 0, got = -1;

	memset(in, 0, sizeof(in));
	rreq = post_recv(rc, preset);
	nanosleep(&pause, NULL);
	CHECK(ncclNetPlugin_v12.test(rreq, &rd, &got) == 0, "test recv");
	*early = rd;
	finish_step(sc, rreq, &rd, &got);
	CHECK(got == 0 || !*early, "NCCL read %d bytes for the early receive, the inner wrote 0",
	      got);
	CHECK(in[0] == 0x6c && in[BYTES - 1] == 0x6c, "the data landed");
}

/*
 * Warm-up, then one LL step: hinted, its receive is done early and its time
 * not counted, so the receive end's wire time is the warm-up's alone (at most
 * `took`, one busy stretch); unhinted, both are timed: two stretches, the
 * second at least `wait` long.
 */
static void check_times(json_t *recv, void *preset, uint64_t took, uint64_t wait)
{
	double wire = ext_real(recv, "wire_seconds");

	if (preset) {
		CHECK(ext_int(recv, "messages") == 2 && ext_int(recv, "unsized_messages") == 1,
		      "the early receive is counted unsized (%lld of %lld)",
		      ext_int(recv, "unsized_messages"), ext_int(recv, "messages"));
		/* took is read on CLOCK_MONOTONIC, the report on fabriclab's clock: ppm apart */
		CHECK(ext_int(recv, "wire_runs") == 1 && wire <= 1.01 * (double)took / 1e9 + 2e-6,
		      "its completion, before the data, was timed as the data's: %lld busy "
		      "stretches, %.6f s on the wire (the warm-up took %.6f s)",
		      ext_int(recv, "wire_runs"), wire, (double)took / 1e9);
		CHECK(ext_int(recv, "bytes") == BYTES, "%lld bytes counted, the warm-up's %d",
		      ext_int(recv, "bytes"), BYTES);
	} else {
		CHECK(ext_int(recv, "bytes") == 2 * BYTES && ext_int(recv, "unsized_messages") == 0 &&
		      ext_int(recv, "wire_runs") == 2 && wire >= 0.99 * (double)wait / 1e9,
		      "unhinted receives are sized and timed: %lld bytes, %lld unsized, %lld "
		      "stretches, %.6f s", ext_int(recv, "bytes"), ext_int(recv, "unsized_messages"),
		      ext_int(recv, "wire_runs"), wire);
	}
}

static void early_case(void *preset)
{
	struct fl_abi_comm_config cfg = { .traffic_class = -1 };
	const struct mimic_record *rec;
	void *ctx = NULL, *sc = NULL, *rc = NULL;
	char dir[PATH_MAX];
	json_t *report, *recv, *send;
	uint64_t took = 0, wait;
	int early = 0;

	ext_report_dir(dir, sizeof(dir), "ext-early");
	ext_choose_inner("mimic-v12");
	setenv("FABRICLAB_MIMIC", "early", 1);
	CHECK(ncclNetPlugin_v12.init(&ctx, 42, &cfg, ext_logger, NULL) == 0, "init");
	if (ext_pair_v12(ctx, 0, &sc, &rc)) {
		CHECK(0, "connect/accept over mimic-v12");
		return;
	}
	memset(out, 0x6c, sizeof(out));
	CHECK(ncclNetPlugin_v12.reg_mr(sc, out, BYTES, FL_PTR_HOST, &smh) == 0, "regMr");
	CHECK(ncclNetPlugin_v12.reg_mr(rc, in, LL_SLOT, FL_PTR_HOST, &rmh) == 0, "regMr");
	warm_up(sc, rc, &took);
	wait = 4 * took > 20000000u ? 4 * took : 20000000u; /* 20 ms, or well past a slow warm-up */
	one_step(sc, rc, preset, wait, &early);
	rec = ext_inner_symbol("mimic-v12", "mimic_record");
	CHECK(rec && rec->hinted_irecvs == (preset ? 1 : 0) && rec->early_done == (preset ? 1 : 0),
	      "the inner saw %d hinted receive(s) and completed %d early", rec ? rec->hinted_irecvs
	      : -1, rec ? rec->early_done : -1);
	CHECK(early == (preset != NULL), "the receive was %sdone before the send", early ? "" :
	      "not ");
	ncclNetPlugin_v12.dereg_mr(sc, smh);
	ncclNetPlugin_v12.dereg_mr(rc, rmh);
	ncclNetPlugin_v12.close_send(sc);
	ncclNetPlugin_v12.close_recv(rc);
	CHECK(ncclNetPlugin_v12.finalize(ctx) == 0, "finalize");
	report = ext_report(dir);
	recv = ext_hop(report, "recv");
	send = ext_hop(report, "send");
	CHECK(recv && send, "the report has both ends' hops");
	if (recv)
		check_times(recv, preset, took, wait);
	CHECK(send && ext_int(send, "bytes") == 2 * BYTES, "the send counts its bytes");
	json_decref(report);
	ext_remove_dir(dir);
}

static void hinted_direct(void)
{
	early_case(OPTIONAL_RECV);
}

static void hinted_through_ext(void)
{
	setenv("FABRICLAB_EXT_DIRECT", "0", 1);
	early_case(OPTIONAL_RECV);
}

static void unhinted_direct(void)
{
	early_case(NULL);
}

static void unhinted_through_ext(void)
{
	setenv("FABRICLAB_EXT_DIRECT", "0", 1);
	early_case(NULL);
}

int main(void)
{
	int bad = 0;

	if (ext_find_dirs())
		return 1;
	bad += ext_run_case("a hinted receive done early (aws-ofi-nccl) is counted, not timed, "
			    "on the direct path", hinted_direct);
	bad += ext_run_case("the same through ext's own path", hinted_through_ext);
	bad += ext_run_case("an unhinted receive over the same inner is sized and timed",
			    unhinted_direct);
	bad += ext_run_case("the same through ext's own path", unhinted_through_ext);
	return bad ? 1 : 0;
}
