/*
 * Send to the next rank while receiving from the previous one, in step-sized
 * transfers with up to NCCL_STEPS in flight each way. Receives land straight
 * in the destination buffer; sizes need not be multiples of anything.
 *
 * With FABRICLAB_SHIM_RECV_GROUP=G (up to the plugin's maxRecvs) each step is
 * sent as G messages, each with a tag of its own (its bytes split evenly, so
 * some may be empty), and received by one irecv of G buffers, as
 * NCCL groups the receives of sub-operations that share a receive comm (PXN:
 * 2.28.9 src/transport/net.cc:1376-1410 groups up to maxRecvs subs, :1469
 * tags each with its sender's rank, :1483 posts one irecv of subCount).
 */
#include "shim.h"

#include "steps.h"

struct sr_state {
	struct shim_fifo sends, recvs;
	size_t bytes;
	size_t step;
	int group;    /* messages one step is sent as, and one receive takes */
	int nranks;
	char *src, *dst;
	void *src_mh, *dst_mh;
};

static uint64_t steps(const struct sr_state *st)
{
	return (st->bytes + st->step - 1) / st->step;
}

static uint64_t transfers(const struct sr_state *st, const struct shim_fifo *f)
{
	return f->send ? steps(st) * (uint64_t)st->group : steps(st);
}

/* Message m: part m % group of step m / group, the step's bytes split evenly (some may be 0). */
static size_t part(const struct sr_state *st, uint64_t message, size_t *len)
{
	uint64_t j = message % (uint64_t)st->group;
	size_t off = (size_t)(message / (uint64_t)st->group) * st->step;
	size_t step_len = st->bytes - off < st->step ? st->bytes - off : st->step;
	size_t from = step_len * j / (size_t)st->group;

	*len = step_len * (j + 1) / (size_t)st->group - from;
	return off + from;
}

/* Message m's tag: its sender's rank, one more lap of the ranks per place in the group. */
static int tag_of(const struct sr_state *st, int sender, uint64_t message)
{
	return sender + (int)(message % (uint64_t)st->group) * st->nranks;
}

static int post_one(struct shim_world *w, struct sr_state *st, struct shim_fifo *f, char *base,
		    void *mh)
{
	void *data[FL_MAX_RECVS];
	size_t len[FL_MAX_RECVS];
	int tags[FL_MAX_RECVS], n = 0;
	uint64_t first = f->send ? f->posted : f->posted * (uint64_t)st->group;
	int sender = f->send ? w->rank : f->link->recv_peer;

	for (uint64_t m = first; n < (f->send ? 1 : st->group); m++, n++) {
		data[n] = base + part(st, m, &len[n]);
		tags[n] = tag_of(st, sender, m);
	}
	return shim_fifo_post_parts(w, f, n, data, len, tags, mh);
}

static int post(struct shim_world *w, struct sr_state *st, struct shim_fifo *f, char *base,
		void *mh)
{
	while (f->posted < transfers(st, f) && !shim_fifo_full(f)) {
		uint64_t before = f->posted;
		int rc = post_one(w, st, f, base, mh);

		if (rc || f->posted == before)
			return rc;
	}
	return FL_OK;
}

/* Transfers still to post or complete; a direction without a buffer has none. */
static int pending(const struct sr_state *st, const struct shim_fifo *f, const void *base)
{
	return base && f->done < transfers(st, f);
}

/* What NCCL would group: no more than the plugin takes in one irecv. */
static int group_of(const struct shim_world *w)
{
	int max = w->props.max_recvs > 0 ? w->props.max_recvs : 1;

	return w->recv_group < max ? w->recv_group : max;
}

static int link_sendrecv(struct shim_world *w, struct shim_link *link,
			 const struct shim_buf *send, const struct shim_buf *recv, size_t bytes)
{
	struct sr_state st = { .bytes = bytes, .step = w->step_bytes, .group = group_of(w),
			       .nranks = w->nranks };
	struct shim_watch watch;
	int rc = FL_OK;

	st.src = send ? send->net : NULL;
	st.dst = recv ? recv->net : NULL;
	st.src_mh = send ? send->send_mh[0] : NULL;
	st.dst_mh = recv ? recv->recv_mh[0] : NULL;
	shim_fifo_init(&st.sends, link, "sendrecv", 1);
	shim_fifo_init(&st.recvs, link, "sendrecv", 0);
	shim_watch_init(&watch);
	while (!rc && (pending(&st, &st.sends, st.src) || pending(&st, &st.recvs, st.dst))) {
		if (st.dst)
			rc = post(w, &st, &st.recvs, st.dst, st.dst_mh);
		if (!rc && st.src)
			rc = post(w, &st, &st.sends, st.src, st.src_mh);
		if (!rc && shim_fifo_busy(&st.sends))
			rc = shim_fifo_test(w, &st.sends);
		if (!rc && shim_fifo_busy(&st.recvs))
			rc = shim_fifo_test(w, &st.recvs);
		if (!rc)
			rc = shim_watch_pass(w, &watch, &st.sends, &st.recvs);
	}
	return rc;
}

int shim_sendrecv_on(struct shim_world *w, const struct shim_buf *send,
		     const struct shim_buf *recv, size_t bytes)
{
	struct shim_link *link = send ? send->link : recv ? recv->link : NULL;
	int staged = shim_mem_staged(w), rc;

	if (!link || (send && bytes > send->size) || (recv && bytes > recv->size))
		return shim_fail(FL_ERR_ARGUMENT, "sendrecv: %zu bytes exceed the buffers", bytes);
	if (send && recv && send->link != recv->link)
		return shim_fail(FL_ERR_ARGUMENT, "sendrecv: buffers of two different links");
	/* Staged: the GPU's data goes to host memory the plugin can move, and back. */
	rc = staged && send ? shim_mem_stage_in(w, send, bytes) : FL_OK;
	if (!rc)
		rc = link_sendrecv(w, link, send, recv, bytes);
	if (!rc && staged && recv)
		rc = shim_mem_stage_out(w, recv, bytes);
	return rc;
}

int shim_sendrecv(struct shim_world *w, const struct shim_buf *send, const struct shim_buf *recv,
		  size_t bytes)
{
	return shim_sendrecv_on(w, send, recv, bytes);
}
