/*
 * The web lab's event streams (Server-Sent Events) without a thread each.
 *
 * The server runs every connection on one polling thread. A stream with
 * nothing new to say is parked (MHD_suspend_connection: out of the event
 * loop, no timeout, no thread held) and the server's ticker resumes every
 * parked connection a few times a second, so each looks again: new steps of
 * the progress file, new live findings of the ranks' .prom textfiles, the
 * run's end, or a comment line now and then that keeps the connection from
 * timing out. A cancel waiting for the run's end parks the same way.
 */
#include <glob.h>
#include <jansson.h>
#include <limits.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lab_web.h"

#define KEEPALIVE_S 5.0   /* below the server's connection timeout */
#define FINDINGS_EVERY_S 0.5
#define MAX_SEEN 16       /* live findings one stream has told, kept to say each once */
#define PARKED_MAX 1024   /* above the server's connection limit */

struct stream {
	struct MHD_Connection *c;
	int run;
	long offset; /* in progress.tsv */
	bool greeted, ended;
	double last_sent, last_scan;
	int nseen;
	char seen[MAX_SEEN][160];
};

static struct {
	pthread_mutex_t lock;
	struct MHD_Connection *parked[PARKED_MAX];
	int nparked;
	bool stopping;
	atomic_int streams;
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- parking ---- */

void lab_park(struct MHD_Connection *c)
{
	pthread_mutex_lock(&reg.lock);
	if (!reg.stopping && reg.nparked < PARKED_MAX) {
		reg.parked[reg.nparked++] = c;
		MHD_suspend_connection(c);
	}
	pthread_mutex_unlock(&reg.lock);
}

static bool stopping(void)
{
	bool s;

	pthread_mutex_lock(&reg.lock);
	s = reg.stopping;
	pthread_mutex_unlock(&reg.lock);
	return s;
}

void lab_unpark_all(void)
{
	static struct MHD_Connection *wake[PARKED_MAX];
	int n;

	/* Resumed outside our lock: a parked connection cannot go away before its resume. */
	pthread_mutex_lock(&reg.lock);
	n = reg.nparked;
	memcpy(wake, reg.parked, (size_t)n * sizeof(wake[0]));
	reg.nparked = 0;
	pthread_mutex_unlock(&reg.lock);
	for (int i = 0; i < n; i++)
		MHD_resume_connection(wake[i]);
}

void lab_streams_stop(void)
{
	pthread_mutex_lock(&reg.lock);
	reg.stopping = true;
	pthread_mutex_unlock(&reg.lock);
	lab_unpark_all();
}

/* ---- what a stream says ---- */

/* New whole lines of the progress file as "step" events; 0 when there were none. */
static int next_steps(struct stream *s, char *buf, size_t max)
{
	char path[PATH_MAX + 64], line[128];
	size_t used = 0;
	struct stat st;
	long step;
	double ms;
	FILE *f;

	if (lab_job_path("progress.tsv", path, sizeof(path)) || stat(path, &st) ||
	    st.st_size <= s->offset || !(f = fopen(path, "r")))
		return 0;
	fseek(f, s->offset, SEEK_SET);
	while (used + 96 < max && fgets(line, sizeof(line), f) && strchr(line, '\n')) {
		s->offset = ftell(f);
		if (sscanf(line, "%ld %lf", &step, &ms) == 2)
			used += (size_t)snprintf(buf + used, max - used, "event: step\ndata: "
						 "{\"step\":%ld,\"ms\":%.3f}\n\n", step, ms);
	}
	fclose(f);
	return (int)used;
}

/* The value of label `name` in a Prometheus series line; false when absent. */
static bool label(const char *line, const char *name, char *out, size_t len)
{
	char key[40];
	const char *p, *end;

	snprintf(key, sizeof(key), "%s=\"", name);
	p = strstr(line, key);
	if (!p)
		return false;
	p += strlen(key);
	end = strchr(p, '"');
	if (!end || (size_t)(end - p) >= len)
		return false;
	snprintf(out, len, "%.*s", (int)(end - p), p);
	return true;
}

static bool seen_before(struct stream *s, const char *key)
{
	for (int i = 0; i < s->nseen; i++)
		if (!strcmp(s->seen[i], key))
			return true;
	if (s->nseen < MAX_SEEN)
		snprintf(s->seen[s->nseen++], sizeof(s->seen[0]), "%s", key);
	return s->nseen >= MAX_SEEN; /* full: say no more rather than repeat */
}

/* One live finding not told yet, from one .prom file's series line, as a "finding" event. */
static int finding_event(struct stream *s, const char *line, char *buf, size_t max)
{
	char kind[32], culprit[128], key[160], *text;
	const char *value = strrchr(line, ' ');
	json_t *v;
	int n;

	if (!label(line, "kind", kind, sizeof(kind)) ||
	    !label(line, "culprit", culprit, sizeof(culprit)) || !value)
		return 0;
	snprintf(key, sizeof(key), "%s %s", kind, culprit);
	if (seen_before(s, key))
		return 0;
	v = json_pack("{s:s,s:s,s:f}", "kind", kind, "culprit", culprit, "ratio",
		      strtod(value + 1, NULL));
	text = v ? json_dumps(v, JSON_COMPACT) : NULL;
	n = text ? snprintf(buf, max, "event: finding\ndata: %s\n\n", text) : 0;
	free(text);
	json_decref(v);
	return n > 0 && (size_t)n < max ? n : 0;
}

/* The ranks' live findings (their .prom textfiles), each told once. */
static int next_finding(struct stream *s, char *buf, size_t max)
{
	static const char series[] = "fabriclab_live_finding_ratio{";
	char pattern[PATH_MAX + 64], line[512];
	int n = 0;
	glob_t g;
	FILE *f;

	if (now_s() - s->last_scan < FINDINGS_EVERY_S ||
	    lab_job_path("*/reports/*.prom", pattern, sizeof(pattern)))
		return 0;
	s->last_scan = now_s();
	if (glob(pattern, 0, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc && !n; i++) {
		if (!(f = fopen(g.gl_pathv[i], "r")))
			continue;
		while (!n && fgets(line, sizeof(line), f))
			if (!strncmp(line, series, sizeof(series) - 1))
				n = finding_event(s, line, buf, max);
		fclose(f);
	}
	globfree(&g);
	return n;
}

static ssize_t end_event(struct stream *s, char *buf, size_t max)
{
	int run;
	enum lab_job_state st = lab_job_state(&run);

	s->ended = true;
	return snprintf(buf, max, "event: end\ndata: {\"state\":\"%s\",\"run\":%d}\n\n",
			lab_job_state_name(st), run);
}

static ssize_t say(struct stream *s, ssize_t n)
{
	s->last_sent = now_s();
	return n;
}

static ssize_t stream_more(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	int run, n;
	enum lab_job_state st;

	(void)pos;
	if (s->ended)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (stopping())
		return end_event(s, buf, max);
	if (!s->greeted) { /* the headers go out now, and the browser's retry delay */
		s->greeted = true;
		return say(s, snprintf(buf, max, "retry: 2000\n: run %d\n\n", s->run));
	}
	st = lab_job_state(&run);
	if ((n = next_steps(s, buf, max)) > 0 || (n = next_finding(s, buf, max)) > 0)
		return say(s, n);
	if (!lab_job_busy(st) || run != s->run)
		return end_event(s, buf, max);
	if (now_s() - s->last_sent > KEEPALIVE_S)
		return say(s, snprintf(buf, max, ": waiting\n\n"));
	lab_park(s->c);
	return 0;
}

static void stream_free(void *cls)
{
	atomic_fetch_sub(&reg.streams, 1);
	free(cls);
}

struct MHD_Response *lab_stream_open(struct MHD_Connection *c, unsigned *http)
{
	struct MHD_Response *r;
	struct stream *s;
	int run;

	if (lab_job_state(&run) == JOB_IDLE) {
		*http = MHD_HTTP_CONFLICT;
		return NULL;
	}
	if (atomic_fetch_add(&reg.streams, 1) >= LAB_MAX_STREAMS) {
		atomic_fetch_sub(&reg.streams, 1);
		*http = MHD_HTTP_SERVICE_UNAVAILABLE;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	r = s ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_more, s,
						  stream_free) : NULL;
	if (!r) {
		free(s);
		atomic_fetch_sub(&reg.streams, 1);
		*http = MHD_HTTP_INTERNAL_SERVER_ERROR;
		return NULL;
	}
	s->c = c;
	s->run = run;
	s->last_sent = now_s();
	return r;
}
