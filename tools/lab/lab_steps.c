/*
 * The job's step times as a trainer sees them: a step ends when the slowest
 * rank's all-reduce ends, so each step's time is the longest among the ranks.
 * The communication share is the part of all ranks' step time spent in the
 * all-reduce, waiting included: what a faster fabric could win back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

struct step_sums {
	double step_ms;   /* the slowest rank's compute + all-reduce */
	double reduce_ms; /* the slowest rank's all-reduce */
};

struct lab_figures {
	struct step_sums *steps;
	double compute_total, reduce_total;
	double wrong;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0.0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static int read_steps(const struct lab_opts *o, struct lab_figures *fig)
{
	char path[PATH_MAX + 16], line[256];
	long rows = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/steps.tsv", o->run_dir);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "fabriclab lab: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		double compute, reduce, wrong;
		struct step_sums *s;
		long step;
		int rank;

		if (line[0] == '#')
			continue;
		if (sscanf(line, "%d %ld %lf %lf %lf", &rank, &step, &compute, &reduce,
			   &wrong) != 5 || step < 1 || step > o->steps)
			break;
		s = &fig->steps[step - 1];
		s->step_ms = compute + reduce > s->step_ms ? compute + reduce : s->step_ms;
		s->reduce_ms = reduce > s->reduce_ms ? reduce : s->reduce_ms;
		fig->compute_total += compute;
		fig->reduce_total += reduce;
		fig->wrong += step == 1 ? wrong : 0;
		rows++;
	}
	fclose(f);
	if (rows != o->steps * o->ranks) {
		fprintf(stderr, "fabriclab lab: %s: %ld rows, expected %ld\n", path, rows,
			o->steps * o->ranks);
		return -1;
	}
	return 0;
}

/* A ring all-reduce moves 2(n-1)/n of the buffer over every hop. */
static double ideal_reduce_ms(const struct lab_opts *o)
{
	double bytes = (double)(o->grad_bytes / sizeof(float) * sizeof(float));

	if (o->ranks < 2 || o->link_rate_bytes <= 0)
		return 0.0;
	return 2.0 * (o->ranks - 1) / o->ranks * bytes / o->link_rate_bytes * 1e3;
}

static void print_table(const struct lab_opts *o, const struct lab_figures *fig, FILE *out)
{
	double *v = malloc((size_t)o->steps * sizeof(double));
	double med, med_reduce, share, total = fig->compute_total + fig->reduce_total;

	fprintf(out, "\n%6s %12s %16s\n", "step", "time ms", "all-reduce ms");
	for (long s = 0; s < o->steps; s++)
		fprintf(out, "%6ld %12.1f %16.1f\n", s + 1, fig->steps[s].step_ms,
			fig->steps[s].reduce_ms);
	if (!v)
		return;
	for (long s = 0; s < o->steps; s++)
		v[s] = fig->steps[s].step_ms;
	med = median(v, (size_t)o->steps);
	for (long s = 0; s < o->steps; s++)
		v[s] = fig->steps[s].reduce_ms;
	med_reduce = median(v, (size_t)o->steps);
	free(v);
	share = total > 0 ? 100.0 * fig->reduce_total / total : 0.0;
	fprintf(out, "\nmedian step: %.1f ms (all-reduce %.1f ms; at the link rate it would take "
		"%.1f ms)\n", med, med_reduce, ideal_reduce_ms(o));
	fprintf(out, "communication share: %.0f%% of the ranks' step time is spent in the "
		"all-reduce (compute %.0f%%)\n", share, 100.0 - share);
	lab_print_projection(o, med_reduce, ideal_reduce_ms(o), out);
}

int lab_print_steps(const struct lab_opts *o, FILE *out)
{
	struct lab_figures fig = { .steps = calloc((size_t)o->steps, sizeof(struct step_sums)) };
	int rc;

	if (!fig.steps) {
		fprintf(stderr, "fabriclab lab: out of memory\n");
		return -1;
	}
	rc = read_steps(o, &fig);
	if (!rc)
		print_table(o, &fig, out);
	if (!rc && fig.wrong > 0) {
		fprintf(stderr, "fabriclab lab: the all-reduce gave %.0f wrong elements\n",
			fig.wrong);
		rc = -1;
	}
	free(fig.steps);
	return rc;
}
