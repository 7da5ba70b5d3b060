/* One process per rank, forked and watched (driver_launch.h). */
#include "driver_launch.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 20
#define GRACE_S 5.0 /* between SIGTERM and SIGKILL for the ranks still running */

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int drv_rank_environment(const struct drv_args *a, int rank, int set_hostid, char *err,
			 size_t errlen)
{
	char buf[4096];

	if (set_hostid) {
		snprintf(buf, sizeof(buf), "%s%d", a->hostid_prefix, rank);
		if (setenv("NCCL_HOSTID", buf, 1))
			return fail(err, errlen, "NCCL_HOSTID: %s", strerror(errno));
	}
	for (int i = 0; i < a->n_rank_env; i++) {
		char *eq;

		if (drv_expand_rank(a->rank_env[i], rank, buf, sizeof(buf)))
			return fail(err, errlen, "--rank-env %s: too long", a->rank_env[i]);
		eq = strchr(buf, '=');
		*eq = '\0';
		if (setenv(buf, eq + 1, 1))
			return fail(err, errlen, "--rank-env %s: %s", a->rank_env[i],
				    strerror(errno));
	}
	return 0;
}

/* In a child: die with the parent, so that no rank outlives a killed driver. */
static void tie_to_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(DRV_EXIT_FAILED);
}

int drv_probe(const struct drv_args *a, drv_probe_fn fn, char *msg, size_t len,
	      double timeout_s)
{
	int fds[2], status = 0;
	size_t n = 0;
	pid_t parent = getpid(), pid;
	double deadline = now_s() + timeout_s;

	if (len == 0 || pipe(fds))
		return DRV_EXIT_FAILED;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		snprintf(msg, len, "fork: %s", strerror(errno));
		return DRV_EXIT_FAILED;
	}
	if (pid == 0) {
		int rc;

		close(fds[0]);
		tie_to_parent(parent);
		msg[0] = '\0';
		rc = fn(a, msg, len);
		if (write(fds[1], msg, strnlen(msg, len - 1)) < 0)
			rc = DRV_EXIT_FAILED;
		_exit(rc);
	}
	close(fds[1]);
	msg[0] = '\0';
	for (;;) {
		struct pollfd p = { fds[0], POLLIN, 0 };
		ssize_t r;

		if (poll(&p, 1, POLL_MS) == 0) {
			if (now_s() < deadline)
				continue;
			kill(pid, SIGKILL);
			snprintf(msg, len, "the GPU probe took more than %.0f s", timeout_s);
			break;
		}
		r = read(fds[0], msg + n, len - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		msg[n] = '\0';
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (!msg[0] || now_s() < deadline)
		snprintf(msg, len, "the GPU probe died of signal %d", WTERMSIG(status));
	return DRV_EXIT_FAILED;
}

static void run_child(const struct drv_args *a, int rank, drv_rank_fn fn, void *ctx,
		      pid_t parent)
{
	char err[1024] = "";
	int rc;

	tie_to_parent(parent);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (drv_rank_environment(a, rank, 1, err, sizeof(err)))
		rc = DRV_EXIT_USAGE;
	else
		rc = fn(a, rank, ctx, err, sizeof(err));
	if (rc != DRV_EXIT_OK && err[0])
		fprintf(stderr, "nccl_driver: rank %d: %s\n", rank, err);
	fflush(NULL);
	_exit(rc);
}

struct watch {
	pid_t pid[DRV_MAX_RANKS];
	int alive;
	int status;      /* of the run: the first rank's failure */
	double kill_at;  /* when to SIGKILL what is left; 0 = not ending */
};

static void end_others(struct watch *w, int n)
{
	if (w->kill_at > 0)
		return;
	for (int r = 0; r < n; r++)
		if (w->pid[r] > 0)
			kill(w->pid[r], SIGTERM);
	w->kill_at = now_s() + GRACE_S;
}

/* Reaps what has exited; the first failure sets the run's status and ends the others. */
static void reap(struct watch *w, int n, char *err, size_t errlen)
{
	for (int r = 0; r < n; r++) {
		int st;
		pid_t got;

		if (w->pid[r] <= 0)
			continue;
		got = waitpid(w->pid[r], &st, WNOHANG);
		if (got == 0 || (got < 0 && errno == EINTR))
			continue;
		w->pid[r] = 0;
		w->alive--;
		if (got < 0 || w->status != DRV_EXIT_OK || w->kill_at > 0)
			continue; /* a rank ended by us, or after the first failure */
		if (WIFEXITED(st) && WEXITSTATUS(st) == DRV_EXIT_OK)
			continue;
		if (WIFEXITED(st)) {
			w->status = WEXITSTATUS(st);
			fail(err, errlen, "rank %d exited with status %d", r, w->status);
		} else {
			w->status = DRV_EXIT_FAILED;
			fail(err, errlen, "rank %d died of signal %d (%s)", r, WTERMSIG(st),
			     strsignal(WTERMSIG(st)));
		}
		/* A rank that found wrong elements finished its collectives: the others finish
		 * theirs too (and rank 0 prints the table). Any other failure may leave them
		 * waiting for it forever. */
		if (w->status != DRV_EXIT_WRONG)
			end_others(w, n);
	}
}

static void watch_ranks(struct watch *w, int n, double timeout_s, char *err, size_t errlen)
{
	double deadline = now_s() + timeout_s;
	const struct timespec pause = { 0, POLL_MS * 1000000L };

	while (w->alive > 0) {
		reap(w, n, err, errlen);
		if (w->alive == 0)
			break;
		if (w->kill_at == 0 && (stop_signal || now_s() > deadline)) {
			w->status = DRV_EXIT_FAILED;
			if (stop_signal)
				fail(err, errlen, "stopped by signal %d", (int)stop_signal);
			else
				fail(err, errlen, "timed out after %.0f s (--timeout), %d rank(s) "
				     "still running", timeout_s, w->alive);
			end_others(w, n);
		}
		if (w->kill_at > 0 && now_s() > w->kill_at)
			for (int r = 0; r < n; r++)
				if (w->pid[r] > 0)
					kill(w->pid[r], SIGKILL);
		nanosleep(&pause, NULL);
	}
}

int drv_launch(const struct drv_args *a, drv_rank_fn fn, void *ctx, char *err, size_t errlen)
{
	struct watch w = { .alive = 0, .status = DRV_EXIT_OK, .kill_at = 0 };
	struct sigaction sa = { .sa_handler = on_stop }, old_term, old_int;
	pid_t parent = getpid();

	err[0] = '\0';
	stop_signal = 0;
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGINT, &sa, &old_int);
	fflush(NULL);
	for (int r = 0; r < a->ranks; r++) {
		pid_t pid = fork();

		if (pid == 0)
			run_child(a, r, fn, ctx, parent);
		if (pid < 0) {
			w.status = DRV_EXIT_FAILED;
			fail(err, errlen, "fork of rank %d: %s", r, strerror(errno));
			end_others(&w, r);
			break;
		}
		w.pid[r] = pid;
		w.alive++;
	}
	watch_ranks(&w, a->ranks, a->timeout_s, err, errlen);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	return w.status;
}
