/*
 * The helper thread of a data stream on its own, over a socketpair: every
 * posted piece completes (a lost wake-up would hang here), bytes arrive
 * intact, stop unblocks a helper stuck in recv, and a closed peer is reported.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/base/error.h"
#include "plugin/base/fl_types.h"
#include "plugin/transport/socket/sock_arrival.h"
#include "plugin/transport/socket/sock_stream.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void wait_sink(struct sock_sink *sink, double limit_s)
{
	double end = now_s() + limit_s;

	while (atomic_load_explicit(&sink->pending, memory_order_acquire))
		if (now_s() > end)
			fail_msg("a piece never completed (lost wake-up?)");
}

struct duo {
	int fds[2];
	struct sock_fault fault_tx, fault_rx;
	struct sock_stream tx, rx;
};

static void duo_start(struct duo *d)
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, d->fds), 0);
	sock_fault_init(&d->fault_tx, "peer-rx", "socketpair");
	sock_fault_init(&d->fault_rx, "peer-tx", "socketpair");
	assert_int_equal(sock_stream_start(&d->tx, 0, d->fds[0], 0, &d->fault_tx), FL_OK);
	assert_int_equal(sock_stream_start(&d->rx, 1, d->fds[1], 1, &d->fault_rx), FL_OK);
}

static void duo_stop(struct duo *d)
{
	sock_stream_stop(&d->tx);
	sock_stream_stop(&d->rx);
	close(d->fds[0]);
	close(d->fds[1]);
	sock_fault_destroy(&d->fault_tx);
	sock_fault_destroy(&d->fault_rx);
}

/* Many small pieces with pauses now and then, so helpers fall asleep and get woken. */
static void test_every_piece_completes(void **state)
{
	enum { ROUNDS = 20000 };
	uint8_t out[256], in[256];
	struct sock_sink stx, srx;
	struct duo d;

	(void)state;
	duo_start(&d);
	srand(1);
	for (int i = 0; i < ROUNDS; i++) {
		size_t len = 1 + (size_t)(rand() % (int)sizeof(out));

		for (size_t k = 0; k < len; k++)
			out[k] = (uint8_t)(i + k);
		sock_sink_reset(&stx, 1);
		sock_sink_reset(&srx, 1);
		if (i & 1) { /* post in both orders */
			assert_int_equal(sock_stream_post(&d.rx, in, len, &srx), FL_OK);
			assert_int_equal(sock_stream_post(&d.tx, out, len, &stx), FL_OK);
		} else {
			assert_int_equal(sock_stream_post(&d.tx, out, len, &stx), FL_OK);
			assert_int_equal(sock_stream_post(&d.rx, in, len, &srx), FL_OK);
		}
		wait_sink(&srx, 5.0);
		wait_sink(&stx, 5.0);
		assert_memory_equal(in, out, len);
		/* Untimed (both 0) when the piece was wholly buffered before the first look. */
		assert_true(atomic_load(&srx.wire_start_ns) <= atomic_load(&srx.wire_end_ns));
		if (rand() % 64 == 0)
			usleep(200);
	}
	assert_int_equal(atomic_load(&d.fault_rx.failed), 0);
	duo_stop(&d);
}

/* A burst that fills much of the ring before the helper runs. */
static void test_burst(void **state)
{
	enum { N = SOCK_RING_SIZE - 1, LEN = 64 };
	static uint8_t out[N][LEN], in[N][LEN];
	struct sock_sink stx, srx;
	struct duo d;

	(void)state;
	duo_start(&d);
	for (int i = 0; i < N; i++)
		memset(out[i], i, LEN);
	sock_sink_reset(&stx, N);
	sock_sink_reset(&srx, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(sock_stream_post(&d.tx, out[i], LEN, &stx), FL_OK);
	for (int i = 0; i < N; i++)
		assert_int_equal(sock_stream_post(&d.rx, in[i], LEN, &srx), FL_OK);
	wait_sink(&srx, 5.0);
	wait_sink(&stx, 5.0);
	assert_memory_equal(in, out, sizeof(in));
	duo_stop(&d);
}

/* The id of this process's thread called name (sock_stream.c names its helpers), or -1. */
static long thread_named(const char *name)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;
	long found = -1;

	assert_non_null(dir);
	while (found < 0 && (e = readdir(dir))) {
		char path[300], comm[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, name, strlen(name)) &&
		    comm[strlen(name)] == '\n')
			found = strtol(e->d_name, NULL, 10);
		fclose(f);
	}
	closedir(dir);
	return found;
}

/*
 * 1 while thread tid sleeps in a receive: recvmsg, which helpers read with (for
 * the kernel's arrival stamp), or recvfrom (glibc's recv).
 */
static int blocked_in_recv(long tid)
{
	char path[64], line[256] = "";
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
	f = fopen(path, "r");
	if (!f) /* that tid was an earlier test's helper, gone since: look again */
		return 0;
	if (fgets(line, sizeof(line), f))
		nr = strtol(line, NULL, 10); /* "running" reads as 0, never recvfrom */
	fclose(f);
	return nr == SYS_recvmsg || nr == SYS_recvfrom;
}

static void test_stop_unblocks_recv(void **state)
{
	uint8_t buf[16];
	struct sock_sink sink;
	struct duo d;
	double start, end;
	long helper;

	(void)state;
	duo_start(&d);
	helper = thread_named("fl-sock-r1");
	assert_true(helper > 0);
	sock_sink_reset(&sink, 1);
	assert_int_equal(sock_stream_post(&d.rx, buf, sizeof(buf), &sink), FL_OK);
	/* Observed, not assumed after a sleep: the helper is blocked in recv, nothing will come. */
	end = now_s() + 10.0;
	while (!blocked_in_recv(helper)) {
		if (now_s() > end)
			fail_msg("the receiving helper never blocked in recv");
		usleep(1000);
		helper = thread_named("fl-sock-r1");
		assert_true(helper > 0);
	}
	start = now_s();
	alarm(10); /* a stop that cannot unblock recv hangs in pthread_join: end the test */
	sock_stream_stop(&d.rx);
	alarm(0);
	assert_true(now_s() - start < 1.0);
	assert_int_equal(atomic_load(&sink.pending), 1);
	assert_int_equal(atomic_load(&d.fault_rx.failed), 0); /* a stop is not a failure */
	duo_stop(&d);
}

static void test_closed_peer_is_reported(void **state)
{
	uint8_t buf[16];
	struct sock_sink sink;
	struct duo d;
	double end;

	(void)state;
	duo_start(&d);
	sock_stream_stop(&d.tx);
	shutdown(d.fds[0], SHUT_WR);
	sock_sink_reset(&sink, 1);
	assert_int_equal(sock_stream_post(&d.rx, buf, sizeof(buf), &sink), FL_OK);
	end = now_s() + 5.0;
	while (!atomic_load(&d.fault_rx.failed))
		assert_true(now_s() < end);
	assert_int_equal(sock_fault_report(&d.fault_rx), FL_ERR_SYSTEM);
	assert_non_null(strstr(fl_error_text(), "peer closed"));
	assert_non_null(strstr(fl_error_text(), "peer-tx"));
	duo_stop(&d);
}

/*
 * Wire time is only what the receiver saw arrive: a piece already wholly in the
 * socket when the helper first looked gives none; one it waited for is timed.
 * The large piece is several times what loopback's socket buffers hold, so part
 * of it arrives while the helper watches even when a busy machine wakes it late.
 */
static void test_receiver_times_only_what_it_watched(void **state)
{
	enum { LEN = 32 << 20 };
	static uint8_t out[LEN], in[LEN];
	struct sock_sink stx, srx;
	struct duo d;

	(void)state;
	duo_start(&d);
	sock_sink_reset(&stx, 1);
	sock_sink_reset(&srx, 1);
	assert_int_equal(sock_stream_post(&d.tx, out, 1000, &stx), FL_OK);
	wait_sink(&stx, 5.0);
	usleep(20000);
	assert_int_equal(sock_stream_post(&d.rx, in, 1000, &srx), FL_OK);
	wait_sink(&srx, 5.0);
	assert_int_equal(atomic_load(&srx.wire_start_ns), 0);
	assert_int_equal(atomic_load(&srx.wire_end_ns), 0);

	sock_sink_reset(&stx, 1);
	sock_sink_reset(&srx, 1);
	assert_int_equal(sock_stream_post(&d.rx, in, LEN, &srx), FL_OK);
	usleep(20000);
	assert_int_equal(sock_stream_post(&d.tx, out, LEN, &stx), FL_OK);
	wait_sink(&srx, 5.0);
	wait_sink(&stx, 5.0);
	assert_true(atomic_load(&srx.wire_start_ns) > 0);
	assert_true(atomic_load(&srx.wire_end_ns) > atomic_load(&srx.wire_start_ns));
	duo_stop(&d);
}

/* A TCP connection over loopback: fds[0] the connecting end, fds[1] the accepted one. */
static void tcp_pair(int fds[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&a, &len), 0);
	fds[0] = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fds[0], (struct sockaddr *)&a, sizeof(a)), 0);
	fds[1] = accept(l, NULL, NULL);
	assert_true(fds[1] >= 0);
	close(l);
}

/*
 * A reader that comes late learns when its bytes arrived, not when it read
 * them: 30 ms after they were sent, their stamp is about 30 ms old. Without
 * stamps asked for, a read reports none.
 */
static void test_late_read_knows_when_bytes_arrived(void **state)
{
	uint8_t out[4096] = { 1 }, in[4096];
	uint64_t ago = 1;
	size_t got = 0;
	int fds[2];

	(void)state;
	tcp_pair(fds);
	assert_true(sock_arrival_enable(fds[1]));
	/* the kernel turns stamping on from a work queue: segments sent at once may have none */
	usleep(20000);
	assert_int_equal(send(fds[0], out, sizeof(out), 0), (ssize_t)sizeof(out));
	usleep(30000);
	assert_int_equal(sock_recv_arrival(fds[1], in, sizeof(in), MSG_WAITALL, &got, &ago), 0);
	assert_int_equal(got, sizeof(in));
	assert_true(ago >= 25000000ULL && ago < 1000000000ULL);
	assert_memory_equal(in, out, sizeof(out));
	close(fds[0]);
	close(fds[1]);

	tcp_pair(fds);
	assert_int_equal(send(fds[0], out, sizeof(out), 0), (ssize_t)sizeof(out));
	usleep(10000);
	assert_int_equal(sock_recv_arrival(fds[1], in, sizeof(in), MSG_WAITALL, &got, &ago), 0);
	assert_int_equal(got, sizeof(in));
	assert_int_equal(ago, 0);
	/* the peer closed: end of stream */
	close(fds[0]);
	assert_int_equal(sock_recv_arrival(fds[1], in, sizeof(in), 0, &got, &ago), -1);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_piece_completes),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_receiver_times_only_what_it_watched),
		cmocka_unit_test(test_stop_unblocks_recv),
		cmocka_unit_test(test_closed_peer_is_reported),
		cmocka_unit_test(test_late_read_knows_when_bytes_arrived),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
