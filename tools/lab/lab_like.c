/*
 * `--like hdr|ndr|xdr|roce400`: the lab in the regime of a real fabric, and
 * `--hw-fault SPEC`: faults of the emulated NIC's hardware.
 *
 * The machine cannot move 100 GB/s between processes, so a preset slows time
 * down: every rate divided by one factor, every latency multiplied by it.
 * What is dimensionless stays as on the real fabric: a step's time on the
 * wire over the round trip, a message over the bandwidth-delay product,
 * steps in flight, connections per hop. The emulated NIC (fake verbs with
 * FABRICLAB_FAKEVERBS_PHYSICS) applies the physics to every RDMA operation,
 * whoever posts it; the plugin paces nothing and is told the port's speed
 * (below 1x SDR, the slowest a verbs port can say, so the factor can be large
 * enough for this machine to keep up).
 *
 * Hardware faults are set in the environment of the faulty NIC's rank only,
 * read by the fake NIC, never by the plugin: it sees them through what it
 * measures, as on a cluster.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define PORT_MBPS 2500.0 /* 1x SDR: the slowest a verbs port can say */

/*
 * The ports move bytes rate_div times slower than they say. At 2.5 Gbit/s 4
 * ranks on 2 cores left 10% of the emulated NIC's messages late. What the
 * emulation must outlast is the wake-up delay of 16 ranks' threads on 2
 * cores, so the factor is set by the one way it gives: 3.2-4.2 ms of lab time
 * kept 16 ranks 0.2-0.9% late, 1-2 ms left 2-6% (docs/lab.md, "Keeping up").
 * Hence one factor, 3200, for the InfiniBand presets (ports at 62.5-250
 * Mbit/s), and 1600 for roce400, whose longer one way gives 3.2 ms. The
 * plugin is told the rate the ports really run at (FABRICLAB_PORT_SPEED), as
 * a driver that reports its port right would.
 */
static const struct lab_preset presets[] = {
	/* name, fabric, real Gb/s, one-way us, per-message us, port, rate_div,
	 * NCCL channels per NIC */
	{ "hdr", LAB_IB, 200, 1.3, 0.3, "ib:1x:sdr", 40, 2 },
	{ "ndr", LAB_IB, 400, 1.2, 0.3, "ib:1x:sdr", 20, 2 },
	{ "xdr", LAB_IB, 800, 1.1, 0.3, "ib:1x:sdr", 10, 2 },
	{ "roce400", LAB_ROCE, 400, 2.0, 0.3, "eth:1x:2.5g", 10, 2 },
};

static double emulated_mbps(const struct lab_preset *p)
{
	return PORT_MBPS / p->rate_div;
}

static const struct { const char *name; size_t step; const char *what; } protos[] = {
	{ "simple", 512 << 10, "512 KiB steps" },
	{ "ll128", 576000, "600 KiB LL128 steps, 562.5 KiB of payload" },
	{ "ll", 32 << 10, "64 KiB LL steps, 32 KiB of payload" },
};

int lab_like_parse(const char *name, struct lab_opts *o)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (!strcmp(name, presets[i].name)) {
			o->like = &presets[i];
			return 0;
		}
	fprintf(stderr, "fabriclab lab: --like \"%s\": expected hdr, ndr, xdr or roce400\n", name);
	return -1;
}

int lab_proto_parse(const char *name, struct lab_opts *o)
{
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (!strcmp(name, protos[i].name)) {
			o->proto = (int)i;
			return 0;
		}
	fprintf(stderr, "fabriclab lab: --proto \"%s\": expected simple, ll128 or ll\n", name);
	return -1;
}

double lab_like_scale(const struct lab_preset *p)
{
	return p->gbps * 1000.0 / emulated_mbps(p);
}

/* A duration with its unit (ns, us, ms, s) in ns; -1 when malformed. */
static double parse_duration(const char *v, size_t n)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char buf[32], *end;
	double x;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	x = strtod(buf, &end);
	if (errno || end == buf || !(x >= 0))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit))
			return x * units[i].ns;
	return -1;
}

static int hw_bad(const char *spec, const char *field, const char *form)
{
	fprintf(stderr, "fabriclab lab: --hw-fault '%s': %s: expected %s\n", spec, field, form);
	return -1;
}

static int hw_field(const char *spec, const char *key, size_t klen, const char *v, size_t vlen,
		    struct lab_hw *hw, const struct lab_opts *o)
{
	char *end;
	long x;

#define KEY(k) (klen == strlen(k) && !strncmp(key, k, klen))
	if (KEY("node")) {
		if (vlen < 5 || strncmp(v, "node", 4))
			return hw_bad(spec, "node", "node<K>, K from 0 to the nodes - 1");
		x = strtol(v + 4, &end, 10);
		if (end != v + vlen || x < 0 || x >= o->nodes)
			return hw_bad(spec, "node", "node<K>, K from 0 to the nodes - 1");
		hw->node = (int)x;
	} else if (KEY("nic")) {
		x = strtol(v, &end, 10);
		if (end != v + vlen || vlen == 0 || x < 0 || x >= o->rails)
			return hw_bad(spec, "nic", "a NIC index from 0 to --rails - 1");
		hw->nic = (int)x;
	} else if (KEY("rate") && hw->kind == LAB_HW_DOWNGRADE) {
		x = strtol(v, &end, 10);
		if (end != v + vlen - 1 || v[vlen - 1] != '%' || x < 1 || x > 100)
			return hw_bad(spec, "rate", "a share of the line rate from 1% to 100%, "
				      "like rate=50%");
		hw->rate_pct = (int)x;
	} else if ((KEY("every") || KEY("for")) && hw->kind == LAB_HW_PAUSE) {
		double ns = parse_duration(v, vlen);

		if (ns <= 0)
			return hw_bad(spec, KEY("every") ? "every" : "for",
				      "a duration with its unit, like 100ms or 40ms");
		*(KEY("every") ? &hw->every_ns : &hw->for_ns) = ns;
	} else if (KEY("add") && hw->kind == LAB_HW_LATENCY) {
		double ns = parse_duration(v, vlen);

		if (ns <= 0)
			return hw_bad(spec, "add", "a one-way latency with its unit, like 20us");
		hw->add_ns = ns;
	} else {
		char name[32];

		snprintf(name, sizeof(name), "%.*s", (int)(klen < 24 ? klen : 24), key);
		return hw_bad(spec, name[0] ? name : "field",
			      hw->kind == LAB_HW_DOWNGRADE ? "node=, nic= or rate=" :
			      hw->kind == LAB_HW_PAUSE ? "node=, nic=, every= or for=" :
							 "node=, nic= or add=");
	}
#undef KEY
	return 0;
}

/*
 * downgrade:node=nodeK[,nic=J],rate=P%   the port trained down to P% (1-100)
 * pause:node=nodeK[,nic=J],every=T,for=T  paused FOR of every EVERY (wall clock)
 * latency:node=nodeK[,nic=J],add=T        one-way latency added (the fabric's time)
 */
int lab_hw_parse(const char *spec, const struct lab_opts *o, struct lab_hw *hw)
{
	const char *colon = strchr(spec, ':'), *p;

	memset(hw, 0, sizeof(*hw));
	hw->node = -1;
	hw->nic = -1;
	if (!colon)
		return hw_bad(spec, "kind", "downgrade:..., pause:... or latency:...");
	if (colon - spec == 9 && !strncmp(spec, "downgrade", 9))
		hw->kind = LAB_HW_DOWNGRADE;
	else if (colon - spec == 5 && !strncmp(spec, "pause", 5))
		hw->kind = LAB_HW_PAUSE;
	else if (colon - spec == 7 && !strncmp(spec, "latency", 7))
		hw->kind = LAB_HW_LATENCY;
	else
		return hw_bad(spec, "kind", "downgrade, pause or latency before the colon");
	for (p = colon + 1; *p;) {
		size_t len = strcspn(p, ","), klen;
		const char *eq = memchr(p, '=', len);

		if (!eq)
			return hw_bad(spec, "field", "FIELD=VALUE pairs separated by commas");
		klen = (size_t)(eq - p);
		if (hw_field(spec, p, klen, eq + 1, len - klen - 1, hw, o))
			return -1;
		p += len + (p[len] == ',');
	}
	if (hw->node < 0)
		return hw_bad(spec, "node", "node=node<K>: the node whose NIC is faulty");
	if (hw->kind == LAB_HW_DOWNGRADE && !hw->rate_pct)
		return hw_bad(spec, "rate", "rate=P% (1-100)");
	if (hw->kind == LAB_HW_PAUSE && (!hw->every_ns || !hw->for_ns || hw->for_ns >= hw->every_ns))
		return hw_bad(spec, "every/for", "both, with for < every, like every=100ms,for=40ms");
	if (hw->kind == LAB_HW_LATENCY && !hw->add_ns)
		return hw_bad(spec, "add", "add=T, like add=20us");
	return 0;
}

void lab_like_apply(struct lab_opts *o)
{
	if (!o->like)
		return;
	static char rate[32];

	o->fabric = o->like->fabric;
	snprintf(rate, sizeof(rate), "%gmbit", emulated_mbps(o->like));
	o->link_rate = rate;
	o->link_rate_bytes = emulated_mbps(o->like) * 1e6 / 8;
	if (!o->channels)
		o->channels = o->like->channels;
}

/* The fake NIC's physics for every rank (lab_fabric_env). */
void lab_like_env(const struct lab_opts *o)
{
	double f;
	char v[32];

	if (!o->like) {
		unsetenv("FABRICLAB_FAKEVERBS_PHYSICS");
		unsetenv("FABRICLAB_FAKEVERBS_RATE_DIV");
		unsetenv("FABRICLAB_PORT_SPEED");
		unsetenv("FABRICLAB_IB_PACE_PIECE_US");
		return;
	}
	f = lab_like_scale(o->like);
	setenv("FABRICLAB_FAKEVERBS_PHYSICS", "1", 1);
	snprintf(v, sizeof(v), "%d", o->like->rate_div);
	setenv("FABRICLAB_FAKEVERBS_RATE_DIV", v, 1);
	setenv("FABRICLAB_PORT_SPEED", o->link_rate, 1);
	snprintf(v, sizeof(v), "%.0f", o->like->one_way_us * 1e3 * f);
	setenv("FABRICLAB_FAKEVERBS_LATENCY_NS", v, 1);
	snprintf(v, sizeof(v), "%.0f", o->like->msg_cost_us * 1e3 * f);
	setenv("FABRICLAB_FAKEVERBS_MSG_COST_NS", v, 1);
	snprintf(v, sizeof(v), "%zu", protos[o->proto].step);
	setenv("FABRICLAB_SHIM_STEP", v, 1);
	snprintf(v, sizeof(v), "%d", o->channels);
	setenv("FABRICLAB_IB_QPS", v, 1);
	/* the plugin's own throttle (halve-cable) cuts messages into pieces of 100 us on the
	 * wire, as on the real fabric: 100 us there is F x 100 us here */
	snprintf(v, sizeof(v), "%.0f", 100.0 * f);
	setenv("FABRICLAB_IB_PACE_PIECE_US", v, 1);
	/* the NIC paces, the plugin only measures: no FABRICLAB_LINK_RATE */
	unsetenv("FABRICLAB_LINK_RATE");
}

const char *lab_like_port(const struct lab_opts *o)
{
	return o->like ? o->like->port : NULL;
}

/* In a rank's child: the hardware fault when this rank is the faulty NIC. */
void lab_hw_enter(const struct lab_opts *o, int rank)
{
	static const char *const vars[] = { "FABRICLAB_FAKEVERBS_HW_RATE_PCT",
					    "FABRICLAB_FAKEVERBS_HW_PAUSE_NS",
					    "FABRICLAB_FAKEVERBS_HW_ADD_NS" };
	const struct lab_hw *hw = &o->hw;
	char v[64];

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	if (!o->hw_fault || lab_rank_node(o, rank) != hw->node ||
	    (hw->nic >= 0 && lab_rank_rail(o, rank) != hw->nic))
		return;
	if (hw->kind == LAB_HW_DOWNGRADE) {
		snprintf(v, sizeof(v), "%d", hw->rate_pct);
		setenv(vars[0], v, 1);
	} else if (hw->kind == LAB_HW_PAUSE) {
		snprintf(v, sizeof(v), "%.0f:%.0f", hw->every_ns, hw->for_ns);
		setenv(vars[1], v, 1);
	} else {
		snprintf(v, sizeof(v), "%.0f", hw->add_ns * lab_like_scale(o->like));
		setenv(vars[2], v, 1);
	}
}

void lab_like_print(const struct lab_opts *o, FILE *out)
{
	const struct lab_preset *p = o->like;
	double f, step_us, rtt_us;

	if (!p)
		return;
	f = lab_like_scale(p);
	step_us = (double)protos[o->proto].step / (p->gbps * 1e9 / 8) * 1e6;
	rtt_us = 2 * p->one_way_us + p->msg_cost_us;
	fprintf(out, "like %s: %.0f Gb/s %s, %.1f us one way, %.1f us per message, %s (--proto "
		"%s), %d connection%s per hop (--channels)\n", p->name, p->gbps,
		p->fabric == LAB_IB ? "InfiniBand" : "RoCE", p->one_way_us, p->msg_cost_us,
		protos[o->proto].what, protos[o->proto].name, o->channels,
		o->channels == 1 ? "" : "s");
	fprintf(out, "scale: time runs %.0fx slower: ports at %g Mb/s (1x SDR / %d), %.0f us "
		"one way, %.0f us per message; kept: a step on the wire over the round trip "
		"(%.1f us / %.1f us), message over bandwidth-delay product, steps in flight, "
		"connections per hop\n", f, emulated_mbps(p), p->rate_div, p->one_way_us * f, p->msg_cost_us * f,
		step_us, rtt_us);
	if (o->hw_fault)
		fprintf(out, "hardware fault: %s (in node%d's emulated NIC; the plugin is not "
			"told)\n", o->hw_fault, o->hw.node);
}

/* Sums the emulated NICs' schedule lines in ranks.log: did the emulation keep up? */
void lab_like_print_schedule(const struct lab_opts *o, FILE *out)
{
	char path[PATH_MAX + 16], line[512];
	unsigned long long n = 0, late = 0, startup = 0, loop = 0, a, b, c, d, steady;
	double worst = 0, w, pct;
	int ranks = 0;
	FILE *f;

	if (!o->like)
		return;
	snprintf(path, sizeof(path), "%s/ranks.log", o->run_dir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *s = strstr(line, "fakeverbs: schedule: ");

		if (s && sscanf(s, "fakeverbs: schedule: %llu messages executed, %llu late "
				"(%lf%%), worst %lf ms behind; of the late, %llu in the first 0.5 s "
				"and %llu loopback", &a, &b, &pct, &w, &c, &d) == 6) {
			n += a;
			late += b;
			startup += c;
			loop += d;
			worst = w > worst ? w : worst;
			ranks++;
		}
	}
	fclose(f);
	steady = late - startup - loop;
	fprintf(out, "emulated NIC schedule: %llu messages on %d ranks, %llu late (%.2f%%) by "
		"more than a message's wire time, worst %.1f ms behind: %llu in the first 0.5 s "
		"(start-up), %llu loopback reads (flushes), %llu on the fabric after (%.2f%%)%s\n",
		n, ranks, late, n ? 100.0 * (double)late / (double)n : 0.0, worst, startup, loop,
		steady, n ? 100.0 * (double)steady / (double)n : 0.0,
		steady * 100 > n ? " (the machine did not keep up: timings reflect it)" : "");
}
