/*
 * `fabriclab lab --serve`: the lab in the browser. One run at a time: a page
 * asks for a fabric, a size, a scenario and a target; the server starts the
 * real lab as a child process, streams its step times as they happen
 * (Server-Sent Events) and serves the merged report when it is done.
 *
 * The server is for its user only (lab_serve_guard.c): the Host must name the
 * listen address or a loopback name, a foreign Origin is refused, and every
 * POST is application/json, which no cross-site page can send without a
 * pre-flight the server refuses.
 */
#ifndef FABRICLAB_LAB_WEB_H
#define FABRICLAB_LAB_WEB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LAB_PROGRESS_ENV "FABRICLAB_LAB_PROGRESS"

/* cancelling: asked to stop, the lab not yet gone; a new run waits for cancelled. */
enum lab_job_state { JOB_IDLE, JOB_RUNNING, JOB_CANCELLING, JOB_DONE, JOB_FAILED,
		     JOB_CANCELLED };

struct lab_job_request {
	char fabric[8];
	int nodes;
	int rails;  /* NICs per node, 1 unless roce/ib */
	char scenario[16];
	int target; /* -1: the lab picks one */
	int rail;   /* -1: every NIC of the target (or slow-rail: a random rail) */
	int steps;  /* 0: the lab's default */
	char link_rate[16]; /* "" : the lab's default; else one of LAB_WEB_LINK_RATES */
	char like[12];      /* "" or a preset (lab --like): hdr, ndr, xdr, roce400 */
	char topology[12];  /* "", "flat", "fat-tree" or "rail" (lab --topology; needs like) */
	int leaves, spines; /* fat-tree: leaves 1..nodes; fat-tree and rail: spines 1..8 */
	int leaf, spine;    /* slow-uplink: leafI-spineJ; slow-spine: spineJ */
};

/* The link rates the page may ask for (lab --link-rate), as the error message lists them. */
#define LAB_WEB_LINK_RATES_TEXT "100mbit, 200mbit, 400mbit or 1gbit"

/*
 * The emulated fabric of a request (lab_web_fabric.c): presets, switches and
 * a switch's faults (scenarios slow-spine, slow-uplink, slow-leafport: a
 * healthy job on a fabric with that --hw-fault).
 */
bool lab_web_switch_scenario(const char *scenario);
/* 0, or -1 with the field and its accepted values in why (a 400). */
int lab_web_check_fabric(const struct lab_job_request *r, char *why, size_t len);
/* lab --topology's and --hw-fault's values; "" when the request has none. */
void lab_web_topology_spec(const struct lab_job_request *r, char *spec, size_t len);
void lab_web_hw_fault(const struct lab_job_request *r, char *spec, size_t len);
/* The description the lab would write for a checked request, as JSON text (malloc'd), or NULL
 * with why. */
char *lab_web_layout(const struct lab_job_request *r, char *why, size_t len);

/* Where runs go and which binary runs them; once, before the server starts. */
void lab_job_setup(const char *dir, const char *self_path);
/* 0 started; -1 with *http and why set (409 a run is going on, 400 a bad request). */
int lab_job_start(const struct lab_job_request *req, int *http, char *why, size_t len);
/* 0 asked to stop; -1 when nothing runs. */
int lab_job_cancel(void);
/* A lab not gone this long after its SIGTERM is killed, group and all: past the spawner's 5 s
 * for ranks deaf to it (shim/spawn.c, KILL_GRACE_MS), so only a deaf lab itself. */
#define LAB_CANCEL_KILL_S 6.0
/* The state now, with the run's number (0 before the first). */
enum lab_job_state lab_job_state(int *run);
const char *lab_job_state_name(enum lab_job_state s);
/* Whether a run is under way (running or cancelling). */
bool lab_job_busy(enum lab_job_state s);
/* A file of the current run ("progress.tsv", "result.json", "report.html", "lab.out"). */
int lab_job_path(const char *name, char *path, size_t len);
/* The current run's fabric description (<run>/<lab's folder>/topology.json): 0 once the lab
 * wrote it (roce and ib), -1 before or without one. */
int lab_job_topology(char *path, size_t len);
/* Once in a while: a run past its time limit is cancelled, a lab deaf to the cancel killed
 * (then the run's number, once; else 0). */
int lab_job_tick(void);
/* Stops a run still going (the server is stopping). */
void lab_job_shutdown(void);

/* Who may talk to the server (lab_serve_guard.c). */
struct lab_guard {
	char listen_host[64]; /* the listen address as text: "127.0.0.1" */
	unsigned port;
	bool any_address;     /* listening on 0.0.0.0: any IPv4 literal names it */
};

/* 0 when Host (may be NULL) names this server; -1 with why. */
int lab_guard_host(const struct lab_guard *g, const char *host, char *why, size_t len);
/* 0 when Origin is absent or is this server as the Host names it; -1 with why. */
int lab_guard_origin(const char *origin, const char *host, char *why, size_t len);
/* 0 when a POST's Content-Type is application/json (parameters allowed); -1 with why. */
int lab_guard_json_type(const char *type, char *why, size_t len);
/* 0 unless Sec-Fetch-Site says another site sent it (API requests only); -1 with why. */
int lab_guard_fetch_site(const char *site, char *why, size_t len);
/* The headers a request names once at most (Host, Origin, Content-Length...): the index of
 * `name` (any case) among the LAB_SINGLE_HEADERS of them, or -1. */
#define LAB_SINGLE_HEADERS 6
int lab_guard_single(const char *name);
/* 0 when each came once at most (count: by index) and a body has one framing; -1 with why. */
int lab_guard_repeats(const unsigned count[LAB_SINGLE_HEADERS], char *why, size_t len);

/*
 * Connections (lab_serve_conns.c): a request's total time and the connections
 * of one client are bounded, whatever idle timers say.
 */
#define LAB_REQUEST_S 10.0  /* from connect, or the previous answer, to a request in full */
#define LAB_CLIENT_MAX 192  /* connections of one address (streams are 128 at most) */
#define LAB_SERVER_MAX 512  /* connections in all */
#define LAB_CONN_SLOTS 640  /* libmicrohttpd's limit: room for those being closed */
struct lab_conn_counts {
	unsigned too_slow;     /* past LAB_REQUEST_S */
	unsigned client_limit; /* made room for one more from the same address */
	unsigned server_limit; /* made room past LAB_SERVER_MAX */
};
struct MHD_Connection;
/* MHD_OPTION_NOTIFY_CONNECTION's two ends; *ctx is the connection's socket context. */
void lab_conn_opened(struct MHD_Connection *c, void **ctx);
void lab_conn_closed(void **ctx);
/* The request is in (its answer is being made): its clock stops. */
void lab_conn_answering(struct MHD_Connection *c);
/* The answer is out: the connection waits for its next request, a new clock. */
void lab_conn_answered(struct MHD_Connection *c);
/* From the ticker: closes requests past LAB_REQUEST_S; the counts so far. */
void lab_conn_reap(struct lab_conn_counts *counts);

/* Every response gets the server's headers, libmicrohttpd's own pages too (lab_serve_headers.c):
 * lab_headers_init once before the server starts (-1: the library's function is not found). */
struct MHD_Response;
int lab_headers_init(void);
void lab_secure_headers(struct MHD_Response *r);

/* Event streams (lab_serve_events.c): one per page, at most LAB_MAX_STREAMS. */
#define LAB_MAX_STREAMS 128
/* A stream response for c, or NULL with *http set (503 too many, 409 no run yet). */
struct MHD_Response *lab_stream_open(struct MHD_Connection *c, unsigned *http);
/* Connections parked until something changes (streams, a cancel waiting for the end). */
void lab_park(struct MHD_Connection *c);
/* Resumes every parked connection: each looks again and parks again when nothing changed. */
void lab_unpark_all(void);
/* The server is stopping: streams end, nothing parks any more. */
void lab_streams_stop(void);

/* The page and its assets (lab_page.c, generated from tools/lab/page/ by embed.py). */
struct lab_asset {
	const char *path; /* "/", "/lab.js" */
	const char *type;
	const char *body;
};
extern const struct lab_asset lab_assets[];

int lab_serve_main(int argc, char **argv);

#endif
