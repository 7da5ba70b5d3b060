/*
 * The web lab's HTTP side, on libmicrohttpd. JSON over HTTP:
 *   GET  /, /lab.js, /lab.css  the page (everything it needs comes from here)
 *   POST /api/run        {"fabric","nodes","rails","scenario","target","rail","steps",
 *                         "link_rate","like","topology","leaves","spines","leaf","spine"}
 *                        -> 202 {"run":N}
 *   POST /api/cancel     the run going on stops; answers once it has (or says cancelling)
 *   GET  /api/status     {"state","run"}
 *   GET  /api/events     Server-Sent Events: "step" per step, "finding" per live finding,
 *                        then "end"
 *   GET  /api/result     the merged report (fabriclab report --json)
 *   GET  /report.html    the same as one page (fabriclab report --html)
 *   GET  /api/topology   the run's emulated fabric (its topology.json), once written
 *   GET  /api/layout?fabric=&nodes=&rails=&like=&topology=&leaves=&spines=
 *                        the fabric the lab would build for those, before any run
 *
 * For its user only (lab_serve_guard.c): Host, Origin and Content-Type are
 * checked before anything else, and none of them may come twice. One polling
 * thread serves every connection (epoll): an idle or slow connection costs a
 * socket, not a thread; a request not in full 10 s after its connection
 * opened is closed however it trickles, and one address holding too many
 * connections loses its oldest unfinished one to its next
 * (lab_serve_conns.c); event streams and a cancel waiting for the end are
 * parked (lab_serve_events.c), so status and cancel are served whatever else
 * is open.
 * It listens on loopback unless --listen names another address, which also
 * needs --allow-remote.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <microhttpd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lab.h"
#include "lab_web.h"

#define MAX_BODY 4096
#define CONNECTION_TIMEOUT_S 10 /* idle (a silent stream, a reader that stopped) is closed */
#define LISTEN_BACKLOG 1024   /* a burst of connections waits to be let in, not dropped */
#define TICK_MS 100           /* parked connections look again this often */
/* A cancel answers once the lab is gone: after the kill of a deaf one at the latest. */
#define CANCEL_WAIT_S (LAB_CANCEL_KILL_S + 2.0)
#define SAY_CLOSED_EVERY_S 10.0 /* the log's line on connections closed, at most this often */

struct upload {
	char body[MAX_BODY];
	size_t len;
	bool too_big, post, cancel_asked;
	double cancel_until;
};

/* Every answer: not cached, not sniffed, not framed by another site, no outside fetch. The
 * request is in: its connection is no longer a slow client's (lab_serve_conns.c). */
static enum MHD_Result queue(struct MHD_Connection *c, unsigned code, struct MHD_Response *r)
{
	lab_secure_headers(r);
	lab_conn_answering(c);
	return MHD_queue_response(c, code, r);
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned code, const char *type,
				 const char *text, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	MHD_add_response_header(r, "Content-Type", type);
	rc = queue(c, code, r);
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

/* The name at `key` if it fits `out`, else "" (which no check takes: the same message lists
 * the accepted names for "nope" and for "../../etc/passwd"). */
static void copy_name(const char *v, char *out, size_t len)
{
	snprintf(out, len, "%s", strlen(v) < len ? v : "");
}

static int parse_request(const struct upload *u, struct lab_job_request *r, char *why,
			 size_t len)
{
	json_error_t err;
	json_t *v = json_loadb(u->body, u->len, JSON_REJECT_DUPLICATES, &err);
	const char *fabric = "tcp", *scenario = "healthy", *rate = "", *like = "", *topology = "";
	json_int_t nodes = 4, rails = 1, target = -1, rail = -1, steps = 0, leaves = 2, spines = 1,
		   leaf = 0, spine = 0;
	int rc = 0;

	if (!v || json_unpack_ex(v, &err, JSON_STRICT, "{s?s, s?I, s?I, s?s, s?I, s?I, s?I, s?s, "
				 "s?s, s?s, s?I, s?I, s?I, s?I}",
				 "fabric", &fabric, "nodes", &nodes, "rails", &rails, "scenario",
				 &scenario, "target", &target, "rail", &rail, "steps", &steps,
				 "link_rate", &rate, "like", &like, "topology", &topology,
				 "leaves", &leaves, "spines", &spines, "leaf", &leaf, "spine",
				 &spine)) {
		snprintf(why, len, "body: expected {\"fabric\":..., \"nodes\":N, \"rails\":K, "
			 "\"scenario\":..., \"target\":T, \"rail\":R, \"steps\":S, "
			 "\"link_rate\":..., \"like\":..., \"topology\":..., \"leaves\":L, "
			 "\"spines\":S, \"leaf\":I, \"spine\":J} (each once, each optional): %s",
			 err.text);
		rc = -1;
	} else {
		copy_name(fabric, r->fabric, sizeof(r->fabric));
		copy_name(scenario, r->scenario, sizeof(r->scenario));
		/* too long: "?" so that the check lists the accepted values */
		snprintf(r->link_rate, sizeof(r->link_rate), "%s",
			 strlen(rate) < sizeof(r->link_rate) ? rate : "?");
		snprintf(r->like, sizeof(r->like), "%s", strlen(like) < sizeof(r->like) ? like : "?");
		snprintf(r->topology, sizeof(r->topology), "%s",
			 strlen(topology) < sizeof(r->topology) ? topology : "?");
		/* out of range stays out of range, for lab_job_start's message */
		r->nodes = nodes < 0 || nodes > 1000 ? 0 : (int)nodes;
		r->rails = rails < 0 || rails > 1000 ? 0 : (int)rails;
		r->target = target < -1 || target > 1000 ? 1000 : (int)target;
		r->rail = rail < -1 || rail > 1000 ? 1000 : (int)rail;
		r->steps = steps < 0 || steps > 100000 ? -1 : (int)steps;
		r->leaves = leaves < 0 || leaves > 1000 ? 0 : (int)leaves;
		r->spines = spines < 0 || spines > 1000 ? 0 : (int)spines;
		r->leaf = leaf < -1 || leaf > 1000 ? -1 : (int)leaf;
		r->spine = spine < -1 || spine > 1000 ? -1 : (int)spine;
	}
	json_decref(v);
	return rc;
}

/* GET /api/layout's query: the fields of a run that shape the fabric (the same names). */
static void layout_request(struct MHD_Connection *c, struct lab_job_request *r)
{
	static const char *const ints[] = { "nodes", "rails", "leaves", "spines" };
	int *to[] = { &r->nodes, &r->rails, &r->leaves, &r->spines };
	const char *v;

	*r = (struct lab_job_request){ .nodes = 4, .rails = 1, .target = -1, .rail = -1,
				       .leaves = 2, .spines = 1 };
	snprintf(r->scenario, sizeof(r->scenario), "healthy");
	v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fabric");
	copy_name(v ? v : "ib", r->fabric, sizeof(r->fabric));
	v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "like");
	snprintf(r->like, sizeof(r->like), "%s", !v ? "" : strlen(v) < sizeof(r->like) ? v : "?");
	v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "topology");
	snprintf(r->topology, sizeof(r->topology), "%s",
		 !v ? "" : strlen(v) < sizeof(r->topology) ? v : "?");
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		char *end;
		long x;

		v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, ints[i]);
		if (!v)
			continue;
		x = strtol(v, &end, 10);
		*to[i] = *v && !*end && x >= 0 && x <= 1000 ? (int)x : 0;
	}
}

/*
 * The fabric the lab would build for a request, drawn by the page before any
 * run: the lab's own code on the same fields, never a guess of the page's.
 */
static enum MHD_Result send_layout(struct MHD_Connection *c)
{
	struct lab_job_request r;
	char why[320], *text;
	enum MHD_Result rc;

	layout_request(c, &r);
	if (r.nodes < 1 || r.nodes > LAB_MAX_RANKS || r.rails < 1 || r.rails > 8 ||
	    r.nodes * r.rails > LAB_MAX_RANKS)
		return send_error(c, MHD_HTTP_BAD_REQUEST, "nodes x rails: from 1 to "
				  LAB_MAX_RANKS_TEXT " ranks, rails at most 8");
	if (lab_web_check_fabric(&r, why, sizeof(why)))
		return send_error(c, MHD_HTTP_BAD_REQUEST, why);
	text = lab_web_layout(&r, why, sizeof(why));
	if (!text)
		return send_error(c, MHD_HTTP_BAD_REQUEST, why);
	rc = send_text(c, MHD_HTTP_OK, "application/json", text, strlen(text));
	free(text);
	return rc;
}

/* The current run's fabric description, as soon as the lab wrote it (before its first step). */
static enum MHD_Result send_topology(struct MHD_Connection *c)
{
	char path[PATH_MAX + 64], *text;
	size_t len = 0;
	enum MHD_Result rc;
	FILE *f;
	int run;

	lab_job_state(&run);
	if (!run)
		return send_error(c, MHD_HTTP_CONFLICT, "no run started yet");
	if (lab_job_topology(path, sizeof(path)) || !(f = fopen(path, "r")))
		return send_error(c, MHD_HTTP_NOT_FOUND, "this run has no emulated fabric (tcp), "
				  "or has not written it yet");
	text = malloc(1 << 20);
	if (text)
		len = fread(text, 1, 1 << 20, f);
	fclose(f);
	rc = text ? send_text(c, MHD_HTTP_OK, "application/json", text, len)
		  : send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	free(text);
	return rc;
}

static enum MHD_Result start_run(struct MHD_Connection *c, const struct upload *u)
{
	struct lab_job_request req;
	char why[512];
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Cancel answers once the lab is gone, so that right after a 200 a new run
 * starts; it waits parked (no thread held), CANCEL_WAIT_S at most, then
 * answers 202 "cancelling".
 */
static enum MHD_Result cancel_run(struct MHD_Connection *c, struct upload *u)
{
	enum lab_job_state st;
	int run;

	if (!u->cancel_asked) {
		if (lab_job_cancel())
			return send_error(c, MHD_HTTP_CONFLICT, "nothing is running");
		u->cancel_asked = true;
		u->cancel_until = now_s() + CANCEL_WAIT_S;
	}
	st = lab_job_state(&run);
	if (st == JOB_CANCELLING && now_s() < u->cancel_until) {
		lab_conn_answering(c);
		lab_park(c);
		return MHD_YES;
	}
	return send_json(c, st == JOB_CANCELLING ? MHD_HTTP_ACCEPTED : MHD_HTTP_OK,
			 json_pack("{s:s,s:i}", "state", lab_job_state_name(st), "run", run));
}

static enum MHD_Result send_events(struct MHD_Connection *c)
{
	unsigned http = MHD_HTTP_OK;
	struct MHD_Response *r = lab_stream_open(c, &http);
	enum MHD_Result rc;

	if (!r)
		return send_error(c, http, http == MHD_HTTP_CONFLICT ? "no run started yet" :
			http == MHD_HTTP_SERVICE_UNAVAILABLE ? "too many event streams open" :
			"out of memory");
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	rc = queue(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r); /* the connection holds its own reference */
	return rc;
}

/* ---- routing ---- */

static const struct lab_asset *find_asset(const char *url)
{
	for (const struct lab_asset *a = lab_assets; a->path; a++)
		if (!strcmp(a->path, url))
			return a;
	return NULL;
}

static enum MHD_Result route(struct MHD_Connection *c, const char *url, struct upload *u)
{
	const struct lab_asset *a = u->post ? NULL : find_asset(url);
	int run;
	enum lab_job_state st;

	if (a)
		return send_text(c, MHD_HTTP_OK, a->type, a->body, strlen(a->body));
	if (!strcmp(url, "/api/run") && u->post)
		return start_run(c, u);
	if (!strcmp(url, "/api/cancel") && u->post)
		return cancel_run(c, u);
	if (!strcmp(url, "/api/status") && !u->post) {
		st = lab_job_state(&run);
		return send_json(c, MHD_HTTP_OK, json_pack("{s:s,s:i}", "state",
							 lab_job_state_name(st), "run", run));
	}
	if (!strcmp(url, "/api/events") && !u->post)
		return send_events(c);
	if (!strcmp(url, "/api/result") && !u->post)
		return send_file(c, "result.json", "application/json");
	if (!strcmp(url, "/api/topology") && !u->post)
		return send_topology(c);
	if (!strcmp(url, "/api/layout") && !u->post)
		return send_layout(c);
	if (!strcmp(url, "/report.html") && !u->post)
		return send_file(c, "report.html", "text/html; charset=utf-8");
	return send_error(c, MHD_HTTP_NOT_FOUND, "no such page (see / for the lab)");
}

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* Counts, by lab_guard_single's index, the headers that must come once. */
static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	unsigned *count = cls;
	int i = lab_guard_single(key);

	(void)kind, (void)value;
	if (i >= 0)
		count[i]++;
	return MHD_YES;
}

/* Headers only, before any body is read: who is asking, and in what form. */
static enum MHD_Result screen(struct MHD_Connection *c, const struct lab_guard *g,
			      const char *url, bool post, bool *ok)
{
	const char *host = header(c, "Host"), *length = header(c, "Content-Length");
	unsigned count[LAB_SINGLE_HEADERS] = { 0 };
	char why[256];

	*ok = false;
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, count);
	if (lab_guard_repeats(count, why, sizeof(why)))
		return send_error(c, MHD_HTTP_BAD_REQUEST, why);
	if (lab_guard_host(g, host, why, sizeof(why)) ||
	    lab_guard_origin(header(c, "Origin"), host, why, sizeof(why)) ||
	    (!strncmp(url, "/api/", 5) &&
	     lab_guard_fetch_site(header(c, "Sec-Fetch-Site"), why, sizeof(why))))
		return send_error(c, MHD_HTTP_FORBIDDEN, why);
	if (post && lab_guard_json_type(header(c, "Content-Type"), why, sizeof(why)))
		return send_error(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, why);
	if (post && length && strtoull(length, NULL, 10) > MAX_BODY)
		return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "body over 4 KiB");
	*ok = true;
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_len, void **con_cls)
{
	struct upload *u = *con_cls;
	bool post = !strcmp(method, "POST"), ok;
	enum MHD_Result rc;

	(void)version;
	if (!u) { /* first call: headers only */
		if (!strcmp(method, "OPTIONS"))
			return send_error(c, MHD_HTTP_FORBIDDEN, "cross-origin requests (and their "
					  "pre-flight) are refused");
		if (!post && strcmp(method, "GET"))
			return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or POST only");
		rc = screen(c, cls, url, post, &ok);
		if (!ok)
			return rc;
		if (!(u = calloc(1, sizeof(*u))))
			return MHD_NO;
		u->post = post;
		*con_cls = u;
		return MHD_YES;
	}
	if (*data_len) {
		if (u->len + *data_len > sizeof(u->body))
			u->too_big = true;
		else
			memcpy(u->body + u->len, data, *data_len);
		u->len += u->too_big ? 0 : *data_len;
		*data_len = 0;
		return MHD_YES;
	}
	return route(c, url, u);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
		    enum MHD_RequestTerminationCode why)
{
	(void)cls, (void)why;
	free(*con_cls);
	*con_cls = NULL;
	lab_conn_answered(c);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode what)
{
	(void)cls;
	if (what == MHD_CONNECTION_NOTIFY_STARTED)
		lab_conn_opened(c, socket_context);
	else
		lab_conn_closed(socket_context);
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

/* libmicrohttpd's own complaints, but not a page that closed its event stream. */
static void log_http(void *cls, const char *fmt, va_list ap)
{
	char text[512];

	(void)cls;
	vsnprintf(text, sizeof(text), fmt, ap);
	/* a page closing its event stream, a client giving up half-way: its business; a slow
	 * client's connection closed by lab_serve_conns.c: said once in a while (say_closed) */
	if (!strstr(text, "no longer available for sending") &&
	    !strstr(text, "closed by remote peer") && !strstr(text, "closed by remote side") &&
	    !strstr(text, "detected connection closure"))
		fprintf(stderr, "fabriclab lab: http: %s", text);
}

/* The listening socket, bound here so that its port is known before the daemon's thread runs. */
static int listen_on(struct sockaddr_in *sa, unsigned *port)
{
	socklen_t len = sizeof(*sa);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)sa, sizeof(*sa)) || listen(fd, LISTEN_BACKLOG) ||
	    getsockname(fd, (struct sockaddr *)sa, &len)) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa->sin_port);
	return fd;
}

static struct MHD_Daemon *start_daemon(int fd, struct lab_guard *g)
{
	return MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
					MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, g,
				MHD_OPTION_EXTERNAL_LOGGER, log_http, NULL,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
				/* a backstop: lab_serve_conns.c makes room long before */
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)LAB_CONN_SLOTS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
				MHD_OPTION_END);
}

/* Now and then, one line on the connections closed to keep the server free. */
static void say_closed(const struct lab_conn_counts *now)
{
	static struct lab_conn_counts said;
	static double last;
	double t = now_s();
	unsigned slow = now->too_slow - said.too_slow, client = now->client_limit -
		said.client_limit, server = now->server_limit - said.server_limit;

	if (!(slow + client + server) || t - last < SAY_CLOSED_EVERY_S)
		return;
	fprintf(stderr, "fabriclab lab: slow or crowding clients: closed %u request(s) not in "
		"full after %.0f s, %u connection(s) of an address past its %d, %u past %d in "
		"all\n", slow, LAB_REQUEST_S, client, LAB_CLIENT_MAX, server, LAB_SERVER_MAX);
	said = *now;
	last = t;
}

static void tick(void)
{
	struct timespec ts = { 0, TICK_MS * 1000000L };
	struct lab_conn_counts counts;
	int killed;

	nanosleep(&ts, NULL);
	lab_unpark_all();
	lab_conn_reap(&counts);
	say_closed(&counts);
	killed = lab_job_tick();
	if (killed)
		fprintf(stderr, "fabriclab lab: run %d: the lab had not stopped %.0f s after it was "
			"asked to; killed it and its ranks (SIGKILL)\n", killed, LAB_CANCEL_KILL_S);
}

static int serve(struct sockaddr_in *sa, bool remote)
{
	struct sigaction act = { .sa_handler = on_signal };
	static struct lab_guard g;
	struct MHD_Daemon *d = NULL;
	int fd;

	inet_ntop(AF_INET, &sa->sin_addr, g.listen_host, sizeof(g.listen_host));
	g.any_address = sa->sin_addr.s_addr == htonl(INADDR_ANY);
	signal(SIGPIPE, SIG_IGN);
	if (lab_headers_init()) {
		fprintf(stderr, "fabriclab lab: --serve: libmicrohttpd's MHD_queue_response not "
			"found (dlsym RTLD_NEXT)\n");
		return 1;
	}
	fd = listen_on(sa, &g.port);
	if (fd < 0 || !(d = start_daemon(fd, &g))) {
		fprintf(stderr, "fabriclab lab: --serve: cannot listen on %s:%u: %s\n", g.listen_host,
			ntohs(sa->sin_port), strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if (remote)
		fprintf(stderr, "fabriclab lab: WARNING: listening on %s, not loopback: anyone who "
			"can reach this port can start and cancel runs on this machine\n",
			g.listen_host);
	printf("fabriclab lab: serving the lab on http://%s:%u/ (Ctrl-C stops)\n",
	       g.any_address ? "127.0.0.1" : g.listen_host, g.port);
	fflush(stdout);
	sigemptyset(&act.sa_mask);
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGTERM, &act, NULL);
	while (!serve_stop)
		tick();
	lab_job_shutdown();
	lab_streams_stop();
	MHD_stop_daemon(d);
	return 0;
}

static bool is_loopback(const struct sockaddr_in *sa)
{
	return (ntohl(sa->sin_addr.s_addr) >> 24) == 127;
}

static int serve_usage(FILE *to, int rc)
{
	fputs("usage: fabriclab lab --serve [--listen ADDR:PORT] [--allow-remote] [--dir DIR]\n\n"
	      "The lab in the browser: a page to pick the fabric, the scenario and the faults,\n"
	      "run it and read the verdict and the hop table as the ranks report.\n\n"
	      "  --listen A:P     where (default 127.0.0.1:8080; port 0 picks a free one)\n"
	      "  --allow-remote   allow a --listen address that is not loopback\n"
	      "  --dir DIR        where the runs' folders go (default fabriclab-lab)\n", to);
	return rc;
}

int lab_serve_main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "serve", no_argument, NULL, 'S' },
		{ "listen", required_argument, NULL, 'l' },
		{ "allow-remote", no_argument, NULL, 'A' },
		{ "dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_in sa;
	const char *listen_at = "127.0.0.1:8080", *dir = "fabriclab-lab";
	char self[PATH_MAX], absdir[PATH_MAX];
	bool remote = false;
	ssize_t n;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		if (c == 'l')
			listen_at = optarg;
		else if (c == 'D')
			dir = optarg;
		else if (c == 'A')
			remote = true;
		else if (c == 'h')
			return serve_usage(stdout, 0);
		else if (c != 'S') {
			fprintf(stderr, "fabriclab lab --serve: takes only --listen ADDR:PORT, "
				"--allow-remote and --dir DIR (\"%s\")\n", argv[optind - 1]);
			return 2;
		}
	}
	if (parse_listen(listen_at, &sa)) {
		fprintf(stderr, "fabriclab lab: --listen \"%s\": expected IPV4:PORT, like "
			"127.0.0.1:8080 (port 0 picks a free one)\n", listen_at);
		return 2;
	}
	if (!is_loopback(&sa) && !remote) {
		fprintf(stderr, "fabriclab lab: --listen \"%s\" is not a loopback address: anyone "
			"who reaches it could start runs here; add --allow-remote if you mean it\n",
			listen_at);
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
	return serve(&sa, !is_loopback(&sa));
}
