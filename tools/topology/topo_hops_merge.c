/*
 * Elements that the same hops cross cannot be told apart by the reports: they
 * are one explanation. One spine between two leaves is the spine layer: keep
 * "spine0". Two spines that ECMP spreads every hop between the leaves over
 * are crossed alike: the layer above them, "the spine layer (spine0,
 * spine1)", says what the data can tell.
 */
#include <stdlib.h>
#include <string.h>

#include "topology.h"

static bool same_hops(const struct fl_hop_elements *e, const struct fl_shared_element *a,
		      const struct fl_shared_element *b)
{
	return a->count == b->count &&
	       !memcmp(e->hops + a->first, e->hops + b->first, a->count * sizeof(*e->hops));
}

/* Names what rep stands for: "the spine layer (spine0, spine1)", or "spine0 or spine1". */
static void name_with(struct fl_shared_element *rep, const char *other, bool first, bool alike)
{
	size_t n = strlen(rep->name);

	if (n + strlen(other) + 5 >= sizeof(rep->name))
		return;
	if (alike) {
		strcat(rep->name, " or ");
	} else if (first) {
		strcat(rep->name, " (");
	} else {
		rep->name[n - 1] = '\0';
		strcat(rep->name, ", ");
	}
	strcat(rep->name, other);
	if (!alike)
		strcat(rep->name, ")");
}

static bool is_layer(enum fl_element_kind k)
{
	return k == FL_ELEMENT_LEAF_UPLINKS || k == FL_ELEMENT_SPINES;
}

/*
 * One group of elements crossed by the same hops: the most specific kind
 * with a single member stands for them all (where the most specific kind has
 * one, it is that), a layer named with the layer below it that ties ("the
 * spine layer (spine0, spine1)"); where every kind ties, "spine0 or spine1".
 */
static void merge_group(struct fl_hop_elements *e, const size_t *g, size_t ng, bool *gone)
{
	size_t per[FL_ELEMENT_KINDS] = { 0 }, rep = g[0];
	int single = -1, below = -1;
	bool first = true;

	for (size_t i = 0; i < ng; i++)
		per[e->el[g[i]].kind]++;
	for (int k = 0; k < FL_ELEMENT_KINDS && single < 0; k++)
		if (per[k] == 1)
			single = k;
	for (int k = 0; k < (single < 0 ? FL_ELEMENT_KINDS : single); k++)
		if (per[k] > 1)
			below = k; /* the tied kind nearest under the representative */
	for (size_t i = 0; i < ng; i++)
		if ((single >= 0 && (int)e->el[g[i]].kind == single) ||
		    (single < 0 && (int)e->el[g[i]].kind == below && rep == g[0] &&
		     e->el[g[0]].kind != e->el[g[i]].kind))
			rep = g[i];
	for (size_t i = 0; i < ng; i++) {
		const struct fl_shared_element *el = &e->el[g[i]];

		if (g[i] == rep)
			continue;
		gone[g[i]] = true;
		if ((int)el->kind != below)
			continue;
		if (single < 0)
			name_with(&e->el[rep], el->name, false, true);
		else if (is_layer(e->el[rep].kind))
			name_with(&e->el[rep], el->name, first, false), first = false;
	}
	if (single < 0) /* it stands for several switches alike: no one of them */
		e->el[rep].sw[0] = '\0';
}

void topo_merge_equal(struct fl_hop_elements *e)
{
	bool *gone = calloc(e->nel ? e->nel : 1, sizeof(*gone));
	size_t *g = malloc((e->nel ? e->nel : 1) * sizeof(*g)), kept = 0;

	if (!gone || !g) {
		free(gone);
		free(g);
		return;
	}
	for (size_t i = 0; i < e->nel; i++) {
		size_t ng = 0;

		if (gone[i])
			continue;
		for (size_t j = i; j < e->nel; j++)
			if (!gone[j] && same_hops(e, &e->el[i], &e->el[j]))
				g[ng++] = j;
		if (ng > 1)
			merge_group(e, g, ng, gone);
	}
	for (size_t i = 0; i < e->nel; i++)
		if (!gone[i])
			e->el[kept++] = e->el[i];
	e->nel = kept;
	free(gone);
	free(g);
}
