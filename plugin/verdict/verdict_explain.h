/* The model's scores as posterior probabilities, and the verdict they make (verdict_explain.c). */
#ifndef FL_VERDICT_EXPLAIN_H
#define FL_VERDICT_EXPLAIN_H

#include "verdict_model.h"

#define VM_TOP 6
#define VM_PARTNERS 6
#define VM_PAIRS (VM_TOP * (VM_TOP - 1) / 2 + VM_PARTNERS)

/* What verdict_diagnose.c scored, and the probabilities it gives each explanation. */
struct vm_posterior {
	struct vm_fit none;
	int top[VM_TOP], ntop;            /* the likeliest single culprits, best first */
	struct vm_fit singles[VM_TOP];    /* their fits */
	struct vm_fit pairs[VM_PAIRS];    /* pairs of them */
	int npairs;
	double p_none, p_top[VM_TOP], p_pairs[VM_PAIRS];
	double p_single_rest;             /* every other single culprit together */
};

/*
 * Fills v from the posterior: the named culprits (findings), or none, or not
 * enough evidence, with confidence, runner-up, speedups and reasons. full: the
 * hops are few enough to refit the chosen explanation in full. 0, or -1 when
 * out of memory.
 */
int vm_explain(struct vm_state *s, const struct vm_posterior *p, bool full, struct fl_verdict *v);

#endif
