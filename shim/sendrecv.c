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

static int ring_sendrecv(struct shim_world *w, const struct shim_buf *send,
			 const struct shim_buf *recv, size_t bytes)
{
	struct sr_state st = { .bytes = bytes, .step = w->step_bytes };
	struct shim_watch watch;
	int rc = FL_OK;

	st.src = send->net;
	st.dst = recv->net;
	st.src_mh = send->send_mh;
	st.dst_mh = recv->recv_mh;
	shim_fifo_init(&st.sends, &w->ring, "sendrecv", 1);
	shim_fifo_init(&st.recvs, &w->ring, "sendrecv", 0);
	shim_watch_init(&watch);
	while (!rc && (st.sends.done < transfers(&st) || st.recvs.done < transfers(&st))) {
		rc = post(w, &st, &st.recvs, st.dst, st.dst_mh);
		if (!rc)
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

int shim_sendrecv(struct shim_world *w, const struct shim_buf *send, const struct shim_buf *recv,
		  size_t bytes)
{
	int rc;

	if (bytes > send->size || bytes > recv->size)
		return shim_fail(FL_ERR_ARGUMENT, "sendrecv: %zu bytes exceed the buffers", bytes);
	rc = shim_mem_staged(w) ? shim_mem_stage_in(w, send, bytes) : FL_OK;
	if (!rc)
		rc = ring_sendrecv(w, send, recv, bytes);
	if (!rc && shim_mem_staged(w))
		rc = shim_mem_stage_out(w, recv, bytes);
	return rc;
}
