/*
 * The profiler fabriclab passes NCCL's events on to (chaining, docs/profiler.md).
 * NCCL loads one profiler plugin (2.30.7 src/plugin/profiler.cc:58-88, one
 * NCCL_PROFILER_PLUGIN), so fabriclab in that place loads the one the job ran:
 *  - FABRICLAB_PROFILER_NEXT=NAME[,NAME...], each NAME opened as NCCL opens
 *    NCCL_PROFILER_PLUGIN (2.30.7 src/plugin/plugin_open.cc:79-130: dlopen(NAME)
 *    as given, then libnccl-profiler-NAME.so unless NAME has a '/' or is
 *    lib*.so; base/plugin_open.c), the first that opens and has a table
 *    NCCL's version can take; "none" chains nothing;
 *  - unset, the profiler in the wrapped net plugin's library, where NCCL itself
 *    looks when no profiler plugin is set (2.30.7 src/plugin/profiler.cc:63-69,
 *    plugin_open.cc:166-174): fabriclab wrapping that library hides it from NCCL.
 * The table is the newest ncclProfiler_vN not newer than the one NCCL took from
 * fabriclab, probed newest first as NCCL probes (2.30.7 profiler.cc:71-88 from
 * v6; NVIDIA/nccl 889806836097 (2.31.2) src/plugin/profiler.cc, ncclProfilerPluginLoad,
 * from v7): what that NCCL would have taken from the library alone.
 *
 * Opened once per process, at the first init (application threads, under a
 * lock); events read only the published state. A failure to open (nothing
 * loads, no table, fabriclab itself) or, later, the next's init failing logs
 * one WARN and leaves fabriclab measuring alone.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "base/plugin_open.h"
#include "prof_internal.h"
#include "transport/wrapped_lib.h"

#define NEXT_NEWEST 7

enum next_state { NEXT_NONE, NEXT_LIVE, NEXT_DROPPED };

static pthread_mutex_t next_lock = PTHREAD_MUTEX_INITIALIZER;
static int next_tried;               /* under next_lock */
const void *fl_prof_next_table;      /* published before next_state turns LIVE */
int fl_prof_next_version;
static char next_label[320];         /* "NAME (path)" for the log */
static _Atomic int next_state;
_Atomic int fl_prof_next_is_on; /* next_state == NEXT_LIVE, for the callbacks' one load */

/* A table in this very object (FABRICLAB_PROFILER_NEXT=fabriclab): it would forward to itself. */
static int is_ours(const void *table)
{
	Dl_info theirs, mine;

	return dladdr(table, &theirs) && dladdr((const void *)fl_prof_next_open, &mine) &&
	       theirs.dli_fbase == mine.dli_fbase;
}

/* Every table begins with the plugin's name (abi/profiler_abi.h checks the layout). */
static const char *table_name(const void *table)
{
	const char *name = *(const char *const *)table;

	return name ? name : "(no name)";
}

/* The newest ncclProfiler_vN, N <= newest, found by lookup(name); NULL when none. */
static const void *probe(void *(*lookup)(void *, const char *), void *lib, int newest,
			 int *version)
{
	char sym[32];

	for (int v = newest < NEXT_NEWEST ? newest : NEXT_NEWEST; v >= 1; v--) {
		const void *t;

		snprintf(sym, sizeof(sym), "ncclProfiler_v%d", v);
		t = lookup(lib, sym);
		if (t) {
			*version = v;
			return t;
		}
	}
	return NULL;
}

static void *lookup_dlsym(void *lib, const char *sym)
{
	return dlsym(lib, sym);
}

static void *lookup_wrapped(void *lib, const char *sym)
{
	(void)lib;
	return fl_transport_wrapped_symbol(sym);
}

static void publish(const void *table, int version, const char *what, const char *path)
{
	fl_prof_next_table = table;
	fl_prof_next_version = version;
	snprintf(next_label, sizeof(next_label), "%s (%s)", table_name(table), path);
	atomic_store_explicit(&next_state, NEXT_LIVE, memory_order_release);
	atomic_store_explicit(&fl_prof_next_is_on, 1, memory_order_release);
	FL_INFO("profiler: %s: %s ncclProfiler_v%d gets every event fabriclab is given, "
		"behind it", what, next_label, version);
}

static const char *path_of(const void *p, const char *fallback)
{
	Dl_info info;

	return dladdr(p, &info) && info.dli_fname ? info.dli_fname : fallback;
}

/* One NAME of the list: 0 and published, or -1 with why appended to why. */
static int open_one(const char *name, int newest, char *why, size_t why_len)
{
	size_t used = strlen(why);
	char err[640];
	const void *t;
	void *lib;
	int v = 0;

	lib = fl_plugin_open(name, "profiler", err, sizeof(err));
	if (!lib) {
		snprintf(why + used, why_len - used, "%s%s", used ? "; " : "", err);
		return -1;
	}
	t = probe(lookup_dlsym, lib, newest, &v);
	if (!t || is_ours(t)) {
		if (t)
			snprintf(why + used, why_len - used, "%s%s is fabriclab itself", used ? "; " : "",
				 name);
		else
			snprintf(why + used, why_len - used, "%s%s has no ncclProfiler_v1..v%d",
				 used ? "; " : "", name, newest < NEXT_NEWEST ? newest : NEXT_NEWEST);
		dlclose(lib);
		return -1;
	}
	publish(t, v, "FABRICLAB_PROFILER_NEXT", path_of(t, name));
	return 0; /* the library stays open for the process: a thread may be inside it */
}

static void open_list(const char *list, int newest)
{
	char names[1024], why[1536] = "";
	char *save = NULL, *name;

	snprintf(names, sizeof(names), "%s", list);
	for (name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save))
		if (open_one(name, newest, why, sizeof(why)) == 0)
			return;
	FL_WARN("profiler: FABRICLAB_PROFILER_NEXT=%s: no profiler chained, fabriclab measures "
		"alone (NCCL took ncclProfiler_v%d from it): %s", list, newest,
		why[0] ? why : "empty list");
}

/* Unset: the wrapped net plugin's own profiler, as NCCL would have found it there. */
static void open_wrapped(int newest)
{
	int v = 0;
	const void *t = probe(lookup_wrapped, NULL, newest, &v);

	if (t && !is_ours(t))
		publish(t, v, "FABRICLAB_PROFILER_NEXT unset, so the profiler of the wrapped net "
			"plugin's library (NCCL would have taken it there)", path_of(t, "?"));
}

const void *fl_prof_next_open(int nccl_version, int *version)
{
	const char *env;

	pthread_mutex_lock(&next_lock);
	if (!next_tried) {
		next_tried = 1;
		env = getenv("FABRICLAB_PROFILER_NEXT");
		if (env && *env && strcasecmp(env, "none"))
			open_list(env, nccl_version);
		else if (!env || !*env)
			open_wrapped(nccl_version);
	}
	pthread_mutex_unlock(&next_lock);
	return fl_prof_next_live(version);
}



void fl_prof_next_drop(const char *fmt, ...)
{
	int live = NEXT_LIVE;
	char why[512];
	va_list ap;

	if (!atomic_compare_exchange_strong(&next_state, &live, NEXT_DROPPED))
		return;
	atomic_store_explicit(&fl_prof_next_is_on, 0, memory_order_release);
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	FL_WARN("profiler: the next profiler %s is dropped (it gets no more events; fabriclab "
		"measures on): %s", next_label, why);
}

const char *fl_prof_next_label(void)
{
	return next_label;
}
