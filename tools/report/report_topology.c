/*
 * The merged hops judged with a topology (`fabriclab report --topology`, and
 * the lab, which knows its own): the elements the hops share are the model's
 * switch candidates (plugin/verdict/verdict_topology.h).
 */
#include "report.h"
#include "tools/topology/topology.h"

int report_judge_topology(struct report_set *set, struct fl_verdict_params *params,
			  const char *path, struct fl_hop_elements *e)
{
	struct ft_topo t;
	char why[512];
	int rc = -1;

	/* a topology that cannot be read or does not match: topo_report says why */
	if (topo_read(path, &t, why, sizeof(why)))
		return -1;
	if (!topo_hop_elements(&t, set->figures, set->nhops, e, why, sizeof(why))) {
		params->elements = e;
		set->elements = e;
		rc = report_judge(set, params);
	}
	ft_free(&t);
	return rc;
}
