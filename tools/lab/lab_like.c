/*
 * `--like hdr|ndr|xdr|roce400`: the lab in the regime of a real fabric, and
 * `--hw-fault SPEC`: faults of the emulated NIC's hardware.
 *
 * The machine cannot move 100 GB/s between processes, so a preset slows time
 * down: every rate divided by one factor, every latency multiplied by it.
 * What is dimensionless stays as on the real fabric: a step's time on the
 * wire over the round trip, a message over the bandwidth-delay product,
 * steps in flight, connections per hop. The emulated NIC (fake verbs with
 * the fabric's description) applies the physics to every RDMA operation,
 * whoever posts it; the plugin paces nothing and is told the port's speed
 * (below 1x SDR, the slowest a verbs port can say, so the factor can be large
 * enough for this machine to keep up).
 *
 * Hardware faults (lab_hw.c) are in the fabric's description, read by the
 * emulated NIC, never by the plugin: it sees them through what it measures,
 * as on a cluster.
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

/* The physics the preset gives the fabric's description (lab_topology.c). */
void lab_like_physics(const struct lab_opts *o, struct ft_topo *t)
{
	double f;

	t->physics = o->like != NULL;
	if (!o->like)
		return;
	f = lab_like_scale(o->like);
	t->rate_div = o->like->rate_div;
	t->latency_ns = (uint64_t)(o->like->one_way_us * 1e3 * f + 0.5);
	t->msg_cost_ns = (uint64_t)(o->like->msg_cost_us * 1e3 * f + 0.5);
}

/* What the plugin and the shim are told for every rank (lab_fabric_env): never the physics,
 * which only the fabric's description carries. */
void lab_like_env(const struct lab_opts *o)
{
	double f;
	char v[32];

	if (!o->like) {
		unsetenv("FABRICLAB_PORT_SPEED");
		unsetenv("FABRICLAB_IB_PACE_PIECE_US");
		return;
	}
	f = lab_like_scale(o->like);
	setenv("FABRICLAB_PORT_SPEED", o->link_rate, 1);
	/*
	 * The presets run over GPUDirect, and the shim packs LL and LL128 lines in host memory
	 * only (shim/world.c): --proto sets the size of a step, moved by Simple's pipeline.
	 */
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
		fprintf(out, "hardware fault: %s (in the emulated fabric's description; the plugin "
			"is not told)\n", o->hw_fault);
}

