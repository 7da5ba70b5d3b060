/*
 * Runs the ranks of a local job as forked children. The parent binds the
 * bootstrap socket first (127.0.0.1, any free port) and rank 0 inherits it,
 * so no other process can take the port in between.
 */
#include "shim.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boot_socket.h"
#include "shim_env.h"

#define KILL_GRACE_MS 5000
#define WAIT_PAUSE_NS 10000000L

struct child {
	pid_t pid;
	int running;
	int status;
};

static void set_env_int(const char *name, int value)
{
	char text[16];

	snprintf(text, sizeof(text), "%d", value);
	setenv(name, text, 1);
}

static void child_env(int rank, int nranks, const char *master_addr, int port)
{
	char node[32];

	set_env_int("RANK", rank);
	set_env_int("LOCAL_RANK", rank);
	set_env_int("WORLD_SIZE", nranks);
	set_env_int("LOCAL_WORLD_SIZE", nranks);
	setenv("MASTER_ADDR", master_addr, 1);
	set_env_int("MASTER_PORT", port);
	snprintf(node, sizeof(node), "node%d", rank);
	setenv("FABRICLAB_NODE_NAME", node, 0);
	if (!shim_env("FABRICLAB_SOCKET_IFNAME") && !shim_env("NCCL_SOCKET_IFNAME"))
		setenv("FABRICLAB_SOCKET_IFNAME", "lo", 1);
}

/* One job being started: what every child needs to know. */
struct job {
	int nranks;
	int listen_fd;
	int port;
	pid_t parent;
	int (*rank_main)(void *);
	void *arg;
	const struct shim_spawn_opts *opts;
};

static void __attribute__((noreturn)) run_child(const struct job *job, int rank)
{
	const struct shim_spawn_opts *o = job->opts;
	int rc;

	/* A rank outliving its launcher would hold the others' connections open. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != job->parent)
		_exit(1);
	/* The launcher may catch these to clean up; a rank must still die of them. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (o->enter && o->enter(rank, o->ctx)) {
		fprintf(stderr, "rank %d: %s\n", rank, shim_error_text());
		exit(1);
	}
	child_env(rank, job->nranks, o->master_addr ? o->master_addr : "127.0.0.1", job->port);
	if (rank == 0)
		shim_boot_inherit_listener(job->listen_fd);
	else
		close(job->listen_fd);
	shim_log_set_rank(rank);
	rc = job->rank_main(job->arg);
	/* exit(), not _exit(): the plugin's exit-time work (its report) must run. */
	exit(rc ? (rc & 0xff ? rc & 0xff : 1) : 0);
}

static void signal_running(struct child *kids, int n, int sig)
{
	for (int r = 0; r < n; r++) {
		if (kids[r].running)
			kill(kids[r].pid, sig);
	}
}

static int failed(int status)
{
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

static void describe(char *buf, size_t len, int rank, const struct child *kid)
{
	if (WIFSIGNALED(kid->status))
		snprintf(buf, len, "rank %d (pid %d) was killed by signal %d (%s)", rank,
			 (int)kid->pid, WTERMSIG(kid->status), strsignal(WTERMSIG(kid->status)));
	else
		snprintf(buf, len, "rank %d (pid %d) exited with status %d", rank, (int)kid->pid,
			 WEXITSTATUS(kid->status));
}

/*
 * Ranks that ended within one pass look simultaneous; a death by signal is
 * the likelier cause of the others' failures, so it is the one named.
 */
static int more_telling(const struct child *kids, int candidate, int current)
{
	return current < 0 ||
	       (WIFSIGNALED(kids[candidate].status) && !WIFSIGNALED(kids[current].status));
}

/* Reaps whoever ended; returns how many are still running, sets *first on the first failure. */
static int reap(struct child *kids, int n, int *first)
{
	int running = 0, failed_now = -1;

	for (int r = 0; r < n; r++) {
		if (!kids[r].running)
			continue;
		if (waitpid(kids[r].pid, &kids[r].status, WNOHANG) != kids[r].pid) {
			running++;
			continue;
		}
		kids[r].running = 0;
		if (failed(kids[r].status) && more_telling(kids, r, failed_now))
			failed_now = r;
	}
	if (*first < 0)
		*first = failed_now;
	return running;
}

static int wait_all(struct child *kids, int n, const volatile sig_atomic_t *stop)
{
	struct timespec pause = { 0, WAIT_PAUSE_NS };
	uint64_t kill_at = 0;
	int first = -1;
	char why[160];

	while (reap(kids, n, &first)) {
		if (stop && *stop && !kill_at) {
			SHIM_INFO(SHIM_LOG_INIT, "spawn: asked to stop; stopping the ranks");
			signal_running(kids, n, SIGTERM);
			kill_at = shim_deadline_ms(KILL_GRACE_MS);
		}
		if (first >= 0 && !kill_at) {
			describe(why, sizeof(why), first, &kids[first]);
			SHIM_INFO(SHIM_LOG_INIT, "spawn: %s; stopping the other ranks", why);
			signal_running(kids, n, SIGTERM);
			kill_at = shim_deadline_ms(KILL_GRACE_MS);
		}
		if (kill_at && shim_now_ns() > kill_at) {
			signal_running(kids, n, SIGKILL);
			kill_at = UINT64_MAX;
		}
		nanosleep(&pause, NULL);
	}
	if (stop && *stop)
		return shim_fail(FL_ERR_SYSTEM, "spawn: interrupted; the ranks were stopped");
	if (first < 0)
		return FL_OK;
	describe(why, sizeof(why), first, &kids[first]);
	return shim_fail(FL_ERR_REMOTE, "%s", why);
}

static void write_pidfile(const struct child *kids, int n)
{
	const char *path = shim_env("FABRICLAB_SHIM_PIDFILE");
	char tmp[4096];
	FILE *f;

	if (!path)
		return;
	/* Written aside and renamed, so a reader never sees half a file. */
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		SHIM_WARN("spawn: cannot write FABRICLAB_SHIM_PIDFILE=%s: %s", path,
			  strerror(errno));
		return;
	}
	for (int r = 0; r < n; r++)
		fprintf(f, "%d %d\n", r, (int)kids[r].pid);
	if (fclose(f) || rename(tmp, path))
		SHIM_WARN("spawn: cannot write FABRICLAB_SHIM_PIDFILE=%s: %s", path,
			  strerror(errno));
}

static int start_all(struct child *kids, const struct job *job)
{
	int n = job->nranks;

	for (int r = 0; r < n; r++) {
		pid_t pid;

		fflush(NULL); /* or the children would print the parent's buffered output again */
		pid = fork();
		if (pid == 0) {
			free(kids); /* the launcher's, not the rank's */
			run_child(job, r);
		}
		if (pid < 0) {
			int err = errno;

			signal_running(kids, n, SIGKILL);
			for (int k = 0; k < r; k++)
				waitpid(kids[k].pid, NULL, 0);
			return shim_fail(FL_ERR_SYSTEM, "spawn: fork of rank %d failed: %s", r,
					 strerror(err));
		}
		kids[r] = (struct child){ .pid = pid, .running = 1 };
	}
	return FL_OK;
}

int shim_spawn(int nranks, int (*rank_main)(void *arg), void *arg)
{
	static const struct shim_spawn_opts plain;

	return shim_spawn_ex(nranks, rank_main, arg, &plain);
}

static int bootstrap_socket(const struct shim_spawn_opts *opts, int *listen_fd, int *port)
{
	int rc;

	if (opts->master_addr) {
		*listen_fd = opts->listen_fd;
	} else {
		rc = shim_sock_listen("127.0.0.1", "0", listen_fd);
		if (rc)
			return shim_fail_context(rc, "spawn: bootstrap socket: ");
	}
	rc = shim_sock_port(*listen_fd, port);
	if (rc && !opts->master_addr)
		close(*listen_fd);
	return rc ? shim_fail_context(rc, "spawn: bootstrap socket: ") : FL_OK;
}

int shim_spawn_ex(int nranks, int (*rank_main)(void *arg), void *arg,
		  const struct shim_spawn_opts *opts)
{
	struct job job = { .nranks = nranks, .parent = getpid(), .rank_main = rank_main,
			   .arg = arg, .opts = opts };
	struct child *kids;
	int rc;

	if (nranks < 1)
		return shim_fail(FL_ERR_ARGUMENT, "spawn: %d ranks", nranks);
	rc = bootstrap_socket(opts, &job.listen_fd, &job.port);
	if (rc)
		return rc;
	kids = calloc((size_t)nranks, sizeof(*kids));
	if (!kids) {
		if (!opts->master_addr)
			close(job.listen_fd);
		return shim_fail(FL_ERR_SYSTEM, "spawn: out of memory");
	}
	rc = start_all(kids, &job);
	if (!opts->master_addr)
		close(job.listen_fd);
	if (!rc) {
		SHIM_INFO(SHIM_LOG_INIT | SHIM_LOG_BOOTSTRAP, "spawn: %d ranks, bootstrap on "
			  "%s:%d", nranks, opts->master_addr ? opts->master_addr : "127.0.0.1",
			  job.port);
		write_pidfile(kids, nranks);
		rc = wait_all(kids, nranks, opts->stop);
	}
	free(kids);
	return rc;
}
