/*
 * The diagnosis model (docs/report-format.md, "The model"): every hop's
 * observations, the explanations that could produce them, and how well each
 * explains them. One model for the merged report, the plugin's own report,
 * the live windows and the sweep.
 *
 * Per hop, three observations, each compared with the other hops of its group
 * (same transport, line rate and view):
 *   y  ln of its byte rate over busy wire time, with a sampling error from its
 *      own requests (the spread of their wire times over sqrt(requests));
 *   m  ln of its typical request over its own request time (its median
 *      wire time without the round trip: verdict_observe.c), with the
 *      sampling error of a median of its requests: a slow wire stretches
 *      every request, a rank starved of CPU stretches a few;
 *   u  ln(e + senders' waits) - ln(e + receivers' waits), e the smallest
 *      effect named (verdict_observe.c, wait_scale): where receivers are
 *      late to post (a straggler) the senders into them wait more and the
 *      receiver itself finds its data already there.
 * The noise between healthy hops is fitted per run (one scale per
 * observation), with Student-t tails so that one odd hop cannot decide alone.
 */
#ifndef FL_VERDICT_MODEL_H
#define FL_VERDICT_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "verdict.h"

/* The observations of one hop; has_* false where that end did not report. */
struct vm_hop {
	int group;        /* comparable hops share a group; -1 no rate observed */
	double y, sy;     /* ln rate (GB/s) and its sampling error */
	bool has_m;
	double m, sm;     /* ln(typical request / its own request time), its sampling error */
	bool has_u;
	int ugroup;       /* hops whose waits were timed by the same ends */
	double u;
	double qs, qr;    /* the waits u is made of: senders' share, receivers' at a time */
	double ln_line;   /* ln line rate; meaningful only where anchored */
	bool anchored;    /* its requests were wire-bound: healthy runs near line */
};

enum vm_kind { VM_LINK, VM_DEVICE, VM_NODE, VM_RAIL, VM_SWITCH, VM_KINDS };

/* One culprit the model may name: the hops it slows (or makes wait). */
struct vm_candidate {
	enum vm_kind kind;
	int hop;          /* link: the hop; device: one of its hops; else -1 */
	const char *node; /* device, node: names inside the hop array; switch: the element's */
	const char *dev;  /* device, rail */
	size_t first, count; /* its hops: members[first .. first+count) */
	int parts;        /* device 2 (out of it, into it), node 3 (into it, upstream, out), else 1 */
	double du_min;    /* node: the smallest wait shift of an effect worth naming */
	/*
	 * switch, where connections pick their path by a hash (ECMP): each hop
	 * through it is its own part, slowed by the share of its connections
	 * that took the slow path: none (a spike at 0) or any (a slab).
	 */
	bool partial;
	double score;     /* log evidence of {this culprit} against none */
};

/* A fitted explanation: up to two culprits and every parameter. */
#define VM_MAX_CULPRITS 2
/*
 * A device may be slow differently each way (a transmitter and a receiver
 * fail apart): its hops out of it and into it are two parts, each with shifts
 * of its own. Two links through one NIC are then the same prediction as that
 * NIC, and the prior decides: one fault is likelier than two. A straggler has
 * three: the hops into it, the hops into its senders (held up behind it) and
 * the hops out of it (starved by it).
 */
#define VM_PARTS 16 /* device 2, node 3; a partial switch one per hop, at most this many */
struct vm_fit {
	int ncul;
	int cul[VM_MAX_CULPRITS];            /* candidate indices */
	double dy[VM_MAX_CULPRITS][VM_PARTS]; /* rate shift of its hops (ln; <= ln(1 - min effect)) */
	/*
	 * A slowed wire stretches its median request (1 + kappa) times as much as
	 * its bytes: the requests in flight queue behind each other (kappa > 0),
	 * or pauses miss most requests (kappa near -1). One figure of the
	 * fabric, fitted with the explanation (as the spreads are).
	 */
	double kappa;
	double du[VM_MAX_CULPRITS][VM_PARTS]; /* wait shift of its hops */
	double loglik;                     /* maximised, with the line prior */
	double occam;                      /* ln of the Occam factors of the culprits' parameters */
	double tau_y, tau_m, tau_u;        /* healthy hops' spread in each observation */
	int absorbed;                      /* 1 + the culprit (index into cul) the other explains; 0 */
};

/* The model's state over one set of hops. */
struct vm_state {
	const struct fl_hop_figures *figs;
	size_t n;
	struct vm_hop *hops;
	int ngroups, nugroups;
	double *mu_y, *mu_m, *mu_u;        /* group levels of the fit last made */
	double *du_floor;                  /* per wait group: a straggler's smallest shift */
	double *group_line;                /* ln line rate of an anchored group, else NaN */
	double *group_rtt;                 /* a group's round trip, us (verdict_observe.c); < 0 unknown */
	double *group_info;                /* sum of 1 / variance of y over each group's hops */
	double group_info_tau;             /* the tau_y group_info was summed at */
	double *off;                       /* 3 n: each hop's shifts in y, (unused), u */
	double kappa;                      /* that of the fit whose shifts off holds */
	bool bytes_only;                   /* a fit's first round: rate shifts from y alone */
	size_t *list;                      /* n: hops being fitted */
	unsigned char *mark;               /* n: zero between uses */
	struct vm_candidate *cands;
	size_t ncands;
	size_t *members;                   /* hop indices, per candidate */
	unsigned char *member_part;        /* which part of its candidate each member is */
	size_t nmembers;
	double kind_prior[VM_KINDS];       /* ln prior of one candidate of each kind */
	double *scratch;                   /* 4 n doubles */
	double min_effect;                 /* the smallest effect named (1 - min_ratio) */
	double wait_floor;                 /* waits are resolved to it (verdict_observe.c) */
	double du_range;                   /* the widest wait shift: ln((floor + 10) / floor) */
	double dy_max;                     /* ln(1 - min_effect): a culprit is at least that slow */
	double line_odds;                  /* fl_verdict_params.line_odds */
	const struct fl_hop_elements *elements; /* fl_verdict_params.elements */
	/*
	 * None's fit as first made (vm_fit): its levels (mu_y, mu_m, group_line:
	 * ngroups each; mu_u: nugroups) and figures; none_levels NULL before.
	 */
	double *none_levels;
	struct vm_fit none_fit;
	bool none_bytes_only;
};

/* How sure the model must be to name a culprit, or to call the fabric healthy. */
#define FL_VERDICT_NAME_CONFIDENCE 0.9

/* Observes the hops under params (the smallest effect, the line's odds, the elements). */
int vm_observe(struct vm_state *s, const struct fl_hop_figures *figs, size_t n,
	       const struct fl_verdict_params *params);
int vm_candidates(struct vm_state *s);
/* ln prior of the healthy explanation, and of one given pair of culprits. */
double vm_prior_none(void);
double vm_prior_pair(const struct vm_state *s);
void vm_free(struct vm_state *s);

/* Fits the explanation with fit->cul[0..ncul) to every hop; the group levels land in s. */
void vm_fit(struct vm_state *s, struct vm_fit *fit);
/*
 * Fits only the culprits' shifts, the rest held where base left it (the
 * levels in s and base's spreads): base's log likelihood plus what the
 * culprits' hops gain. For screening, and for sets so large that one culprit
 * cannot move the levels. Returns fit->loglik.
 */
double vm_fit_local(struct vm_state *s, const struct vm_fit *base, struct vm_fit *fit);
/*
 * base (fitted, its levels in s) and one more culprit, fitted on its own hops
 * with the rest held: forward selection of a second culprit. Returns
 * fit->loglik; fit->occam is base's and the new culprit's.
 */
double vm_fit_add(struct vm_state *s, const struct vm_fit *base, int cand, struct vm_fit *fit);
/*
 * No culprit, at the levels in s and the spreads of `like` (a fitted
 * explanation): the base to screen candidates against once the spreads are
 * no longer inflated by the culprit that none leaves unexplained.
 */
void vm_fit_none_at(struct vm_state *s, const struct vm_fit *like, struct vm_fit *base);
/* The part of candidate c hop h belongs to; -1 when not one of its hops. */
int vm_member_part(const struct vm_state *s, size_t c, size_t h);
const char *vm_kind_label(enum vm_kind k);
enum fl_verdict_kind vm_verdict_kind(enum vm_kind k);

/* The whole diagnosis on the hops' figures: findings, confidence and runner-up into v. */
int vm_diagnose(const struct fl_hop_figures *figs, size_t n,
		const struct fl_verdict_params *params, struct fl_verdict *v);

#endif
