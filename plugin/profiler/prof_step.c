/*
 * What one stopped step tells about its hop (reference 2.4, 2.8):
 *   send: GPU wait  SendGPUWait -> first SendPeerWait (or SendWait)
 *         peer wait first SendPeerWait -> SendWait (the receiver not ready yet)
 *         wire      SendWait -> stop (isend accepted until test() says done)
 *   recv: wire      RecvWait -> RecvFlushWait (includes waiting for the sender,
 *                   so it is also the receive side's peer wait)
 *         GPU wait  RecvGPUWait -> stop (the kernel consuming the data)
 * and active time from the first of those waits to the stop; a request_done
 * event (LTTng) carries the same figures. The stats slot,
 * held since the step started, is the hop table's watermark: nothing a step
 * reports starts before it.
 */
#include "prof_internal.h"

static uint64_t first_of(uint64_t a, uint64_t b)
{
	return a ? a : b;
}

static void account_send(struct fl_prof_link *l, const struct fl_prof_step *s, uint64_t stop)
{
	uint64_t sent = s->at[FL_PROF_SEND_WAIT];
	uint64_t post = first_of(s->at[FL_PROF_SEND_PEER_WAIT], sent);
	uint64_t gpu = s->at[FL_PROF_SEND_GPU_WAIT];
	struct fl_xfer_times t = { .ready_ns = sent, .wire_start_ns = sent, .wire_end_ns = stop };

	if (!sent || stop < sent)
		return; /* never handed to the network: nothing moved */
	if (gpu && post > gpu)
		fl_stats_add(&l->stats.gpu_wait_ns, post - gpu);
	fl_trace_step_done(&l->trace, s->slot, s->bytes, &t, post, stop);
	fl_stats_account(&l->stats, s->bytes, post, stop, &t);
}

static void account_recv(struct fl_prof_link *l, const struct fl_prof_step *s, uint64_t stop)
{
	uint64_t posted = s->at[FL_PROF_RECV_WAIT];
	uint64_t arrived = s->at[FL_PROF_RECV_FLUSH_WAIT];
	uint64_t gpu = s->at[FL_PROF_RECV_GPU_WAIT];
	struct fl_xfer_times t = { .ready_ns = arrived, .wire_start_ns = posted,
				   .wire_end_ns = arrived };

	if (!posted || arrived < posted)
		return; /* nothing arrived (an empty or aborted step) */
	if (gpu && stop > gpu)
		fl_stats_add(&l->stats.gpu_wait_ns, stop - gpu);
	fl_trace_step_done(&l->trace, s->slot, s->bytes, &t, posted,
			   stop > arrived ? stop : arrived);
	fl_stats_account(&l->stats, s->bytes, posted, stop > arrived ? stop : arrived, &t);
}

void fl_prof_step_account(struct fl_prof_step *s, uint64_t stop_ns)
{
	struct fl_prof_link *l = s->op->link;

	if (l->is_send)
		account_send(l, s, stop_ns);
	else
		account_recv(l, s, stop_ns);
	fl_prof_slot_give(l, s->slot);
}
