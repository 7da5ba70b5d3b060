/*
 * Send to the next rank while receiving from the previous one, in step-sized
 * transfers with up to NCCL_STEPS in flight each way. Receives land straight
 * in the destination buffer; sizes need not be multiples of anything.
 */
#include "shim.h"

#include "steps.h"

struct sr_state {
	struct shim_fifo sends, recvs;
	size_t bytes;
	size_t step;
	char *src, *dst;
	void *src_mh, *dst_mh;
};

static size_t transfers(const struct sr_state *st)
{
	return (st->bytes + st->step - 1) / st->step;
}

static size_t part(const struct sr_state *st, uint64_t i, size_t *len)
{
	size_t off = (size_t)i * st->step;

	*len = st->bytes - off < st->step ? st->bytes - off : st->step;
	return off;
}

static int post(struct shim_world *w, struct sr_state *st, struct shim_fifo *f, char *base,
		void *mh)
{
	while (f->posted < transfers(st) && !shim_fifo_full(f)) {
		uint64_t before = f->posted;
		size_t len, off = part(st, f->posted, &len);
		int rc = shim_fifo_post(w, f, base + off, len, mh);

		if (rc || f->posted == before)
			return rc;
	}
	return FL_OK;
}

/* Transfers still to post or complete; a direction without a buffer has none. */
static int pending(const struct sr_state *st, const struct shim_fifo *f, const void *base)
{
	return base && f->done < transfers(st);
}

static int link_sendrecv(struct shim_world *w, struct shim_link *link,
			 const struct shim_buf *send, const struct shim_buf *recv, size_t bytes)
{
	struct sr_state st = { .bytes = bytes, .step = w->step_bytes };
	struct shim_watch watch;
	int rc = FL_OK;

	st.src = send ? send->net : NULL;
	st.dst = recv ? recv->net : NULL;
	st.src_mh = send ? send->send_mh : NULL;
	st.dst_mh = recv ? recv->recv_mh : NULL;
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
