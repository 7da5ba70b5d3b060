/*
 * The shim's bootstrap and launcher with real processes over loopback:
 * exchanges are right, a dead or silent rank makes the others fail quickly,
 * strays and mismatched jobs are turned away, late rank 0 is waited for.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "shim/boot_socket.h"
#include "shim/shim.h"
#include "shim/shim_env.h"

#define MAX_RANKS 8

/* What each rank saw, in memory shared with the test process. */
struct outcome {
	int ran;
	int rc;
	int ms;
	char text[SHIM_ERROR_LEN];
};

static struct outcome *outcomes;

static int setup(void **state)
{
	(void)state;
	outcomes = mmap(NULL, sizeof(*outcomes) * MAX_RANKS, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return outcomes == MAP_FAILED ? -1 : 0;
}

static void reset_outcomes(void)
{
	memset(outcomes, 0, sizeof(*outcomes) * MAX_RANKS);
}

static int my_rank(void)
{
	return atoi(getenv("RANK"));
}

static int record(int rank, int rc, uint64_t start_ns)
{
	outcomes[rank].ran = 1;
	outcomes[rank].rc = rc;
	outcomes[rank].ms = (int)((shim_now_ns() - start_ns) / 1000000);
	if (rc)
		snprintf(outcomes[rank].text, sizeof(outcomes[rank].text), "%s", shim_error_text());
	return rc ? 1 : 0;
}

struct blob {
	int32_t rank;
	char tag[33]; /* an odd size on purpose */
};

static int exchange_rounds(struct shim_boot *b)
{
	struct blob mine, all[MAX_RANKS];
	double values[3], gathered[3 * MAX_RANKS];
	int rc = 0;

	for (int round = 0; !rc && round < 3; round++) {
		mine.rank = b->rank;
		snprintf(mine.tag, sizeof(mine.tag), "r%d-round%d", b->rank, round);
		rc = shim_boot_allgather(b, &mine, all, sizeof(mine));
		for (int r = 0; !rc && r < b->nranks; r++) {
			char want[33];

			snprintf(want, sizeof(want), "r%d-round%d", r, round);
			if (all[r].rank != r || strcmp(all[r].tag, want))
				rc = shim_fail(FL_ERR_INTERNAL, "allgather slot %d holds %d/%s", r,
					       all[r].rank, all[r].tag);
		}
		if (!rc)
			rc = shim_boot_barrier(b);
	}
	values[0] = b->rank;
	values[1] = b->rank * 0.5;
	values[2] = -b->rank;
	if (!rc)
		rc = shim_boot_gather_doubles(b, values, 3, b->rank ? NULL : gathered);
	for (int r = 0; !rc && b->rank == 0 && r < b->nranks; r++) {
		if (gathered[3 * r] != r || gathered[3 * r + 1] != r * 0.5 ||
		    gathered[3 * r + 2] != -r)
			rc = shim_fail(FL_ERR_INTERNAL, "gather slot %d wrong", r);
	}
	return rc;
}

static int exchange_rank(void *arg)
{
	struct shim_boot b;
	uint64_t start = shim_now_ns();
	int rc;

	(void)arg;
	rc = shim_boot_init_env(&b, 5000);
	if (!rc)
		rc = exchange_rounds(&b);
	shim_boot_close(&b);
	return record(my_rank(), rc, start);
}

static void test_allgather_barrier_gather(void **state)
{
	(void)state;
	for (int n = 1; n <= 5; n += 2) {
		reset_outcomes();
		assert_int_equal(shim_spawn(n, exchange_rank, NULL), FL_OK);
		for (int r = 0; r < n; r++) {
			assert_true(outcomes[r].ran);
			assert_int_equal(outcomes[r].rc, 0);
		}
	}
}

static int dying_rank(void *arg)
{
	struct shim_boot b;
	uint64_t start;
	int rc;

	(void)arg;
	/* Leave on our own, not by the launcher's SIGTERM: that is what is tested. */
	signal(SIGTERM, SIG_IGN);
	rc = shim_boot_init_env(&b, 20000);
	if (!rc && my_rank() == 2)
		raise(SIGKILL);
	start = shim_now_ns();
	if (!rc)
		rc = shim_boot_barrier(&b);
	shim_boot_close(&b);
	return record(my_rank(), rc, start);
}

static void test_dead_rank_fails_the_others_fast(void **state)
{
	(void)state;
	reset_outcomes();
	assert_int_not_equal(shim_spawn(4, dying_rank, NULL), FL_OK);
	assert_non_null(strstr(shim_error_text(), "rank 2"));
	assert_non_null(strstr(shim_error_text(), "killed by signal 9"));
	assert_false(outcomes[2].ran);
	for (int r = 0; r < 4; r++) {
		if (r == 2)
			continue;
		assert_true(outcomes[r].ran);
		assert_int_not_equal(outcomes[r].rc, 0);
		assert_true(outcomes[r].ms < 3000); /* the timeout was 20 s */
		/* "waiting for rank 2: connection closed", "exchange with rank 0: ..." */
		assert_true(strstr(outcomes[r].text, "rank 2:") ||
			    strstr(outcomes[r].text, "rank 0:"));
	}
	assert_non_null(strstr(outcomes[0].text, "rank 2"));
}

static int silent_rank(void *arg)
{
	struct shim_boot b;
	uint64_t start;
	int rc;

	(void)arg;
	rc = shim_boot_init_env(&b, 500);
	if (!rc && my_rank() == 1)
		sleep(10);
	start = shim_now_ns();
	if (!rc)
		rc = shim_boot_barrier(&b);
	shim_boot_close(&b);
	return record(my_rank(), rc, start);
}

static void test_silent_rank_times_out(void **state)
{
	(void)state;
	reset_outcomes();
	assert_int_not_equal(shim_spawn(2, silent_rank, NULL), FL_OK);
	assert_true(outcomes[0].ran);
	assert_int_not_equal(outcomes[0].rc, 0);
	assert_in_range(outcomes[0].ms, 400, 3000);
	assert_non_null(strstr(outcomes[0].text, "timed out"));
	assert_non_null(strstr(outcomes[0].text, "rank 1"));
}

/* Before joining, rank 1 throws a stranger's bytes at rank 0's port. */
static int stray_then_join(void *arg)
{
	char junk[64];
	int fd, rc;

	if (my_rank() == 1) {
		memset(junk, 0x5a, sizeof(junk));
		rc = shim_sock_connect(getenv("MASTER_ADDR"), getenv("MASTER_PORT"),
				       shim_deadline_ms(5000), &fd);
		if (!rc)
			rc = shim_sock_send(fd, junk, sizeof(junk), shim_deadline_ms(1000));
		if (rc)
			return record(1, rc, shim_now_ns());
		close(fd);
	}
	return exchange_rank(arg);
}

static void test_stray_connection_is_dropped(void **state)
{
	(void)state;
	reset_outcomes();
	assert_int_equal(shim_spawn(3, stray_then_join, NULL), FL_OK);
	for (int r = 0; r < 3; r++)
		assert_int_equal(outcomes[r].rc, 0);
}

static void free_port(char *port, size_t len)
{
	int fd, p;

	assert_int_equal(shim_sock_listen("127.0.0.1", "0", &fd), FL_OK);
	assert_int_equal(shim_sock_port(fd, &p), FL_OK);
	close(fd);
	snprintf(port, len, "%d", p);
}

/* Forks one rank that joins rank/nranks at 127.0.0.1:port and runs a barrier. */
static pid_t start_rank(int rank, int nranks, const char *port)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct shim_boot b;
		uint64_t start = shim_now_ns();
		int rc = shim_boot_init(&b, rank, nranks, "127.0.0.1", port, 5000);

		if (!rc)
			rc = shim_boot_barrier(&b);
		shim_boot_close(&b);
		_exit(record(rank, rc, start));
	}
	return pid;
}

static int exit_status(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_late_rank_zero_is_waited_for(void **state)
{
	struct timespec late = { 0, 700 * 1000000L };
	char port[16];
	pid_t one, zero;

	(void)state;
	reset_outcomes();
	free_port(port, sizeof(port));
	one = start_rank(1, 2, port);
	nanosleep(&late, NULL);
	zero = start_rank(0, 2, port);
	assert_int_equal(exit_status(one), 0);
	assert_int_equal(exit_status(zero), 0);
	assert_true(outcomes[1].ms >= 600);
}

static void test_world_size_mismatch_is_refused(void **state)
{
	char port[16];
	pid_t zero, one;

	(void)state;
	reset_outcomes();
	free_port(port, sizeof(port));
	zero = start_rank(0, 2, port);
	one = start_rank(1, 3, port);
	assert_int_not_equal(exit_status(one), 0);
	assert_int_not_equal(exit_status(zero), 0);
	assert_non_null(strstr(outcomes[1].text, "refused"));
	assert_non_null(strstr(outcomes[1].text, "WORLD_SIZE=3"));
	assert_non_null(strstr(outcomes[0].text, "WORLD_SIZE=3"));
	assert_true(outcomes[0].ms < 3000 && outcomes[1].ms < 3000);
}

static void test_environment_is_checked(void **state)
{
	struct shim_boot b;

	(void)state;
	unsetenv("RANK");
	setenv("WORLD_SIZE", "2", 1);
	assert_int_equal(shim_boot_init_env(&b, 1000), FL_ERR_USAGE);
	assert_non_null(strstr(shim_error_text(), "RANK is not set"));
	setenv("RANK", "2", 1);
	assert_int_equal(shim_boot_init_env(&b, 1000), FL_ERR_USAGE);
	assert_non_null(strstr(shim_error_text(), "RANK=\"2\""));
	setenv("RANK", "1", 1);
	unsetenv("MASTER_ADDR");
	assert_int_equal(shim_boot_init_env(&b, 1000), FL_ERR_USAGE);
	assert_non_null(strstr(shim_error_text(), "MASTER_ADDR"));
	unsetenv("RANK");
	unsetenv("WORLD_SIZE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allgather_barrier_gather),
		cmocka_unit_test(test_dead_rank_fails_the_others_fast),
		cmocka_unit_test(test_silent_rank_times_out),
		cmocka_unit_test(test_stray_connection_is_dropped),
		cmocka_unit_test(test_late_rank_zero_is_waited_for),
		cmocka_unit_test(test_world_size_mismatch_is_refused),
		cmocka_unit_test(test_environment_is_checked),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
