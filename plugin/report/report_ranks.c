/*
 * The ranks this process holds, one per (communicator, rank): several
 * communicators and several ranks per process (one per GPU thread) each get
 * an entry. Setup paths only, under one lock; bounded.
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

void fl_report_note_prof_counts(uint64_t comm_hash, int rank, uint64_t ops, uint64_t relayed_ops,
				uint64_t dropped_ops)
{
	struct fl_report_rank *r;

	pthread_mutex_lock(&ranks_lock);
	r = find(comm_hash, rank);
	if (r) {
		r->prof_counted = 1;
		r->prof_ops += ops;
		r->relayed_ops += relayed_ops;
		r->dropped_ops += dropped_ops;
	}
	pthread_mutex_unlock(&ranks_lock);
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
