/*
 * The real plugin .so, loaded through the shim at every net ABI version 6..12,
 * carries 0 B, 1 B and 1 MiB messages over loopback intact; and it exports the
 * NCCL entry points and nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plugin/base/log.h"
#include "plugin/abi/nccl_abi.h"
#include "shim/shim_net.h"

#define PLUGIN_FILE "libnccl-net-fabriclab.so"
#define MSG_TAG 7
#define BUF_BYTES (1u << 20)
#define GUARD_BYTES 64 /* past the largest message: must stay untouched */
#define DEADLINE_NS (20ull * 1000 * 1000 * 1000)

static char plugin_path[PATH_MAX];
static char last_warning[512];

/* Replaces the shim's stderr logger: keeps the last WARN so tests can read it. */
static void keep_warning(int level, unsigned long flags, const char *file, int line,
			 const char *fmt, ...)
{
	va_list ap;

	(void)flags, (void)file, (void)line;
	if (level != FL_LOG_WARN)
		return;
	va_start(ap, fmt);
	vsnprintf(last_warning, sizeof(last_warning), fmt, ap);
	va_end(ap);
}

/* The .so sits one folder above the test binary (build/tests/X -> build/). */
static int find_plugin(void **state)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	(void)state;
	if (len <= 0)
		return -1;
	exe[len] = '\0';
	snprintf(plugin_path, sizeof(plugin_path), "%s/../%s", dirname(exe), PLUGIN_FILE);
	if (access(plugin_path, R_OK) != 0) {
		fprintf(stderr, "plugin not found at %s\n", plugin_path);
		return -1;
	}
	setenv("FABRICLAB_SOCKET_IFNAME", "lo", 1);
	shim_net_logger = keep_warning;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pause_briefly(void)
{
	struct timespec ts = { .tv_nsec = 50 * 1000 };

	nanosleep(&ts, NULL);
}

struct link {
	struct shim_net net;
	void *listen_comm;
	void *send_comm;
	void *recv_comm;
	void *send_mh;
	void *recv_mh;
	unsigned char *send_buf;
	unsigned char *recv_buf;
	int max_recvs;
};

/*
 * Each version's properties, widened by the shim, agree with what the plugin's
 * v12 table reports (read directly, not through the shim) on the fields the
 * version has, and carry NCCL's assumptions for the fields it lacks.
 */
static void expect_props_match_v12(int version, const struct fl_props *p)
{
	void *lib = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
	const struct fl_abi_net_v12 *v12 = lib ? dlsym(lib, "ncclNetPlugin_v12") : NULL;
	struct fl_abi_props_v12 want;

	assert_non_null(v12);
	assert_int_equal(v12->get_properties(0, &want), 0);
	assert_string_equal(p->name, want.name);
	assert_true(p->pci_path == want.pci_path || !strcmp(p->pci_path, want.pci_path));
	assert_int_equal(p->guid, want.guid);
	assert_int_equal(p->ptr_support, want.ptr_support);
	assert_int_equal(p->speed_mbps, want.speed);
	assert_int_equal(p->port, want.port);
	assert_true(p->latency_us == want.latency);
	assert_int_equal(p->max_comms, want.max_comms);
	assert_int_equal(p->max_recvs, want.max_recvs);
	assert_int_equal(p->reg_is_global, version >= 8 ? want.reg_is_global : 0);
	assert_int_equal(p->force_flush, version >= 9 ? want.force_flush : 0);
	assert_int_equal(p->max_p2p_bytes, version >= 9 ? want.max_p2p_bytes : 1ULL << 30);
	assert_int_equal(p->max_coll_bytes, version >= 9 ? want.max_coll_bytes : 512ULL << 20);
	assert_int_equal(p->max_multi_request_size,
			 version >= 11 ? want.max_multi_request_size : 1);
	assert_int_equal(p->rail_id, version >= 12 ? want.rail_id : -1);
	assert_int_equal(p->plane_id, version >= 12 ? want.plane_id : -1);
	assert_int_equal(p->vdev_count, version >= 9 ? want.vprops.ndevs : 1);
	assert_int_equal(p->vdevs[0], version >= 9 ? want.vprops.devs[0] : 0);
	dlclose(lib);
}

static void open_plugin(struct link *l, int version)
{
	char err[512] = "";
	int ndev = 0;
	struct fl_props props;

	assert_int_equal(shim_net_load(plugin_path, version, &l->net, err, sizeof(err)), 0);
	assert_int_equal(l->net.version, version);
	assert_string_equal(l->net.name, "fabriclab");
	assert_int_equal(shim_net_init(&l->net, 0xfab0000ull + (uint64_t)version), 0);
	if (version >= 11)
		assert_non_null(l->net.ctx);
	assert_int_equal(shim_net_devices(&l->net, &ndev), 0);
	assert_true(ndev >= 1);
	assert_int_equal(shim_net_properties(&l->net, 0, &props), 0);
	assert_non_null(props.name);
	assert_true(props.ptr_support & FL_PTR_HOST);
	assert_true(props.max_recvs >= 1);
	l->max_recvs = props.max_recvs;
	assert_true(props.max_p2p_bytes >= BUF_BYTES);
	expect_props_match_v12(version, &props);
}

/* NCCL's pattern: connect with the same handle and accept, interleaved, until both exist. */
static void connect_pair(struct link *l)
{
	char handle[FL_HANDLE_SIZE] = { 0 };
	uint64_t deadline;

	assert_int_equal(shim_net_listen(&l->net, 0, handle, &l->listen_comm), 0);
	assert_non_null(l->listen_comm);
	deadline = now_ns() + DEADLINE_NS;
	while (!l->send_comm || !l->recv_comm) {
		if (!l->send_comm)
			assert_int_equal(shim_net_connect(&l->net, 0, handle, &l->send_comm), 0);
		if (!l->recv_comm)
			assert_int_equal(shim_net_accept(&l->net, l->listen_comm, &l->recv_comm),
					 0);
		assert_true(now_ns() < deadline);
		if (!l->send_comm || !l->recv_comm)
			pause_briefly();
	}
}

static void register_buffers(struct link *l)
{
	l->send_buf = malloc(BUF_BYTES);
	l->recv_buf = malloc(BUF_BYTES + GUARD_BYTES);
	assert_non_null(l->send_buf);
	assert_non_null(l->recv_buf);
	assert_int_equal(shim_net_reg_mr(&l->net, l->send_comm, l->send_buf, BUF_BYTES,
					 FL_PTR_HOST, &l->send_mh), 0);
	assert_int_equal(shim_net_reg_mr(&l->net, l->recv_comm, l->recv_buf,
					 BUF_BYTES + GUARD_BYTES, FL_PTR_HOST, &l->recv_mh), 0);
}

static void fill_pattern(unsigned char *buf, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)((i * 131u + seed) >> 3);
}

/* Posts the receive (capacity larger than the message, as NCCL may), then the send. */
static void transfer(struct link *l, size_t size, unsigned seed)
{
	void *recv_data[1] = { l->recv_buf };
	size_t recv_sizes[1] = { BUF_BYTES + GUARD_BYTES };
	int recv_tags[1] = { MSG_TAG };
	void *recv_mhs[1] = { l->recv_mh };
	void *recv_req = NULL, *send_req = NULL;
	int recv_done = 0, send_done = 0, got = -1, sent = -1;
	uint64_t deadline = now_ns() + DEADLINE_NS;

	fill_pattern(l->send_buf, size, seed);
	memset(l->recv_buf, 0xee, BUF_BYTES + GUARD_BYTES);
	while (!recv_req) {
		assert_int_equal(shim_net_irecv(&l->net, l->recv_comm, 1, recv_data, recv_sizes,
						recv_tags, recv_mhs, &recv_req), 0);
		assert_true(now_ns() < deadline);
	}
	while (!recv_done || !send_done) {
		if (!send_req)
			assert_int_equal(shim_net_isend(&l->net, l->send_comm, l->send_buf, size,
							MSG_TAG, l->send_mh, &send_req), 0);
		if (send_req && !send_done)
			assert_int_equal(shim_net_test(&l->net, send_req, &send_done, &sent), 0);
		if (!recv_done)
			assert_int_equal(shim_net_test(&l->net, recv_req, &recv_done, &got), 0);
		assert_true(now_ns() < deadline);
	}
	assert_int_equal(sent, (int)size);
	assert_int_equal(got, (int)size);
	assert_memory_equal(l->recv_buf, l->send_buf, size);
	/* Nothing past the message was written. */
	assert_int_equal(l->recv_buf[size], 0xee);
}

/*
 * A grouped receive (NCCL's multi-recv): three slots with tags 7, 8, 9, filled by
 * sends in the order 9, 7, 8. One request; test returns each slot's size.
 */
static void transfer_grouped(struct link *l, unsigned seed)
{
	enum { SLOTS = 3, SLICE = 64 << 10 };
	static const int send_tags[SLOTS] = { 9, 7, 8 };
	static const size_t send_lens[SLOTS] = { 5000, 0, SLICE };
	int tags[SLOTS] = { 7, 8, 9 };
	size_t caps[SLOTS] = { 100, SLICE, 6000 }; /* each slot a different capacity */
	void *data[SLOTS], *mhs[SLOTS], *send_req[SLOTS] = { 0 }, *recv_req = NULL;
	int got[SLOTS] = { -1, -1, -1 }, send_done[SLOTS] = { 0 }, recv_done = 0, sent = 0;
	uint64_t deadline = now_ns() + DEADLINE_NS;

	for (int i = 0; i < SLOTS; i++) {
		data[i] = l->recv_buf + i * SLICE;
		mhs[i] = l->recv_mh;
	}
	fill_pattern(l->send_buf, SLOTS * SLICE, seed);
	memset(l->recv_buf, 0xee, BUF_BYTES + GUARD_BYTES);
	while (!recv_req) {
		assert_int_equal(shim_net_irecv(&l->net, l->recv_comm, SLOTS, data, caps, tags, mhs,
						&recv_req), 0);
		assert_true(now_ns() < deadline);
	}
	for (int posted = 0; posted < SLOTS || !recv_done || sent < SLOTS;) {
		if (posted < SLOTS) {
			assert_int_equal(shim_net_isend(&l->net, l->send_comm,
							l->send_buf + posted * SLICE,
							send_lens[posted], send_tags[posted],
							l->send_mh, &send_req[posted]), 0);
			posted += send_req[posted] != NULL;
		}
		for (int i = 0; i < posted; i++) {
			int size = -1;

			if (send_done[i])
				continue;
			assert_int_equal(shim_net_test(&l->net, send_req[i], &send_done[i], &size),
					 0);
			if (send_done[i]) {
				assert_int_equal(size, (int)send_lens[i]);
				sent++;
			}
		}
		if (!recv_done)
			assert_int_equal(shim_net_test(&l->net, recv_req, &recv_done, got), 0);
		assert_true(now_ns() < deadline);
	}
	/* Slot k has tag 7 + k; the send with that tag was number (k + 1) % 3. */
	for (int k = 0; k < SLOTS; k++) {
		int j = (k + 1) % SLOTS;

		assert_int_equal(got[k], (int)send_lens[j]);
		assert_memory_equal(l->recv_buf + k * SLICE, l->send_buf + j * SLICE, send_lens[j]);
		if (send_lens[j] < caps[k])
			assert_int_equal(l->recv_buf[k * SLICE + send_lens[j]], 0xee);
	}
}

/* Sizes an int-sized ABI cannot carry are refused by the shim with a warning naming it. */
static void expect_size_limits(struct link *l)
{
	void *data[FL_MAX_RECVS + 1] = { 0 };
	size_t sizes[FL_MAX_RECVS + 1] = { 0 };
	int tags[FL_MAX_RECVS + 1] = { 0 };
	void *mhs[FL_MAX_RECVS + 1] = { 0 };
	char version[8];
	void *req = NULL, *mh = NULL;

	snprintf(version, sizeof(version), "v%d", l->net.version);
	last_warning[0] = '\0';
	assert_int_equal(shim_net_irecv(&l->net, l->recv_comm, FL_MAX_RECVS + 1, data, sizes,
					tags, mhs, &req), FL_ERR_USAGE);
	assert_non_null(strstr(last_warning, "irecv"));
	if (l->net.version >= 9)
		return;
	last_warning[0] = '\0';
	assert_int_equal(shim_net_isend(&l->net, l->send_comm, l->send_buf, (size_t)INT_MAX + 1,
					MSG_TAG, l->send_mh, &req), FL_ERR_USAGE);
	assert_null(req);
	assert_non_null(strstr(last_warning, version));
	if (l->net.version >= 8)
		return;
	last_warning[0] = '\0';
	assert_int_equal(shim_net_reg_mr(&l->net, l->send_comm, l->send_buf, 4ULL << 30,
					 FL_PTR_HOST, &mh), FL_ERR_USAGE);
	assert_non_null(strstr(last_warning, version));
}

static void close_all(struct link *l)
{
	assert_int_equal(shim_net_dereg_mr(&l->net, l->send_comm, l->send_mh), 0);
	assert_int_equal(shim_net_dereg_mr(&l->net, l->recv_comm, l->recv_mh), 0);
	assert_int_equal(shim_net_close_send(&l->net, l->send_comm), 0);
	assert_int_equal(shim_net_close_recv(&l->net, l->recv_comm), 0);
	assert_int_equal(shim_net_close_listen(&l->net, l->listen_comm), 0);
	shim_net_close(&l->net);
	assert_null(l->net.lib);
	free(l->send_buf);
	free(l->recv_buf);
}

static void test_version(void **state)
{
	int version = *(int *)*state;
	static const size_t sizes[] = { 0, 1, BUF_BYTES, 1, 0 };
	struct link l = { 0 };

	open_plugin(&l, version);
	connect_pair(&l);
	register_buffers(&l);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		transfer(&l, sizes[i], (unsigned)(version * 17 + (int)i));
	if (l.max_recvs >= 3)
		transfer_grouped(&l, (unsigned)version);
	expect_size_limits(&l);
	close_all(&l);
}

static void test_highest_version_is_default(void **state)
{
	struct shim_net net;
	char err[512] = "";

	(void)state;
	assert_int_equal(shim_net_load(plugin_path, 0, &net, err, sizeof(err)), 0);
	assert_int_equal(net.version, 12);
	shim_net_close(&net);
}

static void test_load_errors_are_explained(void **state)
{
	struct shim_net net;
	char err[512] = "";

	(void)state;
	assert_int_equal(shim_net_load(plugin_path, 5, &net, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "5"));
	assert_null(net.lib);
	err[0] = '\0';
	assert_int_equal(shim_net_load("/nonexistent/libnope.so", 0, &net, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/libnope.so"));
	err[0] = '\0';
	assert_int_equal(shim_net_load("fabriclab-surely-absent", 0, &net, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "libnccl-net-fabriclab-surely-absent.so"));
}

/*
 * ASan adds an __odr_asan.<name> marker for every exported variable. The tuner,
 * CollNet, GIN and RMA names are indirect functions forwarding a wrapped
 * plugin's tables (plugin/transport/ext/ext_forward.c).
 */
static int is_nccl_entry_point(const char *name)
{
	static const char *const pattern =
		"^(__odr_asan\\.)?(ncclNetPlugin_v([6-9]|1[0-2])|ncclProfiler_v[1-7]|"
		"ncclTunerPlugin_v[2-6]|ncclCollNetPlugin_v([5-9]|1[0-2])|"
		"ncclGinPlugin_v1[134]|ncclRmaPlugin_v1[34])$";
	regex_t re;
	int match;

	if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
		return 0;
	match = regexec(&re, name, 0, NULL, 0) == 0;
	regfree(&re);
	return match;
}

/* Defined global dynamic symbols: nm types T D B R V W, and i (indirect functions). */
static void test_exports_only_nccl_entry_points(void **state)
{
	char cmd[PATH_MAX + 64], line[512], type[8], name[256];
	int net_tables = 0, profiler_tables = 0, forwarded = 0, symbols = 0;
	FILE *nm;

	(void)state;
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s'", plugin_path);
	nm = popen(cmd, "r");
	assert_non_null(nm);
	while (fgets(line, sizeof(line), nm)) {
		if (sscanf(line, "%*s %7s %255s", type, name) != 2 || !strchr("TDBRVWi", type[0]))
			continue;
		symbols++;
		if (!is_nccl_entry_point(name))
			fail_msg("%s exports %s", plugin_path, name);
		net_tables += strncmp(name, "ncclNetPlugin_v", 15) == 0;
		profiler_tables += strncmp(name, "ncclProfiler_v", 14) == 0;
		forwarded += type[0] == 'i';
	}
	assert_int_equal(pclose(nm), 0);
	assert_true(symbols > 0);
	assert_int_equal(net_tables, 7);
	assert_int_equal(profiler_tables, 7); /* v1..v7: NCCL 2.23 .. 2.32 */
	/* tuner v2..v6, CollNet v5..v12, GIN v11 v13 v14, RMA v13 v14: NCCL 2.23 .. 2.30 */
	assert_int_equal(forwarded, 5 + 8 + 3 + 2);
}

/* The same seen through the loader: internals resolve to nothing. */
static void test_internals_are_hidden(void **state)
{
	static const char *const hidden[] = { "fl_wrap_init", "fl_wrap_isend", "fl_fail",
					      "fl_socket_transport", "fl_log_emit",
					      "fl_prof_init", "fl_prof_stop" };
	static const char *const visible[] = { "ncclNetPlugin_v6", "ncclNetPlugin_v9",
					       "ncclNetPlugin_v12", "ncclProfiler_v1",
					       "ncclProfiler_v5", "ncclProfiler_v6",
					       "ncclProfiler_v7" };
	void *lib = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);

	(void)state;
	assert_non_null(lib);
	for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
		if (dlsym(lib, hidden[i]))
			fail_msg("%s is visible", hidden[i]);
	for (size_t i = 0; i < sizeof(visible) / sizeof(visible[0]); i++)
		assert_non_null(dlsym(lib, visible[i]));
	dlclose(lib);
}

static int versions[] = { 6, 7, 8, 9, 10, 11, 12 };

#define VERSION_TEST(i, v) \
	{ .name = "net_abi_v" #v, .test_func = test_version, .initial_state = &versions[i] }

int main(void)
{
	const struct CMUnitTest tests[] = {
		VERSION_TEST(0, 6),  VERSION_TEST(1, 7),  VERSION_TEST(2, 8), VERSION_TEST(3, 9),
		VERSION_TEST(4, 10), VERSION_TEST(5, 11), VERSION_TEST(6, 12),
		cmocka_unit_test(test_highest_version_is_default),
		cmocka_unit_test(test_load_errors_are_explained),
		cmocka_unit_test(test_exports_only_nccl_entry_points),
		cmocka_unit_test(test_internals_are_hidden),
	};

	return cmocka_run_group_tests(tests, find_plugin, NULL);
}
