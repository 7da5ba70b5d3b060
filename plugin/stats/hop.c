#include "hop.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"

struct fl_hop {
	struct fl_hop_key key;
	int src_rank, dst_rank;
	int local_dev;
	int connections;
	int mem_types;    /* of detached connections */
	int retired_tag;  /* a tag rank a detached connection saw, -1 */
	struct fl_conn_stats *members;
	struct fl_union wire, active;
	/*
	 * 0 while every member ever attached keeps its active runs in its wire ring
	 * (active_is_wire): the active union is the wire union, kept once, and `active` is
	 * unused. The first member that keeps them apart makes it a copy of the wire union.
	 */
	int active_apart;
	struct fl_conn_totals retired;
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fl_hop *table[FL_MAX_HOPS];
static size_t nhops;
static struct fl_hop other_hops[2];
static int other_used[2];
static int warned_full;
static int torn_down; /* the plugin is going away: connections still open forget their hop */
static struct fl_run_scratch scratch; /* what the rings held, on its way into a union */
static struct fl_run_scratch scratch_active; /* the active runs of wire rings that carry both */

static void copy_name(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

void fl_hop_key_make(struct fl_hop_key *key, enum fl_hop_view view,
		     const struct fl_endpoint *self, const struct fl_endpoint *peer)
{
	const struct fl_endpoint *src = view == FL_HOP_SEND ? self : peer;
	const struct fl_endpoint *dst = view == FL_HOP_SEND ? peer : self;

	/* Zeroed first: keys are compared whole. */
	memset(key, 0, sizeof(*key));
	copy_name(key->src_node, sizeof(key->src_node), src->node);
	copy_name(key->src_dev, sizeof(key->src_dev), src->dev_name);
	copy_name(key->dst_node, sizeof(key->dst_node), dst->node);
	copy_name(key->dst_dev, sizeof(key->dst_dev), dst->dev_name);
	key->view = view;
}

void fl_hop_key_ranks(struct fl_hop_key *key, int src_rank, int dst_rank)
{
	key->src_rank = src_rank;
	key->dst_rank = dst_rank;
}

static void hop_init(struct fl_hop *h, const struct fl_hop_key *key, int local_dev)
{
	memset(h, 0, sizeof(*h));
	h->key = *key;
	h->src_rank = h->dst_rank = h->retired_tag = -1;
	h->local_dev = local_dev;
	fl_union_init(&h->wire);
	fl_union_init(&h->active);
}

static struct fl_hop *other_hop(int view, int local_dev)
{
	struct fl_hop *h = &other_hops[view == FL_HOP_RECV];
	struct fl_hop_key key;

	if (!other_used[view == FL_HOP_RECV]) {
		memset(&key, 0, sizeof(key));
		strcpy(key.src_node, FL_HOP_OTHER);
		strcpy(key.src_dev, FL_HOP_OTHER);
		strcpy(key.dst_node, FL_HOP_OTHER);
		strcpy(key.dst_dev, FL_HOP_OTHER);
		key.view = view;
		hop_init(h, &key, local_dev);
		other_used[view == FL_HOP_RECV] = 1;
	}
	if (!warned_full) {
		warned_full = 1;
		FL_WARN("more than %d hops: further connections are counted together as one "
			"hop %s -> %s per direction", FL_MAX_HOPS, FL_HOP_OTHER, FL_HOP_OTHER);
	}
	return h;
}

static struct fl_hop *find_or_add(const struct fl_hop_key *key, int local_dev)
{
	struct fl_hop *h;

	for (size_t i = 0; i < nhops; i++)
		if (!memcmp(&table[i]->key, key, sizeof(*key)))
			return table[i];
	if (nhops == FL_MAX_HOPS)
		return other_hop(key->view, local_dev);
	h = malloc(sizeof(*h));
	if (!h)
		return other_hop(key->view, local_dev);
	hop_init(h, key, local_dev);
	table[nhops++] = h;
	return h;
}

/*
 * A member that keeps its own active runs joins: from now on the active union is kept apart,
 * starting from what the wire union holds (every run so far was both).
 */
static void keep_active_apart(struct fl_hop *h)
{
	fl_union_copy(&h->active, &h->wire);
	h->active_apart = 1;
}

void fl_hop_attach(struct fl_conn_stats *s, const struct fl_hop_key *key, int local_dev,
		   int src_rank, int dst_rank)
{
	struct fl_hop *h;

	pthread_mutex_lock(&table_lock);
	if (torn_down) { /* unloading: nothing would report or free a new hop */
		s->hop = NULL;
		pthread_mutex_unlock(&table_lock);
		return;
	}
	h = find_or_add(key, local_dev);
	if (h->src_rank < 0)
		h->src_rank = src_rank;
	if (h->dst_rank < 0)
		h->dst_rank = dst_rank;
	if (!s->active_is_wire && !h->active_apart)
		keep_active_apart(h);
	h->connections++;
	s->hop = h;
	s->hop_prev = NULL;
	s->hop_next = h->members;
	if (h->members)
		h->members->hop_prev = s;
	h->members = s;
	pthread_mutex_unlock(&table_lock);
}

/*
 * One member's rings into the scratches, the ring words read returned. A member whose wire
 * ring carries its active runs too gives them to the active union only when that is kept
 * apart (else the wire union is both).
 */
static size_t take_member(struct fl_hop *h, struct fl_conn_stats *m)
{
	size_t wire, active;

	if (m->active_is_wire)
		return h->active_apart ? fl_union_take_both(&h->wire, &scratch, &h->active,
							    &scratch_active, &m->wire)
				       : fl_union_take(&h->wire, &scratch, &m->wire);
	wire = fl_union_take(&h->wire, &scratch, &m->wire);
	active = fl_union_take(&h->active, &scratch_active, &m->active);
	return wire > active ? wire : active;
}

static void settle_hop(struct fl_hop *h, uint64_t floor)
{
	fl_union_settle(&h->wire, &scratch, floor);
	if (h->active_apart)
		fl_union_settle(&h->active, &scratch_active, floor);
}

void fl_hop_detach(struct fl_conn_stats *s)
{
	struct fl_hop *h;
	int tag;

	pthread_mutex_lock(&table_lock);
	h = s->hop;
	if (!h || torn_down) {
		s->hop = NULL;
		pthread_mutex_unlock(&table_lock);
		return;
	}
	/* Merged now, not folded: only a drain knows the watermark. */
	take_member(h, s);
	settle_hop(h, 0);
	fl_stats_sum(s, &h->retired);
	fl_stats_abandon(s, &h->retired); /* closed with requests out: a stopped job */
	h->mem_types |= atomic_load_explicit(&s->mem_types, memory_order_relaxed);
	tag = atomic_load_explicit(&s->tag_rank, memory_order_relaxed);
	if (h->retired_tag < 0)
		h->retired_tag = tag;
	if (s->hop_prev)
		s->hop_prev->hop_next = s->hop_next;
	else
		h->members = s->hop_next;
	if (s->hop_next)
		s->hop_next->hop_prev = s->hop_prev;
	s->hop = NULL;
	s->hop_prev = s->hop_next = NULL;
	pthread_mutex_unlock(&table_lock);
}

/*
 * The watermark: no member can still report anything that starts before the
 * post time of its oldest outstanding request (fl_stats_complete clamps to it),
 * and an idle member nothing before now. Read before the runs are taken.
 */
static size_t drain_hop(struct fl_hop *h, uint64_t now)
{
	uint64_t floor = now;
	size_t most = 0;

	for (struct fl_conn_stats *m = h->members; m; m = m->hop_next) {
		uint64_t oldest = fl_stats_oldest_post(m, now);

		if (oldest < floor)
			floor = oldest;
	}
	for (struct fl_conn_stats *m = h->members; m; m = m->hop_next) {
		size_t n = take_member(h, m);

		most = n > most ? n : most;
	}
	settle_hop(h, floor);
	return most;
}

static size_t drain_all(void)
{
	uint64_t now = fl_clock_ns();
	size_t most = 0;

	for (size_t i = 0; i < nhops + 2; i++) {
		struct fl_hop *h = i < nhops ? table[i] : &other_hops[i - nhops];
		size_t n;

		if (i >= nhops && !other_used[i - nhops])
			continue;
		n = drain_hop(h, now);
		if (n > most)
			most = n;
	}
	return most;
}

size_t fl_hops_drain(void)
{
	size_t most;

	pthread_mutex_lock(&table_lock);
	most = drain_all();
	pthread_mutex_unlock(&table_lock);
	return most;
}

static void snapshot_hop(const struct fl_hop *h, struct fl_hop_snapshot *out)
{
	const struct fl_union *active = h->active_apart ? &h->active : &h->wire;
	int tag = h->retired_tag;

	memset(out, 0, sizeof(*out));
	out->key = h->key;
	out->local_dev = h->local_dev;
	out->connections = h->connections;
	out->mem_types = h->mem_types;
	out->t = h->retired;
	for (const struct fl_conn_stats *m = h->members; m; m = m->hop_next) {
		fl_stats_sum(m, &out->t);
		fl_stats_outstanding(m, &out->t);
		out->mem_types |= atomic_load_explicit(&m->mem_types, memory_order_relaxed);
		if (tag < 0)
			tag = atomic_load_explicit(&m->tag_rank, memory_order_relaxed);
	}
	out->wire_ns = fl_union_ns(&h->wire);
	out->wire_runs = fl_union_runs(&h->wire);
	out->active_ns = fl_union_ns(active);
	out->t.wire_bridged_ns += h->wire.bridged_ns;
	out->t.active_bridged_ns += active->bridged_ns;
	out->t.union_bridges += h->wire.bridges + (h->active_apart ? h->active.bridges : 0);
	/* NCCL's tags carry the sender's rank in both directions. */
	out->src_rank = h->src_rank >= 0 ? h->src_rank : tag;
	out->dst_rank = h->dst_rank;
}

int fl_hops_snapshot(struct fl_hop_snapshot **out)
{
	struct fl_hop_snapshot *snaps;
	int n = 0;

	pthread_mutex_lock(&table_lock);
	drain_all();
	snaps = calloc(nhops + 2, sizeof(*snaps));
	if (!snaps) {
		pthread_mutex_unlock(&table_lock);
		return -1;
	}
	for (size_t i = 0; i < nhops; i++)
		snapshot_hop(table[i], &snaps[n++]);
	for (int v = 0; v < 2; v++)
		if (other_used[v])
			snapshot_hop(&other_hops[v], &snaps[n++]);
	pthread_mutex_unlock(&table_lock);
	*out = snaps;
	return n;
}

static void free_all(void)
{
	for (size_t i = 0; i < nhops; i++) {
		fl_union_free(&table[i]->wire);
		fl_union_free(&table[i]->active);
		free(table[i]);
		table[i] = NULL;
	}
	nhops = 0;
	for (int v = 0; v < 2; v++) {
		if (other_used[v]) {
			fl_union_free(&other_hops[v].wire);
			fl_union_free(&other_hops[v].active);
		}
		other_used[v] = 0;
	}
	warned_full = 0;
	fl_run_scratch_free(&scratch);
	fl_run_scratch_free(&scratch_active);
}

void fl_hops_reset(void)
{
	pthread_mutex_lock(&table_lock);
	free_all();
	pthread_mutex_unlock(&table_lock);
}

void fl_hops_teardown(void)
{
	pthread_mutex_lock(&table_lock);
	/* Members left attached keep pointers into the table: cut them off first. */
	for (size_t i = 0; i < nhops + 2; i++) {
		struct fl_hop *h = i < nhops ? table[i] : &other_hops[i - nhops];

		if (i >= nhops && !other_used[i - nhops])
			continue;
		for (struct fl_conn_stats *m = h->members; m; m = m->hop_next)
			m->hop = NULL;
	}
	free_all();
	torn_down = 1;
	pthread_mutex_unlock(&table_lock);
}
