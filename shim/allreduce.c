/*
 * Ring all-reduce of float sums, NCCL's way: the buffer is cut into one chunk
 * per rank; 2(n-1) ring steps (n-1 of reduce-scatter, then n-1 of all-gather)
 * each move one chunk to the next rank, in slices of one step buffer.
 * Dependencies are per slice, not per ring step: slice j of step s+1 leaves as
 * soon as slice j of step s arrived and was reduced, so the pipeline never
 * drains between ring steps.
 *
 * At ring step s this rank sends chunk (rank - s) and receives chunk
 * (rank - s - 1): what arrives at step s is exactly what leaves at step s+1.
 *
 * With FABRICLAB_SHIM_CHANNELS=C the buffer is cut into C contiguous parts, each
 * reduced by a ring of its own over its own connections, as NCCL gives each
 * channel its part (2.28.9 src/include/device.h:317-343, ncclCollCbdPart: an
 * offset and count per channel; ours are equal but the last, NCCL's first and
 * last may differ), all progressed in one loop, as NCCL's proxy progresses its
 * channels.
 */
#include "shim.h"

#include <string.h>

#include "steps.h"

/* A position in the sequence of slices one direction moves: ring step, slice of its chunk. */
struct ar_pos {
	int step;
	size_t slice;
};

struct ar_plan {
	int rank;
	int nranks;
	int nsteps;
	size_t count;
	size_t chunk; /* floats per chunk, the last ones shorter or empty */
	size_t slice; /* floats per transfer */
	const float *send;
	float *recv;
};

static int mod(int a, int n)
{
	return ((a % n) + n) % n;
}

static int send_chunk(const struct ar_plan *p, int step)
{
	return mod(p->rank - step, p->nranks);
}

static int recv_chunk(const struct ar_plan *p, int step)
{
	return mod(p->rank - step - 1, p->nranks);
}

static size_t chunk_begin(const struct ar_plan *p, int chunk)
{
	size_t begin = (size_t)chunk * p->chunk;

	return begin < p->count ? begin : p->count;
}

static size_t chunk_len(const struct ar_plan *p, int chunk)
{
	size_t begin = chunk_begin(p, chunk);

	return p->count - begin < p->chunk ? p->count - begin : p->chunk;
}

static size_t slices_of(const struct ar_plan *p, int chunk)
{
	return (chunk_len(p, chunk) + p->slice - 1) / p->slice;
}

/* Skips past slices that do not exist (empty chunks) to the next real one or the end. */
static void settle(const struct ar_plan *p, struct ar_pos *pos,
		   int (*chunk_at)(const struct ar_plan *, int))
{
	while (pos->step < p->nsteps && pos->slice >= slices_of(p, chunk_at(p, pos->step))) {
		pos->step++;
		pos->slice = 0;
	}
}

static void advance(const struct ar_plan *p, struct ar_pos *pos,
		    int (*chunk_at)(const struct ar_plan *, int))
{
	pos->slice++;
	settle(p, pos, chunk_at);
}

static int before(struct ar_pos a, struct ar_pos b)
{
	return a.step < b.step || (a.step == b.step && a.slice < b.slice);
}

/* Offset and length (floats) of one slice of a chunk. */
static size_t slice_at(const struct ar_plan *p, int chunk, size_t slice, size_t *len)
{
	size_t done = slice * p->slice, left = chunk_len(p, chunk) - done;

	*len = left < p->slice ? left : p->slice;
	return chunk_begin(p, chunk) + done;
}

struct ar_state {
	struct ar_plan plan;
	struct ar_pos sent, send_done, recv_posted, recv_done;
	struct ar_pos in_flight[SHIM_STEPS]; /* what each staging slot holds */
	struct shim_fifo sends, recvs;
	const struct shim_buf *send_buf, *recv_buf;
	struct shim_link *link;
	int chan; /* the link's index in the buffers' registrations */
};

/* Slice j of step s carries what slice j of step s-1 brought, once it is reduced. */
static int send_ready(const struct ar_state *st)
{
	struct ar_pos needed = { st->sent.step - 1, st->sent.slice };

	return st->sent.step == 0 || before(needed, st->recv_done);
}

static int post_sends(struct shim_world *w, struct ar_state *st)
{
	const struct ar_plan *p = &st->plan;

	while (st->sent.step < p->nsteps && !shim_fifo_full(&st->sends) && send_ready(st)) {
		int chunk = send_chunk(p, st->sent.step);
		const struct shim_buf *src = st->sent.step ? st->recv_buf : st->send_buf;
		const float *base = st->sent.step ? p->recv : p->send;
		uint64_t before_post = st->sends.posted;
		size_t len, off = slice_at(p, chunk, st->sent.slice, &len);
		int rc;

		rc = shim_fifo_post(w, &st->sends, (void *)(base + off), len * sizeof(float),
				    src->send_mh[st->chan]);
		if (rc || st->sends.posted == before_post)
			return rc;
		advance(p, &st->sent, send_chunk);
	}
	return FL_OK;
}

static int post_recvs(struct shim_world *w, struct ar_state *st)
{
	const struct ar_plan *p = &st->plan;

	while (st->recv_posted.step < p->nsteps && !shim_fifo_full(&st->recvs)) {
		unsigned slot = st->recvs.posted % SHIM_STEPS;
		char *stage = st->link->staging + slot * w->step_bytes;
		uint64_t before_post = st->recvs.posted;
		size_t len;
		int rc;

		slice_at(p, recv_chunk(p, st->recv_posted.step), st->recv_posted.slice, &len);
		rc = shim_fifo_post(w, &st->recvs, stage, len * sizeof(float),
				    st->link->staging_mh);
		if (rc || st->recvs.posted == before_post)
			return rc;
		st->in_flight[slot] = st->recv_posted;
		advance(p, &st->recv_posted, recv_chunk);
	}
	return FL_OK;
}

/*
 * In the all-gather half a slice overwrites memory this rank sent from n-1
 * steps earlier; wait until that send is complete before landing it.
 */
static int recv_may_land(const struct ar_state *st, struct ar_pos pos)
{
	struct ar_pos earlier_send = { pos.step + 1 - st->plan.nranks, pos.slice };

	return earlier_send.step < 0 || before(earlier_send, st->send_done);
}

static int complete_recv(struct shim_world *w, struct ar_state *st)
{
	const struct ar_plan *p = &st->plan;
	unsigned slot = st->recvs.done % SHIM_STEPS;
	struct ar_pos pos = st->in_flight[slot];
	const float *stage = (const float *)(st->link->staging + slot * w->step_bytes);
	uint64_t done = st->recvs.done;
	size_t len, off;
	int rc;

	if (!recv_may_land(st, pos))
		return FL_OK;
	rc = shim_fifo_test(w, &st->recvs);
	if (rc || st->recvs.done == done)
		return rc;
	off = slice_at(p, recv_chunk(p, pos.step), pos.slice, &len);
	/* reduce-scatter adds what arrived to this rank's own data; all-gather copies it */
	rc = shim_mem_combine(w, p->recv + off, pos.step < p->nranks - 1 ? p->send + off : NULL,
			      stage, len);
	if (rc)
		return rc;
	advance(p, &st->recv_done, recv_chunk);
	return FL_OK;
}

static int complete_send(struct shim_world *w, struct ar_state *st)
{
	uint64_t done = st->sends.done;
	int rc = shim_fifo_test(w, &st->sends);

	if (!rc && st->sends.done != done)
		advance(&st->plan, &st->send_done, send_chunk);
	return rc;
}

/* Channel c's ring, over floats [first, first + count) of the buffers. */
static void plan_init(struct ar_state *st, struct shim_world *w, const struct shim_buf *send,
		      const struct shim_buf *recv, size_t first, size_t count, int c)
{
	struct ar_plan *p = &st->plan;

	*st = (struct ar_state){ .send_buf = send, .recv_buf = recv, .link = &w->ring[c],
				 .chan = c };
	*p = (struct ar_plan){ .rank = w->rank, .nranks = w->nranks, .nsteps = 2 * (w->nranks - 1),
			       .count = count, .slice = w->step_bytes / sizeof(float),
			       .send = (const float *)send->net + first,
			       .recv = (float *)recv->net + first };
	p->chunk = (count + (size_t)w->nranks - 1) / (size_t)w->nranks;
	settle(p, &st->sent, send_chunk);
	settle(p, &st->send_done, send_chunk);
	settle(p, &st->recv_posted, recv_chunk);
	settle(p, &st->recv_done, recv_chunk);
	shim_fifo_init(&st->sends, st->link, "all_reduce", 1);
	shim_fifo_init(&st->recvs, st->link, "all_reduce", 0);
}

static int ar_done(const struct ar_state *st)
{
	return st->send_done.step >= st->plan.nsteps && st->recv_done.step >= st->plan.nsteps;
}

/* One pass over one channel's ring: what can be posted, what may have completed. */
static int ar_pass(struct shim_world *w, struct ar_state *st)
{
	int rc = post_recvs(w, st);

	if (!rc)
		rc = post_sends(w, st);
	if (!rc && shim_fifo_busy(&st->sends))
		rc = complete_send(w, st);
	if (!rc && shim_fifo_busy(&st->recvs))
		rc = complete_recv(w, st);
	return rc;
}

static int ring_all_reduce(struct shim_world *w, const struct shim_buf *send,
			   const struct shim_buf *recv, size_t count)
{
	struct ar_state st[SHIM_MAX_CHANNELS];
	const struct shim_fifo *sends[SHIM_MAX_CHANNELS], *recvs[SHIM_MAX_CHANNELS];
	size_t share = (count + (size_t)w->channels - 1) / (size_t)w->channels, first = 0;
	struct shim_watch watch;
	int rc = FL_OK, busy = 1;

	for (int c = 0; c < w->channels; c++) {
		size_t n = count - first < share ? count - first : share;

		plan_init(&st[c], w, send, recv, first, n, c);
		first += n;
		sends[c] = &st[c].sends;
		recvs[c] = &st[c].recvs;
	}
	shim_watch_init(&watch);
	while (!rc && busy) {
		busy = 0;
		for (int c = 0; !rc && c < w->channels; c++) {
			if (ar_done(&st[c]))
				continue;
			busy = 1;
			rc = ar_pass(w, &st[c]);
		}
		if (!rc && busy)
			rc = shim_watch_pass_pairs(w, &watch, sends, recvs, w->channels);
	}
	return rc;
}

int shim_all_reduce_sum(struct shim_world *w, const struct shim_buf *send,
			const struct shim_buf *recv, size_t count)
{
	size_t bytes = count * sizeof(float);
	int rc;

	if (bytes > send->size || bytes > recv->size)
		return shim_fail(FL_ERR_ARGUMENT, "all_reduce: %zu floats exceed the buffers",
				 count);
	if (w->nranks == 1 || count == 0)
		return send->data == recv->data ? FL_OK
			: shim_mem_copy(w, recv->data, send->data, bytes);
	/* Staged: the GPU's data goes to host memory the plugin can move, and back. */
	rc = shim_mem_staged(w) ? shim_mem_stage_in(w, send, bytes) : FL_OK;
	if (!rc)
		rc = ring_all_reduce(w, send, recv, count);
	if (!rc && shim_mem_staged(w))
		rc = shim_mem_stage_out(w, recv, bytes);
	return rc;
}
