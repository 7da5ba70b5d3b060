/*
 * `fabriclab report --topology FILE`: the elements the report's hops share,
 * each with the rate of its hops against the others' and the commands that
 * would confirm it, the slowest first. A topology that cannot be read or
 * does not name the hops' ends is said, and the report stands without it.
 * With out NULL (the JSON output) it is only read and checked.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

#define SHOWN 6

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median rate of hops[idx[0..n)], or of all n hops when idx is NULL; 0 none measured. */
static double median_rate(const struct fl_hop_figures *hops, const size_t *idx, size_t n)
{
	double *r = malloc((n ? n : 1) * sizeof(*r)), m = 0;
	size_t k = 0;

	for (size_t i = 0; r && i < n; i++) {
		double v = fl_verdict_rate(&hops[idx ? idx[i] : i]);

		if (v > 0)
			r[k++] = v;
	}
	if (k) {
		qsort(r, k, sizeof(*r), cmp_double);
		m = k % 2 ? r[k / 2] : (r[k / 2 - 1] + r[k / 2]) / 2;
	}
	free(r);
	return m;
}

struct ranked {
	size_t el;
	double ratio;
};

static int cmp_ratio(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	return (x->ratio > y->ratio) - (x->ratio < y->ratio);
}

static void print_element(const struct ft_topo *t, const struct fl_hop_elements *e,
			  const struct ranked *r, const struct fl_hop_figures *hops, FILE *out)
{
	const struct fl_shared_element *el = &e->el[r->el];
	char cmds[2048];

	fprintf(out, "  %-44s %-12s %3zu hops at %.2fx the median hop%s\n", el->name,
		fl_element_kind_name(el->kind), el->count, r->ratio,
		el->certain ? "" : " (ECMP: the hops that may cross it)");
	if (topo_confirm_commands(t, e, el, hops, cmds, sizeof(cmds)))
		for (char *l = strtok(cmds, "\n"); l; l = strtok(NULL, "\n"))
			fprintf(out, "      %s\n", l);
}

int topo_report(const char *path, const struct fl_hop_figures *hops, size_t n, FILE *out,
		FILE *err)
{
	struct fl_hop_elements e;
	struct ft_topo t;
	struct ranked *r;
	char why[512];
	double all;

	if (topo_read(path, &t, why, sizeof(why)) ||
	    topo_hop_elements(&t, hops, n, &e, why, sizeof(why))) {
		fprintf(err, "fabriclab report: --topology: %s; the verdict stands without the "
			"topology\n", why);
		ft_free(&t);
		return -1;
	}
	if (!out) { /* only checked: --json has no place for it yet */
		fl_hop_elements_free(&e);
		ft_free(&t);
		return 0;
	}
	all = median_rate(hops, NULL, n);
	r = calloc(e.nel ? e.nel : 1, sizeof(*r));
	for (size_t i = 0; r && i < e.nel; i++) {
		double m = median_rate(hops, e.hops + e.el[i].first, e.el[i].count);

		r[i] = (struct ranked){ i, all > 0 && m > 0 ? m / all : 1.0 };
	}
	if (r)
		qsort(r, e.nel, sizeof(*r), cmp_ratio);
	fprintf(out, "\ntopology %s (%s): %zu shared elements the hops cross, the slowest first "
		"(the diagnosis's switch candidates):\n", path, t.layout, e.nel);
	for (size_t i = 0; r && i < e.nel && i < SHOWN; i++)
		print_element(&t, &e, &r[i], hops, out);
	if (e.nel > SHOWN)
		fprintf(out, "  ... and %zu more\n", e.nel - SHOWN);
	free(r);
	fl_hop_elements_free(&e);
	ft_free(&t);
	return 0;
}
