/* Which FABRICLAB_FAULT rules apply where: a selector left out matches everything. */
#include <string.h>
#include <strings.h>

#include "fault_spec.h"

static bool name_selects(const char *selector, const char *actual, bool ignore_case)
{
	if (!selector[0])
		return true;
	if (!actual)
		return false;
	return ignore_case ? !strcasecmp(selector, actual) : !strcmp(selector, actual);
}

bool fl_fault_rule_targets_node(const struct fl_fault_rule *rule, const char *node)
{
	/* Host names compare without case, as DNS does; device names are exact. */
	return name_selects(rule->where.node, node, true);
}

bool fl_fault_rule_matches(const struct fl_fault_rule *rule, const struct fl_fault_site *site)
{
	const struct fl_fault_where *w = &rule->where;

	return name_selects(w->node, site->node, true) && name_selects(w->peer, site->peer, true) &&
	       name_selects(w->dev, site->dev, false) && (w->rank < 0 || w->rank == site->rank);
}
