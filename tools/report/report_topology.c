/*
 * The merged hops judged with a topology (`fabriclab report --topology`, and
 * the lab, which knows its own): the elements the hops share are the model's
 * switch candidates (plugin/verdict/verdict_topology.h), and the commands
 * that confirm the verdict name the switch and its port where the topology
 * says which.
 */
#include <string.h>

#include "report.h"
#include "tools/topology/topology.h"

/* The verdict's own commands, less its pointer to this very command, with the switch's. */
static void switch_commands(struct report_set *set, const struct ft_topo *t,
			    const struct fl_hop_elements *e)
{
	static const char self[] = "fabriclab report <reports> --topology";
	char *line, *end, more[REPORT_COMMANDS_LEN];
	int n;

	set->ncommands = fl_verdict_commands(&set->verdict, set->figures, set->nhops, set->commands,
					     sizeof(set->commands));
	for (line = set->commands; *line; line = end) {
		end = strchr(line, '\n');
		end = end ? end + 1 : line + strlen(line);
		if (!strncmp(line, self, sizeof(self) - 1)) {
			memmove(line, end, strlen(end) + 1);
			set->ncommands--;
			end = line;
		}
	}
	n = topo_confirm_verdict(t, e, &set->verdict, set->figures, set->nhops, more,
				 sizeof(more));
	if (n > 0 && strlen(set->commands) + strlen(more) < sizeof(set->commands)) {
		strcat(set->commands, more);
		set->ncommands += n;
	}
}

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
		if (!rc)
			switch_commands(set, &t, e);
	}
	ft_free(&t);
	return rc;
}
