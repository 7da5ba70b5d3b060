/*
 * One rank of `fabriclab sweep`. Round by round each rank opens a link to the
 * peer the plan gives it (or sits the round out), and every pair measures one
 * direction, then the other, so the two directions of a cable are told apart.
 * Per direction and size: warm up, check the bytes once into a poisoned
 * buffer, time one transfer so both ends agree how many fill the time asked
 * for, then time those, each on its own. Rank 0 keeps the slower end's mean for
 * each direction, and that end's median and 99th percentile transfer time.
 */
#include "sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "shim/shim.h"
#include "shim/shim_env.h"
#include "tools/common/tool_text.h"

#define PERIOD 251
#define MAX_ITERS 100000
/* What each rank tells rank 0 of a direction: mean time, bytes wrong, p50, p99, transfers. */
#define SWEEP_FIGURES 5

struct sweep_run {
	const struct sweep_opts *o;
	struct shim_world w;
	struct sweep_plan plan;
	struct sweep_result res;
	char *send_mem, *recv_mem; /* the world's memory: host, or the GPU with --mem cuda */
	char *host;                /* GPU memory only: the host's copy to fill and check */
	size_t cap;
	uint64_t wrong;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static uint8_t byte_from(int src, size_t i)
{
	return (uint8_t)(i % PERIOD + 7u * (unsigned)src + 1u);
}

static void fill(char *mem, int src, size_t bytes)
{
	for (size_t i = 0; i < bytes; i++)
		mem[i] = (char)byte_from(src, i);
}

static uint64_t count_wrong(const char *mem, int src, size_t bytes)
{
	uint64_t wrong = 0;

	for (size_t i = 0; i < bytes; i++)
		wrong += (uint8_t)mem[i] != byte_from(src, i);
	return wrong;
}

static void poison(char *mem, int src, size_t bytes)
{
	for (size_t i = 0; i < bytes; i++)
		mem[i] = (char)~byte_from(src, i);
}

/* The host's view of the world's memory: the buffer itself, or its host copy. */
static char *host_view(struct sweep_run *r, char *mem)
{
	return r->host ? r->host : mem;
}

static int poison_recv(struct sweep_run *r, int src, size_t bytes)
{
	poison(host_view(r, r->recv_mem), src, bytes);
	return r->host ? shim_mem_upload(&r->w, r->recv_mem, r->host, bytes) : FL_OK;
}

/* Bytes of the receive buffer that are not what src sent; all of them when unreadable. */
static uint64_t recv_wrong(struct sweep_run *r, int src, size_t bytes)
{
	if (r->host && shim_mem_download(&r->w, r->host, r->recv_mem, bytes))
		return bytes;
	return count_wrong(host_view(r, r->recv_mem), src, bytes);
}

/* One transfer of the direction this rank plays: +1 sends, -1 receives, 0 idle. */
static int transfer(struct sweep_run *r, int role, const struct shim_buf *send,
		    const struct shim_buf *recv, size_t bytes)
{
	if (role > 0)
		return shim_sendrecv_on(&r->w, send, NULL, bytes);
	if (role < 0)
		return shim_sendrecv_on(&r->w, NULL, recv, bytes);
	return FL_OK;
}

/* Both ends run as many transfers as the slower end's first one says fill the time. */
static int agree_iters(struct sweep_run *r, int peer, double once_us, long *iters)
{
	double *all = calloc((size_t)r->w.nranks, sizeof(*all)), slower;
	int rc;

	if (!all)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	rc = shim_boot_allgather(&r->w.boot, &once_us, all, sizeof(once_us));
	slower = peer >= 0 && all[peer] > once_us ? all[peer] : once_us;
	free(all);
	*iters = slower > 0 ? lround(r->o->seconds * 1e6 / slower) : 1;
	*iters = *iters < 1 ? 1 : *iters > MAX_ITERS ? MAX_ITERS : *iters;
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of v[0..n) (sorted here), the nearest rank: no sample invented between two. */
static double quantile(double *v, long n, double q)
{
	long k = (long)ceil(q * (double)n) - 1;

	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/*
 * The timed transfers, each timed too: their mean is the direction's time, their
 * spread the model's sampling error of it (struct sweep_size).
 */
static int timed(struct sweep_run *r, int role, const struct shim_buf *send,
		 const struct shim_buf *recv, size_t bytes, long iters, double mine[SWEEP_FIGURES])
{
	double *each = role ? malloc((size_t)iters * sizeof(*each)) : NULL;
	double start = now_us(), last = start;
	int rc = role && !each ? shim_fail(FL_ERR_SYSTEM, "out of memory") : FL_OK;

	for (long i = 0; !rc && role && i < iters; i++) {
		double now;

		rc = transfer(r, role, send, recv, bytes);
		now = now_us();
		each[i] = now - last;
		last = now;
	}
	mine[0] = role ? (last - start) / (double)iters : -1;
	if (!rc && role) {
		mine[2] = quantile(each, iters, 0.5);
		mine[3] = quantile(each, iters, 0.99);
		mine[4] = (double)iters;
	}
	free(each);
	return rc;
}

/* This rank's figures for its part of the direction (SWEEP_FIGURES), bytes wrong among them. */
static int measure(struct sweep_run *r, int peer, int role, const struct shim_buf *send,
		   const struct shim_buf *recv, size_t bytes, double mine[SWEEP_FIGURES])
{
	double start, once_us = 0;
	long iters = 1;
	int rc = FL_OK;

	for (long i = 0; !rc && i < r->o->warmup; i++)
		rc = transfer(r, role, send, recv, bytes);
	if (!rc && role < 0)
		rc = poison_recv(r, peer, bytes);
	start = now_us();
	if (!rc)
		rc = transfer(r, role, send, recv, bytes);
	once_us = now_us() - start;
	mine[1] = !rc && role < 0 ? (double)recv_wrong(r, peer, bytes) : 0;
	if (!rc)
		rc = agree_iters(r, role ? peer : -1, role ? once_us : 0, &iters);
	if (!rc)
		rc = shim_boot_barrier(&r->w.boot);
	if (!rc)
		rc = timed(r, role, send, recv, bytes, iters, mine);
	return rc;
}

/* Rank 0: the slower end's figures are the direction's. */
static void record(struct sweep_run *r, const int *peer, int first_sends, size_t size,
		   const double *all)
{
	struct sweep_size *s = &r->res.sizes[size];
	int n = r->w.nranks;

	for (int a = 0; a < n; a++) {
		int b = peer[a];
		const double *fa = &all[SWEEP_FIGURES * a], *fb = &all[SWEEP_FIGURES * b];
		const double *slower;

		if (b < 0 || (a < b) != first_sends)
			continue; /* each sender once */
		slower = fb[0] > fa[0] ? fb : fa;
		s->time_us[a * n + b] = slower[0];
		s->p50_us[a * n + b] = slower[2];
		s->p99_us[a * n + b] = slower[3];
		s->iters[a * n + b] = slower[4];
		r->res.wrong += (uint64_t)(fa[1] + fb[1]);
	}
}

static int direction(struct sweep_run *r, const int *peer, int first_sends, size_t size,
		     const struct shim_buf *send, const struct shim_buf *recv)
{
	int me = r->w.rank, p = peer[me];
	int role = p < 0 ? 0 : ((me < p) == first_sends ? 1 : -1);
	size_t bytes = r->res.sizes[size].bytes;
	double mine[SWEEP_FIGURES] = { -1, 0, 0, 0, 0 }, *all = NULL;
	int rc;

	rc = measure(r, p, role, send, recv, bytes, mine);
	if (rc)
		return rc;
	r->wrong += (uint64_t)mine[1];
	if (me == 0 && !(all = calloc((size_t)r->w.nranks * SWEEP_FIGURES, sizeof(*all))))
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	rc = shim_boot_gather_doubles(&r->w.boot, mine, SWEEP_FIGURES, all);
	if (!rc && all)
		record(r, peer, first_sends, size, all);
	free(all);
	return rc;
}

static int run_round(struct sweep_run *r, int round)
{
	const int *peer = &r->plan.peer[round * r->w.nranks];
	int p = peer[r->w.rank];
	struct shim_buf send = { 0 }, recv = { 0 };
	struct shim_link link;
	int rc;

	rc = shim_link_open(&r->w, p, p, &link);
	if (!rc && p >= 0)
		rc = shim_buf_register_on(&r->w, &link, &send, r->send_mem, r->cap);
	if (!rc && p >= 0)
		rc = shim_buf_register_on(&r->w, &link, &recv, r->recv_mem, r->cap);
	for (size_t s = 0; !rc && s < r->res.nsizes; s++) {
		rc = direction(r, peer, 1, s, &send, &recv);
		if (!rc)
			rc = direction(r, peer, 0, s, &send, &recv);
	}
	/* Nobody closes a connection its peer may still be reading. */
	if (!rc)
		rc = shim_boot_barrier(&r->w.boot);
	if (rc)
		return rc; /* the exit frees what is left: the plugin may still write there */
	shim_buf_deregister(&r->w, &send);
	shim_buf_deregister(&r->w, &recv);
	shim_link_close(&r->w, &link);
	return FL_OK;
}

static int who_am_i(struct sweep_run *r)
{
	struct sweep_node mine = { .pid = (int32_t)getpid(), .dev_index = r->w.dev,
				   .speed_mbps = r->w.props.speed_mbps,
				   .net_version = r->w.net.version };
	const char *node = shim_env("FABRICLAB_NODE_NAME");

	char host[SWEEP_NAME_LEN] = "?";

	/* kept escaped (\xNN): every output, the terminal's and the SVG's, shows the names */
	if (!node && !gethostname(host, sizeof(host) - 1))
		host[sizeof(host) - 1] = '\0';
	tool_text_escape(mine.name, sizeof(mine.name), node ? node : host);
	tool_text_escape(mine.dev, sizeof(mine.dev), r->w.props.name ? r->w.props.name : "?");
	snprintf(mine.link_layer, sizeof(mine.link_layer), "%s",
		 r->w.props.link_layer ? r->w.props.link_layer : "");
	r->res.n = r->w.nranks;
	r->res.nodes = calloc((size_t)r->w.nranks, sizeof(*r->res.nodes));
	if (!r->res.nodes)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	return shim_boot_allgather(&r->w.boot, &mine, r->res.nodes, sizeof(mine));
}

static int rank_of(const struct sweep_result *res, const char *name)
{
	for (int i = 0; i < res->n; i++) {
		if (!strcasecmp(res->nodes[i].name, name))
			return i;
	}
	return -1;
}

/* Every rank draws the same plan from what all of them know. */
static int make_plan(struct sweep_run *r)
{
	const struct sweep_opts *o = r->o;
	int peers[SWEEP_MAX_PEERS], node;

	for (int i = 0; i < r->res.n; i++) {
		if (rank_of(&r->res, r->res.nodes[i].name) != i)
			return shim_fail(FL_ERR_USAGE, "ranks %d and %d both say they are node "
					 "\"%s\": one rank per node, with distinct names "
					 "(FABRICLAB_NODE_NAME or the host name)",
					 rank_of(&r->res, r->res.nodes[i].name), i,
					 r->res.nodes[i].name);
	}
	if (!o->gate)
		return sweep_plan_tournament(&r->plan, r->res.n);
	node = rank_of(&r->res, o->gate_node);
	if (node < 0)
		return shim_fail(FL_ERR_USAGE, "--node %s is not one of the job's %d ranks",
				 o->gate_node, r->res.n);
	for (int i = 0; i < o->npeers; i++) {
		peers[i] = rank_of(&r->res, o->gate_peers[i]);
		if (peers[i] < 0 || peers[i] == node)
			return shim_fail(FL_ERR_USAGE, "--peers: %s is %s", o->gate_peers[i],
					 peers[i] < 0 ? "not one of the job's ranks" :
					 "the node under test");
	}
	return sweep_plan_gate(&r->plan, r->res.n, node, peers, o->npeers, !o->baseline);
}

/* Buffers in the world's memory (GPU memory with --mem cuda), the send one filled once. */
static int alloc_buffers(struct sweep_run *r)
{
	int rc;

	r->cap = r->o->max_bytes;
	rc = shim_mem_alloc(&r->w, r->cap, (void **)&r->send_mem);
	if (!rc)
		rc = shim_mem_alloc(&r->w, r->cap, (void **)&r->recv_mem);
	if (!rc && r->w.mem.kind == SHIM_MEM_CUDA && !(r->host = malloc(r->cap)))
		rc = shim_fail(FL_ERR_SYSTEM, "cannot allocate %zu bytes", r->cap);
	if (rc)
		return rc;
	fill(host_view(r, r->send_mem), r->w.rank, r->cap);
	return r->host ? shim_mem_upload(&r->w, r->send_mem, r->host, r->cap) : FL_OK;
}

static int alloc_sizes(struct sweep_run *r)
{
	size_t n = (size_t)r->res.n, count = 0;

	for (size_t b = r->o->min_bytes; b <= r->o->max_bytes; b *= (size_t)r->o->factor) {
		count++;
		if (b > r->o->max_bytes / (size_t)r->o->factor)
			break;
	}
	r->res.sizes = calloc(count, sizeof(*r->res.sizes));
	if (!r->res.sizes)
		return shim_fail(FL_ERR_SYSTEM, "out of memory");
	r->res.nsizes = count;
	for (size_t i = 0, b = r->o->min_bytes; i < count; i++, b *= (size_t)r->o->factor) {
		struct sweep_size *s = &r->res.sizes[i];

		s->bytes = b;
		s->time_us = malloc(n * n * sizeof(*s->time_us));
		s->p50_us = calloc(n * n, sizeof(*s->p50_us));
		s->p99_us = calloc(n * n, sizeof(*s->p99_us));
		s->iters = calloc(n * n, sizeof(*s->iters));
		if (!s->time_us || !s->p50_us || !s->p99_us || !s->iters)
			return shim_fail(FL_ERR_SYSTEM, "out of memory");
		for (size_t k = 0; k < n * n; k++)
			s->time_us[k] = -1;
	}
	return FL_OK;
}

static void say_progress(const struct sweep_run *r, int round)
{
	if (r->w.rank || !isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "fabriclab sweep: round %d of %d\r", round + 1, r->plan.nrounds);
	if (round + 1 == r->plan.nrounds)
		fputc('\n', stderr);
}

static int run_rounds(struct sweep_run *r)
{
	int rc = who_am_i(r);

	if (!rc)
		rc = make_plan(r);
	if (!rc)
		rc = alloc_sizes(r);
	if (!rc)
		rc = alloc_buffers(r);
	for (int i = 0; !rc && i < r->plan.nrounds; i++) {
		say_progress(r, i);
		rc = run_round(r, i);
	}
	return rc;
}

/* Rank 0's verdict is every rank's exit status, so each pod of a Job tells the same. */
static int agree_exit(struct sweep_run *r, int mine)
{
	int32_t code = mine, *all = calloc((size_t)r->w.nranks, sizeof(*all));
	int rc;

	if (!all)
		return SWEEP_EXIT_FAILED;
	rc = shim_boot_allgather(&r->w.boot, &code, all, sizeof(code));
	code = rc ? SWEEP_EXIT_FAILED : all[0];
	free(all);
	return code;
}

void sweep_result_free(struct sweep_result *res)
{
	for (size_t i = 0; res->sizes && i < res->nsizes; i++) {
		free(res->sizes[i].time_us);
		free(res->sizes[i].p50_us);
		free(res->sizes[i].p99_us);
		free(res->sizes[i].iters);
	}
	free(res->sizes);
	free(res->nodes);
	*res = (struct sweep_result){ 0 };
}

static void report_failure(void)
{
	const char *rank = shim_env("RANK");

	char *who = tool_text_dup(rank ? rank : "?"), *why = tool_text_dup(shim_error_text());

	/* one write: the ranks share stderr, and pieces of their lines would interleave */
	fprintf(stderr, "fabriclab sweep: rank %s: %s\n", who ? who : "?",
		why ? why : "(no memory to show the error)");
	free(who);
	free(why);
}

int sweep_rank(const struct sweep_opts *o)
{
	struct sweep_run r = { .o = o };
	int code = SWEEP_EXIT_FAILED, rc;

	rc = shim_world_open(&r.w, o->tool_dir);
	if (rc) {
		report_failure();
		return SWEEP_EXIT_FAILED;
	}
	rc = run_rounds(&r);
	if (rc == FL_ERR_USAGE) {
		/* Every rank knows the same: rank 0 says it, all leave with the same status. */
		if (r.w.rank == 0)
			sweep_print_error(shim_error_text());
		code = agree_exit(&r, SWEEP_EXIT_USAGE);
	} else if (rc) {
		report_failure();
		r.w.broken = 1; /* the others may be gone: leave without waiting for them */
	} else {
		code = r.w.rank == 0 ? sweep_conclude(&r.res, o) : SWEEP_EXIT_OK;
		code = agree_exit(&r, code);
	}
	sweep_plan_free(&r.plan);
	sweep_result_free(&r.res);
	/* After a failed transfer the plugin may still write into them; the exit frees them. */
	if (!r.w.broken) {
		shim_mem_free(&r.w, r.send_mem);
		shim_mem_free(&r.w, r.recv_mem);
	}
	free(r.host);
	shim_world_close(&r.w);
	return code;
}
