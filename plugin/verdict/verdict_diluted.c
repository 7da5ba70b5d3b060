/*
 * Hops whose rate the round trip dilutes. Bytes over busy time is the wire's
 * rate only while requests follow each other on the wire; a request alone
 * also carries a round trip, so where a ring's hops send one request at a
 * time and the round trip is a good share of it (a 512 KiB step is 5.2 us on
 * the wire at 800 Gb/s against a 2.5 us round trip), every hop reads well
 * below its line rate and a port at 85% moves its hops' rate by only 2-5%
 * (lab --like xdr/ndr, 8 ranks: 0.96-0.98x), inside the 0.95 ratio, while
 * the hop that paces the ring keeps requests queued and reads its wire's
 * rate. Its median request is what stretches (1.09-1.14x there).
 *
 * There, a hop's wire time is its median request's time less the round trip
 * the others' median request carries (their median time less their typical
 * request's time on the wire at line rate), and the hop is low when that
 * wire time makes it slower than min_ratio of the line, its median request
 * is more than a histogram step longer than theirs and outside their spread,
 * and its rate is not above theirs.
 */
#include <stdlib.h>

#include "verdict_internal.h"

/* The comparable hops' median rate below this share of the line: round trips are a part. */
#define DILUTED_LINE_SHARE 0.9

bool verdict_diluted(double ref_gbs, const struct fl_hop_figures *like)
{
	return like->line_rate_gbs > 0.0 && ref_gbs > 0.0 &&
	       ref_gbs < DILUTED_LINE_SHARE * like->line_rate_gbs;
}

static double on_wire_us(const struct fl_hop_figures *h)
{
	return (double)verdict_request_size(h) / h->line_rate_gbs / 1e3; /* GB/s: bytes per ns */
}

/* The hop's share of line by its median request less round_trip_us; 0 when none is left. */
static double by_request(const struct fl_hop_figures *h, double round_trip_us)
{
	double rest = h->wire_p50_us - round_trip_us;

	return h->wire_p50_us > 0.0 && rest > 0.0 ? on_wire_us(h) / rest : 0.0;
}

double verdict_diluted_ratio(const struct fl_hop_figures *h, double ref_p50_us)
{
	double round_trip = ref_p50_us - on_wire_us(h), share;

	share = round_trip >= 0.0 ? by_request(h, round_trip) : 0.0;
	return share > 0.0 ? share : 1.0;
}

bool verdict_diluted_low(const struct verdict_input *in, size_t i, double ref_gbs,
			 const struct verdict_p50_ref *p50)
{
	const struct fl_hop_figures *h = &in->hops[i];

	if (!verdict_diluted(ref_gbs, h) || p50->median <= 0.0 || fl_verdict_rate(h) > ref_gbs)
		return false;
	return h->wire_p50_us >= VERDICT_MIN_P50_STRETCH * p50->median &&
	       verdict_outside_spread(h->wire_p50_us - p50->median, p50->mad) &&
	       verdict_diluted_ratio(h, p50->median) < in->params->min_ratio;
}

/* Hops with a rate, a median request time and a line rate: what the estimate reads. */
static bool timed(const struct fl_hop_figures *h)
{
	return h->wire_gbs > 0.0 && h->wire_p50_us > 0.0 && h->line_rate_gbs > 0.0 &&
	       h->messages > 0 && fl_verdict_rate(h) == h->wire_gbs;
}

double fl_verdict_round_trip_us(const struct fl_hop_figures *hops, size_t nhops)
{
	double *v = malloc((nhops ? nhops : 1) * 2 * sizeof(*v)), rtt, rate;
	size_t n = 0;

	if (!v)
		return 0.0;
	for (size_t i = 0; i < nhops; i++) {
		if (!timed(&hops[i]))
			continue;
		v[n] = hops[i].wire_p50_us - on_wire_us(&hops[i]);
		v[nhops + n++] = hops[i].wire_gbs / hops[i].line_rate_gbs;
	}
	/* the healthier hops' round trip: in a ring of 4 a slow port's two hops are half */
	rtt = n ? verdict_kth(v, n, n / 4) : 0.0;
	rate = verdict_median(v + nhops, n);
	free(v);
	return n && rate < DILUTED_LINE_SHARE && rtt > 0.0 ? rtt : 0.0;
}

/*
 * The hop's share of line by its busy time less a round trip per busy stretch: a
 * stretch of requests back to back ends with the last one's round trip, whether
 * it held one request or several. 0 when unknown.
 */
static double by_stretches(const struct fl_hop_figures *h, double round_trip_us)
{
	double busy = h->wire_seconds - (double)h->wire_runs * round_trip_us / 1e6;

	return h->wire_runs && busy > 0.0 ? h->wire_gbs * h->wire_seconds / busy /
						    h->line_rate_gbs
					  : 0.0;
}

/*
 * Each figure understates a wire's rate: bytes over busy time where requests go
 * one at a time (each carries a round trip), the median request less the round
 * trip where they queue (each carries the wait behind the others: a port at 50%
 * pacing its ring read 6% by it, 47% by its rate), and both where requests come
 * in bursts (the hop feeding a stalled ring, `xdr -n 8`: 75% by either, its
 * port healthy). The busy time less a round trip per busy stretch holds in all
 * three. The largest is the nearest.
 */
double fl_verdict_line_share_rtt_out(const struct fl_hop_figures *h, double round_trip_us)
{
	double request, rate, stretches;

	if (!timed(h) || round_trip_us <= 0.0)
		return 0.0;
	request = by_request(h, round_trip_us);
	if (request <= 0.0)
		return 0.0;
	rate = h->wire_gbs / h->line_rate_gbs;
	stretches = by_stretches(h, round_trip_us);
	rate = stretches > rate ? stretches : rate;
	return request > rate ? request : rate;
}
