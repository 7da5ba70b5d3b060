/*
 * One direction, two local processes: 64 MiB moved through the plugin (loaded
 * by the shim as NCCL would) against the same bytes over raw TCP with the same
 * number of streams, one thread per stream. Rounds alternate so both see the
 * same machine. Usage: socket_vs_raw PLUGIN_SO [bytes] [rounds]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
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

#define STEPS_IN_FLIGHT 8
#define RAW_CALL_BYTES (256 << 10)

struct pattern {
	const char *name;
	size_t step; /* bytes per isend; 0 = the whole buffer in one message */
};

static const struct pattern patterns[] = {
	{ "one 64 MiB message", 0 },
	{ "512 KiB steps, 8 in flight", 512 << 10 },
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "socket_vs_raw: %s failed (%d)\n", what, rc);
		exit(1);
	}
}

/* Moves `bytes` over an established comm in steps of `step`, 8 in flight. */
static void plugin_transfer(struct shim_net *net, void *comm, int sending, char *buf, size_t bytes,
			    size_t step, void *mh)
{
	void *reqs[STEPS_IN_FLIGHT] = { 0 };
	size_t nsteps, posted = 0, completed = 0;

	if (!step || step > bytes)
		step = bytes;
	nsteps = (bytes + step - 1) / step;
	while (completed < nsteps) {
		if (posted < nsteps && posted - completed < STEPS_IN_FLIGHT) {
			size_t off = posted * step, len = bytes - off < step ? bytes - off : step;
			void **slot = &reqs[posted % STEPS_IN_FLIGHT];
			void *data = buf + off;
			int tag = 0;

			if (sending)
				check(shim_net_isend(net, comm, data, len, tag, mh, slot), "isend");
			else
				check(shim_net_irecv(net, comm, 1, &data, &len, &tag, &mh, slot),
				      "irecv");
			if (*slot)
				posted++;
		}
		if (completed < posted) {
			int done = 0, size;

			check(shim_net_test(net, reqs[completed % STEPS_IN_FLIGHT], &done, &size),
			      "test");
			if (done)
				completed++;
			else
				sched_yield(); /* as the shim does: the helpers need the core */
		}
	}
}

static double plugin_round(struct shim_net *net, void *comm, int sending, char *buf,
			   size_t bytes, size_t step, void *mh, int out_fd, int in_fd)
{
	char go = 0;
	uint64_t t0;

	/* The receiver posts first and tells the sender to start, like a CTS. */
	if (sending && read(in_fd, &go, 1) != 1)
		die("read go");
	t0 = fl_clock_mono_ns();
	if (!sending && write(out_fd, &go, 1) != 1)
		die("write go");
	plugin_transfer(net, comm, sending, buf, bytes, step, mh);
	return (double)bytes / (double)(fl_clock_mono_ns() - t0);
}

struct raw_stream {
	int fd;
	int sending;
	char *buf;
	size_t len;
};

static void *raw_stream_run(void *arg)
{
	struct raw_stream *s = arg;
	size_t off = 0;

	/* 256 KiB per call, like iperf3's writes: one huge call thrashes the caches. */
	while (off < s->len) {
		size_t len = s->len - off < RAW_CALL_BYTES ? s->len - off : RAW_CALL_BYTES;
		ssize_t n = s->sending ? send(s->fd, s->buf + off, len, MSG_NOSIGNAL)
				       : recv(s->fd, s->buf + off, len, MSG_WAITALL);
		if (n <= 0)
			die("raw stream");
		off += (size_t)n;
	}
	return NULL;
}

static double raw_round(int *fds, int nstreams, int sending, char *buf, size_t bytes, int out_fd,
			int in_fd)
{
	pthread_t threads[16];
	struct raw_stream s[16];
	size_t share = bytes / (size_t)nstreams;
	char go = 0;
	uint64_t t0;

	if (sending && read(in_fd, &go, 1) != 1)
		die("read go");
	t0 = fl_clock_mono_ns();
	if (!sending && write(out_fd, &go, 1) != 1)
		die("write go");
	for (int i = 0; i < nstreams; i++) {
		s[i] = (struct raw_stream){ fds[i], sending, buf + share * (size_t)i,
					    i == nstreams - 1 ? bytes - share * (size_t)i : share };
		pthread_create(&threads[i], NULL, raw_stream_run, &s[i]);
	}
	for (int i = 0; i < nstreams; i++)
		pthread_join(threads[i], NULL);
	return (double)bytes / (double)(fl_clock_mono_ns() - t0);
}

static void raw_connect(int *fds, int nstreams, int sending, int listen_fd, uint16_t port)
{
	for (int i = 0; i < nstreams; i++) {
		int one = 1;

		if (sending) {
			struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			fds[i] = socket(AF_INET, SOCK_STREAM, 0);
			if (connect(fds[i], (struct sockaddr *)&a, sizeof(a)))
				die("raw connect");
		} else if ((fds[i] = accept(listen_fd, NULL, NULL)) < 0) {
			die("raw accept");
		}
		setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
}

static void plugin_connect(struct shim_net *net, int sending, int out_fd, int in_fd, void **comm)
{
	char handle[FL_HANDLE_SIZE];
	void *listen_comm = NULL;

	if (!sending) {
		check(shim_net_listen(net, 0, handle, &listen_comm), "listen");
		if (write(out_fd, handle, sizeof(handle)) != (ssize_t)sizeof(handle))
			die("write handle");
	} else if (read(in_fd, handle, sizeof(handle)) != (ssize_t)sizeof(handle)) {
		die("read handle");
	}
	while (!*comm) {
		if (sending)
			check(shim_net_connect(net, 0, handle, comm), "connect");
		else
			check(shim_net_accept(net, listen_comm, comm), "accept");
	}
	if (listen_comm)
		shim_net_close_listen(net, listen_comm);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return v[n / 2];
}

/* Runs every round on one side; the receiver reports GB/s through `results`. */
static void run_side(const char *so, int sending, size_t bytes, int rounds, int nstreams,
		     int listen_fd, uint16_t port, int out_fd, int in_fd, FILE *results)
{
	enum { NPAT = sizeof(patterns) / sizeof(patterns[0]) };
	double plugin_gbs[NPAT][64], raw_gbs[NPAT][64];
	struct shim_net net;
	char err[256];
	void *comm = NULL, *mh = NULL;
	int fds[16];
	char *buf = malloc(bytes);

	if (!buf)
		die("malloc");
	memset(buf, sending ? 0x5a : 0, bytes);
	if (shim_net_load(so, 0, &net, err, sizeof(err)))
		fprintf(stderr, "socket_vs_raw: %s\n", err), exit(1);
	check(shim_net_init(&net, 42), "init");
	plugin_connect(&net, sending, out_fd, in_fd, &comm);
	check(shim_net_reg_mr(&net, comm, buf, bytes, FL_PTR_HOST, &mh), "regMr");
	raw_connect(fds, nstreams, sending, listen_fd, port);
	for (int r = 0; r < rounds; r++) {
		for (int p = 0; p < NPAT; p++) {
			plugin_gbs[p][r] = plugin_round(&net, comm, sending, buf, bytes,
							patterns[p].step, mh, out_fd, in_fd);
			raw_gbs[p][r] = raw_round(fds, nstreams, sending, buf, bytes, out_fd, in_fd);
		}
	}
	for (int p = 0; p < NPAT && !sending; p++) {
		double pm = median(plugin_gbs[p], rounds), rm = median(raw_gbs[p], rounds);

		fprintf(results,
			"%s vs raw TCP, %zu MiB, %s, %d TCP stream(s): plugin %.2f GB/s, raw %.2f "
			"GB/s, ratio %.3f (goal >= 0.95; median of %d rounds)\n",
			net.name, bytes >> 20, patterns[p].name, nstreams, pm, rm, pm / rm, rounds);
	}
	shim_net_dereg_mr(&net, comm, mh);
	if (sending)
		shim_net_close_send(&net, comm);
	else
		shim_net_close_recv(&net, comm);
	shim_net_close(&net);
	for (int i = 0; i < nstreams; i++)
		close(fds[i]);
	free(buf);
}

int main(int argc, char **argv)
{
	size_t bytes = 64 << 20;
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	long nstreams;
	int to_sender[2], to_receiver[2], listen_fd, status;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	pid_t child;

	if (argc < 2 || (argc > 2 && fl_parse_bytes(argv[2], &bytes)) || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: socket_vs_raw PLUGIN_SO [bytes, e.g. 64M] [rounds 1..64]\n");
		return 2;
	}
	/* The same stream count the plugin will use, so raw TCP gets as many. */
	if (fl_env_long("FABRICLAB_SOCKET_NSTREAMS", SOCK_DEFAULT_NSTREAMS, 0, 16, &nstreams))
		return fprintf(stderr, "socket_vs_raw: bad FABRICLAB_SOCKET_NSTREAMS\n"), 2;
	/* With 0 data streams the plugin carries everything on its one control stream. */
	if (nstreams == 0)
		nstreams = 1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) || listen(listen_fd, 16) ||
	    getsockname(listen_fd, (struct sockaddr *)&a, &alen))
		die("raw listen");
	if (pipe(to_sender) || pipe(to_receiver))
		die("pipe");
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		run_side(argv[1], 1, bytes, rounds, (int)nstreams, listen_fd, ntohs(a.sin_port),
			 to_receiver[1], to_sender[0], NULL);
		_exit(0);
	}
	run_side(argv[1], 0, bytes, rounds, (int)nstreams, listen_fd, ntohs(a.sin_port),
		 to_sender[1], to_receiver[0], stdout);
	waitpid(child, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
