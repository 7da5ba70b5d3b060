/*
 * The application thread's events for each task of a communicator (one per op
 * number of the scenario), before any of its ProxyOps, each only when NCCL
 * emits it for the mask (player_mask.c). 2.28 .. 2.31 (v5+), for one
 * ncclAllReduce (its implicit group):
 *   GroupApi start, depth 1        src/enqueue.cc:2699 (2.28.9 :2464)
 *   GroupApi GroupStartApiStop     :2700; only while started (profiler.cc:307-321)
 *   CollApi start (parent GroupApi), stop        :2701, :2750
 *   GroupApi GroupEndApiStart      src/group.cc:785, the outermost group's end
 *   KernelLaunch start, stop (parent GroupApi)   src/enqueue.cc:1763, :1849
 *   Group start; Coll start (parent CollApi, already stopped; parentGroup Group)
 *                                  :1437-1438; src/plugin/profiler.cc:486-487
 *   (the ProxyOps are uploaded under the Coll)   :1440-1441
 *   Coll stop, Group stop          :1443-1444
 *   GroupApi stop                  src/group.cc:876
 * (2.30.7 lines unless said; 2.28.9 and 2.29.7 emit the same sequence.) For a
 * grouped ncclSend + ncclRecv (ncclGroupStart/End around them) the GroupApi
 * starts with the first call, at depth 2, and only it records
 * GroupStartApiStop (:2629-2630 and profiler.cc:288-292: profilerGroupDepth is
 * set then); each call has its P2pApi (:2632, :2686); the group's end records
 * GroupEndApiStart and stops the GroupApi once; each P2p's parent is its P2pApi.
 * 2.23 .. 2.27 (v1..v4) have no API events; a Coll's or P2p's parent is the
 * Group (2.27.7 src/plugin/profiler.cc:245, 281).
 */
#include <string.h>

#include "player_internal.h"
#include "plugin/abi/profiler_abi.h"

struct task_ctx {
	const struct player_scenario *s;
	const struct player_driver *d;
	void *ctx;
	int rank, mask, api;
};

static int start_if(const struct task_ctx *t, void **h, struct player_descr *pd)
{
	*h = NULL;
	if (!player_emits(t->mask, pd->type))
		return 0;
	pd->rank = t->rank;
	pd->comm_hash = t->s->comm_hash;
	return t->d->start(t->ctx, h, pd);
}

static int stop_if(const struct task_ctx *t, void *h)
{
	return h ? t->d->stop(h) : 0;
}

static int record_if(const struct task_ctx *t, void *h, int state)
{
	return h ? t->d->record_arg(h, state, 0) : 0;
}

static size_t count_of(const struct player_scenario *s)
{
	return (size_t)(s->chunk * (uint64_t)s->nsteps * (uint64_t)s->nchannels / 4);
}

/* The API half up to the kernel launch; *gapi stays started until the group ends. */
static int api_calls(const struct task_ctx *t, void **gapi, const char *const *funcs,
		     void **apis, int ncalls)
{
	uint64_t type = ncalls > 1 ? FL_PROF_EV_P2P_API : FL_PROF_EV_COLL_API;
	struct player_descr pd = { .type = FL_PROF_EV_GROUP_API, .group_depth = ncalls > 1 ? 2 : 1 };
	void *kl;
	int rc;

	rc = start_if(t, gapi, &pd);
	rc |= record_if(t, *gapi, FL_PROF_ST_GROUP_START_API_STOP);
	for (int i = 0; i < ncalls; i++) {
		pd = (struct player_descr){ .type = type, .parent = *gapi, .func = funcs[i],
					    .count = count_of(t->s) };
		rc |= start_if(t, &apis[i], &pd);
		rc |= stop_if(t, apis[i]);
	}
	rc |= record_if(t, *gapi, FL_PROF_ST_GROUP_END_API_START);
	pd = (struct player_descr){ .type = FL_PROF_EV_KERNEL_LAUNCH, .parent = *gapi };
	rc |= start_if(t, &kl, &pd);
	return rc | stop_if(t, kl);
}

/* One task: its Coll (ncalls 1) or its P2p send and receive (2); tasks[] keep their handles. */
static int task(const struct task_ctx *t, int k, int ncalls, void **tasks)
{
	static const char *const coll_funcs[] = { "AllReduce" }, *const p2p_funcs[] = { "Send", "Recv" };
	const char *const *funcs = ncalls > 1 ? p2p_funcs : coll_funcs;
	const struct player_scenario *s = t->s;
	void *gapi = NULL, *apis[2] = { NULL, NULL }, *grp;
	struct player_descr pd = { .type = FL_PROF_EV_GROUP };
	int rc = t->api ? api_calls(t, &gapi, funcs, apis, ncalls) : 0;

	rc |= start_if(t, &grp, &pd);
	for (int i = 0; i < ncalls; i++) {
		pd = (struct player_descr){
			.type = ncalls > 1 ? FL_PROF_EV_P2P : FL_PROF_EV_COLL,
			.parent = t->api ? apis[i] : grp, .parent_group = grp, .seq = (uint64_t)k,
			.func = funcs[i], .count = count_of(s), .nchannels = (uint8_t)s->nchannels,
			.peer = (t->rank + (i ? s->nranks - 1 : 1)) % s->nranks,
		};
		rc |= start_if(t, &tasks[i], &pd);
	}
	/* The ProxyOps were uploaded under them; NCCL stops them right after (:1443-1444). */
	for (int i = 0; i < ncalls; i++)
		rc |= stop_if(t, tasks[i]);
	rc |= stop_if(t, grp);
	return rc | stop_if(t, gapi);
}

int player_tasks(const struct player_scenario *s, void *ctx, int rank, int mask,
		 void *tasks[][2])
{
	struct task_ctx t = { s, player_driver(s->version), ctx, rank, mask, s->version >= 5 };
	int rc = 0;

	for (int k = 0; k < s->ops; k++)
		rc |= task(&t, k, s->p2p && (k & 1) ? 2 : 1, tasks[k]);
	return rc;
}
