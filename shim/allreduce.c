/*
 * Ring all-reduce of float sums, as NCCL's ring kernel and proxy move it (2.30.7
 * src/device/all_reduce.h:13-80, src/enqueue.cc:2182-2366; sizes from nccl_rules.h). A
 * channel's part goes round in loops of nranks chunks; each loop takes 2(n-1) ring steps,
 * step s sending chunk (rank - s - 1) and receiving chunk (rank - s - 2), what arrives at
 * step s leaving at step s+1 (reduced with this rank's data in the first n-1 steps, copied
 * after). A chunk leaves in Simple's 2 slices (the second often short or empty, still sent)
 * or as one LL/LL128 step; every transfer of a loop is one of the proxy's, 0 bytes included,
 * and receives post whole slots into the staging ring.
 *
 * Dependencies are per transfer, as the GPU's: slice k of step s leaves once slice k of step
 * s-1 arrived and was combined, so the pipeline never drains between ring steps.
 *
 * With FABRICLAB_SHIM_CHANNELS=C the buffer is cut into C contiguous parts, each reduced by a
 * ring of its own over its own connections, as NCCL gives each channel its part
 * (src/include/device.h:337-362, ncclCollCbdPart: an offset and count per channel; ours are
 * equal but the last, NCCL's are whole cells), all progressed in one loop, as NCCL's proxy
 * progresses its channels.
 */
#include "shim.h"

#include <string.h>

#include "ll_lines.h"
#include "steps.h"

struct ar_plan {
	int rank;
	int nranks;
	int steps;        /* ring steps per loop: 2(n-1) */
	int slices;       /* transfers per chunk */
	int proto;
	size_t count;     /* floats of this channel */
	size_t chunk;     /* floats per chunk of a full loop */
	uint64_t transfers;
	struct shim_coll_shape shape;
	const float *send;
	float *recv;
};

/* One transfer: floats [off, off + len) of the channel's part; ring step s of its loop. */
struct ar_xfer {
	size_t off, len;
	int step;
};

/* Transfer t of the sends (recv 0) or of the receives (recv 1). */
static void xfer_at(const struct ar_plan *p, uint64_t t, int recv, struct ar_xfer *x)
{
	uint64_t per_loop = (uint64_t)p->steps * (uint64_t)p->slices;
	size_t loop_off = (size_t)(t / per_loop) * (size_t)p->nranks * p->chunk;
	size_t rem = p->count - loop_off, begin, nelem, start = 0;
	size_t cc = shim_rules_loop_chunk(rem, p->nranks, p->chunk, sizeof(float));
	int slice = (int)(t % (uint64_t)p->slices);

	x->step = (int)(t / (uint64_t)p->slices % (uint64_t)p->steps);
	begin = (size_t)shim_rules_ring_chunk(p->rank, p->nranks, x->step, recv) * cc;
	nelem = rem > begin ? (rem - begin < cc ? rem - begin : cc) : 0;
	x->len = nelem;
	if (p->proto == SHIM_PROTO_SIMPLE) {
		size_t size = shim_rules_simple_slice(&p->shape, nelem, sizeof(float));

		start = (size_t)slice * size;
		start = start < nelem ? start : nelem;
		x->len = nelem - start < size ? nelem - start : size;
	}
	x->off = loop_off + begin + start;
}

struct ar_state {
	struct ar_plan plan;
	uint64_t sent, recv_posted, recv_done; /* transfers; sends done: sends.done */
	uint64_t send_base, recv_base;         /* NCCL's sub->base of each direction, in steps */
	struct shim_fifo sends, recvs;
	const struct shim_buf *send_buf, *recv_buf;
	struct shim_link *link;
	int chan; /* the link's index in the buffers' registrations */
};

/* The slot of the ring a transfer's steps start at (net.cc:1337, 1540: (base + step) % 8). */
static size_t slot_of(const struct ar_state *st, uint64_t base, uint64_t t)
{
	uint64_t step = base + t * (uint64_t)st->plan.shape.slice_steps;

	return (size_t)(step % SHIM_STEPS) * st->plan.shape.step;
}

/* Slice k of step s carries what slice k of step s-1 brought, once it is combined. */
static int send_ready(const struct ar_state *st, const struct ar_xfer *x)
{
	return x->step == 0 || st->recv_done + (uint64_t)st->plan.slices > st->sent;
}

static int post_send(struct shim_world *w, struct ar_state *st, const struct ar_xfer *x)
{
	const struct ar_plan *p = &st->plan;
	const struct shim_buf *src = x->step ? st->recv_buf : st->send_buf;
	const float *base = x->step ? p->recv : p->send;
	size_t bytes = x->len * sizeof(float);
	void *data = (void *)(base + x->off), *mh = src->send_mh[st->chan];

	if (p->proto != SHIM_PROTO_SIMPLE) {
		/* the GPU writes the lines into the send buffer's step, flagged step + 1 */
		data = st->link->send_staging + slot_of(st, st->send_base, st->sent);
		bytes = shim_lines_pack(p->proto, data, base + x->off, bytes,
					st->send_base + st->sent + 1);
		mh = st->link->send_staging_mh;
	}
	return shim_fifo_send(w, &st->sends, data, bytes, w->rank, mh);
}

/* One isend, if the next transfer may leave; *posted says whether the plugin took it. */
static int post_send_one(struct shim_world *w, struct ar_state *st, int *posted)
{
	uint64_t before_post = st->sends.posted;
	struct ar_xfer x;
	int rc;

	*posted = 0;
	if (st->sent >= st->plan.transfers || shim_fifo_full(&st->sends))
		return FL_OK;
	xfer_at(&st->plan, st->sent, 0, &x);
	if (!send_ready(st, &x))
		return FL_OK;
	rc = post_send(w, st, &x);
	*posted = !rc && st->sends.posted != before_post;
	st->sent += (uint64_t)*posted;
	return rc;
}

/* One irecv of the next transfer's whole slot; *posted says whether the plugin took it. */
static int post_recv_one(struct shim_world *w, struct ar_state *st, int *posted)
{
	const struct ar_plan *p = &st->plan;
	void *stage = st->link->staging + slot_of(st, st->recv_base, st->recv_posted);
	uint64_t before_post = st->recvs.posted;
	int tag = st->link->recv_peer, rc;
	size_t expect;
	struct ar_xfer x;

	*posted = 0;
	if (st->recv_posted >= p->transfers || shim_fifo_full(&st->recvs))
		return FL_OK;
	xfer_at(p, st->recv_posted, 1, &x);
	expect = shim_rules_wire_bytes(p->proto, x.len * sizeof(float));
	rc = shim_fifo_recv(w, &st->recvs, 1, &stage, &p->shape.recv_bytes, &expect, &tag,
			    st->link->staging_mh);
	*posted = !rc && st->recvs.posted != before_post;
	st->recv_posted += (uint64_t)*posted;
	return rc;
}

/*
 * In the all-gather half a transfer overwrites memory this rank sent from n-1 steps earlier
 * (the same chunk, sent at step s-n+1): it lands once that send completed.
 */
static int recv_may_land(const struct ar_state *st, const struct ar_xfer *x)
{
	uint64_t earlier = st->recv_done - (uint64_t)(st->plan.nranks - 1) * st->plan.slices;

	return x->step < st->plan.nranks - 1 || st->sends.done > earlier;
}

/* What arrived, as floats: the slot itself, or LL/LL128 lines read out once all flagged. */
static const float *payload(struct shim_world *w, struct ar_state *st, size_t len)
{
	const struct ar_plan *p = &st->plan;
	const void *stage = st->link->staging + slot_of(st, st->recv_base, st->recv_done);

	if (p->proto == SHIM_PROTO_SIMPLE)
		return stage;
	if (!shim_lines_ready(p->proto, stage, len * sizeof(float), st->recv_base +
			      st->recv_done + 1))
		return NULL; /* the lines are not all there yet: the GPU would keep polling */
	shim_lines_unpack(p->proto, w->unpack, stage, len * sizeof(float));
	return (const float *)w->unpack;
}

static int complete_recv(struct shim_world *w, struct ar_state *st)
{
	const struct ar_plan *p = &st->plan;
	const float *theirs;
	struct ar_xfer x;
	int rc = shim_fifo_test(w, &st->recvs);

	if (rc || !shim_fifo_landed(&st->recvs))
		return rc;
	xfer_at(p, st->recv_done, 1, &x);
	if (!recv_may_land(st, &x))
		return FL_OK;
	theirs = payload(w, st, x.len);
	if (!theirs)
		return FL_OK;
	/* reduce-scatter adds what arrived to this rank's own data; all-gather copies it */
	rc = x.len ? shim_mem_combine(w, p->recv + x.off, x.step < p->nranks - 1 ?
				      p->send + x.off : NULL, theirs, x.len) : FL_OK;
	if (!rc)
		rc = shim_fifo_consume(w, &st->recvs);
	if (!rc)
		st->recv_done++;
	return rc;
}

/* NCCL's sub->base: the connection's next step, rounded up to whole chunks (net.cc:1311, 1505). */
static uint64_t base_of(uint64_t next, const struct shim_coll_shape *s, int slices)
{
	uint64_t chunk_steps = (uint64_t)s->slice_steps * (uint64_t)slices;

	return (next + chunk_steps - 1) / chunk_steps * chunk_steps;
}

/* Channel c's ring, over floats [first, first + count) of the buffers. */
static void plan_init(struct ar_state *st, struct shim_world *w, const struct shim_buf *send,
		      const struct shim_buf *recv, size_t first, size_t count, int c)
{
	struct ar_plan *p = &st->plan;
	size_t loop;

	*st = (struct ar_state){ .send_buf = send, .recv_buf = recv, .link = &w->ring[c],
				 .chan = c };
	*p = (struct ar_plan){ .rank = w->rank, .nranks = w->nranks, .steps = 2 * (w->nranks - 1),
			       .proto = w->rules.proto, .count = count,
			       .send = (const float *)send->net + first,
			       .recv = (float *)recv->net + first };
	shim_rules_coll(&w->rules, p->proto, &p->shape);
	p->slices = p->shape.slices_per_chunk;
	p->chunk = p->shape.chunk / sizeof(float);
	loop = (size_t)w->nranks * p->chunk;
	/* the proxy's nsteps: 2(n-1) steps per loop, each chunk's steps (enqueue.cc:2362-2364) */
	p->transfers = (count + loop - 1) / loop * (uint64_t)p->steps * (uint64_t)p->slices;
	st->send_base = base_of(st->link->send_step, &p->shape, p->slices);
	st->recv_base = base_of(st->link->recv_step, &p->shape, p->slices);
	shim_fifo_init(&st->sends, st->link, "all_reduce", 1);
	shim_fifo_init(&st->recvs, st->link, "all_reduce", 0);
	st->sends.depth = st->recvs.depth = shim_rules_depth(1, p->shape.slice_steps);
	st->sends.proto = st->recvs.proto = p->proto;
	st->recvs.gdr_flush = w->gdr_flush;
}

static int ar_done(const struct ar_state *st)
{
	return st->sends.done >= st->plan.transfers && st->recv_done >= st->plan.transfers;
}

/*
 * One pass over one channel's ring, as one call of NCCL's recvProxyProgress and one of
 * sendProxyProgress: a receive posted, or else the oldest tested (2.30.7
 * src/transport/net.cc:1609 returns once something was posted); a send posted, or else the
 * oldest tested (:1424-1426 move on to the next sub after an isend).
 */
static int ar_pass(struct shim_world *w, struct ar_state *st)
{
	int posted, rc = post_recv_one(w, st, &posted);

	if (!rc && !posted && shim_fifo_busy(&st->recvs))
		rc = complete_recv(w, st);
	if (!rc)
		rc = post_send_one(w, st, &posted);
	if (!rc && !posted && shim_fifo_busy(&st->sends))
		rc = shim_fifo_test(w, &st->sends);
	return rc;
}

/* The next op on each connection starts after this one's steps (net.cc:1313, 1507). */
static void advance_links(struct ar_state *st, int channels)
{
	for (int c = 0; c < channels; c++) {
		uint64_t steps = st[c].plan.transfers * (uint64_t)st[c].plan.shape.slice_steps;

		if (!steps)
			continue;
		st[c].link->send_step = st[c].send_base + steps;
		st[c].link->recv_step = st[c].recv_base + steps;
	}
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
	if (!rc)
		advance_links(st, w->channels);
	return shim_op_end(w, rc);
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
