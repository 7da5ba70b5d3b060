/*
 * The web lab's one run: the real `fabriclab lab` in a child process (its own
 * process group) with its output in the run's folder, a watcher thread that
 * waits for it and then merges the reports (`fabriclab report --json --html`),
 * and cancel as the lab's own Ctrl-C (SIGTERM: it stops the ranks and cleans
 * up). A cancelled run is "cancelling" until the lab is gone, so "cancelled"
 * means a new run can start; a lab deaf to SIGTERM is killed, group and all.
 *
 * A child starts with the server's signal handling, SIGTERM caught and
 * SIGPIPE ignored, until it execs: a cancel sent right after the start used to
 * land in the server's handler and be lost, and the lab ran on until killed.
 * So children are forked with every signal blocked and put the defaults back
 * before they unblock them (fork_clean): a signal sent in between waits, then
 * acts as it would on the lab.
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
#include <time.h>
#include <unistd.h>

#include "lab.h"
#include "lab_web.h"

static struct {
	pthread_mutex_t lock;
	enum lab_job_state state;
	int run;
	pid_t pid;
	int cancelled, killed;
	double started, cancel_asked; /* monotonic seconds */
	char dir[PATH_MAX];
	char self[PATH_MAX];
	char run_dir[PATH_MAX + 32];
	bool switches; /* the run's fabric has switches: its verdict takes them */
} job = { .lock = PTHREAD_MUTEX_INITIALIZER, .pid = -1 };

/* A run may take this long; then it is cancelled (bounded runs: one at a time, for a while). */
#define RUN_LIMIT_S (20 * 60.0)

static const char *const state_names[] = { "idle", "running", "cancelling", "done", "failed",
					    "cancelled" };

const char *lab_job_state_name(enum lab_job_state s)
{
	return state_names[s];
}

bool lab_job_busy(enum lab_job_state s)
{
	return s == JOB_RUNNING || s == JOB_CANCELLING;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

#define SCENARIOS_TEXT "healthy, halve-cable, slow-node, gdr-off, flaky-roce, slow-rail, " \
	"slow-spine, slow-uplink or slow-leafport"

static int check_rails(const struct lab_job_request *r, enum lab_fabric fabric,
		       enum lab_scenario scenario, int *http, char *why, size_t len)
{
	if (r->rails < 1 || r->rails > 8)
		return refuse(http, 400, why, len, "rails: expected an integer from 1 to 8");
	if (r->rails > 1 && fabric == LAB_TCP)
		return refuse(http, 400, why, len, "rails: more than 1 needs fabric roce or ib "
			      "(over tcp they need --netns, root only)");
	if (r->nodes * r->rails > LAB_MAX_RANKS)
		return refuse(http, 400, why, len, "nodes x rails: at most " LAB_MAX_RANKS_TEXT
			      " ranks");
	if (r->rail < -1 || r->rail >= r->rails)
		return refuse(http, 400, why, len, "rail: expected -1 (all) or a rail below rails");
	if (scenario == LAB_SLOW_RAIL && r->rails < 2)
		return refuse(http, 400, why, len, "slow-rail: needs rails 2 or more");
	return 0;
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
	if (lab_web_switch_scenario(r->scenario))
		scenario = LAB_HEALTHY; /* the fault is the fabric's (--hw-fault) */
	else if (lab_scenario_parse(r->scenario, &scenario) || scenario == LAB_CUSTOM)
		return refuse(http, 400, why, len, "scenario: expected " SCENARIOS_TEXT);
	if (r->target < -1 || r->target >= r->nodes)
		return refuse(http, 400, why, len, "target: expected -1 (random) or a node below "
			      "nodes");
	if (r->steps < 0 || r->steps > 1000)
		return refuse(http, 400, why, len, "steps: expected an integer from 1 to 1000");
	if (r->link_rate[0] && strcmp(r->link_rate, "100mbit") && strcmp(r->link_rate, "200mbit") &&
	    strcmp(r->link_rate, "400mbit") && strcmp(r->link_rate, "1gbit"))
		return refuse(http, 400, why, len, "link_rate: expected " LAB_WEB_LINK_RATES_TEXT);
	if (scenario == LAB_FLAKY_ROCE && fabric == LAB_IB)
		return refuse(http, 400, why, len, "flaky-roce is an Ethernet fault: choose roce");
	if (check_rails(r, fabric, scenario, http, why, len))
		return -1;
	if (lab_web_check_fabric(r, why, len)) {
		*http = 400;
		return -1;
	}
	return 0;
}

/*
 * One NIC of a node, not all of them: its own rule by hand (lab --fault), the
 * scenario's rule with a dev selector. "" when the scenario needs no such rule.
 */
static void one_nic_fault(const struct lab_job_request *r, char *spec, size_t len)
{
	spec[0] = '\0';
	if (r->rails < 2 || r->rail < 0 || r->target < 0)
		return;
	if (!strcmp(r->scenario, "halve-cable"))
		snprintf(spec, len, "throttle:node=node%d,dev=mlx5_%d,rate=50%%,dir=both",
			 r->target, r->rail);
	else if (!strcmp(r->scenario, "gdr-off"))
		snprintf(spec, len, "nogdr:node=node%d,dev=mlx5_%d", r->target, r->rail);
}

#define ADD(v) (argv[argc++] = (v))

/*
 * fork(2) for a child that execs: every signal blocked across the fork; in the
 * child each disposition back to the default (handlers are not reset by fork,
 * ignored signals not even by exec), then unblocked.
 */
static pid_t fork_clean(void)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t all, old;
	pid_t pid;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0) {
		sigemptyset(&dfl.sa_mask);
		for (int sig = 1; sig < NSIG; sig++)
			sigaction(sig, &dfl, NULL); /* SIGKILL, SIGSTOP and libc's own refuse */
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		return 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pid;
}

/* In the child: its own process group, output to a file, the progress file named, the lab. */
static void exec_lab(const struct lab_job_request *r, const char *run_dir)
{
	char out[PATH_MAX + 48], progress[PATH_MAX + 48], nodes[8], rails[8], target[16],
		rail[8], steps[16], fault[128], topology[64], hw[96];
	const char *argv[32];
	int argc = 0, fd;

	setpgid(0, 0);
	snprintf(out, sizeof(out), "%s/lab.out", run_dir);
	snprintf(progress, sizeof(progress), "%s/progress.tsv", run_dir);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
		_exit(127);
	setenv(LAB_PROGRESS_ENV, progress, 1);
	snprintf(nodes, sizeof(nodes), "%d", r->nodes);
	snprintf(rails, sizeof(rails), "%d", r->rails);
	snprintf(steps, sizeof(steps), "%d", r->steps);
	snprintf(target, sizeof(target), "node%d", r->target);
	snprintf(rail, sizeof(rail), "%d", r->rail);
	one_nic_fault(r, fault, sizeof(fault));
	lab_web_topology_spec(r, topology, sizeof(topology));
	lab_web_hw_fault(r, hw, sizeof(hw));
	ADD(job.self), ADD("lab"), ADD("--dir"), ADD(run_dir), ADD("-n"), ADD(nodes);
	if (r->like[0]) /* the preset sets the fabric and the rate */
		ADD("--like"), ADD(r->like);
	else
		ADD("--fabric"), ADD(r->fabric);
	if (r->rails > 1)
		ADD("--rails"), ADD(rails);
	if (r->steps > 0)
		ADD("--steps"), ADD(steps);
	if (r->link_rate[0])
		ADD("--link-rate"), ADD(r->link_rate);
	if (topology[0])
		ADD("--topology"), ADD(topology);
	if (hw[0]) {
		ADD("--hw-fault"), ADD(hw), ADD("healthy");
	} else if (fault[0]) {
		ADD("--fault"), ADD(fault);
	} else {
		if (r->target >= 0)
			ADD("--target"), ADD(target);
		if (r->rail >= 0 && !strcmp(r->scenario, "slow-rail"))
			ADD("--rail"), ADD(rail);
		ADD(r->scenario);
	}
	argv[argc] = NULL;
	execv(job.self, (char *const *)argv);
	_exit(127);
}

/*
 * `fabriclab report <run>/<lab's folder>/reports --json --html FILE` into the
 * run's folder; with `--topology <lab's folder>/topology.json` where the run
 * had switches, as the lab judges its own reports.
 */
static int merge_reports(const char *run_dir, bool switches)
{
	char pattern[PATH_MAX + 48], html[PATH_MAX + 48], json[PATH_MAX + 48],
		topology[PATH_MAX + 48];
	int status = -1, fd;
	glob_t g;
	pid_t pid;

	snprintf(pattern, sizeof(pattern), "%s/*/reports", run_dir);
	snprintf(html, sizeof(html), "%s/report.html", run_dir);
	snprintf(json, sizeof(json), "%s/result.json", run_dir);
	if (glob(pattern, 0, NULL, &g) || g.gl_pathc != 1)
		return -1;
	/* .../reports -> .../topology.json */
	snprintf(topology, sizeof(topology), "%.*s/topology.json",
		 (int)(strlen(g.gl_pathv[0]) - strlen("/reports")), g.gl_pathv[0]);
	pid = fork_clean();
	if (pid == 0) {
		fd = open(json, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(127);
		if (switches)
			execl(job.self, job.self, "report", g.gl_pathv[0], "--json", "--html", html,
			      "--topology", topology, (char *)NULL);
		else
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
	ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	     !merge_reports(job.run_dir, job.switches);
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
	/* before the watcher exists, which reads it once the lab is gone */
	job.switches = r->topology[0] && strcmp(r->topology, "flat");
	pid = fork_clean();
	if (pid < 0)
		return refuse(http, 500, why, len, strerror(errno));
	if (pid == 0)
		exec_lab(r, job.run_dir);
	setpgid(pid, pid); /* as the child does: a kill of its group works from now on */
	if (pthread_create(&watcher, NULL, watch, (void *)(intptr_t)pid)) {
		kill(pid, SIGTERM);
		return refuse(http, 500, why, len, "cannot start the watcher thread");
	}
	pthread_detach(watcher);
	job.pid = pid;
	job.run++;
	job.cancelled = 0;
	job.killed = 0;
	job.started = now_s();
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
	else if (job.state == JOB_CANCELLING)
		rc = refuse(http, 409, why, len, "the cancelled run is still stopping: start "
			    "again once the status says cancelled");
	else
		rc = launch(req, http, why, len);
	pthread_mutex_unlock(&job.lock);
	return rc;
}

/* With the lock held. */
static void ask_to_stop(void)
{
	job.cancelled = 1;
	job.cancel_asked = now_s();
	job.state = JOB_CANCELLING;
	kill(job.pid, SIGTERM);
}

int lab_job_cancel(void)
{
	int rc = -1;

	pthread_mutex_lock(&job.lock);
	if (job.state == JOB_RUNNING && job.pid > 0)
		ask_to_stop();
	if (job.state == JOB_CANCELLING)
		rc = 0;
	pthread_mutex_unlock(&job.lock);
	return rc;
}

int lab_job_tick(void)
{
	double now = now_s();
	int killed = 0;

	pthread_mutex_lock(&job.lock);
	if (job.state == JOB_RUNNING && job.pid > 0 && now - job.started > RUN_LIMIT_S)
		ask_to_stop();
	if (job.state == JOB_CANCELLING && job.pid > 0 &&
	    now - job.cancel_asked > LAB_CANCEL_KILL_S) {
		killpg(job.pid, SIGKILL);
		killed = job.killed ? 0 : job.run;
		job.killed = 1;
	}
	pthread_mutex_unlock(&job.lock);
	return killed;
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

int lab_job_topology(char *path, size_t len)
{
	char pattern[PATH_MAX + 48];
	glob_t g;
	int rc = -1;

	pthread_mutex_lock(&job.lock);
	snprintf(pattern, sizeof(pattern), "%s/*/topology.json", job.run_dir);
	if (job.run && !glob(pattern, 0, NULL, &g)) {
		if (g.gl_pathc == 1) {
			snprintf(path, len, "%s", g.gl_pathv[0]);
			rc = 0;
		}
		globfree(&g);
	}
	pthread_mutex_unlock(&job.lock);
	return rc;
}

void lab_job_shutdown(void)
{
	int run;

	if (lab_job_cancel())
		return;
	for (int i = 0; i < 300 && lab_job_busy(lab_job_state(&run)); i++) {
		usleep(50000);
		lab_job_tick();
	}
}
