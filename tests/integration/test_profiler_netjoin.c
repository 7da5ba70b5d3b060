/*
 * Both roles in one process (reference 2.9 a): each rank thread opens the net
 * role through ncclNetPlugin_v12 (init with the communicator's hash, then
 * listen/connect/accept of its ring neighbours over loopback, one connection
 * per channel), and the player drives the profiler role for the same
 * communicator in NCCL's order (net init, profiler init, connect, events).
 * Three ranks per process share one commHash, so only the thread tells them
 * apart. Each process's own report must name its profiler-mode hops with the
 * node and device of both ends, no merge needed; without the net role the
 * report names peers "?" and `fabriclab report`'s rank join still names them.
 * Every case runs through profiler v1..v7 (v1..v3 cannot join: see below).
 *
 * `test_profiler_netjoin --play DIR VERSION [SLOW_SRC SLOW_DST]` plays one such
 * job (both roles; one slow link when given) into DIR and exits: how
 * test_trace_profiler.sh records profiler mode under an LTTng session.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/base/error.h"
#include "tests/player/player_net.h"
#include "tests/player/prof_player.h"
#include "tools/report/report.h"

/* Three ranks a process: two rank pairs share node0/lo -> node0/lo once named by the net role. */
#define NRANKS 6
#define PER_NODE 3
#define CHANNELS 2

static char dir[256], handles[300];
static char dev_name[32]; /* the socket transport's device 0, as the net role names it */
static struct report_set set;

static struct player_net net_role; /* its hooks: player_net.h */

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/fl-netjoin.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
									   : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	snprintf(handles, sizeof(handles), "%s/handles", dir);
	player_net_init(&net_role, handles, NRANKS, CHANNELS, 1);
	return mkdir(handles, 0700);
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	report_free(&set);
	memset(&set, 0, sizeof(set));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void scenario(struct player_scenario *s, int version, const struct player_rank_hooks *h)
{
	player_defaults(s, version, NRANKS);
	s->ranks_per_node = PER_NODE;
	s->nchannels = CHANNELS;
	s->hooks = h;
}

static void merge_into_set(const char *path)
{
	struct fl_verdict_params p;

	report_free(&set);
	memset(&set, 0, sizeof(set));
	fl_verdict_default_params(&p);
	if (report_add_path(&set, path) || report_merge(&set, &p))
		fail_msg("merge of %s: %s", path, fl_error_text());
}

/* node0's report alone: what that one process knew, with no other report to join. */
static void load_node0_report(void)
{
	char path[600] = "";
	struct dirent *e;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "node0", 5) && strstr(e->d_name, ".json"))
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
	closedir(d);
	if (!path[0])
		fail_msg("no report of node0 in %s", dir);
	merge_into_set(path);
}

static const struct report_hop *profiler_hop(int src, int dst)
{
	for (size_t i = 0; i < set.nhops; i++) {
		const struct report_hop *h = &set.hops[i];

		if (!strcmp(report_hop_mode(h), "profiler") && h->src_rank == src &&
		    h->dst_rank == dst)
			return h;
	}
	fail_msg("no profiler hop rank %d -> rank %d (%zu hops)", src, dst, set.nhops);
	return NULL;
}

static size_t profiler_hops(void)
{
	size_t n = 0;

	for (size_t i = 0; i < set.nhops; i++)
		n += !strcmp(report_hop_mode(&set.hops[i]), "profiler");
	return n;
}

/* A hop's names; an end marked unknown must be "?" (its node not known to this report). */
static void expect_names(const struct player_scenario *s, const struct report_hop *h,
			 const char *src_dev, const char *dst_dev, int src_known, int dst_known)
{
	char src_node[32], dst_node[32];

	player_node_name(s, (int)h->src_rank, src_node, sizeof(src_node));
	player_node_name(s, (int)h->dst_rank, dst_node, sizeof(dst_node));
	if (strcmp(h->key.src_node, src_known ? src_node : "?") ||
	    strcmp(h->key.src_dev, src_dev) ||
	    strcmp(h->key.dst_node, dst_known ? dst_node : "?") || strcmp(h->key.dst_dev, dst_dev))
		fail_msg("v%d: hop rank %ld -> rank %ld named %s/%s -> %s/%s", s->version,
			 h->src_rank, h->dst_rank, h->key.src_node, h->key.src_dev,
			 h->key.dst_node, h->key.dst_dev);
}

/*
 * node0 holds ranks 0..PER_NODE-1: it sees r -> r+1 both ways inside, sends
 * its last rank's hop to node1 and receives the ring's last rank's.
 */
static void check_node0(const struct player_scenario *s, int joined)
{
	uint64_t bytes = (uint64_t)s->ops * s->nsteps * s->nchannels * s->chunk;
	int pairs[PER_NODE + 1][2];

	for (int r = 0; r < PER_NODE; r++) {
		pairs[r][0] = r;
		pairs[r][1] = r + 1;
	}
	pairs[PER_NODE][0] = NRANKS - 1;
	pairs[PER_NODE][1] = 0;
	assert_int_equal(profiler_hops(), PER_NODE + 1);
	for (int i = 0; i <= PER_NODE; i++) {
		const struct report_hop *h = profiler_hop(pairs[i][0], pairs[i][1]);
		char src_dev[16], dst_dev[16];
		int sender_here = pairs[i][0] < PER_NODE, receiver_here = pairs[i][1] < PER_NODE;

		snprintf(src_dev, sizeof(src_dev), "rank%d", pairs[i][0]);
		snprintf(dst_dev, sizeof(dst_dev), "rank%d", pairs[i][1]);
		/* Alone, a report knows the nodes of the ranks its process holds, no other. */
		if (joined)
			expect_names(s, h, dev_name, dev_name, 1, 1);
		else
			expect_names(s, h, src_dev, dst_dev, sender_here, receiver_here);
		assert_int_equal(h->send->present, sender_here);
		assert_int_equal(h->recv->present, receiver_here);
		if (sender_here)
			assert_int_equal(h->send->bytes, bytes);
		if (receiver_here)
			assert_int_equal(h->recv->bytes, bytes);
	}
}

/*
 * Prometheus takes no two series of one label set: every hop's bytes series
 * is its own, the profiler's with their communicator and ranks.
 */
static void check_prom(void)
{
	char path[300], line[600], seen[64][600];
	size_t n = 0, prof = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/out.prom", dir);
	assert_int_equal(report_write_prom(&set, path), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *value = strrchr(line, ' ');

		if (strncmp(line, "fabriclab_hop_bytes_total{", 26) || !value)
			continue;
		*value = '\0';
		for (size_t i = 0; i < n; i++)
			if (!strcmp(seen[i], line))
				fail_msg("two series of one label set: %s", line);
		prof += strstr(line, "src_rank=\"") && strstr(line, "comm=\"");
		if (n < 64)
			snprintf(seen[n++], sizeof(seen[0]), "%s", line);
	}
	fclose(f);
	assert_int_equal(prof, profiler_hops());
}

/* The whole job merged: every ring hop named by node, both views joined, verdict none. */
static void check_merged(const struct player_scenario *s, int joined)
{
	merge_into_set(dir);
	assert_int_equal(profiler_hops(), NRANKS);
	for (int r = 0; r < NRANKS; r++) {
		const struct report_hop *h = profiler_hop(r, (r + 1) % NRANKS);
		char src_dev[16], dst_dev[16];

		snprintf(src_dev, sizeof(src_dev), "rank%d", r);
		snprintf(dst_dev, sizeof(dst_dev), "rank%d", (r + 1) % NRANKS);
		expect_names(s, h, joined ? dev_name : src_dev, joined ? dev_name : dst_dev, 1, 1);
		assert_true(h->send->present && h->recv->present);
	}
	check_prom();
	if (set.verdict.kind != FL_VERDICT_NONE)
		fail_msg("v%d: verdict %s (%s)", s->version, fl_verdict_kind_name(set.verdict.kind),
			 set.verdict.reason);
}

/*
 * v1..v3 init names no communicator (its hash comes with the first Coll, after
 * the connections are up), so there the net role cannot learn its rank and the
 * report join stays the way; no real NCCL pairs them anyway: net v11, the first
 * with a ctx, came with 2.28.3, which takes profiler v5.
 */
static void test_joined_by_net_role(void **state)
{
	struct player_scenario s;
	int joined = *(int *)*state >= 4;

	scenario(&s, *(int *)*state, &net_role.hooks);
	assert_int_equal(player_run(&s, dir), 0);
	load_node0_report();
	check_node0(&s, joined);
	check_merged(&s, joined);
}

static void test_profiler_alone(void **state)
{
	struct player_scenario s;

	scenario(&s, *(int *)*state, NULL);
	assert_int_equal(player_run(&s, dir), 0);
	load_node0_report();
	check_node0(&s, 0);
	check_merged(&s, 0);
}

static int versions[] = { 1, 2, 3, 4, 5, 6, 7 };

#define CASES(i)                                                                            \
	cmocka_unit_test_prestate_setup_teardown(test_joined_by_net_role, setup, teardown,    \
						 &versions[i]),                               \
	cmocka_unit_test_prestate_setup_teardown(test_profiler_alone, setup, teardown,        \
						 &versions[i])

/* --play DIR VERSION [SLOW_SRC SLOW_DST]: one job with both roles, reports into DIR. */
static int play_only(int argc, char **argv)
{
	struct player_scenario s;

	snprintf(dir, sizeof(dir), "%s", argv[2]);
	snprintf(handles, sizeof(handles), "%s/handles", dir);
	if (mkdir(handles, 0700) && access(handles, W_OK))
		return 1;
	player_net_init(&net_role, handles, NRANKS, CHANNELS, 0);
	scenario(&s, atoi(argv[3]), &net_role.hooks);
	/*
	 * Named by the net role, the hops get its device's line rate (loopback says
	 * 10 Gb/s) and are judged against it: ten times the default step time keeps
	 * a healthy hop at 1.05 GB/s, under it.
	 */
	s.wire_ns *= 10;
	if (argc == 6) {
		s.slow_src = atoi(argv[4]);
		s.slow_dst = atoi(argv[5]);
	}
	return player_run(&s, dir) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = { CASES(0), CASES(1), CASES(2),
					    CASES(3), CASES(4), CASES(5), CASES(6) };
	/* Loopback and sockets whatever the caller's environment says. */
	setenv("FABRICLAB_TRANSPORT", "socket", 1);
	setenv("FABRICLAB_SOCKET_IFNAME", "lo", 1);
	setenv("FABRICLAB_REPORT", "brief", 1);
	if (argc >= 4 && !strcmp(argv[1], "--play") && (argc == 4 || argc == 6))
		return play_only(argc, argv);
	if (player_net_device_name(dev_name, sizeof(dev_name))) {
		fprintf(stderr, "the net role has no socket device on lo\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
