/*
 * The join: each hop is seen by its sender (send view) and its receiver (recv
 * view), in two different files. Both are kept; the figures the verdict
 * judges take each number from the end that measures it best.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "plugin/stats/histogram.h"
#include "plugin/verdict/verdict_topology.h"
#include "report.h"
#include "report_hop_order.h"
#include "report_names.h"
#include "tools/common/tool_hash.h"

struct report_view report_no_view;

struct hop_index {
	size_t *slots; /* hop index + 1; 0 is empty */
	size_t nslots;
	struct report_names names; /* the hops' names, each once */
};

static uint64_t hash_key(const struct report_view_key *k)
{
	const char *parts[] = { k->src_node, k->src_dev, k->dst_node, k->dst_dev };
	uint64_t h = TOOL_FNV_OFFSET ^ k->comm_hash;

	for (size_t p = 0; p < 4; p++) {
		h = tool_fnv1a(h, parts[p]);
		h = (h ^ 0xff) * TOOL_FNV_PRIME; /* keeps "ab"+"c" apart from "a"+"bc" */
	}
	return tool_hash_mix(h);
}

static bool same_key(const struct report_hop_key *a, const struct report_view_key *b)
{
	return !strcmp(a->src_node, b->src_node) && !strcmp(a->src_dev, b->src_dev) &&
	       !strcmp(a->dst_node, b->dst_node) && !strcmp(a->dst_dev, b->dst_dev) &&
	       a->comm_hash == b->comm_hash;
}

/* A known rank agrees with one that is the same or unknown. */
static bool rank_agrees(long have, long seen)
{
	return have < 0 || seen < 0 || have == seen;
}

static bool same_process_pair(const struct report_hop *h, const struct report_file_view *fv)
{
	return rank_agrees(h->src_rank, fv->v.src_rank) && rank_agrees(h->dst_rank, fv->v.dst_rank);
}

/* Learns the ranks a view knows and the hop did not. */
static void adopt_ranks(struct report_hop *h, const struct report_file_view *fv)
{
	if (h->src_rank < 0)
		h->src_rank = fv->v.src_rank;
	if (h->dst_rank < 0)
		h->dst_rank = fv->v.dst_rank;
}

/*
 * Profiler-mode views (transport "nccl") never join net-mode ones: with both
 * roles loaded, the net role names them alike, and a trace carries no commHash
 * to keep them apart.
 */
static bool same_mode(const struct report_hop *h, const struct report_file_view *fv)
{
	return !strcmp(h->transport, "nccl") == !strcmp(fv->transport, "nccl");
}

/* The view's names as the set keeps them; -1 out of memory. */
static int intern_key(struct report_set *set, struct hop_index *ix, struct report_hop_key *k,
		      const struct report_view_key *v)
{
	k->src_node = report_names_intern(&ix->names, &set->sizes, v->src_node);
	k->src_dev = report_names_intern(&ix->names, &set->sizes, v->src_dev);
	k->dst_node = report_names_intern(&ix->names, &set->sizes, v->dst_node);
	k->dst_dev = report_names_intern(&ix->names, &set->sizes, v->dst_dev);
	k->comm_hash = v->comm_hash;
	return k->src_node && k->src_dev && k->dst_node && k->dst_dev ? 0 : -1;
}

/*
 * The hop with this key, mode and agreeing ranks, added when new (NULL out of
 * memory). The same names with other ranks are another process pair of the
 * same nodes: a hop of its own.
 */
static struct report_hop *find_or_add(struct report_set *set, struct hop_index *ix,
				      const struct report_file_view *fv)
{
	size_t s = hash_key(&fv->key) & (ix->nslots - 1);
	struct report_hop *h;

	while (ix->slots[s]) {
		h = &set->hops[ix->slots[s] - 1];
		if (same_key(&h->key, &fv->key) && same_mode(h, fv) && same_process_pair(h, fv)) {
			adopt_ranks(h, fv);
			return h;
		}
		s = (s + 1) & (ix->nslots - 1);
	}
	h = &set->hops[set->nhops];
	memset(h, 0, sizeof(*h));
	if (intern_key(set, ix, &h->key, &fv->key))
		return NULL;
	set->nhops++;
	h->src_rank = fv->v.src_rank;
	h->dst_rank = fv->v.dst_rank;
	memcpy(h->transport, fv->transport, sizeof(h->transport));
	h->send = h->recv = &report_no_view;
	ix->slots[s] = set->nhops;
	return h;
}

static double max_of(double a, double b)
{
	return a > b ? a : b;
}

/*
 * Two processes wrote the same view of one hop without ranks to tell them
 * apart. The reports do not carry their wire intervals, only each union's
 * length, so the union of both is taken at its upper bound, the sum: the rate
 * is then the time-weighted mean of the two, never more bytes per second than
 * the faster view timed (adding bytes over the longer time alone read 146x the
 * line rate when little of them was timed). Waits and active times add up so
 * that their ratio stays a share of time; the percentiles are approximated by
 * the worse of the two.
 */
static int combine(struct report_arena *sizes, struct report_view *into,
		   const struct report_view *v)
{
	uint64_t a[REPORT_SIZE_BUCKETS], b[REPORT_SIZE_BUCKETS];

	into->processes += v->processes;
	into->connections += v->connections;
	into->bytes += v->bytes;
	into->wire_bytes += v->wire_bytes;
	into->messages += v->messages;
	into->unsized_messages += v->unsized_messages;
	into->wire_seconds += v->wire_seconds;
	into->wire_runs += v->wire_runs;
	into->active_seconds += v->active_seconds;
	into->wire_gbs = into->wire_seconds > 0
				 ? (double)into->wire_bytes / into->wire_seconds / 1e9
				 : 0;
	into->peer_wait_seconds += v->peer_wait_seconds;
	into->gpu_wait_seconds += v->gpu_wait_seconds;
	into->outstanding_seconds += v->outstanding_seconds;
	into->p50_us = max_of(into->p50_us, v->p50_us);
	into->p99_us = max_of(into->p99_us, v->p99_us);
	into->max_us = max_of(into->max_us, v->max_us);
	into->alone += v->alone;
	into->queued += v->queued;
	into->alone_p50_us = max_of(into->alone_p50_us, v->alone_p50_us);
	into->queued_p50_us = max_of(into->queued_p50_us, v->queued_p50_us);
	into->mem_types |= v->mem_types;
	into->gdr |= v->gdr;
	into->dev_gdr_capable |= v->dev_gdr_capable;
	into->rdma_port_active |= v->rdma_port_active;
	if (!v->size_mask)
		return 0;
	report_sizes_get(into, a);
	report_sizes_get(v, b);
	for (size_t k = 0; k < REPORT_SIZE_BUCKETS; k++)
		a[k] += b[k];
	return report_sizes_store(sizes, into, a) ? fl_fail(FL_ERR_SYSTEM, "out of memory") : 0;
}

/*
 * A process holds each view of a hop once (the plugin keys its hops by names,
 * view, mode, communicator and ranks): the same view twice in one file is a
 * duplicated entry, refused by name rather than silently added up.
 */
static int add_view(struct report_set *set, struct report_hop *h,
		    const struct report_file_view *fv, int input, size_t index)
{
	struct report_view **at = fv->is_send ? &h->send : &h->recv, *slot = *at;

	if (slot->present && slot->last_input == input)
		return fl_fail(FL_ERR_USAGE, "%s: hops[%zu] repeats hops[%zu] (%s/%s -> %s/%s, %s "
			       "view, ranks %ld -> %ld): a report holds each view of a hop once",
			       set->files[input].path, index, slot->last_index, fv->key.src_node,
			       fv->key.src_dev, fv->key.dst_node, fv->key.dst_dev,
			       fv->is_send ? "send" : "recv", fv->v.src_rank, fv->v.dst_rank);
	if (slot->present) {
		int err = combine(&set->sizes, slot, &fv->v);

		if (err)
			return err;
	} else {
		*at = slot = &set->views[set->nviews++]; /* report_no_view stays as it is */
		*slot = fv->v;
		slot->input = input;
	}
	slot->last_input = input;
	slot->last_index = index;
	return 0;
}

/* A better file of the same process: the final one, else the newer snapshot. */
static bool supersedes(const struct report_file *a, const struct report_file *b)
{
	if (a->final != b->final)
		return a->final;
	return a->written_unix >= b->written_unix;
}

static int cmp_process(const void *pa, const void *pb, void *arg)
{
	const struct report_file *files = arg;
	const struct report_file *a = &files[*(const size_t *)pa], *b = &files[*(const size_t *)pb];
	int c = strcmp(a->node, b->node);

	if (c)
		return c;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* One file per process: a snapshot left next to its final report would count twice. */
static int drop_duplicates(struct report_set *set)
{
	size_t *order = malloc((set->nfiles + 1) * sizeof(*order));

	if (!order)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	for (size_t i = 0; i < set->nfiles; i++)
		order[i] = i;
	qsort_r(order, set->nfiles, sizeof(*order), cmp_process, set->files);
	for (size_t i = 1; i < set->nfiles; i++) {
		size_t a = order[i - 1], b = order[i];

		if (cmp_process(&a, &b, set->files))
			continue;
		if (supersedes(&set->files[b], &set->files[a])) {
			set->files[a].superseded_by = (long)b;
		} else {
			set->files[b].superseded_by = (long)a;
			order[i] = a; /* the survivor meets the next one */
		}
	}
	free(order);
	return 0;
}

static int join_views(struct report_set *set)
{
	size_t views = 0;
	struct hop_index ix = { NULL, 16, { NULL, 0, 0 } };
	int err = 0;

	for (size_t f = 0; f < set->nfiles; f++)
		views += set->files[f].nviews;
	while (ix.nslots < 2 * views)
		ix.nslots *= 2;
	ix.slots = calloc(ix.nslots, sizeof(*ix.slots));
	set->hops = malloc((views + 1) * sizeof(*set->hops));
	/* each file view joins a view or starts one: views[] never moves, its hops point in */
	set->views = malloc((views + 1) * sizeof(*set->views));
	if (!ix.slots || !set->hops || !set->views) {
		free(ix.slots);
		return fl_fail(FL_ERR_SYSTEM, "out of memory joining %zu hop views", views);
	}
	for (size_t f = 0; !err && f < set->nfiles; f++) {
		const struct report_file *file = &set->files[f];

		for (size_t i = 0; !err && file->superseded_by < 0 && i < file->nviews; i++) {
			struct report_hop *h = find_or_add(set, &ix, &file->views[i]);

			err = h ? add_view(set, h, &file->views[i], (int)f, i)
				: fl_fail(FL_ERR_SYSTEM, "out of memory joining %zu hop views", views);
		}
		/* in the hops now: what they took goes back before the next file's are copied */
		free(set->files[f].views);
		set->files[f].views = NULL;
		set->files[f].nviews = 0;
	}
	free(ix.slots);
	report_names_free(&ix.names);
	return err;
}

/*
 * The hops in report_hop_order's order, moved in place along the
 * permutation's cycles: qsort on the hops themselves takes a copy of
 * them all. *nodes: the distinct node names, counted on the way.
 */
static int sort_hops(struct report_set *set, size_t *nodes)
{
	size_t *order = malloc((set->nhops + 1) * sizeof(*order));
	int err = order ? report_hop_order(set->hops, set->nhops, order, nodes)
			: fl_fail(FL_ERR_SYSTEM, "out of memory sorting %zu hops", set->nhops);

	for (size_t i = 0; !err && i < set->nhops; i++) {
		struct report_hop first;
		size_t j = i;

		if (order[i] == i)
			continue;
		first = set->hops[i];
		for (;;) { /* position j takes the hop at order[j] */
			size_t k = order[j];

			order[j] = j;
			if (k == i) {
				set->hops[j] = first;
				break;
			}
			set->hops[j] = set->hops[k];
			j = k;
		}
	}
	free(order);
	return err;
}

/*
 * A receiving end told no size of any of its receives (an ext inner whose test
 * writes none, as google fastsocket's; a receive done early under NCCL's
 * optional-completion hint): it counted them as 0 bytes, timed. The hop's
 * bytes are the sender's, so its receive view takes them, as bytes timed over
 * its own wire time (docs/report-format.md, ext). A view that told some sizes
 * keeps what it was told: its untold receives were not timed either.
 */
static void take_sender_bytes(struct report_set *set)
{
	for (size_t i = 0; i < set->nhops; i++) {
		struct report_view *r = set->hops[i].recv;
		const struct report_view *s = set->hops[i].send;

		if (!r->present || !s->present || !r->unsized_messages ||
		    r->unsized_messages < r->messages)
			continue;
		r->bytes = r->wire_bytes = s->bytes;
		r->wire_gbs = r->wire_seconds > 0 ? (double)r->bytes / r->wire_seconds / 1e9 : 0;
	}
}

/* The hops array was sized for every view joining none: what the joins left goes back. */
static void fit_hops(struct report_set *set)
{
	struct report_hop *fit = realloc(set->hops, (set->nhops + 1) * sizeof(*set->hops));

	if (fit)
		set->hops = fit;
}

bool report_has_wire(const struct report_view *v)
{
	return v->present && v->wire_seconds > 0 && v->wire_gbs > 0;
}

const struct report_view *report_wire_view(const struct report_hop *h)
{
	/*
	 * Sockets: receiver's first byte -> last byte; verbs: sender's post -> completion;
	 * NCCL's own transports (profiler mode): the sender's SendWait -> done.
	 */
	bool sockets = !strcmp(h->transport, "socket");
	const struct report_view *best = sockets ? h->recv : h->send;
	const struct report_view *other = sockets ? h->send : h->recv;

	/* An end that did not time the wire (a socket sender) gives way to one that did. */
	if (!report_has_wire(best) && report_has_wire(other))
		return other;
	/*
	 * Both ends of a socket hop timed it (paced, or helper streams): each misses wire
	 * time the other sees (a late receiver finds bytes already buffered and reads them
	 * at its own pace, hiding a throttled sender; a sender's last bytes sit in its socket
	 * buffer, hiding a throttled receiver), so the slower view is the closer one.
	 */
	if (sockets && report_has_wire(best) && report_has_wire(other) &&
	    other->wire_gbs < best->wire_gbs)
		return other;
	return best->present ? best : other;
}

const char *report_hop_mode(const struct report_hop *h)
{
	bool prof = (h->send->present && h->send->profiler) || (h->recv->present && h->recv->profiler);
	bool net = (h->send->present && !h->send->profiler) || (h->recv->present && !h->recv->profiler);

	return prof && net ? "net+profiler" : prof ? "profiler" : "net";
}

/*
 * An ext hop (another plugin underneath) whose two ends both reported and
 * neither saw the peer get ready: each end shows only posted -> done, so its
 * busy time is wire time plus its wait for the other end (docs/report-format.md).
 */
bool report_ext_both_ends(const struct report_hop *h)
{
	return !strcmp(h->transport, "ext") && report_has_wire(h->send) &&
	       report_has_wire(h->recv) && h->send->peer_wait_seconds <= 0.0 &&
	       h->recv->peer_wait_seconds <= 0.0;
}

const char *report_wire_view_name(const struct report_hop *h)
{
	if (report_ext_both_ends(h))
		return "send+recv";
	return report_wire_view(h) == h->send ? "send" : "recv";
}

/*
 * The best wire time those calls allow: the end that waited less for the other
 * (the shorter busy time), but no less than the bytes take at the line rate (a
 * late receiver finds its bytes already buffered). The receiver's wait for the
 * sender is then what its busy time holds beyond that: what tells a straggler,
 * which never waits, from the peers that wait on it.
 */
static void ext_estimates(const struct report_hop *h, struct fl_hop_figures *f)
{
	double s = h->send->wire_seconds, r = h->recv->wire_seconds;
	double wire = s < r ? s : r;
	double at_line = f->line_rate_gbs > 0 ? (double)f->bytes / (f->line_rate_gbs * 1e9) : 0;

	if (wire < at_line)
		wire = at_line;
	f->wire_seconds = wire;
	f->wire_runs = 0; /* an estimate: no stretches of its own */
	f->wire_gbs = (double)f->bytes / wire / 1e9;
	f->peer_wait_seconds = h->recv->active_seconds > wire ? h->recv->active_seconds - wire : 0;
}

static double line_rate(const struct report_hop *h)
{
	double s = h->send->present ? h->send->line_rate_gbs : 0;
	double r = h->recv->present ? h->recv->line_rate_gbs : 0;

	/* The slower end's nominal speed bounds the hop. */
	if (s > 0 && r > 0)
		return s < r ? s : r;
	return s > 0 ? s : r;
}

/*
 * GDR of the hop as a whole: it only counts as used when every end that
 * reported registrations used it, and it counts as possible when an end that
 * did not use it has a device that could.
 */
static void join_gdr(const struct report_hop *h, struct fl_hop_figures *f)
{
	const struct report_view *views[] = { h->send, h->recv };
	int host = 0, gdr = 0;
	bool all_gdr = true, capable = false, capable_unused = false;

	for (size_t i = 0; i < 2; i++) {
		const struct report_view *v = views[i];
		bool uses = v->mem_types & (FL_PTR_CUDA | FL_PTR_DMABUF);

		if (!v->present || !v->mem_types)
			continue;
		host |= v->mem_types & FL_PTR_HOST;
		gdr |= v->mem_types & (FL_PTR_CUDA | FL_PTR_DMABUF);
		all_gdr &= uses;
		capable |= v->dev_gdr_capable;
		capable_unused |= v->dev_gdr_capable && !uses;
	}
	f->mem_types = host | (all_gdr ? gdr : 0);
	f->gdr_capable = all_gdr ? capable : capable_unused;
	f->src_mem_types = h->send->present ? h->send->mem_types : 0;
	f->dst_mem_types = h->recv->present ? h->recv->mem_types : 0;
}

/* A view's size buckets hold [2^b, 2^(b+1)); the plugin's bucket b + 1 holds the same. */
static uint64_t typical_request(const struct report_view *v)
{
	uint64_t counts[FL_SIZE_BUCKETS] = { 0 }, sizes[REPORT_SIZE_BUCKETS];

	report_sizes_get(v, sizes);
	for (size_t b = 0; b + 1 < FL_SIZE_BUCKETS && b < REPORT_SIZE_BUCKETS; b++)
		counts[b + 1] = sizes[b];
	return fl_size_median_byte(counts);
}

/* A name read into a field of this size (report_view_key), into a zeroed one as long. */
static void copy_name(char *to, size_t size, const char *name)
{
	size_t len = strnlen(name, size - 1);

	memcpy(to, name, len);
	to[len] = '\0';
}

static void to_figures(const struct report_hop *h, struct fl_hop_figures *f)
{
	const struct report_view *wire = report_wire_view(h);
	const struct report_view *counts = h->send->present ? h->send : h->recv;
	/*
	 * The receiver's waits come from the receiver alone: where its report is
	 * missing they are unknown (0), never the sender's figures under its name,
	 * so a missing report is missing evidence, not a straggler.
	 */
	static const struct report_view none;
	const struct report_view *waits = h->recv->present ? h->recv : &none;

	memset(f, 0, sizeof(*f));
	copy_name(f->src_node, sizeof(f->src_node), h->key.src_node);
	copy_name(f->src_dev, sizeof(f->src_dev), h->key.src_dev);
	copy_name(f->dst_node, sizeof(f->dst_node), h->key.dst_node);
	copy_name(f->dst_dev, sizeof(f->dst_dev), h->key.dst_dev);
	memcpy(f->transport, h->transport, sizeof(f->transport));
	memcpy(f->link_layer, counts->link_layer[0] ? counts->link_layer : waits->link_layer,
	       sizeof(f->link_layer));
	f->line_rate_gbs = line_rate(h);
	f->bytes = counts->bytes;
	f->messages = counts->messages;
	f->typical_request = typical_request(counts);
	f->wire_gbs = wire->wire_gbs;
	f->wire_seconds = wire->wire_seconds;
	f->wire_runs = wire->wire_runs;
	f->wire_p50_us = wire->p50_us;
	f->wire_p99_us = wire->p99_us;
	f->wire_alone = (uint64_t)wire->alone;
	f->wire_queued = (uint64_t)wire->queued;
	f->alone_p50_us = wire->alone_p50_us;
	f->queued_p50_us = wire->queued_p50_us;
	f->peer_wait_seconds = waits->peer_wait_seconds;
	f->outstanding_seconds = waits->outstanding_seconds;
	f->active_seconds = waits->active_seconds;
	if (h->send->present) {
		f->send_wait_seconds = h->send->peer_wait_seconds;
		f->send_outstanding_seconds = h->send->outstanding_seconds;
	}
	if (report_ext_both_ends(h))
		ext_estimates(h, f);
	report_rdma_figures(h, f);
	join_gdr(h, f);
}

/* Net-mode and profiler-mode hops time different things: each kind is judged on its own. */
static int judge(struct report_set *set, const struct fl_verdict_params *params)
{
	int *group = calloc(set->nhops + 1, sizeof(*group));

	if (!group)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	for (size_t i = 0; i < set->nhops; i++) {
		to_figures(&set->hops[i], &set->figures[i]);
		group[i] = strcmp(report_hop_mode(&set->hops[i]), "net") != 0;
	}
	fl_verdict_compute_groups(set->figures, group, set->nhops, params, &set->verdict);
	free(group);
	return 0;
}

int report_judge(struct report_set *set, const struct fl_verdict_params *params)
{
	return judge(set, params);
}

int report_merge(struct report_set *set, const struct fl_verdict_params *params)
{
	size_t nodes = 0;
	int err = drop_duplicates(set);

	err = err ? err : report_name_ranks(set);
	err = err ? err : join_views(set);
	if (!err) {
		fit_hops(set);
		take_sender_bytes(set);
	}
	err = err ? err : sort_hops(set, &nodes);
	if (err)
		return err;
	set->figures = calloc(set->nhops + 1, sizeof(*set->figures));
	if (!set->figures)
		return fl_fail(FL_ERR_SYSTEM, "out of memory");
	err = judge(set, params);
	if (err)
		return err;
	if (set->verdict.hop >= 0 && !strcmp(set->hops[set->verdict.hop].transport, "socket") &&
	    report_wire_view(&set->hops[set->verdict.hop]) == set->hops[set->verdict.hop].send)
		fl_verdict_note_sender_view(&set->verdict);
	set->ncommands = fl_verdict_commands(&set->verdict, set->figures, set->nhops, set->commands,
					     sizeof(set->commands));
	set->nodes = nodes;
	err = report_find_missing(set);
	err = err ? err : report_collect_ports(set);
	return err ? err : report_compare_lossless(set);
}

bool report_rate_error(const struct report_set *set, size_t i, char *why, size_t len)
{
	const struct fl_hop_figures *f = &set->figures[i];
	const struct report_view *w = report_wire_view(&set->hops[i]);
	double timed = w->bytes ? (double)w->wire_bytes / (double)w->bytes : 0.0;

	if (f->line_rate_gbs <= 0 || f->wire_gbs <= FL_VERDICT_MAX_LINE_FRACTION * f->line_rate_gbs)
		return false;
	if (w->processes > 1)
		snprintf(why, len, "joins the views of %d processes, whose wire times overlap",
			 w->processes);
	else if (timed < 0.9)
		snprintf(why, len, "only %.0f%% of its bytes were timed, in intervals that miss "
			 "part of their transfer", 100.0 * timed);
	else
		snprintf(why, len, "its wire intervals miss part of each transfer (bytes that went "
			 "before the clock started, or a pacer's burst)");
	return true;
}

/* Whether the element named name (as a switch finding names it) is crossed by hop i. */
static bool element_has_hop(const struct fl_hop_elements *e, const char *name, size_t i)
{
	for (size_t k = 0; e && k < e->nel; k++) {
		const struct fl_shared_element *el = &e->el[k];

		if (strncmp(el->name, name, FL_NODE_NAME_LEN - 1))
			continue;
		for (size_t j = 0; j < el->count; j++) {
			if (e->hops[el->first + j] == i)
				return true;
		}
	}
	return false;
}

static bool finding_blames(const struct report_set *set, const struct fl_finding *v, size_t i)
{
	const struct fl_hop_figures *f = &set->figures[i];

	switch (v->kind) {
	case FL_VERDICT_DEVICE: return fl_verdict_touches(f, v->node, v->dev);
	case FL_VERDICT_RAIL: return !strcmp(f->src_dev, v->dev) || !strcmp(f->dst_dev, v->dev);
	case FL_VERDICT_GDR:
		return fl_verdict_touches(f, v->node, NULL) && f->mem_types &&
		       !(f->mem_types & (FL_PTR_CUDA | FL_PTR_DMABUF));
	case FL_VERDICT_TRANSPORT: return f->rdma_port_active && !strcmp(f->transport, "socket");
	case FL_VERDICT_LINK: return v->hop >= 0 && (size_t)v->hop == i;
	case FL_VERDICT_SWITCH: return element_has_hop(set->elements, v->node, i);
	case FL_VERDICT_NODE: /* a node, not a hop: no hop is to blame */
	case FL_VERDICT_UNSURE: /* nothing named: no hop is blamed on a guess */
	case FL_VERDICT_NONE: break;
	}
	return false;
}

bool report_is_culprit(const struct report_set *set, size_t i)
{
	for (int k = 0; k < set->verdict.nfindings; k++) {
		if (finding_blames(set, &set->verdict.findings[k], i))
			return true;
	}
	return false;
}

void report_free(struct report_set *set)
{
	for (size_t f = 0; f < set->nfiles; f++) {
		free(set->files[f].path);
		free(set->files[f].incomplete);
		free(set->files[f].views);
		free(set->files[f].ports);
		free(set->files[f].injected);
		free(set->files[f].ranks);
	}
	free(set->suspects);
	free(set->lossless);
	free(set->missing_ranks);
	free(set->missing_nodes);
	free(set->files);
	free(set->hops);
	free(set->views);
	free(set->figures);
	report_arena_free(&set->sizes);
	memset(set, 0, sizeof(*set));
}
