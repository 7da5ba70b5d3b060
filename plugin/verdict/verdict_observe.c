/*
 * From each hop's figures to the model's observations (verdict_model.h): its
 * rate, its median request's rate and its waits, with the sampling error its
 * own requests give, and the groups of hops that may be compared.
 */
#include <stdlib.h>
#include <string.h>

#include "base/fl_math.h"
#include "verdict_internal.h"
#include "verdict_model.h"

/* z of the 99th percentile of a normal: turns (ln p99 - ln p50) into a spread. */
#define Z99 2.326
/* A median's sampling error over a mean's, for normal samples: sqrt(pi / 2). */
#define MEDIAN_EFFICIENCY 1.2533

/*
 * The spread of one request's wire time (ln), from its quantiles; unknown: 1,
 * which leaves a hop of few requests with a wide error and one of thousands
 * still narrow.
 */
static double request_spread(const struct fl_hop_figures *h)
{
	if (h->wire_p50_us > 0.0 && h->wire_p99_us >= h->wire_p50_us)
		return fl_ln(h->wire_p99_us / h->wire_p50_us) / Z99;
	return 1.0;
}

static bool receiver_reported(const struct fl_hop_figures *h)
{
	return h->active_seconds > 0.0;
}

static bool sender_reported(const struct fl_hop_figures *h)
{
	return h->send_outstanding_seconds > 0.0;
}

/*
 * Waits are compared as ratios (a receiver that waits 0% where the others wait
 * 10% is as telling as 1.8 against 5.5 requests waiting), resolved to the
 * smallest effect named: ratios start from it. A straggler that costs the job
 * that share of its time makes the senders into it wait that much more, twice
 * what they wait where they hardly do; a jitter of 0.3% to 3% between healthy
 * hops is then a ratio of 1.5, not of 3.1 from a floor of 1% (which named a
 * healthy 8-rank verbs lab run's node a straggler, tuning seed 676).
 */
static void wait_scale(struct vm_state *s)
{
	/* a shift's widest: from none waiting to 10 requests waiting at a time */
	s->du_range = fl_ln((s->wait_floor + 10.0) / s->wait_floor);
	for (size_t i = 0; i < s->n; i++) {
		struct vm_hop *o = &s->hops[i];

		if (o->has_u)
			o->u = fl_ln(s->wait_floor + o->qs) - fl_ln(s->wait_floor + o->qr);
	}
}

/*
 * Receivers' waits: receives waiting on their sender at a time (their wait
 * over their busy time); senders': the share of their requests' time spent
 * waiting for the receiver to post, where the transport has the receiver say
 * so (verbs). A straggler raises the second on the hops into it and lowers the
 * first; u is only compared within hops whose same ends reported.
 */
static void observe_waits(const struct fl_hop_figures *h, struct vm_hop *o)
{
	double qr = 0.0, qs = 0.0;

	o->has_u = receiver_reported(h) || sender_reported(h);
	if (!o->has_u)
		return;
	if (receiver_reported(h))
		qr = h->peer_wait_seconds / h->active_seconds;
	if (sender_reported(h))
		qs = h->send_wait_seconds / h->send_outstanding_seconds;
	o->qs = qs > 0.0 ? qs : 0.0;
	o->qr = qr > 0.0 ? qr : 0.0;
}

static void observe(const struct fl_hop_figures *h, struct vm_hop *o)
{
	double rate = fl_verdict_rate(h);
	uint64_t request = verdict_request_size(h);

	memset(o, 0, sizeof(*o));
	o->group = -1;
	o->ugroup = -1;
	if (!verdict_has_traffic(h))
		return;
	observe_waits(h, o);
	if (rate <= 0.0)
		return;
	o->group = 0;
	o->y = fl_ln(rate);
	o->sy = request_spread(h) / fl_sqrt((double)h->messages);
	/* a rate above its line is a measurement error, and so are its request times */
	if (request && h->wire_p50_us > 0.0 && rate == h->wire_gbs) {
		o->has_m = true;
		o->m = fl_ln((double)request / (h->wire_p50_us * 1e3));
		o->sm = MEDIAN_EFFICIENCY * request_spread(h) / fl_sqrt((double)h->messages);
	}
	if (h->line_rate_gbs > 0.0) {
		o->ln_line = fl_ln(h->line_rate_gbs);
		o->anchored = verdict_wire_bound(h);
	}
}

/*
 * A request's time on its wire without the round trip. A verbs write is done
 * when its acknowledgement is back: a request that found its connection idle
 * pays the round trip, one queued behind the one before pays only its bytes'
 * time (its time runs from when that one left). How many of a hop's requests
 * queue depends on the whole ring, not on the hop: a slow hop elsewhere
 * spaces out the requests of every other, which then all pay the round trip
 * and read as slow as the culprit (a device with 10 us added one way in a
 * 6-node xdr lab ring: healthy hops' median request 17.3 ms against 9.2 ms
 * queued in the healthy twin, the culprit's queued 38.8 ms). The round trip
 * is the group's: the median over its hops that have both kinds of the gap
 * between the two kinds' medians. A hop mostly queued is its queued median;
 * a hop mostly alone, its alone median less the round trip, never less than
 * its bytes take at line rate.
 */
static double round_trip_us(const struct vm_state *s, int g)
{
	double *gaps = s->scratch;
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct fl_hop_figures *h = &s->figs[i];

		if (s->hops[i].group != g || !s->hops[i].has_m || !h->wire_alone ||
		    !h->wire_queued || h->alone_p50_us <= 0.0 || h->queued_p50_us <= 0.0)
			continue;
		gaps[k++] = h->alone_p50_us > h->queued_p50_us ? h->alone_p50_us - h->queued_p50_us
							       : 0.0;
	}
	return k ? verdict_median(gaps, k) : -1.0;
}

static void own_request_time(const struct fl_hop_figures *h, double rtt_us, struct vm_hop *o)
{
	uint64_t request = verdict_request_size(h), n;
	double t, least;

	if (h->wire_queued >= h->wire_alone && h->wire_queued && h->queued_p50_us > 0.0) {
		t = h->queued_p50_us;
		n = h->wire_queued;
	} else if (h->wire_alone && rtt_us >= 0.0 && h->alone_p50_us > 0.0) {
		t = h->alone_p50_us - rtt_us;
		n = h->wire_alone;
	} else {
		return;
	}
	least = h->line_rate_gbs > 0.0 ? (double)request / h->line_rate_gbs / 1e3 : 0.0;
	if (t < least)
		t = least;
	if (t <= 0.0)
		return;
	o->m = fl_ln((double)request / (t * 1e3));
	o->sm = MEDIAN_EFFICIENCY * request_spread(h) / fl_sqrt((double)n);
}

static void request_times(struct vm_state *s)
{
	for (int g = 0; g < s->ngroups; g++) {
		double rtt = round_trip_us(s, g);

		s->group_rtt[g] = rtt;
		for (size_t i = 0; i < s->n; i++)
			if (s->hops[i].group == g && s->hops[i].has_m)
				own_request_time(&s->figs[i], rtt, &s->hops[i]);
	}
}

/* The same transport and line rate: rates that may be compared. */
static void group_rates(struct vm_state *s)
{
	size_t *reps = s->list;
	int n = 0;

	for (size_t i = 0; i < s->n; i++) {
		int g = 0;

		if (s->hops[i].group < 0)
			continue;
		while (g < n && !verdict_comparable(&s->figs[reps[g]], &s->figs[i]))
			g++;
		if (g == n)
			reps[n++] = i;
		s->hops[i].group = g;
	}
	s->ngroups = n;
}

static unsigned wait_key(const struct fl_hop_figures *h)
{
	return (unsigned)receiver_reported(h) | (unsigned)sender_reported(h) << 1;
}

/* Waits compare among hops of one transport timed by the same ends. */
static void group_waits(struct vm_state *s)
{
	size_t *reps = s->list;
	int n = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct fl_hop_figures *h = &s->figs[i];
		int g = 0;

		if (!s->hops[i].has_u)
			continue;
		while (g < n && (strcmp(s->figs[reps[g]].transport, h->transport) ||
				 wait_key(&s->figs[reps[g]]) != wait_key(h)))
			g++;
		if (g == n)
			reps[n++] = i;
		s->hops[i].ugroup = g;
	}
	s->nugroups = n;
}

/*
 * The smallest straggler worth naming costs the job the smallest effect of its
 * time: the hops into it spend that share e more of their time waiting. In u
 * (ln of waits from their floor) the shift that takes depends on how long the
 * hops wait anyway: from 0% it is ln 2, from 40% 0.11. The time shows as
 * senders waiting e more (a verbs send waits on its receiver's clear-to-send),
 * receivers waiting b less (a socket receive finds its data there), or split:
 * the floor is the smallest shift of any split, and u is monotone in the
 * split, so one of its two ends. Never below the smallest effect as a ratio
 * of waits.
 */
static double wait_shift(double from, double qs, double qr, double e, double b)
{
	return fl_ln((from + qs + e - b) / (from + qs)) + fl_ln((from + qr) / (from + qr - b));
}

static double straggler_floor(const struct vm_state *s, double qs, double qr)
{
	double e = s->min_effect;
	double most = qr < e ? qr : e;
	double all_sent = wait_shift(s->wait_floor, qs, qr, e, 0.0);
	double all_received = wait_shift(s->wait_floor, qs, qr, e, most);
	double d = all_sent < all_received ? all_sent : all_received;

	return d > -s->dy_max ? d : -s->dy_max;
}

/* Each wait group's floor, from its typical waits: the medians of its hops' qs and qr. */
static void wait_levels(struct vm_state *s)
{
	double *qs = s->scratch, *qr = s->scratch + s->n;

	for (int g = 0; g < s->nugroups; g++) {
		size_t k = 0;

		for (size_t i = 0; i < s->n; i++) {
			if (!s->hops[i].has_u || s->hops[i].ugroup != g)
				continue;
			qs[k] = s->hops[i].qs;
			qr[k++] = s->hops[i].qr;
		}
		s->du_floor[g] = straggler_floor(s, verdict_median(qs, k), verdict_median(qr, k));
	}
}

int vm_observe(struct vm_state *s, const struct fl_hop_figures *figs, size_t n,
	       const struct fl_verdict_params *params)
{
	size_t room = n ? n : 1;

	memset(s, 0, sizeof(*s));
	s->figs = figs;
	s->n = n;
	s->min_effect = 1.0 - params->min_ratio;
	s->dy_max = fl_ln(params->min_ratio);
	s->wait_floor = s->min_effect;
	s->line_odds = params->line_odds;
	s->elements = params->elements;
	s->hops = calloc(room, sizeof(*s->hops));
	s->scratch = calloc(4 * room, sizeof(*s->scratch));
	s->mu_y = calloc(9 * room, sizeof(*s->mu_y));
	s->list = calloc(room, sizeof(*s->list));
	s->group_info = calloc(room, sizeof(*s->group_info));
	s->mark = calloc(room, 1);
	if (!s->hops || !s->scratch || !s->mu_y || !s->list || !s->mark || !s->group_info) {
		vm_free(s);
		return -1;
	}
	s->mu_m = s->mu_y + room;
	s->mu_u = s->mu_m + room;
	s->group_line = s->mu_u + room;
	s->off = s->group_line + room;
	s->group_rtt = s->off + 3 * room;
	s->du_floor = s->group_rtt + room;
	for (size_t i = 0; i < n; i++)
		observe(&figs[i], &s->hops[i]);
	group_rates(s);
	request_times(s);
	wait_scale(s);
	group_waits(s);
	wait_levels(s);
	return 0;
}

void vm_free(struct vm_state *s)
{
	free(s->hops);
	free(s->scratch);
	free(s->mu_y);
	free(s->list);
	free(s->mark);
	free(s->group_info);
	free(s->cands);
	free(s->members);
	free(s->member_part);
	free(s->none_levels);
	memset(s, 0, sizeof(*s));
}
