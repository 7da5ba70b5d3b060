/*
 * A ring all-reduce on a virtual clock. Every link moves one step per round
 * of length P, the ring's period: the slowest stage (GPU fill + wire) plus
 * 10%. In round g the sender s -> d:
 *   step start + SendGPUWait  T_g - 7P   (8 steps in flight per op)
 *   SendPeerWait              T_g + gpu(s)          (v4+)
 *   SendWait                  T_g + P - wire(s, d)  (bytes fresh here)
 *   stop                      T_g + P
 * and the receiver d:
 *   step start + RecvWait     T_g, or just before the data when d's GPU is
 *                             the straggler (it posts late, never waits)
 *   RecvFlushWait, GPUWait    T_g + P               (bytes fresh here)
 *   stop                      + the time d's GPU takes to consume
 * So a slow link shows as its own long SendWait, a straggler GPU as everyone
 * else's waits, exactly the patterns the verdict must tell apart.
 *
 * v1..v3 (NCCL 2.23-2.26) size nothing on steps: their step states carry NULL
 * args (2.23.4 src/misc/profiler.cc:502; 2.26.2 src/plugin/profiler.cc:497)
 * and each is paired with a ProxyOp state carrying the sub's running
 * transSize, as 2.26.2 src/transport/net.cc records them:
 *   send  SendPosted + step SendGPUWait (:1143-1144); SendRemFifoWait before
 *         every isend try, a refused one included (:1191); transSize += size,
 *         SendTransmitted, step SendWait (:1199-1203); step stop, SendDone
 *         (:1221-1223). 2.23.4 records SendTransmitted and SendWait before it
 *         grows transSize (transport/net.cc:1136-1138).
 *   recv  RecvPosted + step RecvWait (:1366-1367); transSize += size,
 *         RecvReceived, step RecvFlushWait (:1396-1399); RecvTransmitted, step
 *         RecvGPUWait (:1462-1463); step stop, RecvDone (:1498-1499).
 * v4+ (2.27 on) carry the step's own transSize and record no op states we use.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "player_internal.h"
#include "plugin/abi/profiler_abi.h"

#define IN_FLIGHT 8

struct timing {
	const struct player_scenario *s;
	uint64_t t0, period;
};

static int next_of(const struct player_scenario *s, int r)
{
	return (r + 1) % s->nranks;
}

static int prev_of(const struct player_scenario *s, int r)
{
	return (r + s->nranks - 1) % s->nranks;
}

static uint64_t wire_of(const struct player_scenario *s, int src, int dst)
{
	double f = 1.0;

	if (src == s->slow_src && dst == s->slow_dst)
		f = s->slow_factor;
	if (s->slow_nic_rank >= 0 && (src == s->slow_nic_rank || dst == s->slow_nic_rank))
		f = s->slow_factor;
	return (uint64_t)((double)s->wire_ns * f);
}

/* Time the GPU of a rank takes to fill (or drain) one step. */
static uint64_t gpu_of(const struct player_scenario *s, int r)
{
	double f = r == s->straggler_rank ? s->slow_factor : 0.1;

	return (uint64_t)((double)s->wire_ns * f);
}

static uint64_t drain_max(const struct player_scenario *s)
{
	uint64_t worst = 0;

	for (int r = 0; r < s->nranks; r++)
		worst = gpu_of(s, r) > worst ? gpu_of(s, r) : worst;
	return worst;
}

static uint64_t ring_period(const struct player_scenario *s)
{
	uint64_t worst = 0;

	for (int r = 0; r < s->nranks; r++) {
		uint64_t t = gpu_of(s, r) + wire_of(s, r, next_of(s, r));

		worst = t > worst ? t : worst;
	}
	return worst + worst / 10;
}

static int push(struct player_thread *th, struct player_event e)
{
	if (th->nev == th->cap) {
		size_t cap = th->cap ? th->cap * 2 : 1024;
		struct player_event *ev = realloc(th->ev, cap * sizeof(*ev));

		if (!ev)
			return -1;
		th->ev = ev;
		th->cap = cap;
	}
	e.seq = (int)th->nev;
	th->ev[th->nev++] = e;
	return 0;
}

static uint64_t round_start(const struct timing *tm, int g)
{
	return tm->t0 + (uint64_t)g * tm->period;
}

#define EV(kind_, t_, link_, op_, step_, state_, size_)                                   \
	((struct player_event){ .t = (t_), .kind = (kind_), .link = (link_), .op = (op_),  \
				.step = (step_), .state = (state_), .size = (size_) })

/* A ProxyOp state of v1..v3 (none from v4 on): transSize grows by `grow` bytes. */
static int op_state(struct player_thread *th, const struct player_scenario *s, uint64_t t,
		    int li, int op, int state, uint64_t grow, int grow_after)
{
	struct player_event e = EV(EV_STATE, t, li, op, 0, state, 0);

	if (s->version >= 4)
		return 0;
	e.on_op = 1;
	e.grow = grow;
	e.grow_after = grow_after;
	return push(th, e);
}

static int send_step(const struct timing *tm, struct player_thread *th, int li, int op, int k)
{
	const struct player_link *l = &th->links[li];
	const struct player_scenario *s = tm->s;
	uint64_t tg = round_start(tm, op * s->nsteps + k), p = tm->period;
	uint64_t start = tg - (IN_FLIGHT - 1) * p, sent = tg + p - wire_of(s, l->rank, l->peer);
	int rc = push(th, EV(EV_START_STEP, start, li, op, k, 0, 0));

	rc |= op_state(th, s, start, li, op, FL_PROF_ST_OP_SEND_POSTED, 0, 0);
	rc |= push(th, EV(EV_STATE, start, li, op, k, FL_PROF_ST_STEP_SEND_GPU_WAIT, 0));
	if (s->version >= 4)
		rc |= push(th, EV(EV_STATE, tg + gpu_of(s, l->rank), li, op, k,
				  FL_PROF_ST_STEP_SEND_PEER_WAIT_V4, 0));
	/* An isend refused once (a NULL request), then taken: RemFifoWait each time. */
	rc |= op_state(th, s, sent - p / 50, li, op, FL_PROF_ST_OP_SEND_REM_FIFO_WAIT, 0, 0);
	rc |= op_state(th, s, sent, li, op, FL_PROF_ST_OP_SEND_REM_FIFO_WAIT, 0, 0);
	rc |= op_state(th, s, sent, li, op, FL_PROF_ST_OP_SEND_TRANSMITTED, s->chunk,
		       s->version == 1);
	rc |= push(th, EV(EV_STATE, sent, li, op, k, FL_PROF_ST_STEP_SEND_WAIT, s->chunk));
	/* A retry: SendPeerWait again after SendWait must not move the first one. */
	if (s->version >= 4)
		rc |= push(th, EV(EV_STATE, tg + p - 1, li, op, k,
				  FL_PROF_ST_STEP_SEND_PEER_WAIT_V4, 0));
	rc |= push(th, EV(EV_STOP_STEP, tg + p, li, op, k, 0, 0));
	rc |= op_state(th, s, tg + p, li, op, FL_PROF_ST_OP_SEND_DONE, 0, 0);
	return rc;
}

/*
 * The passes of NCCL's receive proxy that start step k and cannot post it
 * (prof_player.h: recv_reg_passes, recv_not_now), each a start with nothing
 * recorded and no stop, p/64 apart before the pass that posts it.
 */
static int recv_restarts(const struct player_scenario *s, struct player_thread *th, int li,
			 int op, int k, uint64_t post, uint64_t p)
{
	int n = s->recv_not_now + (k == 0 ? s->recv_reg_passes : 0), rc = 0;

	for (int j = n; j >= 1; j--)
		rc |= push(th, EV(EV_START_STEP, post - (uint64_t)j * (p / 64), li, op, k, 0, 0));
	return rc;
}

static int recv_step(const struct timing *tm, struct player_thread *th, int li, int op, int k)
{
	const struct player_link *l = &th->links[li];
	const struct player_scenario *s = tm->s;
	uint64_t tg = round_start(tm, op * s->nsteps + k), p = tm->period;
	uint64_t arrive = tg + p, post = tg;
	int rc;

	if (l->rank == s->straggler_rank)
		post = arrive - wire_of(s, l->peer, l->rank) - p / 20;
	rc = recv_restarts(s, th, li, op, k, post, p);
	rc |= push(th, EV(EV_START_STEP, post, li, op, k, 0, 0));
	rc |= op_state(th, s, post, li, op, FL_PROF_ST_OP_RECV_POSTED, 0, 0);
	rc |= push(th, EV(EV_STATE, post, li, op, k, FL_PROF_ST_STEP_RECV_WAIT, 0));
	rc |= op_state(th, s, arrive, li, op, FL_PROF_ST_OP_RECV_RECEIVED, s->chunk, 0);
	rc |= push(th, EV(EV_STATE, arrive, li, op, k, FL_PROF_ST_STEP_RECV_FLUSH_WAIT, s->chunk));
	rc |= op_state(th, s, arrive, li, op, FL_PROF_ST_OP_RECV_TRANSMITTED, 0, 0);
	rc |= push(th, EV(EV_STATE, arrive, li, op, k, FL_PROF_ST_STEP_RECV_GPU_WAIT, 0));
	rc |= push(th, EV(EV_STOP_STEP, arrive + gpu_of(s, l->rank), li, op, k, 0, 0));
	rc |= op_state(th, s, arrive + gpu_of(s, l->rank), li, op, FL_PROF_ST_OP_RECV_DONE, 0, 0);
	return rc;
}

static int link_ops(const struct timing *tm, struct player_thread *th, int li)
{
	const struct player_scenario *s = tm->s;
	uint64_t p = tm->period;
	int rc = 0;

	for (int op = 0; op < s->ops; op++) {
		uint64_t first = round_start(tm, op * s->nsteps);
		uint64_t last = round_start(tm, op * s->nsteps + s->nsteps - 1);

		uint64_t stop = last + 2 * p + drain_max(s) + 1;
		/*
		 * The kernel on this channel, once per task (2.27 on: a start pTimer, a
		 * KernelChStop state, 2.30.7 src/plugin/profiler.cc:679-705): with the
		 * channel's own send op, not for ops another proxy moves (PXN).
		 */
		int kernel = s->version >= 4 && th->links[li].is_send && !th->links[li].relayed;

		rc |= push(th, EV(EV_START_OP, first - IN_FLIGHT * p, li, op, 0, 0, 0));
		if (kernel)
			rc |= push(th, EV(EV_KCH_START, first - IN_FLIGHT * p, li, op, 0, 0, 0));
		for (int k = 0; k < s->nsteps; k++)
			rc |= th->links[li].is_send ? send_step(tm, th, li, op, k)
						    : recv_step(tm, th, li, op, k);
		if (kernel)
			rc |= push(th, EV(EV_KCH_STOP, stop, li, op, 0, 0, 0));
		/* After its last step, however long the slowest GPU takes to drain it. */
		rc |= push(th, EV(EV_STOP_OP, stop, li, op, 0, 0, 0));
	}
	return rc;
}

/* Channel 1 of odd ranks is run by the even node-mate's proxy: PXN, another pid. */
static int pxn_moved(const struct player_scenario *s, int rank, int channel)
{
	return s->pxn && s->ranks_per_node > 1 && (rank & 1) && channel == 1;
}

static void add_link(struct player_thread *th, int rank, int peer, int is_send, int channel,
		     pid_t pid, int relayed)
{
	th->links[th->nlinks++] = (struct player_link){ rank, peer, is_send, channel, pid, relayed };
}

static void plan_links(const struct player_scenario *s, struct player_thread *th)
{
	int r = th->rank;

	th->nlinks = 0;
	for (int c = 0; c < s->nchannels && th->nlinks + 4 <= PLAYER_MAX_LINKS; c++) {
		/* The originator's pid: another process's, or ours when the node-mate is a thread here. */
		pid_t origin = s->pxn_same_process ? getpid() : getpid() + 100000;

		if (!pxn_moved(s, r, c)) {
			add_link(th, r, next_of(s, r), 1, c, getpid(), 0);
			add_link(th, r, prev_of(s, r), 0, c, getpid(), 0);
		}
		if (pxn_moved(s, r + 1, c) && r + 1 < s->nranks) {
			add_link(th, r + 1, next_of(s, r + 1), 1, c, origin, 1);
			add_link(th, r + 1, prev_of(s, r + 1), 0, c, origin, 1);
		}
	}
}

static int cmp_event(const void *pa, const void *pb)
{
	const struct player_event *a = pa, *b = pb;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	return a->seq - b->seq;
}

int player_generate(const struct player_scenario *s, struct player_thread *th, uint64_t t0)
{
	struct timing tm = { s, 0, ring_period(s) };
	int rc = 0;

	tm.t0 = t0 + (IN_FLIGHT + 2) * tm.period;
	plan_links(s, th);
	for (int li = 0; li < th->nlinks; li++)
		rc |= link_ops(&tm, th, li);
	if (!rc)
		qsort(th->ev, th->nev, sizeof(*th->ev), cmp_event);
	return rc;
}

void player_thread_free(struct player_thread *th)
{
	free(th->ev);
	memset(th, 0, sizeof(*th));
}
