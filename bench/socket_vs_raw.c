/*
 * One direction, two local processes: the same bytes moved through one or more
 * net plugins (each loaded by the shim as NCCL loads it) and over raw TCP that
 * polls the way the plugins are driven: non-blocking calls of the same message
 * sizes, yielding the core when nothing moved. Contestants take turns inside
 * every round (the order rotating), so each sees the same machine; the spread
 * of the rounds and the ratios paired round by round are printed.
 * Usage: socket_vs_raw PLUGIN_SO [bytes] [rounds] [PEER_SO...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin/base/clock.h"
#include "plugin/base/config.h"
#include "plugin/transport/socket/sock_config.h"
#include "shim/shim_net.h"
#include "bench_cost.h"
#include "raw_tcp.h"

#define STEPS_IN_FLIGHT 8
#define MAX_PLUGINS 4
#define MAX_ROUNDS 64

struct pattern {
	const char *name;
	size_t step; /* bytes per isend; 0 = the whole buffer in one message */
};

static const struct pattern patterns[] = {
	{ "one message of the whole size", 0 },
	{ "512 KiB steps, 8 in flight", 512 << 10 },
	{ "4 KiB steps, 8 in flight", 4 << 10 },
};

/* Small steps move less per turn, so a turn stays short: at most this many messages. */
#define MAX_MSGS_PER_TURN 4096

static size_t turn_bytes(size_t bytes, size_t step)
{
	return step && bytes / step > MAX_MSGS_PER_TURN ? step * MAX_MSGS_PER_TURN : bytes;
}
enum { NPAT = sizeof(patterns) / sizeof(patterns[0]) };

struct contestant {
	const char *label;
	int raw;
	struct shim_net net;
	void *comm, *mh;
};

struct run {
	struct contestant c[MAX_PLUGINS + 1];
	int n;
	int raw_fds[SOCK_MAX_STREAMS];
	int nstreams;
	int sending;
	int out_fd, in_fd;
	char *buf;
	size_t bytes;
	int counter; /* syscalls of this thread, or -1 */
	int helpers; /* fabriclab runs helper threads (FABRICLAB_SOCKET_NSTREAMS > 0) */
};

static void check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "socket_vs_raw: %s failed (%d)\n", what, rc);
		exit(1);
	}
}

static size_t steps_of(size_t bytes, size_t step)
{
	return step && step < bytes ? (bytes + step - 1) / step : 1;
}

/* Moves `bytes` over an established comm in steps of `step`, 8 in flight. */
static void plugin_transfer(struct contestant *c, int sending, char *buf, size_t bytes, size_t step)
{
	void *reqs[STEPS_IN_FLIGHT] = { 0 };
	size_t nsteps = steps_of(bytes, step), posted = 0, completed = 0;

	if (!step || step > bytes)
		step = bytes;
	while (completed < nsteps) {
		if (posted < nsteps && posted - completed < STEPS_IN_FLIGHT) {
			size_t off = posted * step, len = bytes - off < step ? bytes - off : step;
			void **slot = &reqs[posted % STEPS_IN_FLIGHT];
			void *data = buf + off;
			int tag = 0;

			if (sending)
				check(shim_net_isend(&c->net, c->comm, data, len, tag, c->mh, slot),
				      "isend");
			else
				check(shim_net_irecv(&c->net, c->comm, 1, &data, &len, &tag, &c->mh,
						     slot),
				      "irecv");
			if (*slot)
				posted++;
		}
		if (completed < posted) {
			int done = 0, size;

			check(shim_net_test(&c->net, reqs[completed % STEPS_IN_FLIGHT], &done,
					    &size),
			      "test");
			if (done)
				completed++;
			else
				sched_yield(); /* as the shim does: whatever else runs needs the core */
		}
	}
}

static void transfer(struct run *run, struct contestant *c, size_t step)
{
	size_t bytes = turn_bytes(run->bytes, step);

	if (c->raw)
		raw_tcp_transfer(run->raw_fds, run->nstreams, run->sending, run->buf, bytes, step);
	else
		plugin_transfer(c, run->sending, run->buf, bytes, step);
}

/*
 * One turn: the receiver starts the clock and says go (like a CTS); the
 * sender's own CPU and syscall cost comes back over the pipe afterwards.
 */
static void turn(struct run *run, struct contestant *c, size_t step, struct bench_sample *out)
{
	struct bench_cost mine, theirs;
	size_t bytes = turn_bytes(run->bytes, step);
	char go = 0;
	uint64_t t0;

	if (run->sending) {
		if (read(run->in_fd, &go, 1) != 1)
			bench_die("read go");
		bench_cost_start(&mine, run->counter);
		transfer(run, c, step);
		bench_cost_stop(&mine, run->counter);
		if (write(run->out_fd, &mine, sizeof(mine)) != (ssize_t)sizeof(mine))
			bench_die("write cost");
		return;
	}
	t0 = fl_clock_mono_ns();
	if (write(run->out_fd, &go, 1) != 1)
		bench_die("write go");
	bench_cost_start(&mine, run->counter);
	transfer(run, c, step);
	bench_cost_stop(&mine, run->counter);
	out->gbs = (double)bytes / (double)(fl_clock_mono_ns() - t0);
	if (read(run->in_fd, &theirs, sizeof(theirs)) != (ssize_t)sizeof(theirs))
		bench_die("read cost");
	bench_sample_fill(out, &theirs, &mine, bytes, steps_of(bytes, step));
}

static void plugin_connect(struct run *run, struct contestant *c)
{
	char handle[FL_HANDLE_SIZE];
	void *listen_comm = NULL;

	if (!run->sending) {
		check(shim_net_listen(&c->net, 0, handle, &listen_comm), "listen");
		if (write(run->out_fd, handle, sizeof(handle)) != (ssize_t)sizeof(handle))
			bench_die("write handle");
	} else if (read(run->in_fd, handle, sizeof(handle)) != (ssize_t)sizeof(handle)) {
		bench_die("read handle");
	}
	while (!c->comm) {
		if (run->sending)
			check(shim_net_connect(&c->net, 0, handle, &c->comm), "connect");
		else
			check(shim_net_accept(&c->net, listen_comm, &c->comm), "accept");
	}
	if (listen_comm)
		shim_net_close_listen(&c->net, listen_comm);
}

/* The table's name, or the file's when an earlier contestant has that name too. */
static const char *label_of(const struct run *run, const struct contestant *c, const char *so)
{
	const char *base = strrchr(so, '/');

	for (const struct contestant *o = run->c; o < c; o++)
		if (!strcmp(o->label, c->net.name))
			return base ? base + 1 : so;
	return c->net.name;
}

static void plugin_open(struct run *run, struct contestant *c, const char *so)
{
	char err[256];

	if (shim_net_load(so, 0, &c->net, err, sizeof(err)))
		fprintf(stderr, "socket_vs_raw: %s\n", err), exit(1);
	check(shim_net_init(&c->net, 42), "init");
	c->label = label_of(run, c, so);
	plugin_connect(run, c);
	check(shim_net_reg_mr(&c->net, c->comm, run->buf, run->bytes, FL_PTR_HOST, &c->mh),
	      "regMr");
}

static void plugin_close(struct run *run, struct contestant *c)
{
	shim_net_dereg_mr(&c->net, c->comm, c->mh);
	if (run->sending)
		shim_net_close_send(&c->net, c->comm);
	else
		shim_net_close_recv(&c->net, c->comm);
	shim_net_close(&c->net);
}

static void report(struct run *run, int rounds, struct bench_sample s[][MAX_PLUGINS + 1][MAX_ROUNDS])
{
	for (int p = 0; p < NPAT; p++) {
		size_t bytes = turn_bytes(run->bytes, patterns[p].step);

		printf("-- %s, %zu KiB per turn, %d TCP stream(s), %d rounds (min / median / max)\n",
		       patterns[p].name, bytes >> 10, run->nstreams, rounds);
		for (int k = 0; k < run->n; k++)
			bench_print_samples(run->c[k].label, s[p][k], rounds);
		for (int k = 1; k < run->n; k++)
			bench_print_ratio(run->c[0].label, s[p][0], run->c[k].label, s[p][k], rounds,
					  run->c[k].raw ? 0.95 : 1.0);
	}
	if (run->helpers)
		printf("(syscalls counted on the thread that drives the plugin; helper threads' not)\n");
}

/* Runs every round on one side; the receiver prints. */
static void run_side(struct run *run, char **plugins, int nplugins, int rounds, int listen_fd,
		     uint16_t port)
{
	static struct bench_sample samples[NPAT][MAX_PLUGINS + 1][MAX_ROUNDS];

	run->buf = malloc(run->bytes);
	if (!run->buf)
		bench_die("malloc");
	memset(run->buf, run->sending ? 0x5a : 0, run->bytes);
	run->counter = bench_syscall_counter_open();
	for (int k = 0; k < nplugins; k++)
		plugin_open(run, &run->c[k], plugins[k]);
	run->c[nplugins] = (struct contestant){ .label = "raw TCP, polling", .raw = 1 };
	run->n = nplugins + 1;
	raw_tcp_connect(run->raw_fds, run->nstreams, run->sending, listen_fd, port);
	for (int r = 0; r < rounds; r++)
		for (int p = 0; p < NPAT; p++)
			for (int i = 0; i < run->n; i++) {
				int k = (i + r) % run->n;

				turn(run, &run->c[k], patterns[p].step, &samples[p][k][r]);
			}
	if (!run->sending)
		report(run, rounds, samples);
	for (int k = 0; k < nplugins; k++)
		plugin_close(run, &run->c[k]);
	for (int i = 0; i < run->nstreams; i++)
		close(run->raw_fds[i]);
	free(run->buf);
}

int main(int argc, char **argv)
{
	struct run run = { .bytes = 64 << 20 };
	int rounds = argc > 3 ? atoi(argv[3]) : 5, nplugins = argc > 4 ? argc - 3 : 1;
	char *plugins[MAX_PLUGINS];
	long nstreams;
	int to_sender[2], to_receiver[2], listen_fd, status;
	uint16_t port;
	pid_t child;

	if (argc < 2 || (argc > 2 && fl_parse_bytes(argv[2], &run.bytes)) || !run.bytes ||
	    rounds < 1 || rounds > MAX_ROUNDS || nplugins > MAX_PLUGINS) {
		fprintf(stderr, "usage: socket_vs_raw PLUGIN_SO [bytes, e.g. 64M] [rounds 1..%d] "
				"[PEER_SO... (up to %d plugins in all)]\n",
			MAX_ROUNDS, MAX_PLUGINS);
		return 2;
	}
	plugins[0] = argv[1];
	for (int k = 1; k < nplugins; k++)
		plugins[k] = argv[3 + k];
	/* The stream count fabriclab will use, so raw TCP gets as many (0: control only). */
	if (fl_env_long("FABRICLAB_SOCKET_NSTREAMS", SOCK_DEFAULT_NSTREAMS, 0, SOCK_MAX_STREAMS,
			&nstreams))
		return fprintf(stderr, "socket_vs_raw: bad FABRICLAB_SOCKET_NSTREAMS\n"), 2;
	run.helpers = nstreams > 0;
	run.nstreams = nstreams ? (int)nstreams : 1;
	listen_fd = raw_tcp_listen(&port);
	if (pipe(to_sender) || pipe(to_receiver))
		bench_die("pipe");
	child = fork();
	if (child < 0)
		bench_die("fork");
	run.sending = child == 0;
	run.out_fd = run.sending ? to_receiver[1] : to_sender[1];
	run.in_fd = run.sending ? to_sender[0] : to_receiver[0];
	run_side(&run, plugins, nplugins, rounds, listen_fd, port);
	if (run.sending)
		_exit(0);
	waitpid(child, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
