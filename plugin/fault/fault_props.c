/*
 * Device properties as NCCL should see them under fault injection: the lab's
 * link rate as the speed, and no GPUDirect pointer support where nogdr
 * applies (NCCL then stages through host memory, as when nvidia-peermem
 * failed to load). Said at WARN once per device.
 */
#include <stdatomic.h>
#include <stdio.h>

#include "fault_internal.h"
#include "base/identity.h"
#include "base/log.h"

#define MAX_WARNED_DEVS 64

static _Atomic uint64_t nogdr_warned; /* one bit per device */

static void note_nogdr(int dev, int rule, const struct fl_props *props, int before)
{
	uint64_t bit = dev >= 0 && dev < MAX_WARNED_DEVS ? 1ull << dev : 0;
	struct fl_fault_injected e = { 0 };

	if (!bit || (atomic_fetch_or(&nogdr_warned, bit) & bit))
		return;
	FL_WARN("injected fault on device %s: FABRICLAB_FAULT rule %d (%s): GPUDirect RDMA not "
		"offered (pointer support %#x -> %#x)", props->name, rule + 1,
		fl_fault_rule_text(rule), before, props->ptr_support);
	/* A device property, before any connection: traced with connection id 0. */
	fl_fault_observe(0, "nogdr", fl_fault_rule_text(rule), 0, 0);
	snprintf(e.rule, sizeof(e.rule), "%s", fl_fault_rule_text(rule));
	snprintf(e.action, sizeof(e.action), "nogdr");
	snprintf(e.dev, sizeof(e.dev), "%s", props->name ? props->name : "");
	e.ptr_support_before = before;
	e.ptr_support_after = props->ptr_support;
	fl_fault_note_injected(rule, &e);
}

static void apply_nogdr(int dev, struct fl_props *props)
{
	const struct fl_fault_spec *spec = fl_fault_rules();
	struct fl_endpoint me;
	struct fl_fault_site site;

	fl_identity_local(&me, dev, props->name ? props->name : "", 0);
	site = (struct fl_fault_site){ me.node, props->name, NULL, me.rank };
	for (int i = 0; i < spec->nrules; i++) {
		int before = props->ptr_support;

		if (spec->rules[i].action != FL_FAULT_NOGDR ||
		    !fl_fault_rule_matches(&spec->rules[i], &site))
			continue;
		props->ptr_support &= ~(FL_PTR_CUDA | FL_PTR_DMABUF);
		note_nogdr(dev, i, props, before);
		return;
	}
}

void fl_fault_props(int dev, struct fl_props *props)
{
	uint64_t rate = fl_fault_link_rate() ? fl_fault_link_rate() : fl_fault_port_speed();

	if (rate) {
		uint64_t mbps = rate * 8 / 1000000;

		props->speed_mbps = mbps < 1 ? 1 : mbps > 0x7fffffff ? 0x7fffffff : (int)mbps;
	}
	if (fl_fault_active())
		apply_nogdr(dev, props);
}
