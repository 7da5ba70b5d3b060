/*
 * Links: one per (rank, peer, direction, channel) of a context, created at the
 * first ProxyOp that uses it (warm-up) and attached to the hop of its rank pair.
 * With the net role loaded too, the link takes the node and device of both
 * ends from the net connection of the same (commHash, rank, peer, direction)
 * (stats/hop_names.h). Otherwise hops are named by rank: the peer's node is not
 * known here, `fabriclab report` names it from the peer's own report
 * ({commHash, rank, node, pid}).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "prof_internal.h"
#include "report/report.h"
#include "stats/hop.h"
#include "stats/hop_names.h"

#define FL_PROF_UNKNOWN_NODE "?"

static void rank_endpoint(struct fl_endpoint *ep, const char *node, int rank,
			  uint64_t comm_hash)
{
	memset(ep, 0, sizeof(*ep));
	snprintf(ep->node, sizeof(ep->node), "%s", node);
	snprintf(ep->dev_name, sizeof(ep->dev_name), "rank%d", rank);
	ep->dev = -1;
	ep->rank = rank;
	ep->comm_hash = comm_hash;
}

/* Trace ids of links: the upper half, so they never meet the net role's connection ids. */
#define FL_PROF_TRACE_ID_BASE 0x80000000u
static _Atomic uint32_t next_trace_id;

static void trace_up(struct fl_prof_link *l)
{
	l->trace = (struct fl_trace_conn){
		.id = FL_PROF_TRACE_ID_BASE | (atomic_fetch_add(&next_trace_id, 1) + 1),
		.send = l->is_send, .transport = FL_REPORT_NCCL_TRANSPORT, .self = &l->self,
		.peer = &l->peer_end, .stats = &l->stats, .profiler = 1,
	};
	fl_trace_conn_up(&l->trace, NULL);
}

static void attach(struct fl_prof_ctx *c, struct fl_prof_link *l)
{
	struct fl_endpoint self, peer;
	struct fl_hop_key key;
	enum fl_hop_view view = l->is_send ? FL_HOP_SEND : FL_HOP_RECV;
	uint64_t hash = __atomic_load_n(&c->comm_hash, __ATOMIC_RELAXED);

	if (fl_names_find(hash, l->rank, l->peer, l->is_send, l->channel, &self, &peer)) {
		rank_endpoint(&self, c->node, l->rank, hash);
		rank_endpoint(&peer, FL_PROF_UNKNOWN_NODE, l->peer, hash);
	}
	fl_hop_key_make(&key, view, &self, &peer);
	key.mode = FL_HOP_PROFILER;
	key.comm_hash = hash;
	fl_hop_key_ranks(&key, l->is_send ? l->rank : l->peer, l->is_send ? l->peer : l->rank);
	fl_hop_attach(&l->stats, &key, self.dev, l->is_send ? l->rank : l->peer,
		      l->is_send ? l->peer : l->rank);
	/* The trace names the link as the key does: the ranks of this communicator. */
	self.rank = l->rank;
	peer.rank = l->peer;
	self.comm_hash = peer.comm_hash = hash;
	l->self = self;
	l->peer_end = peer;
	trace_up(l);
}

/* Links are found through an open-addressing index, so 1024 peers cost no scan. */
static unsigned link_hash(int rank, int peer, int is_send, int channel, unsigned mask)
{
	uint64_t k = (uint64_t)(uint32_t)rank << 32 ^ (uint64_t)(uint32_t)peer << 9 ^
		     (uint64_t)(uint32_t)channel << 1 ^ (uint64_t)(is_send != 0);

	return (unsigned)((k * 0x9e3779b97f4a7c15ULL) >> 40) & mask;
}

int fl_prof_links_alloc(struct fl_prof_ctx *c, int max_links)
{
	unsigned slots = 2;

	while (slots < 2u * (unsigned)max_links)
		slots <<= 1;
	c->links = calloc((size_t)max_links, sizeof(*c->links));
	c->link_index = malloc(slots * sizeof(*c->link_index));
	if (!c->links || !c->link_index) {
		fl_prof_links_free(c);
		return -1;
	}
	memset(c->link_index, 0xff, slots * sizeof(*c->link_index));
	c->link_index_mask = slots - 1;
	c->max_links = max_links;
	return 0;
}

void fl_prof_links_free(struct fl_prof_ctx *c)
{
	for (int i = 0; c->links && i < c->nlinks; i++)
		free(c->links[i]);
	c->nlinks = 0;
	free(c->links);
	free(c->link_index);
	c->links = NULL;
	c->link_index = NULL;
}

/* Once per context: the ops past the cap are counted, and this says how to lift it. */
static void warn_cap(struct fl_prof_ctx *c)
{
	if (c->warned_links)
		return;
	c->warned_links = 1;
	FL_WARN("profiler: comm %016llx rank %d: more than %d links (rank, peer, direction, "
		"channel); the ops of further links are not measured and counted as dropped in the "
		"report. FABRICLAB_PROFILER_MAX_LINKS raises the limit (up to %d, about 40 KB each)",
		(unsigned long long)c->comm_hash, c->rank, c->max_links, FL_PROF_LINKS_LIMIT);
}

static struct fl_prof_link *link_new(struct fl_prof_ctx *c, int rank, int peer, int is_send,
				     int channel, int relayed)
{
	struct fl_prof_link *l;

	if (c->nlinks == c->max_links) {
		warn_cap(c);
		return NULL;
	}
	l = malloc(sizeof(*l));
	if (!l)
		return NULL;
	l->rank = rank;
	l->peer = peer;
	l->is_send = is_send;
	l->channel = channel;
	l->relayed = relayed;
	memset(l->free_slots, 0xff, sizeof(l->free_slots));
	fl_stats_init(&l->stats);
	attach(c, l);
	c->links[c->nlinks++] = l;
	return l;
}

struct fl_prof_link *fl_prof_link_get(struct fl_prof_ctx *c, int rank, int peer, int is_send,
				      int channel, int relayed)
{
	unsigned i = link_hash(rank, peer, is_send, channel, c->link_index_mask);
	struct fl_prof_link *l;

	for (;; i = (i + 1) & c->link_index_mask) {
		int32_t at = c->link_index[i];

		if (at < 0)
			break;
		l = c->links[at];
		if (l->peer == peer && l->channel == channel && l->is_send == is_send &&
		    l->rank == rank)
			return l;
	}
	/* The index has twice the slots of the cap: an empty one is always found. */
	l = link_new(c, rank, peer, is_send, channel, relayed);
	if (l)
		c->link_index[i] = c->nlinks - 1;
	return l;
}

int fl_prof_slot_take(struct fl_prof_link *l)
{
	for (unsigned w = 0; w < FL_PROF_SLOT_WORDS; w++) {
		if (l->free_slots[w]) {
			unsigned bit = (unsigned)__builtin_ctzll(l->free_slots[w]);

			l->free_slots[w] &= ~(1ULL << bit);
			return (int)(w * 64 + bit);
		}
	}
	return -1;
}

void fl_prof_slot_give(struct fl_prof_link *l, unsigned slot)
{
	fl_stats_release(&l->stats, slot);
	l->free_slots[slot / 64] |= 1ULL << (slot % 64);
}

/*
 * The figures stay in the hop table; the links' memory goes with their
 * context, after its grace (prof_grave.c): a step that a late event stops
 * still writes into a link of ours, whose figures no longer count.
 */
void fl_prof_links_close(struct fl_prof_ctx *c)
{
	for (int i = 0; i < c->nlinks; i++) {
		fl_trace_conn_down(&c->links[i]->trace);
		fl_hop_detach(&c->links[i]->stats);
	}
}
