/*
 * Which pairs run together. The round-robin tournament (circle method): one
 * player stays put, the others turn one place a round, so N players (N+1 with
 * a bye for odd N) meet each other exactly once in N-1 rounds of N/2 pairs.
 */
#include "sweep.h"

#include <stdlib.h>

#include "shim/shim.h"

static int plan_alloc(struct sweep_plan *p, int n, int nrounds)
{
	*p = (struct sweep_plan){ .n = n, .nrounds = nrounds };
	p->peer = malloc((size_t)(nrounds ? nrounds : 1) * (size_t)n * sizeof(*p->peer));
	if (!p->peer)
		return shim_fail(FL_ERR_SYSTEM, "out of memory planning %d rounds", nrounds);
	for (int i = 0; i < nrounds * n; i++)
		p->peer[i] = -1;
	return FL_OK;
}

static void meet(struct sweep_plan *p, int round, int a, int b)
{
	if (a >= p->n || b >= p->n)
		return; /* the bye */
	p->peer[round * p->n + a] = b;
	p->peer[round * p->n + b] = a;
}

int sweep_plan_tournament(struct sweep_plan *p, int n)
{
	int m = n % 2 ? n + 1 : n, turning = m - 1;
	int rc = plan_alloc(p, n, n > 1 ? m - 1 : 0);

	for (int r = 0; !rc && r < p->nrounds; r++) {
		meet(p, r, r, m - 1);
		for (int k = 1; k < m / 2; k++)
			meet(p, r, (r + k) % turning, (r - k + turning) % turning);
	}
	return rc;
}

int sweep_plan_gate(struct sweep_plan *p, int n, int node, const int *peers, int npeers,
		    bool peers_too)
{
	struct sweep_plan among = { 0 };
	int rc = FL_OK;

	if (peers_too && npeers > 1)
		rc = sweep_plan_tournament(&among, npeers);
	if (!rc)
		rc = plan_alloc(p, n, npeers + among.nrounds);
	for (int i = 0; !rc && i < npeers; i++)
		meet(p, i, node, peers[i]);
	/* The reference: the healthy peers among themselves, in their own rounds. */
	for (int r = 0; !rc && r < among.nrounds; r++) {
		for (int i = 0; i < npeers; i++) {
			int j = among.peer[r * npeers + i];

			if (j > i)
				meet(p, npeers + r, peers[i], peers[j]);
		}
	}
	sweep_plan_free(&among);
	return rc;
}

void sweep_plan_free(struct sweep_plan *p)
{
	free(p->peer);
	p->peer = NULL;
}
