/* Token-bucket pacing for throttled and stalled hops: see pace.h. */
#include "pace.h"

#include <stdlib.h>

void fl_pace_init(struct fl_pacer *p, uint64_t rate_bytes_per_s, size_t burst_bytes,
		  uint64_t now_ns)
{
	p->rate_bytes_per_s = rate_bytes_per_s;
	p->ns_per_byte_q32 = 0;
	p->burst_ns = 0;
	if (rate_bytes_per_s) {
		p->ns_per_byte_q32 = (uint64_t)(((unsigned __int128)1000000000u << 32) /
						rate_bytes_per_s);
		if (!p->ns_per_byte_q32)
			p->ns_per_byte_q32 = 1;
		p->burst_ns = fl_pace_cost_ns(p, burst_bytes ? burst_bytes : FL_PACE_DEFAULT_BURST);
		if (p->burst_ns < FL_PACE_MIN_BURST_NS)
			p->burst_ns = FL_PACE_MIN_BURST_NS;
	}
	/* Starts full: the first burst goes at once, as an idle link would take it. */
	atomic_init(&p->tat_ns, now_ns > p->burst_ns ? now_ns - p->burst_ns : 0);
	atomic_init(&p->refused_ns, 0);
	p->stall_for_ns = 0;
	p->stall_every_ns = 0;
	p->stall_origin_ns = 0;
	p->nshared = 0;
	p->is_cable = false;
}

void fl_pace_set_stall(struct fl_pacer *p, uint64_t for_ns, uint64_t every_ns, uint64_t origin_ns)
{
	if (!every_ns || for_ns >= every_ns)
		for_ns = every_ns ? every_ns - 1 : 0;
	p->stall_for_ns = for_ns;
	p->stall_every_ns = for_ns ? every_ns : 0;
	p->stall_origin_ns = origin_ns;
}

struct fl_pacer *fl_pace_create(uint64_t rate_bytes_per_s, size_t burst_bytes, uint64_t now_ns)
{
	struct fl_pacer *p = malloc(sizeof(*p));

	if (p)
		fl_pace_init(p, rate_bytes_per_s, burst_bytes, now_ns);
	return p;
}

void fl_pace_destroy(struct fl_pacer *p)
{
	free(p);
}

bool fl_pace_share(struct fl_pacer *p, struct fl_pacer *shared)
{
	if (p->nshared >= FL_PACE_MAX_SHARED)
		return false;
	p->shared[p->nshared++] = shared;
	return true;
}

uint64_t fl_pace_wait_ns(const struct fl_pacer *p, uint64_t now_ns)
{
	uint64_t wait;

	if (!p)
		return 0;
	wait = fl_pace_wait_one_ns(p, now_ns);
	for (unsigned i = 0; i < p->nshared; i++) {
		uint64_t w = fl_pace_wait_one_ns(p->shared[i], now_ns);

		if (w > wait)
			wait = w;
	}
	return wait;
}

bool fl_pace_is_cable(const struct fl_pacer *p)
{
	for (unsigned i = 0; p && i <= p->nshared; i++) {
		const struct fl_pacer *q = i ? p->shared[i - 1] : p;

		if (q && q->is_cable)
			return true;
	}
	return false;
}
