/*
 * The web lab's one run: the real `fabriclab lab` in a child process with its
 * output in the run's folder, a watcher thread that waits for it and then
 * merges the reports (`fabriclab report --json --html`), and cancel as the
 * lab's own Ctrl-C (SIGTERM: it stops the ranks and cleans up).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "lab_web.h"

static struct {
	pthread_mutex_t lock;
	enum lab_job_state state;
	int run;
	pid_t pid;
	int cancelled;
	char dir[PATH_MAX];
	char self[PATH_MAX];
	char run_dir[PATH_MAX + 32];
} job = { .lock = PTHREAD_MUTEX_INITIALIZER, .pid = -1 };

static const char *const state_names[] = { "idle", "running", "done", "failed", "cancelled" };

const char *lab_job_state_name(enum lab_job_state s)
{
	return state_names[s];
}

void lab_job_setup(const char *dir, const char *self_path)
{
	snprintf(job.dir, sizeof(job.dir), "%s", dir);
	snprintf(job.self, sizeof(job.self), "%s", self_path);
}

static int refuse(int *http, int code, char *why, size_t len, const char *text)
{
	*http = code;
	snprintf(why, len, "%s", text);
	return -1;
}

static int check_request(const struct lab_job_request *r, int *http, char *why, size_t len)
{
	enum lab_fabric fabric;
	enum lab_scenario scenario;

	if (lab_fabric_parse(r->fabric, &fabric))
		return refuse(http, 400, why, len, "fabric: expected tcp, roce or ib");
	if (r->nodes < 1 || r->nodes > LAB_MAX_RANKS)
		return refuse(http, 400, why, len, "nodes: expected an integer from 1 to "
			      LAB_MAX_RANKS_TEXT);
	if (lab_scenario_parse(r->scenario, &scenario) || scenario == LAB_CUSTOM ||
	    scenario == LAB_SLOW_RAIL)
		return refuse(http, 400, why, len, "scenario: expected healthy, halve-cable, "
			      "slow-node, gdr-off or flaky-roce");
	if (r->target >= r->nodes)
		return refuse(http, 400, why, len, "target: expected a node below nodes");
	if (r->steps < 0 || r->steps > 1000)
		return refuse(http, 400, why, len, "steps: expected an integer from 1 to 1000");
	if (scenario == LAB_FLAKY_ROCE && fabric == LAB_IB)
		return refuse(http, 400, why, len, "flaky-roce is an Ethernet fault: choose roce");
	return 0;
}

/* In the child: output to a file, the progress file named, then the real lab. */
static void exec_lab(const struct lab_job_request *r, const char *run_dir)
{
	char out[PATH_MAX + 48], progress[PATH_MAX + 48], nodes[8], target[16], steps[16];
	const char *argv[20];
	int argc = 0, fd;

	snprintf(out, sizeof(out), "%s/lab.out", run_dir);
	snprintf(progress, sizeof(progress), "%s/progress.tsv", run_dir);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
		_exit(127);
	setenv(LAB_PROGRESS_ENV, progress, 1);
	snprintf(nodes, sizeof(nodes), "%d", r->nodes);
	argv[argc++] = job.self;
	argv[argc++] = "lab";
	argv[argc++] = "--dir";
	argv[argc++] = run_dir;
	argv[argc++] = "-n";
	argv[argc++] = nodes;
	argv[argc++] = "--fabric";
	argv[argc++] = r->fabric;
	if (r->steps > 0) {
		snprintf(steps, sizeof(steps), "%d", r->steps);
		argv[argc++] = "--steps";
		argv[argc++] = steps;
	}
	if (r->target >= 0) {
		snprintf(target, sizeof(target), "node%d", r->target);
		argv[argc++] = "--target";
		argv[argc++] = target;
	}
	argv[argc++] = r->scenario;
	argv[argc] = NULL;
	execv(job.self, (char *const *)argv);
	_exit(127);
}

/* `fabriclab report <run>/<lab's folder>/reports --json --html FILE` into the run's folder. */
static int merge_reports(const char *run_dir)
{
	char pattern[PATH_MAX + 48], html[PATH_MAX + 48], json[PATH_MAX + 48];
	int status = -1, fd;
	glob_t g;
	pid_t pid;

	snprintf(pattern, sizeof(pattern), "%s/*/reports", run_dir);
	snprintf(html, sizeof(html), "%s/report.html", run_dir);
	snprintf(json, sizeof(json), "%s/result.json", run_dir);
	if (glob(pattern, 0, NULL, &g) || g.gl_pathc != 1)
		return -1;
	pid = fork();
	if (pid == 0) {
		fd = open(json, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(127);
		execl(job.self, job.self, "report", g.gl_pathv[0], "--json", "--html", html,
		      (char *)NULL);
		_exit(127);
	}
	globfree(&g);
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void *watch(void *arg)
{
	pid_t pid = (pid_t)(intptr_t)arg;
	int status = 0, ok;
	enum lab_job_state end;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && !merge_reports(job.run_dir);
	pthread_mutex_lock(&job.lock);
	end = job.cancelled ? JOB_CANCELLED : ok ? JOB_DONE : JOB_FAILED;
	job.state = end;
	job.pid = -1;
	pthread_mutex_unlock(&job.lock);
	return NULL;
}

static int launch(const struct lab_job_request *r, int *http, char *why, size_t len)
{
	pthread_t watcher;
	pid_t pid;

	snprintf(job.run_dir, sizeof(job.run_dir), "%s/web-%d-%d", job.dir, (int)getpid(),
		 job.run + 1);
	mkdir(job.dir, 0755);
	if (mkdir(job.run_dir, 0755) && errno != EEXIST)
		return refuse(http, 500, why, len, strerror(errno));
	pid = fork();
	if (pid < 0)
		return refuse(http, 500, why, len, strerror(errno));
	if (pid == 0)
		exec_lab(r, job.run_dir);
	if (pthread_create(&watcher, NULL, watch, (void *)(intptr_t)pid)) {
		kill(pid, SIGTERM);
		return refuse(http, 500, why, len, "cannot start the watcher thread");
	}
	pthread_detach(watcher);
	job.pid = pid;
	job.run++;
	job.cancelled = 0;
	job.state = JOB_RUNNING;
	return 0;
}

int lab_job_start(const struct lab_job_request *req, int *http, char *why, size_t len)
{
	int rc;

	if (check_request(req, http, why, len))
		return -1;
	pthread_mutex_lock(&job.lock);
	if (job.state == JOB_RUNNING)
		rc = refuse(http, 409, why, len, "a run is going on: one at a time (cancel it "
			    "first)");
	else
		rc = launch(req, http, why, len);
	pthread_mutex_unlock(&job.lock);
	return rc;
}

int lab_job_cancel(void)
{
	int rc = -1;

	pthread_mutex_lock(&job.lock);
	if (job.state == JOB_RUNNING && job.pid > 0) {
		job.cancelled = 1;
		kill(job.pid, SIGTERM);
		rc = 0;
	}
	pthread_mutex_unlock(&job.lock);
	return rc;
}

enum lab_job_state lab_job_state(int *run)
{
	enum lab_job_state s;

	pthread_mutex_lock(&job.lock);
	s = job.state;
	*run = job.run;
	pthread_mutex_unlock(&job.lock);
	return s;
}

int lab_job_path(const char *name, char *path, size_t len)
{
	int rc;

	pthread_mutex_lock(&job.lock);
	rc = job.run ? 0 : -1;
	snprintf(path, len, "%s/%s", job.run_dir, name);
	pthread_mutex_unlock(&job.lock);
	return rc;
}

void lab_job_shutdown(void)
{
	enum lab_job_state s;
	int run;

	if (lab_job_cancel())
		return;
	for (int i = 0; i < 200 && (s = lab_job_state(&run)) == JOB_RUNNING; i++)
		usleep(50000);
}
