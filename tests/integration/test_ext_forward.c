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
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin/entry/net_abi.h"
#include "plugin/base/fl_types.h"
#include "tests/inner/flsock_record.h"

#define BYTES 4096

static char inner_dir[PATH_MAX];
static int failures;

#define CHECK(cond, ...)                                 \
	do {                                             \
		if (!(cond)) {                           \
			printf("  not ok: %s: ", #cond); \
			printf(__VA_ARGS__);             \
			printf("\n");                    \
			failures++;                      \
		}                                        \
	} while (0)

static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt,
		   ...)
{
	va_list ap;

	(void)flags, (void)file, (void)line;
	if (level > 1) /* WARN only */
		return;
	va_start(ap, fmt);
	printf("  # ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static void choose_inner(const char *inner)
{
	char env[PATH_MAX + 80];

	snprintf(env, sizeof(env), "ext:%s/libnccl-net-%s.so", inner_dir, inner);
	setenv("FABRICLAB_TRANSPORT", env, 1);
}

static const struct flsock_record *record_of(const char *inner)
{
	char path[PATH_MAX + 64];
	void *lib;

	snprintf(path, sizeof(path), "%s/libnccl-net-%s.so", inner_dir, inner);
	lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	return lib ? dlsym(lib, "flsock_record") : NULL;
}

/* connect and accept called in turn until both are there, as NCCL's proxy does */
static int pair_v12(void *ctx, void **sc, void **rc)
{
	unsigned char handle[FL_HANDLE_SIZE] = { 0 };
	struct fl_abi_dev_handle *sdc = NULL, *rdc = NULL;
	void *lc = NULL;
	int err = ncclNetPlugin_v12.listen(ctx, 0, handle, &lc);

	for (int i = 0; !err && (!*sc || !*rc) && i < 200000; i++) {
		if (!*sc)
			err = ncclNetPlugin_v12.connect(ctx, 0, handle, sc, &sdc);
		if (!err && !*rc)
			err = ncclNetPlugin_v12.accept(lc, rc, &rdc);
	}
	return err ? err : *sc && *rc ? 0 : -1;
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

	choose_inner("flsock-record");
	CHECK(ncclNetPlugin_v12.init(&ctx, 42, &cfg, logger, NULL) == 0, "init");
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
	if (pair_v12(ctx, &sc, &rc)) {
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

	choose_inner("flsock-record-v10");
	CHECK(ncclNetPlugin_v10.init(logger, NULL) == 0, "init");
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

static int run_case(const char *name, void (*fn)(void))
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fn();
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		printf("not ok - %s\n", name);
		return 1;
	}
	printf("ok - %s\n", name);
	return 0;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int bad = 0;

	(void)argc, (void)argv;
	if (n <= 0)
		return 1;
	self[n] = '\0';
	/* build/tests/test_ext_forward -> build/inner */
	snprintf(inner_dir, sizeof(inner_dir), "%s/../inner", dirname(self));
	setenv("FABRICLAB_SOCKET_IFNAME", "lo", 0);
	setenv("FABRICLAB_REPORT", "off", 1);
	bad += run_case("NCCL v12 -> ext: init config, setNetAttr, optional-recv hint reach the "
			"inner", nccl_v12_case);
	bad += run_case("NCCL v10 -> ext v10 inner: NCCL's own connect config pointer",
			nccl_v10_case);
	return bad ? 1 : 0;
}
