/*
 * The diagnosis: parameters, the order in which the kinds of verdict are tried,
 * and the helpers every kind shares. Pure computation on libc only, so the
 * plugin .so and `fabriclab report` reach their verdicts with the same code.
 */
#include "verdict.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/error.h"
#include "verdict_internal.h"
#include "verdict_model.h"

/*
 * The smallest effect named: 5% below the others, less than anyone would act
 * on (user-facing; the model's culprits are at least that slow). The traffic
 * minimums only gate the median rate the setup findings quote.
 */
#define DEFAULT_MIN_RATIO 0.95
#define DEFAULT_MIN_BYTES (16ULL << 20)
#define DEFAULT_MIN_MESSAGES 8
#define DEFAULT_LINE_ODDS 0.9

/* A ratio in (0, 1) from the environment, or def where unset or not one (the tool says so). */
static double env_ratio_or(const char *name, double def)
{
	const char *v = getenv(name);
	char *end;
	double x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtod(v, &end);
	return errno || end == v || *end || !(x > 0.0 && x < 1.0) ? def : x;
}

void fl_verdict_default_params(struct fl_verdict_params *p)
{
	p->min_ratio = DEFAULT_MIN_RATIO;
	p->min_bytes = DEFAULT_MIN_BYTES;
	p->min_messages = DEFAULT_MIN_MESSAGES;
	/* a property of the fabric, the same for every judge in the process (live windows too) */
	p->line_odds = env_ratio_or("FABRICLAB_VERDICT_LINE_ODDS", DEFAULT_LINE_ODDS);
	p->elements = NULL;
}

static int env_ratio(const char *name, double def, double *out)
{
	const char *v = getenv(name);
	char *end;
	double x;

	*out = def;
	if (!v || !*v)
		return FL_OK;
	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || *end || !(x > 0.0 && x < 1.0))
		return fl_fail(FL_ERR_USAGE,
			       "%s=\"%s\": expected a ratio between 0 and 1 (exclusive), e.g. 0.8",
			       name, v);
	*out = x;
	return FL_OK;
}

int fl_verdict_params_from_env(struct fl_verdict_params *p)
{
	size_t bytes;
	long messages;
	int err;

	fl_verdict_default_params(p);
	err = env_ratio("FABRICLAB_VERDICT_MIN_RATIO", DEFAULT_MIN_RATIO, &p->min_ratio);
	if (err)
		return err;
	err = env_ratio("FABRICLAB_VERDICT_LINE_ODDS", DEFAULT_LINE_ODDS, &p->line_odds);
	if (err)
		return err;
	err = fl_env_bytes("FABRICLAB_VERDICT_MIN_BYTES", DEFAULT_MIN_BYTES, 0, FL_MAX_NET_BYTES,
			   &bytes);
	if (err)
		return err;
	p->min_bytes = bytes;
	err = fl_env_long("FABRICLAB_VERDICT_MIN_MESSAGES", DEFAULT_MIN_MESSAGES, 0, 1L << 40,
			  &messages);
	if (err)
		return err;
	p->min_messages = (uint64_t)messages;
	return FL_OK;
}

static void append(char *reason, size_t len, const char *text)
{
	size_t used = strlen(reason), n = strlen(text);

	if (used + n + 1 <= len)
		memcpy(reason + used, text, n + 1);
}

void fl_verdict_note_sender_view(struct fl_verdict *v)
{
	static const char caveat[] =
		" (wire rates as senders timed them: a slow receiver would also show here)";

	for (int i = 0; i < v->nfindings; i++) {
		struct fl_finding *f = &v->findings[i];

		if (f->kind == FL_VERDICT_LINK || f->kind == FL_VERDICT_DEVICE ||
		    f->kind == FL_VERDICT_RAIL || f->kind == FL_VERDICT_SWITCH)
			append(f->reason, sizeof(f->reason), caveat);
	}
	if (v->kind == FL_VERDICT_LINK || v->kind == FL_VERDICT_DEVICE ||
	    v->kind == FL_VERDICT_RAIL || v->kind == FL_VERDICT_SWITCH)
		append(v->reason, sizeof(v->reason), caveat);
}

double fl_verdict_rate(const struct fl_hop_figures *h)
{
	double line = h->line_rate_gbs;

	return line > 0.0 && h->wire_gbs > FL_VERDICT_MAX_LINE_FRACTION * line ? line
										 : h->wire_gbs;
}

bool verdict_comparable(const struct fl_hop_figures *a, const struct fl_hop_figures *b)
{
	double x = a->line_rate_gbs, y = b->line_rate_gbs;
	double diff = x > y ? x - y : y - x;

	return !strcmp(a->transport, b->transport) && diff <= 0.01 * (x > y ? x : y);
}

void fl_finding_culprit(const struct fl_finding *f, const struct fl_hop_figures *hops,
			char *buf, size_t len)
{
	const struct fl_hop_figures *h = f->hop >= 0 ? &hops[f->hop] : NULL;

	if (f->kind == FL_VERDICT_RAIL)
		snprintf(buf, len, "rail %s", f->dev);
	else if (f->kind == FL_VERDICT_DEVICE || (f->kind == FL_VERDICT_TRANSPORT && f->dev[0]))
		snprintf(buf, len, "%s/%s", f->node, f->dev);
	else if (f->kind == FL_VERDICT_LINK && h)
		snprintf(buf, len, "%s/%s -> %s/%s", h->src_node, h->src_dev, h->dst_node,
			 h->dst_dev);
	else
		snprintf(buf, len, "%s", f->node);
}

struct fl_finding *verdict_add_finding(struct fl_verdict *v, enum fl_verdict_kind kind)
{
	struct fl_finding *f;

	if (v->nfindings >= FL_VERDICT_MAX_FINDINGS)
		return NULL;
	f = &v->findings[v->nfindings++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->hop = -1;
	f->ratio = 1.0;
	f->speedup = 1.0;
	return f;
}

const char *fl_verdict_kind_name(enum fl_verdict_kind kind)
{
	switch (kind) {
	case FL_VERDICT_NONE: return "none";
	case FL_VERDICT_LINK: return "link";
	case FL_VERDICT_DEVICE: return "device";
	case FL_VERDICT_NODE: return "node";
	case FL_VERDICT_GDR: return "gdr";
	case FL_VERDICT_TRANSPORT: return "transport";
	case FL_VERDICT_RAIL: return "rail";
	case FL_VERDICT_SWITCH: return "switch";
	case FL_VERDICT_UNSURE: return "not-enough-evidence";
	}
	return "unknown";
}

bool verdict_has_traffic(const struct fl_hop_figures *h)
{
	return h->bytes > 0 && h->messages > 0;
}

bool verdict_judged(const struct verdict_input *in, size_t i)
{
	const struct fl_hop_figures *h = &in->hops[i];

	return h->bytes >= in->params->min_bytes && h->messages >= in->params->min_messages &&
	       verdict_has_traffic(h);
}

bool fl_wire_bound(uint64_t request, double line_gbs, double in_flight)
{
	double on_wire;

	if (line_gbs <= 0.0 || !request)
		return true;
	on_wire = (double)request / line_gbs; /* GB/s: bytes per ns */
	return on_wire >= FL_MIN_WIRE_BOUND_NS ||
	       (in_flight > 1.0 && (in_flight - 1.0) * on_wire >= FL_ROUND_TRIP_COVER_NS);
}

double fl_requests_in_flight(double outstanding_s, double wait_s, double busy_s)
{
	double moving = outstanding_s - (wait_s > 0.0 ? wait_s : 0.0);

	return busy_s > 0.0 && moving > 0.0 ? moving / busy_s : 0.0;
}

double fl_hop_in_flight(const struct fl_hop_figures *h)
{
	if (h->send_outstanding_seconds > 0.0 && h->wire_seconds > 0.0)
		return fl_requests_in_flight(h->send_outstanding_seconds, h->send_wait_seconds,
					     h->wire_seconds);
	return fl_requests_in_flight(h->outstanding_seconds, h->peer_wait_seconds,
				     h->active_seconds);
}

uint64_t verdict_request_size(const struct fl_hop_figures *h)
{
	if (!h->typical_request && h->messages)
		return h->bytes / h->messages;
	return h->typical_request;
}

bool verdict_wire_bound(const struct fl_hop_figures *h)
{
	return fl_wire_bound(verdict_request_size(h), h->line_rate_gbs, fl_hop_in_flight(h));
}

bool verdict_has_rate(const struct verdict_input *in, size_t i)
{
	return verdict_judged(in, i) && in->hops[i].wire_gbs > 0.0 &&
	       verdict_wire_bound(&in->hops[i]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Selection, not a sort: the verdict takes a dozen medians of every hop's rate,
 * and sorting them was a tenth of merging 131 072 reports. Partitions around
 * v[k] (Wirth) until v[k] is in place; a range that will not shrink (rounds
 * that split badly, every time) is sorted instead.
 */
double verdict_kth(double *v, size_t n, size_t k)
{
	long lo = 0, hi = (long)n - 1, want = (long)k;

	for (int rounds = 0; lo < hi; rounds++) {
		double x = v[want];
		long i = lo, j = hi;

		if (rounds > 128) {
			qsort(v + lo, (size_t)(hi - lo + 1), sizeof(*v), cmp_double);
			break;
		}
		do {
			while (v[i] < x)
				i++;
			while (x < v[j])
				j--;
			if (i <= j) {
				double t = v[i];

				v[i++] = v[j];
				v[j--] = t;
			}
		} while (i <= j);
		if (j < want)
			lo = i;
		if (want < i)
			hi = j;
	}
	return v[k];
}

double verdict_median(double *v, size_t n)
{
	double upper, lower;

	if (!n)
		return 0.0;
	upper = verdict_kth(v, n, n / 2);
	if (n % 2)
		return upper;
	/* v[0 .. n/2) holds the lower half now: its largest is the other middle value */
	lower = v[0];
	for (size_t i = 1; i < n / 2; i++)
		lower = v[i] > lower ? v[i] : lower;
	return (lower + upper) / 2.0;
}

bool fl_verdict_touches(const struct fl_hop_figures *h, const char *node, const char *dev)
{
	bool src = !strcmp(h->src_node, node) && (!dev || !strcmp(h->src_dev, dev));
	bool dst = !strcmp(h->dst_node, node) && (!dev || !strcmp(h->dst_dev, dev));

	return src || dst;
}

void verdict_set_name(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

void verdict_say(struct fl_finding *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
}

void verdict_say_more(struct fl_finding *out, const char *fmt, ...)
{
	size_t used = strlen(out->reason);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->reason + used, sizeof(out->reason) - used, fmt, ap);
	va_end(ap);
}

void verdict_set_hop(struct fl_finding *out, const struct fl_hop_figures *hops, size_t i)
{
	out->hop = (int)i;
	out->culprit_gbs = hops[i].wire_gbs;
}

static int cmp_cost(const void *pa, const void *pb)
{
	const struct fl_finding *a = pa, *b = pb;

	return (a->speedup < b->speedup) - (a->speedup > b->speedup);
}

/* Costliest first (a stable order: ties keep the order they were found in). */
static void rank_findings(struct fl_verdict *v)
{
	for (int i = 0; i < v->nfindings; i++) {
		struct fl_finding *f = &v->findings[i];

		f->cost = f->speedup > 1.0 ? 1.0 - 1.0 / f->speedup : 0.0;
	}
	for (int i = 1; i < v->nfindings; i++) {
		struct fl_finding f = v->findings[i];
		int k = i;

		while (k > 0 && cmp_cost(&v->findings[k - 1], &f) > 0) {
			v->findings[k] = v->findings[k - 1];
			k--;
		}
		v->findings[k] = f;
	}
}

static void headline(struct fl_verdict *v)
{
	const struct fl_finding *f = &v->findings[0];

	v->kind = f->kind;
	v->hop = f->hop;
	memcpy(v->node, f->node, sizeof(v->node));
	memcpy(v->dev, f->dev, sizeof(v->dev));
	v->ratio = f->ratio;
	v->median_gbs = f->median_gbs;
	v->culprit_gbs = f->culprit_gbs;
	v->speedup = f->speedup;
	v->line_share = f->line_share;
	v->confidence = f->confidence;
	memcpy(v->reason, f->reason, sizeof(v->reason));
}

/*
 * A setup finding (GDR off, TCP beside RDMA) is a fact read from what NCCL
 * registered, not an inference. Where the model blames the device of a node
 * whose GPUDirect is off, that device's slowness is the staging through host
 * memory, and where it blames the node as the straggler, its late receives
 * are that staging too: the finding is named gdr, with the model's figures.
 */
static void merge_setup(struct fl_verdict *v, const struct fl_verdict *setup)
{
	for (int i = 0; i < setup->nfindings; i++) {
		const struct fl_finding *s = &setup->findings[i];
		struct fl_finding *f = NULL;

		for (int k = 0; k < v->nfindings && s->kind == FL_VERDICT_GDR; k++) {
			if ((v->findings[k].kind == FL_VERDICT_DEVICE ||
			     v->findings[k].kind == FL_VERDICT_NODE) &&
			    !strcmp(v->findings[k].node, s->node))
				f = &v->findings[k];
		}
		if (f) {
			f->kind = FL_VERDICT_GDR;
			snprintf(f->reason, sizeof(f->reason), "%s", s->reason);
			continue;
		}
		f = verdict_add_finding(v, s->kind);
		if (f) {
			*f = *s;
			f->confidence = 1.0;
		}
	}
}

/* A GDR finding is a fix of the job's setup, made before any cable is swapped: it leads. */
static void setup_first(struct fl_verdict *v)
{
	for (int i = 1; i < v->nfindings; i++) {
		if (v->findings[i].kind == FL_VERDICT_GDR) {
			struct fl_finding f = v->findings[i];

			memmove(&v->findings[1], &v->findings[0], (size_t)i * sizeof(f));
			v->findings[0] = f;
		}
	}
}

/*
 * The diagnosis is one model (verdict_model.h, docs/report-format.md): every
 * explanation scored against every hop, the likeliest named when it is likely
 * enough. The setup facts are added beside it.
 */
void fl_verdict_compute(const struct fl_hop_figures *hops, size_t nhops,
			const struct fl_verdict_params *params, struct fl_verdict *out)
{
	struct fl_verdict_params defaults;
	struct verdict_input in = { hops, nhops, params };
	struct fl_verdict *setup = calloc(1, sizeof(*setup));
	int setup_err = 0;

	if (!params) {
		fl_verdict_default_params(&defaults);
		in.params = &defaults;
	}
	memset(out, 0, sizeof(*out));
	out->kind = FL_VERDICT_NONE;
	out->hop = -1;
	out->ratio = 1.0;
	out->speedup = 1.0;
	if (setup) {
		setup_err = verdict_try_transport(&in, setup) < 0;
		if (!setup->nfindings && !setup_err)
			setup_err = verdict_try_gdr(&in, setup) < 0;
	}
	/*
	 * TCP where RDMA is up slows every hop at once: the rates say nothing of
	 * the wires then, so it is the whole diagnosis, as it is the first fix.
	 */
	if (setup && !setup_err && setup->nfindings &&
	    setup->findings[0].kind == FL_VERDICT_TRANSPORT) {
		*out = *setup;
		out->findings[0].confidence = 1.0;
		free(setup);
		headline(out);
		return;
	}
	if (!setup || setup_err || vm_diagnose(hops, nhops, in.params, out)) {
		free(setup);
		memset(out, 0, sizeof(*out));
		out->kind = FL_VERDICT_UNSURE;
		out->hop = -1;
		snprintf(out->reason, sizeof(out->reason),
			 "no verdict: out of memory while judging %zu hops", nhops);
		return;
	}
	merge_setup(out, setup);
	free(setup);
	if (!out->nfindings)
		return;
	rank_findings(out);
	setup_first(out);
	headline(out);
}
