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

#define DEFAULT_MIN_RATIO 0.8
#define DEFAULT_MIN_BYTES (16ULL << 20)
#define DEFAULT_MIN_MESSAGES 8

void fl_verdict_default_params(struct fl_verdict_params *p)
{
	p->min_ratio = DEFAULT_MIN_RATIO;
	p->min_bytes = DEFAULT_MIN_BYTES;
	p->min_messages = DEFAULT_MIN_MESSAGES;
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

void fl_verdict_note_sender_view(struct fl_verdict *v)
{
	static const char caveat[] =
		" (wire rates as senders timed them: a slow receiver would also show here)";
	size_t used = strlen(v->reason);

	if (v->kind != FL_VERDICT_LINK && v->kind != FL_VERDICT_DEVICE)
		return;
	if (used + sizeof(caveat) <= sizeof(v->reason))
		memcpy(v->reason + used, caveat, sizeof(caveat));
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

bool verdict_has_rate(const struct verdict_input *in, size_t i)
{
	return verdict_judged(in, i) && in->hops[i].wire_gbs > 0.0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double verdict_median(double *v, size_t n)
{
	if (!n)
		return 0.0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double verdict_median_rate(const struct verdict_input *in)
{
	double *v = malloc((in->nhops ? in->nhops : 1) * sizeof(*v));
	double median;
	size_t n = 0;

	if (!v)
		return -1.0;
	for (size_t i = 0; i < in->nhops; i++) {
		if (verdict_has_rate(in, i))
			v[n++] = in->hops[i].wire_gbs;
	}
	median = verdict_median(v, n);
	free(v);
	return median;
}

bool verdict_touches(const struct fl_hop_figures *h, const char *node, const char *dev)
{
	bool src = !strcmp(h->src_node, node) && (!dev || !strcmp(h->src_dev, dev));
	bool dst = !strcmp(h->dst_node, node) && (!dev || !strcmp(h->dst_dev, dev));

	return src || dst;
}

void verdict_set_name(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

void verdict_say(struct fl_verdict *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
}

void verdict_set_hop(struct fl_verdict *out, const struct fl_hop_figures *hops, size_t i)
{
	out->hop = (int)i;
	out->culprit_gbs = hops[i].wire_gbs;
}

static int count_judged(const struct verdict_input *in)
{
	int n = 0;

	for (size_t i = 0; i < in->nhops; i++)
		n += verdict_judged(in, i);
	return n;
}

static void explain_none(const struct verdict_input *in, struct fl_verdict *out)
{
	const struct fl_verdict_params *p = in->params;
	double median = verdict_median_rate(in);

	out->median_gbs = median > 0.0 ? median : 0.0;
	if (!out->judged_hops) {
		verdict_say(out,
			    "nothing to judge: none of %zu hops moved at least %llu bytes "
			    "in %llu messages",
			    in->nhops, (unsigned long long)p->min_bytes,
			    (unsigned long long)p->min_messages);
		return;
	}
	verdict_say(out,
		    "no slow hop: %d hops judged, none both below %.2fx the median of comparable "
		    "hops (%.2f GB/s) and outside their spread, and no node the others wait on",
		    out->judged_hops, p->min_ratio, out->median_gbs);
}

/*
 * Kinds are tried from the cause that explains the most to the least.
 * transport: TCP instead of RDMA slows every hop and the rest is noise on top;
 * gdr: staging through host memory slows the hops it touches and skews which
 * of them look slow; device: a bad NIC or cable makes several hops slow, which
 * would otherwise read as many links; link: one slow hop; node: only
 * meaningful once every wire runs at its normal rate, since a slow wire also
 * makes its receiver wait.
 */
void fl_verdict_compute(const struct fl_hop_figures *hops, size_t nhops,
			const struct fl_verdict_params *params, struct fl_verdict *out)
{
	static int (*const tries[])(const struct verdict_input *, struct fl_verdict *) = {
		verdict_try_transport,
		verdict_try_gdr,
		verdict_try_wire,
		verdict_try_node,
	};
	struct fl_verdict_params defaults;
	struct verdict_input in = { hops, nhops, params };

	if (!params) {
		fl_verdict_default_params(&defaults);
		in.params = &defaults;
	}
	memset(out, 0, sizeof(*out));
	out->kind = FL_VERDICT_NONE;
	out->hop = -1;
	out->ratio = 1.0;
	out->speedup = 1.0;
	out->judged_hops = count_judged(&in);
	for (size_t t = 0; t < sizeof(tries) / sizeof(tries[0]); t++) {
		int found = tries[t](&in, out);

		if (found > 0)
			return;
		if (found < 0) {
			verdict_say(out, "no verdict: out of memory while judging %zu hops", nhops);
			return;
		}
	}
	explain_none(&in, out);
}
