/*
 * The ranks this process holds, one per (communicator, rank): several
 * communicators and several ranks per process (one per GPU thread) each get
 * an entry, with the profiler's counts of its context once that finalized.
 * Setup and finalize paths only, under one lock; bounded.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "report.h"
#include "report_model.h"

static pthread_mutex_t ranks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fl_report_rank ranks[FL_REPORT_MAX_RANKS];
static int nranks_held;
static int nranks_left_out; /* notes of ranks past the table: said in the report */
static int warned;
static uint64_t prof_unhomed; /* the profiler's process-wide count, as last told */

static struct fl_report_rank *find(uint64_t comm_hash, int rank)
{
	for (int i = 0; i < nranks_held; i++)
		if (ranks[i].comm_hash == comm_hash && ranks[i].rank == rank)
			return &ranks[i];
	if (nranks_held == FL_REPORT_MAX_RANKS)
		return NULL;
	ranks[nranks_held].comm_hash = comm_hash;
	ranks[nranks_held].rank = rank;
	return &ranks[nranks_held++];
}

void fl_report_note_rank(uint64_t comm_hash, int rank, int nranks, int nnodes,
			 const char *comm_name)
{
	struct fl_report_rank *r;

	pthread_mutex_lock(&ranks_lock);
	r = find(comm_hash, rank);
	if (r) {
		r->nranks = nranks;
		r->nnodes = nnodes;
		snprintf(r->comm_name, sizeof(r->comm_name), "%s", comm_name ? comm_name : "");
	} else {
		nranks_left_out++;
		if (!warned) {
			warned = 1;
			FL_WARN("more than %d ranks in this process: the rest are not named in "
				"reports", FL_REPORT_MAX_RANKS);
		}
	}
	pthread_mutex_unlock(&ranks_lock);
}

void fl_report_note_prof_counts(uint64_t comm_hash, int rank,
				const struct fl_report_prof_counts *n)
{
	struct fl_report_rank *r;

	pthread_mutex_lock(&ranks_lock);
	r = find(comm_hash, rank);
	if (r) {
		r->prof_counted = 1;
		r->prof.ops += n->ops;
		r->prof.relayed_ops += n->relayed_ops;
		r->prof.dropped_ops += n->dropped_ops;
		r->prof.dropped_links += n->dropped_links;
		r->prof.dropped_steps += n->dropped_steps;
		r->prof.abandoned_steps += n->abandoned_steps;
	}
	pthread_mutex_unlock(&ranks_lock);
}

void fl_report_note_prof_unhomed(uint64_t unhomed_ops)
{
	pthread_mutex_lock(&ranks_lock);
	if (unhomed_ops > prof_unhomed)
		prof_unhomed = unhomed_ops;
	pthread_mutex_unlock(&ranks_lock);
}

uint64_t fl_report_prof_unhomed(void)
{
	uint64_t n;

	pthread_mutex_lock(&ranks_lock);
	n = prof_unhomed;
	pthread_mutex_unlock(&ranks_lock);
	return n;
}

int fl_report_ranks(struct fl_report_rank *out, int max, int *left_out)
{
	int n;

	pthread_mutex_lock(&ranks_lock);
	n = nranks_held < max ? nranks_held : max;
	if (left_out)
		*left_out = nranks_left_out + (nranks_held - n);
	memcpy(out, ranks, (size_t)n * sizeof(*out));
	pthread_mutex_unlock(&ranks_lock);
	return n;
}
