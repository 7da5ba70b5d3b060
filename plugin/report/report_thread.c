/*
 * When reports are written: a background thread started at the first init
 * drains the connections' interval rings (adaptively, as often as they fill)
 * and writes a snapshot every FABRICLAB_REPORT_INTERVAL seconds; the final
 * report is written once, by whichever comes first of the last communicator's
 * finalize, the plugin's unload (destructor) or process exit (atexit). The
 * thread is stopped and joined before the final write, so it is gone before
 * a dlclose unmaps its code. A communicator initialized after that final
 * report (NCCL keeps the plugin loaded with NCCL_NET_PLUGIN_REF_COUNT > 0:
 * v2.28.9-1 src/plugin/net.cc:307 sets the count, :344-346 unloads only at 0)
 * starts the thread again; the hop table was kept, so the next final report
 * holds both communicators' figures and replaces the first with more.
 */
#include "report.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/fl_text.h"
#include "stats/hop.h"
#include "base/identity.h"
#include "base/log.h"
#include "report_file.h"
#include "report_live.h"
#include "report_model.h"

#define DRAIN_MIN_NS 1000000ULL      /* 1 ms */
#define DRAIN_MAX_NS 500000000ULL    /* 0.5 s */
#define DRAIN_START_NS 20000000ULL
#define SLACK_MAX_NS 5000000ULL      /* far below a live window's starved mark */

static struct {
	pthread_mutex_t lock; /* stop, and the condition the thread sleeps on */
	pthread_cond_t wake;
	pthread_t thread;
	int thread_running;
	int stop;
	pthread_mutex_t write_lock; /* one writer of the files at a time */
	_Atomic int started;
	_Atomic int final_done;
	int snapshot_warned;
	int prom_warned;
	pid_t pid; /* a forked child that did not init itself writes nothing */
	struct fl_report_config cfg;
	struct fl_verdict_params params;
	const struct fl_transport *tp;
	struct fl_endpoint self;
	double started_unix;
	struct fl_report_hooks hooks;
} rs = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.write_lock = PTHREAD_MUTEX_INITIALIZER,
};

static double unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void file_name(const char *node, const char *suffix, char *buf, size_t len)
{
	char safe[FL_NODE_NAME_LEN];
	size_t i;

	/* A node name is not trusted to be a file name. */
	for (i = 0; node[i] && i < sizeof(safe) - 1; i++) {
		char c = node[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';

		safe[i] = ok && !(i == 0 && c == '.') ? c : '_';
	}
	safe[i] = '\0';
	snprintf(buf, len, "%s-%d.%s", i ? safe : "unknown", (int)getpid(), suffix);
}

static void gather_devices(struct fl_report *r)
{
	int ndev = 0;

	if (!rs.tp || rs.tp->devices(&ndev) != FL_OK)
		ndev = 0;
	if (ndev > FL_REPORT_MAX_DEVS)
		r->devs_left_out = ndev - FL_REPORT_MAX_DEVS; /* said as incomplete */
	for (int i = 0; i < ndev && r->ndevs < FL_REPORT_MAX_DEVS; i++) {
		struct fl_report_device *d = &r->devs[r->ndevs];
		struct fl_props p = { 0 };

		if (rs.tp->get_properties(i, &p) != FL_OK)
			continue;
		fl_fault_props(i, &p); /* the link rate and nogdr, as NCCL was told */
		d->dev = i;
		snprintf(d->name, sizeof(d->name), "%s", p.name ? p.name : "");
		snprintf(d->pci_path, sizeof(d->pci_path), "%s", p.pci_path ? p.pci_path : "");
		d->speed_mbps = p.speed_mbps;
		d->ptr_support = p.ptr_support;
		snprintf(d->link_layer, sizeof(d->link_layer), "%s",
			 p.link_layer ? p.link_layer : "");
		r->ndevs++;
	}
}

static int gather(struct fl_report *r, int final)
{
	struct fl_hop_snapshot *hops;
	int n;

	memset(r, 0, sizeof(*r));
	snprintf(r->node, sizeof(r->node), "%s", rs.self.node);
	r->pid = (int)getpid();
	r->rank = rs.self.rank;
	r->world_size = fl_identity_world_size();
	r->final = final;
	r->started_unix = rs.started_unix;
	r->written_unix = unix_now();
	snprintf(r->transport, sizeof(r->transport), "%s",
		 rs.tp ? rs.tp->name : FL_REPORT_NCCL_TRANSPORT);
	gather_devices(r);
	r->nranks_held = fl_report_ranks(r->ranks, FL_REPORT_MAX_RANKS, &r->ranks_left_out);
	r->prof_unhomed_ops = fl_report_prof_unhomed();
	/* Profiler mode: a process holding one rank in one communicator is that rank. */
	if (r->rank < 0 && r->nranks_held == 1)
		r->rank = r->ranks[0].rank;
	r->ninjected = fl_fault_injected_list(r->injected, FL_FAULT_MAX_INJECTED);
	r->ports = fl_port_watch_now(&r->ports_seconds);
	r->ports_base = fl_port_watch_base();
	n = fl_hops_snapshot(&hops);
	if (n < 0)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a report");
	return fl_report_fill(r, hops, n, &rs.params);
}

static int write_rendering(const struct fl_report *r, const char *suffix,
			   int (*render)(const struct fl_report *, char **, size_t *))
{
	char name[FL_NODE_NAME_LEN + 32], *text;
	size_t len;
	int rc = render(r, &text, &len);

	if (rc)
		return rc;
	file_name(r->node, suffix, name, sizeof(name));
	rc = fl_report_write_atomic(rs.cfg.dir, name, text, len);
	free(text);
	return rc;
}

/* Writes the files; on success *line holds the summary for stderr. */
static int write_report(int final, char *line, size_t len)
{
	char name[FL_NODE_NAME_LEN + 32], path[PATH_MAX + FL_NODE_NAME_LEN + 40];
	struct fl_report r;
	int rc;

	pthread_mutex_lock(&rs.write_lock);
	rc = fl_report_mkdirs(rs.cfg.dir);
	if (!rc)
		rc = gather(&r, final);
	if (!rc && rs.hooks.built)
		rs.hooks.built(&r);
	if (!rc)
		rc = write_rendering(&r, "json", fl_report_json);
	if (!rc && rs.cfg.mode == FL_REPORT_FULL)
		rc = write_rendering(&r, "txt", fl_report_text);
	if (!rc) {
		file_name(r.node, "json", name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", rs.cfg.dir, name);
		fl_report_summary_line(&r, path, line, len);
		/* for stderr: FABRICLAB_REPORT_DIR is any path, shown, never obeyed */
		fl_text_escape_in_place(line, len);
	}
	fl_report_release(&r);
	pthread_mutex_unlock(&rs.write_lock);
	return rc;
}

static void live_told(enum fl_live_state state, const struct fl_live_finding *f)
{
	if (rs.hooks.live)
		rs.hooks.live((int)state, f);
}

/*
 * The live findings as a textfile next to the reports. Not fsynced (unlike the
 * reports): a collector needs whole files, which the rename gives, and this one
 * is rewritten often from a thread that also drains the rings.
 */
static void write_prom(int up, double unix_s)
{
	struct fl_live_finding now[FL_LIVE_MAX_FINDINGS];
	struct fl_live_prom p = {
		.node = rs.self.node, .pid = (int)getpid(), .rank = rs.self.rank, .up = up,
		.updated_unix = unix_s, .window_s = (double)rs.cfg.live_window_ms / 1e3,
		.findings = now,
	};
	char name[FL_NODE_NAME_LEN + 32];
	char *text;
	size_t len;

	p.nfindings = up ? fl_report_live_current(now, FL_LIVE_MAX_FINDINGS) : 0;
	if (fl_report_live_prom(&p, &text, &len) == FL_OK) {
		file_name(rs.self.node, "prom", name, sizeof(name));
		if ((fl_report_mkdirs(rs.cfg.dir) ||
		     fl_report_write_file(rs.cfg.dir, name, text, len, 0)) &&
		    !rs.prom_warned) {
			rs.prom_warned = 1;
			FL_WARN("live textfile not written (will keep trying): %s",
				fl_error_text());
		}
		free(text);
	}
}

/*
 * The last window's hops against their line rates: says so while the job
 * runs; the textfile follows every change, and is refreshed at least once a
 * snapshot interval (prom_due).
 */
static void live_window(int prom_due, int starved)
{
	struct fl_live_params p = {
		.low_windows = FL_LIVE_LOW_WINDOWS,
		.window_s = (double)rs.cfg.live_window_ms / 1e3, .skip = starved,
	};
	struct fl_hop_snapshot *hops;
	struct fl_report r;
	double now_unix = unix_now();
	int n = fl_hops_snapshot(&hops), changes;

	if (n < 0)
		return;
	memset(&r, 0, sizeof(r));
	snprintf(r.transport, sizeof(r.transport), "%s",
		 rs.tp ? rs.tp->name : FL_REPORT_NCCL_TRANSPORT);
	gather_devices(&r);
	r.hops = hops;
	r.nhops = n;
	changes = fl_report_live_judge(&r, &p, now_unix, fl_clock_mono_ns(), live_told);
	free(hops);
	if (changes || prom_due) {
		pthread_mutex_lock(&rs.write_lock);
		write_prom(1, now_unix);
		pthread_mutex_unlock(&rs.write_lock);
	}
}

static void snapshot(void)
{
	char line[PATH_MAX + 512];

	if (write_report(0, line, sizeof(line)) && !rs.snapshot_warned) {
		rs.snapshot_warned = 1;
		FL_WARN("periodic report not written (will keep trying): %s", fl_error_text());
	}
}

/*
 * The next drain comes when the busiest ring is expected to be a quarter full,
 * from the rate it filled at since the last drain: the margin absorbs a late
 * wake-up on a busy machine. Each wake-up takes a core from a polling rank
 * (small messages fill a ring fastest), so they are kept few rather than the
 * rings kept empty.
 */
static uint64_t next_period(uint64_t elapsed_ns, size_t most_filled)
{
	uint64_t period;

	if (!most_filled)
		return DRAIN_MAX_NS;
	period = elapsed_ns * (FL_RUN_RING / 4) / most_filled;
	return period < DRAIN_MIN_NS ? DRAIN_MIN_NS : period > DRAIN_MAX_NS ? DRAIN_MAX_NS : period;
}

/*
 * How late the kernel may wake this thread: half a drain period, at most
 * SLACK_MAX_NS. With the slack the wake-up rides on a timer interrupt that
 * comes anyway (the scheduler tick, another thread's timer) instead of one of
 * its own, which on a core where a rank polls costs that rank as much as the
 * drain does. Only the thread's own sleeps are affected.
 */
static void set_timer_slack(uint64_t period_ns)
{
	uint64_t slack = period_ns / 2;

	prctl(PR_SET_TIMERSLACK, (unsigned long)(slack < SLACK_MAX_NS ? slack : SLACK_MAX_NS));
}

static struct timespec mono_deadline(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ULL),
				  .tv_nsec = (long)(ns % 1000000000ULL) };
}

static uint64_t earliest(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a < b ? a : b;

	return m < c ? m : c;
}

static void *report_main(void *arg)
{
	uint64_t interval_ns = (uint64_t)rs.cfg.interval_s * 1000000000ULL;
	uint64_t live_ns = (uint64_t)rs.cfg.live_window_ms * 1000000ULL;
	uint64_t period = DRAIN_START_NS, last_drain = fl_clock_mono_ns();
	uint64_t next_snapshot = interval_ns ? last_drain + interval_ns : UINT64_MAX;
	uint64_t next_live = last_drain + live_ns;
	int prom_due = 1; /* the first window writes the textfile: the process is seen live */
	uint64_t worst_late = 0; /* this window's latest wake-up past its deadline */

	(void)arg;
	set_timer_slack(period);
	pthread_mutex_lock(&rs.lock);
	while (!rs.stop) {
		uint64_t now = fl_clock_mono_ns();
		/* a quiet hop table drains every 0.5 s: the live window is not kept waiting */
		uint64_t until = earliest(now + period, next_snapshot, next_live);
		struct timespec deadline = mono_deadline(until);

		pthread_cond_timedwait(&rs.wake, &rs.lock, &deadline);
		if (rs.stop)
			break;
		pthread_mutex_unlock(&rs.lock);
		now = fl_clock_mono_ns();
		if (now > until && now - until > worst_late)
			worst_late = now - until; /* held off the CPU: see fl_live_params.skip */
		period = next_period(now - last_drain, fl_hops_drain());
		set_timer_slack(period);
		if (rs.hooks.tick)
			rs.hooks.tick(now);
		last_drain = now;
		if (now >= next_live) {
			live_window(prom_due, worst_late > live_ns / FL_LIVE_STARVED_FRACTION);
			prom_due = 0;
			worst_late = 0;
			/* on the grid: a late wake-up shortens the next window, never shifts them all */
			next_live += live_ns * ((now - next_live) / live_ns + 1);
		}
		if (fl_clock_mono_ns() >= next_snapshot) {
			snapshot();
			prom_due = 1;
			next_snapshot = fl_clock_mono_ns() + interval_ns;
		}
		pthread_mutex_lock(&rs.lock);
	}
	pthread_mutex_unlock(&rs.lock);
	return NULL;
}

/* Once per process: the thread may be started again after a final report (fl_report_resume). */
static void init_wake(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&rs.wake, &attr);
	pthread_condattr_destroy(&attr);
}

/* A connection's ring is half full before its drain (fl_runs_set_nudge): drain now. */
static void nudge(void)
{
	pthread_cond_signal(&rs.wake); /* without the lock: a nudge lost to a race waits its timer */
}

/* With every signal blocked, so the application's handlers never run on it. */
static int start_thread(void)
{
	sigset_t all, old;
	int rc;

	rs.stop = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&rs.thread, NULL, report_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return fl_fail(FL_ERR_SYSTEM, "cannot start the report thread: %s", strerror(rc));
	pthread_setname_np(rs.thread, "fabriclab-rep");
	rs.thread_running = 1;
	fl_runs_set_nudge(nudge);
	return FL_OK;
}

static void stop_thread(void)
{
	fl_runs_set_nudge(NULL);
	pthread_mutex_lock(&rs.lock);
	rs.stop = 1;
	if (rs.thread_running)
		pthread_cond_signal(&rs.wake);
	pthread_mutex_unlock(&rs.lock);
	if (rs.thread_running && !pthread_equal(rs.thread, pthread_self())) {
		pthread_join(rs.thread, NULL);
		rs.thread_running = 0;
	}
}

/*
 * What atexit() does in glibc, spelled out: the handler is tied to this shared
 * object, so a dlclose runs it (or drops it) before the code goes away. Called
 * through atexit(), sanitizer runtimes register it for the whole process and
 * would call into the unmapped plugin at exit.
 */
extern void *__dso_handle;
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static void report_at_exit(void *arg)
{
	(void)arg;
	fl_report_final("process exit");
}

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

/* The second role to start only brings its transport: the devices its hops use. */
static void add_transport(const struct fl_transport *tp)
{
	pthread_mutex_lock(&rs.write_lock);
	if (tp && !rs.tp)
		rs.tp = tp;
	pthread_mutex_unlock(&rs.write_lock);
}

static int start_once(const struct fl_transport *tp, const struct fl_report_hooks *hooks)
{
	int rc = fl_report_config_from_env(&rs.cfg);

	if (!rc)
		rc = fl_verdict_params_from_env(&rs.params);
	if (rc)
		return rc;
	rs.tp = tp;
	if (hooks)
		rs.hooks = *hooks;
	rs.pid = getpid();
	rs.started_unix = unix_now();
	fl_identity_local(&rs.self, 0, "", 0);
	if (rs.cfg.mode != FL_REPORT_OFF) {
		fl_port_watch_start(); /* the base of the port counters' deltas */
		init_wake();
		rc = start_thread();
		if (rc) {
			fl_port_watch_stop();
			return rc;
		}
		if (__cxa_atexit(report_at_exit, NULL, &__dso_handle))
			FL_WARN("no exit hook (out of memory): the final report is written at the "
				"last finalize or when NCCL unloads the plugin, not at exit");
	}
	atomic_store_explicit(&rs.started, 1, memory_order_release);
	FL_INFO("reports %s in %s, snapshot every %ld s",
		rs.cfg.mode == FL_REPORT_OFF ? "off" : rs.cfg.mode == FL_REPORT_BRIEF ? "brief"
										       : "full",
		rs.cfg.dir, rs.cfg.interval_s);
	return FL_OK;
}

int fl_report_start(const struct fl_transport *tp, const struct fl_report_hooks *hooks)
{
	int rc = FL_OK;

	pthread_mutex_lock(&start_lock);
	if (atomic_load_explicit(&rs.started, memory_order_acquire) && rs.pid == getpid())
		add_transport(tp);
	else
		rc = start_once(tp, hooks);
	pthread_mutex_unlock(&start_lock);
	return rc;
}

void fl_report_resume(void)
{
	pthread_mutex_lock(&start_lock);
	if (atomic_load_explicit(&rs.started, memory_order_acquire) && rs.pid == getpid() &&
	    atomic_load(&rs.final_done)) {
		if (rs.cfg.mode != FL_REPORT_OFF && start_thread())
			FL_WARN("a communicator after the final report: %s; its figures are in the "
				"report written at exit", fl_error_text());
		else
			FL_INFO("a communicator after the final report: reporting again, the next "
				"final report holds every communicator's figures");
		atomic_store(&rs.final_done, 0);
	}
	pthread_mutex_unlock(&start_lock);
}

/* Under start_lock: a communicator initialized meanwhile waits for the report to be written. */
static void final_locked(const char *why)
{
	char line[PATH_MAX + 512];

	if (atomic_exchange(&rs.final_done, 1))
		return;
	stop_thread();
	if (rs.cfg.mode == FL_REPORT_OFF)
		return;
	/* the job is over: nothing left standing in monitoring, whatever the report does */
	pthread_mutex_lock(&rs.write_lock);
	write_prom(0, unix_now());
	pthread_mutex_unlock(&rs.write_lock);
	if (write_report(1, line, sizeof(line))) {
		FL_WARN("final report (%s) not written: %s", why, fl_error_text());
		fprintf(stderr, "fabriclab: %s: final report not written: %s\n", rs.self.node,
			fl_error_text());
		return;
	}
	FL_INFO("final report written at %s", why);
	fprintf(stderr, "%s\n", line);
}

void fl_report_final(const char *why)
{
	if (!atomic_load_explicit(&rs.started, memory_order_acquire) || rs.pid != getpid())
		return;
	pthread_mutex_lock(&start_lock);
	final_locked(why);
	pthread_mutex_unlock(&start_lock);
}

/*
 * NCCL unloading the plugin (dlclose), or the end of the process: after the
 * final report nothing reads the hop table, and after a dlclose nothing could
 * free it, so it goes now.
 */
__attribute__((destructor)) static void report_at_unload(void)
{
	fl_report_final("plugin unload");
	if (rs.hooks.stop)
		rs.hooks.stop(); /* nothing may emit from code about to be unmapped */
	if (rs.pid == getpid())
		fl_hops_teardown();
	fl_port_watch_stop();
}
