/*
 * The web lab's HTTP side, on libmicrohttpd (one thread per connection, so the
 * event stream may wait for the next step). JSON over HTTP:
 *   GET  /               the page
 *   POST /api/run        {"fabric","nodes","scenario","target"} -> 202 {"run":N}
 *   POST /api/cancel     the run going on stops
 *   GET  /api/status     {"state","run"}
 *   GET  /api/events     Server-Sent Events: one "step" per step, then "end"
 *   GET  /api/result     the merged report (fabriclab report --json)
 *   GET  /report.html    the same as one page (fabriclab report --html)
 * It listens on loopback unless --listen names another address.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <microhttpd.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lab.h"
#include "lab_web.h"

#define MAX_BODY 4096
#define EVENT_WAIT_MS 200

struct upload {
	char body[MAX_BODY];
	size_t len;
	int too_big;
};

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned code, const char *type,
				 const char *text, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	rc = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned code, json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT);
	enum MHD_Result rc = send_text(c, code, "application/json", text ? text : "{}",
				       text ? strlen(text) : 2);

	free(text);
	json_decref(v);
	return rc;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned code, const char *why)
{
	return send_json(c, code, json_pack("{s:s}", "error", why));
}

static enum MHD_Result send_file(struct MHD_Connection *c, const char *name, const char *type)
{
	char path[PATH_MAX + 64], *text = NULL;
	size_t len = 0;
	FILE *f;
	enum MHD_Result rc;
	int run;

	if (lab_job_state(&run) != JOB_DONE || lab_job_path(name, path, sizeof(path)))
		return send_error(c, MHD_HTTP_CONFLICT, "no finished run yet");
	f = fopen(path, "r");
	if (!f)
		return send_error(c, MHD_HTTP_NOT_FOUND, "the run left no report");
	text = malloc(1 << 22);
	if (text)
		len = fread(text, 1, 1 << 22, f);
	fclose(f);
	rc = text ? send_text(c, MHD_HTTP_OK, type, text, len)
		  : send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	free(text);
	return rc;
}

static int parse_request(const struct upload *u, struct lab_job_request *r, char *why,
			 size_t len)
{
	json_error_t err;
	json_t *v = json_loadb(u->body, u->len, 0, &err);
	const char *fabric = "tcp", *scenario = "healthy";
	json_int_t nodes = 4, target = -1, steps = 0;
	int rc = 0;

	if (!v || json_unpack_ex(v, &err, JSON_STRICT, "{s?s, s?I, s?s, s?I, s?I}", "fabric",
				 &fabric, "nodes", &nodes, "scenario", &scenario, "target", &target,
				 "steps", &steps)) {
		snprintf(why, len, "body: expected {\"fabric\":..., \"nodes\":N, \"scenario\":..., "
			 "\"target\":K, \"steps\":S}: %s", err.text);
		rc = -1;
	} else if (strlen(fabric) >= sizeof(r->fabric) ||
		   strlen(scenario) >= sizeof(r->scenario)) {
		snprintf(why, len, "fabric or scenario: unknown name");
		rc = -1;
	} else {
		snprintf(r->fabric, sizeof(r->fabric), "%s", fabric);
		snprintf(r->scenario, sizeof(r->scenario), "%s", scenario);
		r->nodes = nodes < 0 || nodes > 1000 ? 0 : (int)nodes;
		r->target = target < -1 || target > 1000 ? 1000 : (int)target;
		r->steps = steps < 0 || steps > 100000 ? -1 : (int)steps;
	}
	json_decref(v);
	return rc;
}

static enum MHD_Result start_run(struct MHD_Connection *c, const struct upload *u)
{
	struct lab_job_request req;
	char why[256];
	int http, run;

	if (u->too_big)
		return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "body over 4 KiB");
	if (parse_request(u, &req, why, sizeof(why)))
		return send_error(c, MHD_HTTP_BAD_REQUEST, why);
	if (lab_job_start(&req, &http, why, sizeof(why)))
		return send_error(c, (unsigned)http, why);
	lab_job_state(&run);
	return send_json(c, MHD_HTTP_ACCEPTED, json_pack("{s:i}", "run", run));
}

/* ---- the event stream ---- */

struct stream {
	long offset; /* in progress.tsv */
	int ended;
};

static void wait_a_little(void)
{
	struct timespec ts = { 0, EVENT_WAIT_MS * 1000000L };

	nanosleep(&ts, NULL);
}

/* New whole lines of the progress file as "step" events; 0 when there were none. */
static int next_steps(struct stream *s, char *buf, size_t max)
{
	char path[PATH_MAX + 64], line[128];
	size_t used = 0;
	long step;
	double ms;
	FILE *f;

	if (lab_job_path("progress.tsv", path, sizeof(path)) || !(f = fopen(path, "r")))
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

static ssize_t stream_more(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	int run, n;
	enum lab_job_state st;

	(void)pos;
	if (s->ended)
		return MHD_CONTENT_READER_END_OF_STREAM;
	for (;;) {
		st = lab_job_state(&run);
		n = next_steps(s, buf, max);
		if (n > 0)
			return n;
		if (st != JOB_RUNNING) {
			s->ended = 1;
			return snprintf(buf, max, "event: end\ndata: {\"state\":\"%s\","
					"\"run\":%d}\n\n", lab_job_state_name(st), run);
		}
		wait_a_little();
		/* A comment line now and then keeps proxies from timing the stream out. */
		if (lab_job_state(&run) == JOB_RUNNING)
			return snprintf(buf, max, ": waiting\n\n");
	}
}

static enum MHD_Result send_events(struct MHD_Connection *c)
{
	struct stream *s = calloc(1, sizeof(*s));
	struct MHD_Response *r;
	enum MHD_Result rc;
	int run;

	if (!s)
		return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	if (lab_job_state(&run) == JOB_IDLE) {
		free(s);
		return send_error(c, MHD_HTTP_CONFLICT, "no run started yet");
	}
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, stream_more, s, free);
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

/* ---- routing ---- */

static enum MHD_Result route(struct MHD_Connection *c, const char *url, int post,
			     const struct upload *u)
{
	int run;
	enum lab_job_state st;

	if (!strcmp(url, "/") && !post)
		return send_text(c, MHD_HTTP_OK, "text/html; charset=utf-8", lab_page_html,
				 strlen(lab_page_html));
	if (!strcmp(url, "/api/run") && post)
		return start_run(c, u);
	if (!strcmp(url, "/api/cancel") && post && lab_job_cancel())
		return send_error(c, MHD_HTTP_CONFLICT, "nothing is running");
	if (!strcmp(url, "/api/cancel") && post)
		return send_json(c, MHD_HTTP_OK, json_pack("{s:b}", "cancelling", 1));
	if (!strcmp(url, "/api/status") && !post) {
		st = lab_job_state(&run);
		return send_json(c, MHD_HTTP_OK, json_pack("{s:s,s:i}", "state",
							 lab_job_state_name(st), "run", run));
	}
	if (!strcmp(url, "/api/events") && !post)
		return send_events(c);
	if (!strcmp(url, "/api/result") && !post)
		return send_file(c, "result.json", "application/json");
	if (!strcmp(url, "/report.html") && !post)
		return send_file(c, "report.html", "text/html; charset=utf-8");
	return send_error(c, MHD_HTTP_NOT_FOUND, "no such page (see / for the lab)");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_len, void **con_cls)
{
	struct upload *u = *con_cls;
	int post = !strcmp(method, "POST");

	(void)cls, (void)version;
	if (!post && strcmp(method, "GET"))
		return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or POST only");
	if (!u) { /* first call: headers only */
		if (!(u = calloc(1, sizeof(*u))))
			return MHD_NO;
		*con_cls = u;
		return MHD_YES;
	}
	if (*data_len) {
		if (u->len + *data_len > sizeof(u->body))
			u->too_big = 1;
		else
			memcpy(u->body + u->len, data, *data_len);
		u->len += u->too_big ? 0 : *data_len;
		*data_len = 0;
		return MHD_YES;
	}
	return route(c, url, post, u);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
		    enum MHD_RequestTerminationCode why)
{
	(void)cls, (void)c, (void)why;
	free(*con_cls);
	*con_cls = NULL;
}

/* ---- the command ---- */

static volatile sig_atomic_t serve_stop;

static void on_signal(int sig)
{
	serve_stop = sig;
}

static int parse_listen(const char *v, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(v, ':');
	long port;
	char *end;

	if (!colon || (size_t)(colon - v) >= sizeof(host))
		return -1;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - v), v);
	port = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port < 0 || port > 65535)
		return -1;
	*sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static struct MHD_Daemon *start_daemon(struct sockaddr_in *sa)
{
	return MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
					MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, NULL,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)sa,
				MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_END);
}

static int serve(struct sockaddr_in *sa)
{
	struct sigaction act = { .sa_handler = on_signal };
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d = start_daemon(sa);
	char host[INET_ADDRSTRLEN];

	if (!d) {
		fprintf(stderr, "fabriclab lab: --serve: cannot listen: %s\n", strerror(errno));
		return 1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	inet_ntop(AF_INET, &sa->sin_addr, host, sizeof(host));
	printf("fabriclab lab: serving the lab on http://%s:%u/ (Ctrl-C stops)\n", host,
	       info ? info->port : ntohs(sa->sin_port));
	fflush(stdout);
	sigemptyset(&act.sa_mask);
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGTERM, &act, NULL);
	signal(SIGPIPE, SIG_IGN);
	while (!serve_stop)
		pause();
	lab_job_shutdown();
	MHD_stop_daemon(d);
	return 0;
}

int lab_serve_main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "serve", no_argument, NULL, 'S' },
		{ "listen", required_argument, NULL, 'l' },
		{ "dir", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_in sa;
	const char *listen_at = "127.0.0.1:8080", *dir = "fabriclab-lab";
	char self[PATH_MAX], absdir[PATH_MAX];
	ssize_t n;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		if (c == 'l')
			listen_at = optarg;
		else if (c == 'D')
			dir = optarg;
		else if (c != 'S') {
			fprintf(stderr, "fabriclab lab --serve: takes only --listen ADDR:PORT and "
				"--dir DIR (\"%s\")\n", argv[optind - 1]);
			return 2;
		}
	}
	if (parse_listen(listen_at, &sa)) {
		fprintf(stderr, "fabriclab lab: --listen \"%s\": expected IPV4:PORT, like "
			"127.0.0.1:8080 (port 0 picks a free one)\n", listen_at);
		return 2;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || (mkdir(dir, 0755) && errno != EEXIST) || !realpath(dir, absdir)) {
		fprintf(stderr, "fabriclab lab: --serve: %s: %s\n", n <= 0 ? "/proc/self/exe" : dir,
			strerror(errno));
		return 1;
	}
	self[n] = '\0';
	lab_job_setup(absdir, self);
	return serve(&sa);
}
