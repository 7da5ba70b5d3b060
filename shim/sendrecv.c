/*
 * Send to the next rank while receiving from the previous one, as NCCL's proxy moves a
 * point-to-point operation over the network (nccl_rules.h, shim_rules_p2p): chunks of the
 * operation's own size, receives posted as whole p2pChunkSize slots of the shared pool, the
 * GPU's copy out of the slot after each lands, sizes of anything.
 *
 * With FABRICLAB_SHIM_RECV_GROUP=G (1..8) the message is G sub-operations, each its own
 * contiguous part with a tag of its own, as G peers' operations of one round share the proxy's
 * args (2.30.7 src/proxy.cc:438-447) and, for a plugin taking several buffers per irecv, one
 * comm (src/transport/net.cc:862, 1048): each sub sends on its own schedule, one isend per pass,
 * maxDepth = min(8, 16 / G) steps ahead (:1323); receives of the subs are grouped, up to
 * the plugin's maxRecvs per irecv, one irecv per step of the group with a buffer for each sub
 * that still has that step (:1473-1512 groups, :1520-1605 posts), each tagged with its sender
 * (:1575).
 *
 * With FABRICLAB_SHIM_REG_PASSES=N and GPUDirect, the user's buffers are registered as NCCL
 * registers them (nccl_rules.h, shim_rules_p2p_registered): each sub moves in
 * NCCL_MAX_NET_SIZE steps straight from the send buffer into the receive buffer, receives
 * posting just what is left of the op, no copy out of a slot; and each op's receives wait N
 * passes for the kernel, their first step started again on each (shim_rules_reg_wait).
 */
#include "shim.h"

#include "steps.h"

struct sr_sub {
	size_t off, bytes;  /* its part of the message */
	struct shim_p2p_shape shape;
	struct shim_fifo sends;
	int tag;            /* its sender's rank, one more lap of the ranks per sub */
};

struct sr_group {
	int first, n;       /* subs [first, first + n) */
	uint64_t steps;     /* the most any of them has */
	struct shim_fifo recvs;
};

struct sr_state {
	int nsubs, ngroups, depth, nranks;
	int reg;            /* the user's buffers registered: receives land in dst itself */
	int kernel_wait;    /* passes before the kernel starts (registered receives wait) */
	size_t slot_bytes;  /* p2pChunkSize: the shared pool's slots */
	struct sr_sub sub[FL_MAX_RECVS];
	struct sr_group group[FL_MAX_RECVS];
	struct shim_link *link;
	char *src, *dst;
	void *src_mh, *dst_mh;
};

/* Transfer j of a sub: its bytes [*off, *off + len). */
static size_t xfer_len(const struct sr_sub *s, uint64_t j, size_t *off)
{
	size_t at = (size_t)j * s->shape.chunk;

	*off = s->off + at;
	return s->bytes - at < s->shape.chunk ? s->bytes - at : s->shape.chunk;
}

/* A sub's turn in a pass: its next isend, else a test of its oldest (net.cc:1424-1426). */
static int send_turn(struct shim_world *w, struct sr_state *st, struct sr_sub *s)
{
	uint64_t before = s->sends.posted;
	size_t off, len;
	int rc;

	if (s->sends.posted < s->shape.nsteps && !shim_fifo_full(&s->sends)) {
		len = xfer_len(s, s->sends.posted, &off);
		rc = shim_fifo_send(w, &s->sends, st->src + off, len, w->rank + s->tag,
				    st->src_mh);
		if (rc || s->sends.posted != before)
			return rc;
	}
	return shim_fifo_busy(&s->sends) ? shim_fifo_test(w, &s->sends) : FL_OK;
}

/* Sub i's slot of the shared pool at its step k (net.cc:1552-1554: k % maxDepth x nsubs + i). */
static char *slot_of(const struct sr_state *st, int i, uint64_t k)
{
	size_t slot = (size_t)(k % (uint64_t)st->depth) * (size_t)st->nsubs + (size_t)i;

	return st->link->staging + slot * st->slot_bytes;
}

/* Where sub i's step k lands: the user's buffer when registered, else its slot of the pool. */
static char *land_of(const struct sr_state *st, int i, uint64_t k)
{
	size_t off;

	if (!st->reg)
		return slot_of(st, i, k);
	xfer_len(&st->sub[i], k, &off);
	return st->dst + off;
}

/*
 * One irecv of group g's step k: a buffer for each of its subs that has that step. A
 * registered sub waiting for the kernel is started and left out (net.cc:1534-1546); the
 * shim's kernel starts for every sub of the op at once, so then none is posted.
 */
static int post_group_recv(struct shim_world *w, struct sr_state *st, struct sr_group *g)
{
	void *data[FL_MAX_RECVS];
	size_t bytes[FL_MAX_RECVS], expect[FL_MAX_RECVS], off;
	int tags[FL_MAX_RECVS], n = 0;
	uint64_t k = g->recvs.posted;

	for (int i = g->first; i < g->first + g->n; i++) {
		const struct sr_sub *s = &st->sub[i];

		if (k >= s->shape.nsteps)
			continue;
		if (st->reg && st->kernel_wait > 0) {
			shim_fifo_restart(&g->recvs, n);
			continue;
		}
		data[n] = land_of(st, i, k);
		expect[n] = xfer_len(s, k, &off);
		bytes[n] = st->reg ? expect[n] : s->shape.recv_bytes;
		tags[n++] = st->link->recv_peer + s->tag;
	}
	if (!n)
		return FL_OK;
	return shim_fifo_recv(w, &g->recvs, n, data, bytes, expect, tags,
			      st->reg ? st->dst_mh : st->link->staging_mh);
}

/* Group g's next irecv, if its subs have room; *posted says whether the plugin took it. */
static int post_recv_one(struct shim_world *w, struct sr_state *st, struct sr_group *g,
			 int *posted)
{
	uint64_t before = g->recvs.posted;
	int rc;

	if (g->recvs.posted >= g->steps || shim_fifo_full(&g->recvs))
		return FL_OK;
	rc = post_group_recv(w, st, g);
	*posted |= !rc && g->recvs.posted != before;
	return rc;
}

/* The GPU copies each landed buffer of the group's oldest step out of the pool, then it is done. */
static int complete_recvs(struct shim_world *w, struct sr_state *st, struct sr_group *g)
{
	uint64_t k = g->recvs.done;
	int rc = shim_fifo_test(w, &g->recvs);

	if (rc || !shim_fifo_landed(&g->recvs))
		return rc;
	for (int i = g->first; !rc && !st->reg && i < g->first + g->n; i++) {
		const struct sr_sub *s = &st->sub[i];
		size_t off, len;

		if (k >= s->shape.nsteps)
			continue;
		len = xfer_len(s, k, &off);
		rc = shim_mem_copy_net(w, st->dst + off, slot_of(st, i, k), len);
	}
	return rc ? rc : shim_fifo_consume(w, &g->recvs);
}

/* What NCCL would group: subs sharing the receive comm, no more than the plugin takes at once. */
static int group_size(const struct shim_world *w)
{
	return w->props.max_recvs > 0 ? w->props.max_recvs : 1;
}

/* Subs share the comm only where NCCL shares it (nccl_rules.h); else each would have a
 * connection of its own, which the shim does not open: it runs the one sub. */
static int subs_of(const struct shim_world *w)
{
	return shim_rules_subs_share_comm(group_size(w)) ? w->recv_group : 1;
}

static void plan_init(struct shim_world *w, struct sr_state *st, struct shim_link *link,
		      size_t bytes)
{
	int per = group_size(w);

	st->reg = shim_rules_p2p_registered(&w->rules, w->mem.gdr, bytes);
	st->kernel_wait = st->reg ? shim_rules_reg_wait(&w->rules) : 0;
	st->nsubs = subs_of(w);
	st->nranks = w->nranks;
	st->link = link;
	st->depth = shim_rules_depth(st->nsubs, 1);
	st->slot_bytes = w->rules.p2p_chunk;
	for (int i = 0; i < st->nsubs; i++) {
		struct sr_sub *s = &st->sub[i];

		s->off = bytes * (size_t)i / (size_t)st->nsubs;
		s->bytes = bytes * (size_t)(i + 1) / (size_t)st->nsubs - s->off;
		s->tag = i * w->nranks;
		if (st->reg)
			shim_rules_p2p_reg(&w->rules, s->bytes, &s->shape);
		else
			shim_rules_p2p(&w->rules, s->bytes, &s->shape);
		shim_fifo_init(&s->sends, link, "sendrecv", 1);
		s->sends.depth = st->depth;
	}
	st->ngroups = (st->nsubs + per - 1) / per;
	for (int g = 0; g < st->ngroups; g++) {
		struct sr_group *grp = &st->group[g];

		grp->first = g * per;
		grp->n = st->nsubs - grp->first < per ? st->nsubs - grp->first : per;
		for (int i = grp->first; i < grp->first + grp->n; i++)
			if (st->sub[i].shape.nsteps > grp->steps)
				grp->steps = st->sub[i].shape.nsteps;
		shim_fifo_init(&grp->recvs, link, "sendrecv", 0);
		grp->recvs.depth = st->depth;
		grp->recvs.gdr_flush = w->gdr_flush;
	}
}

/* Transfers still to post or complete; a direction without a buffer has none. */
static int pending(const struct sr_state *st)
{
	for (int i = 0; st->src && i < st->nsubs; i++)
		if (st->sub[i].sends.done < st->sub[i].shape.nsteps)
			return 1;
	for (int g = 0; st->dst && g < st->ngroups; g++)
		if (st->group[g].recvs.done < st->group[g].steps)
			return 1;
	return 0;
}

/*
 * One pass, as one call of NCCL's recvProxyProgress and one of sendProxyProgress: an irecv per
 * group, or when none was posted the groups' oldest tested (net.cc:1609); each sub's next isend
 * or else its oldest tested.
 */
static int sr_pass(struct shim_world *w, struct sr_state *st)
{
	int rc = FL_OK, posted = 0;

	for (int g = 0; !rc && st->dst && g < st->ngroups; g++)
		rc = post_recv_one(w, st, &st->group[g], &posted);
	for (int g = 0; !rc && !posted && st->dst && g < st->ngroups; g++)
		if (shim_fifo_busy(&st->group[g].recvs))
			rc = complete_recvs(w, st, &st->group[g]);
	for (int i = 0; !rc && st->src && i < st->nsubs; i++)
		rc = send_turn(w, st, &st->sub[i]);
	if (st->kernel_wait > 0)
		st->kernel_wait--;
	return rc;
}

/* The registered receives' repeated starts, said once per op (NCCL_DEBUG=INFO). */
static void say_restarts(const struct sr_state *st)
{
	uint64_t n = 0;

	for (int g = 0; st->dst && g < st->ngroups; g++)
		n += st->group[g].recvs.restarts;
	if (n)
		SHIM_INFO(SHIM_LOG_NET, "sendrecv: registered receives from rank %d: %llu step "
			  "start(s) repeated while the kernel had not started (net.cc:1534-1546)",
			  st->link->recv_peer, (unsigned long long)n);
}

static int link_sendrecv(struct shim_world *w, struct shim_link *link,
			 const struct shim_buf *send, const struct shim_buf *recv, size_t bytes)
{
	struct sr_state st = { 0 };
	const struct shim_fifo *fifos[2 * FL_MAX_RECVS];
	struct shim_watch watch;
	int rc = FL_OK;

	st.src = send ? send->net : NULL;
	st.dst = recv ? recv->net : NULL;
	st.src_mh = send ? send->send_mh[0] : NULL;
	st.dst_mh = recv ? recv->recv_mh[0] : NULL;
	plan_init(w, &st, link, bytes);
	for (int i = 0; i < FL_MAX_RECVS; i++) {
		fifos[i] = st.src && i < st.nsubs ? &st.sub[i].sends : NULL;
		fifos[FL_MAX_RECVS + i] = st.dst && i < st.ngroups ? &st.group[i].recvs : NULL;
	}
	shim_watch_init(&watch);
	while (!rc && pending(&st)) {
		rc = sr_pass(w, &st);
		if (!rc)
			rc = shim_watch_pass_fifos(w, &watch, fifos, 2 * FL_MAX_RECVS);
	}
	if (!rc)
		say_restarts(&st);
	return shim_op_end(w, rc);
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
