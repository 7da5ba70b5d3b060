/*
 * Receive sizes over ext when the inner never writes them (google fastsocket:
 * its test leaves sizes alone, net_fastsocket.cc:1432-1475 at b3ff1c6). NCCL
 * posts every receive as a whole slot, stepSize * sliceSteps (2.30.7
 * src/transport/net.cc:1566-1572): 1 MiB for a Simple ring all-reduce (4 MiB
 * buffer over NCCL_STEPS 8, src/init.cc:813, src/include/device.h:26, 2 slice
 * steps, src/include/collectives.h:19, src/enqueue.cc:2224) and 64 KiB for LL
 * (src/init.cc:810, 1 slice step), while the sender sends what the step holds:
 * less on a partial Simple step, a few lines on an LL one. NCCL zero-fills the
 * sizes before test (:1617-1619) and takes what test wrote as the step's
 * transSize (:1632), so unwrapped it reads 0.
 *
 * Through fabriclab: NCCL must read 0 too (never the posted slot), the
 * receiving end's report counts those receives as unsized (0 bytes, timed),
 * and the merged report (`fabriclab report`) gives the hop's receive view the
 * sender's bytes: receive bytes = send bytes, Simple and LL, through ext's own
 * path, on the direct path, and over fastsocket's stand-in on sockets.
 */
#include "ext_nccl.h"

#define SIMPLE_SLOT (1u << 20) /* 512 KiB steps, 2 per slice */
#define LL_SLOT (64u << 10)
#define OPTIONAL_RECV ((void *)0x1)

static const char *inner;

struct step {
	size_t slot, bytes;
	void *preset; /* NCCL's hint for LL and LL128 receives of one sub (net.cc:1585-1589) */
};

static const struct step steps[] = {
	{ SIMPLE_SLOT, SIMPLE_SLOT, NULL },   { SIMPLE_SLOT, SIMPLE_SLOT, NULL },
	{ SIMPLE_SLOT, 300000, NULL },        /* the op's last, partial step */
	{ LL_SLOT, 4096, OPTIONAL_RECV },     { LL_SLOT, 1040, OPTIONAL_RECV },
	{ LL_SLOT, LL_SLOT, OPTIONAL_RECV },
};
#define NSTEPS (sizeof(steps) / sizeof(steps[0]))

static size_t move_steps(void *sc, void *rc)
{
	static unsigned char out[SIMPLE_SLOT], in[SIMPLE_SLOT];
	void *smh = NULL, *rmh = NULL, *sph = NULL, *rph = NULL;
	size_t sent = 0;

	CHECK(ncclNetPlugin_v12.reg_mr(sc, out, sizeof(out), FL_PTR_HOST, &smh) == 0, "regMr");
	CHECK(ncclNetPlugin_v12.reg_mr(rc, in, sizeof(in), FL_PTR_HOST, &rmh) == 0, "regMr");
	for (size_t i = 0; i < NSTEPS; i++) {
		const struct step *s = &steps[i];
		int got = -1;

		memset(out, (int)(0x20 + i), s->bytes);
		memset(in, 0, s->slot);
		if (ext_transfer_v12(sc, rc, out, smh, in, rmh, s->bytes, s->slot, s->preset, &sph,
				     &rph, &got)) {
			CHECK(0, "step %zu (%zu of %zu bytes) did not complete", i, s->bytes,
			      s->slot);
			break;
		}
		CHECK(in[0] == out[0] && in[s->bytes - 1] == out[0], "step %zu's data arrived", i);
		CHECK(got == 0, "step %zu: NCCL read %d bytes received; unwrapped it reads 0 (the "
		      "inner wrote none, NCCL zero-filled), never the %zu-byte slot it posted",
		      i, got, s->slot);
		sent += s->bytes;
	}
	ncclNetPlugin_v12.dereg_mr(sc, smh);
	ncclNetPlugin_v12.dereg_mr(rc, rmh);
	return sent;
}

/* The receiving end's own report: unsized, 0 bytes, every receive still counted and timed. */
static void check_own_report(json_t *report, size_t sent)
{
	json_t *send = ext_hop(report, "send"), *recv = ext_hop(report, "recv");

	if (!send || !recv) {
		CHECK(0, "the report has no send or no receive hop");
		return;
	}
	CHECK(ext_int(send, "bytes") == (long long)sent, "send bytes %lld, %zu sent",
	      ext_int(send, "bytes"), sent);
	CHECK(ext_int(recv, "messages") == (long long)NSTEPS, "%lld receives counted, %zu made",
	      ext_int(recv, "messages"), NSTEPS);
	CHECK(ext_int(recv, "unsized_messages") == (long long)NSTEPS, "%lld receives unsized of "
	      "%zu (the inner told no size)", ext_int(recv, "unsized_messages"), NSTEPS);
	CHECK(ext_int(recv, "bytes") == 0, "the receive end counts %lld bytes it was never told "
	      "(the posted slots?)", ext_int(recv, "bytes"));
	CHECK(ext_real(recv, "wire_seconds") > 0, "the receives are still timed");
}

/* fabriclab report --json: the hop's receive view carries the sender's bytes. */
static void check_merged(const char *dir, size_t sent)
{
	char cmd[2 * PATH_MAX + 64];
	json_error_t err;
	json_t *merged, *hop;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/fabriclab report --json %s 2>/dev/null", ext_build_dir, dir);
	p = popen(cmd, "r");
	merged = p ? json_loadf(p, 0, &err) : NULL;
	if (p)
		pclose(p);
	hop = json_array_get(json_object_get(merged, "hops"), 0);
	if (!hop) {
		CHECK(0, "fabriclab report --json %s gave no hop", dir);
		json_decref(merged);
		return;
	}
	CHECK(ext_int(json_object_get(hop, "recv"), "bytes") == (long long)sent,
	      "merged: receive bytes %lld, send bytes %lld, %zu sent",
	      ext_int(json_object_get(hop, "recv"), "bytes"),
	      ext_int(json_object_get(hop, "send"), "bytes"), sent);
	CHECK(ext_int(hop, "bytes") == (long long)sent, "merged hop bytes %lld",
	      ext_int(hop, "bytes"));
	json_decref(merged);
}

static void sizes_case(void)
{
	struct fl_abi_comm_config cfg = { .traffic_class = -1 };
	void *ctx = NULL, *sc = NULL, *rc = NULL;
	char dir[PATH_MAX];
	json_t *report;
	size_t sent = 0;

	ext_report_dir(dir, sizeof(dir), "ext-sizes");
	ext_choose_inner(inner);
	CHECK(ncclNetPlugin_v12.init(&ctx, 42, &cfg, ext_logger, NULL) == 0, "init");
	if (ext_pair_v12(ctx, 0, &sc, &rc)) {
		CHECK(0, "connect/accept over %s", inner);
		return;
	}
	sent = move_steps(sc, rc);
	CHECK(ncclNetPlugin_v12.close_send(sc) == 0, "closeSend");
	CHECK(ncclNetPlugin_v12.close_recv(rc) == 0, "closeRecv");
	CHECK(ncclNetPlugin_v12.finalize(ctx) == 0, "finalize"); /* the last: the final report */
	report = ext_report(dir);
	if (!report) {
		CHECK(0, "no report in %s", dir);
		return;
	}
	check_own_report(report, sent);
	json_decref(report);
	check_merged(dir, sent);
	ext_remove_dir(dir);
}

static void mimic_direct(void)
{
	inner = "mimic-v12";
	setenv("FABRICLAB_MIMIC", "nosizes", 1);
	sizes_case();
}

static void mimic_through_ext(void)
{
	inner = "mimic-v12";
	setenv("FABRICLAB_MIMIC", "nosizes", 1);
	setenv("FABRICLAB_EXT_DIRECT", "0", 1);
	sizes_case();
}

static void fastsocket_like(void)
{
	inner = "flsock-waitaccept"; /* fastsocket's connection, order and unwritten sizes */
	sizes_case();
}

int main(void)
{
	int bad = 0;

	if (ext_find_dirs())
		return 1;
	bad += ext_run_case("an inner that writes no sizes, on the direct path: NCCL reads 0, "
			    "receive bytes are the sender's", mimic_direct);
	bad += ext_run_case("the same through ext's own path (FABRICLAB_EXT_DIRECT=0)",
			    mimic_through_ext);
	bad += ext_run_case("the same over sockets, as google fastsocket", fastsocket_like);
	return bad ? 1 : 0;
}
