/*
 * Which events the stand-in NCCL emits for the activation mask the profiler's
 * init wrote, as NCCL decides at each call site (2.30.7 src/plugin/profiler.cc;
 * 2.28.9 the same sets without the CE bits): an event is emitted when the mask
 * holds its type or a type that needs it as an ancestor. Written here apart
 * from the plugin's own table (entry/profiler_next.c), as the oracle it is checked
 * against: a chained profiler must see what this gives it alone.
 */
#include "player_internal.h"
#include "plugin/abi/profiler_abi.h"

int player_emits(int mask, uint64_t type)
{
	const int task_below = FL_PROF_EV_PROXY_OP | FL_PROF_EV_PROXY_STEP | FL_PROF_EV_KERNEL_CH |
			       FL_PROF_EV_NET_PLUGIN;
	const int ce = FL_PROF_EV_CE_COLL | FL_PROF_EV_CE_SYNC | FL_PROF_EV_CE_BATCH;

	switch (type) {
	case FL_PROF_EV_GROUP_API: /* ncclProfilerStartGroupApiEvent, :281-287 */
		return mask & (FL_PROF_EV_GROUP_API | FL_PROF_EV_P2P_API | FL_PROF_EV_COLL_API |
			       FL_PROF_EV_KERNEL_LAUNCH | FL_PROF_EV_GROUP | FL_PROF_EV_COLL |
			       FL_PROF_EV_P2P | task_below | ce);
	case FL_PROF_EV_P2P_API: /* :334-336 */
		return mask & (FL_PROF_EV_P2P_API | FL_PROF_EV_P2P | task_below);
	case FL_PROF_EV_COLL_API: /* :366-369 */
		return mask & (FL_PROF_EV_COLL_API | FL_PROF_EV_COLL | task_below | ce);
	case FL_PROF_EV_KERNEL_LAUNCH: /* :415 */
		return mask & FL_PROF_EV_KERNEL_LAUNCH;
	case FL_PROF_EV_GROUP: /* :456-457 */
		return mask & (FL_PROF_EV_GROUP | FL_PROF_EV_COLL | FL_PROF_EV_P2P | task_below);
	case FL_PROF_EV_COLL: /* :481-482 */
		return mask & (FL_PROF_EV_COLL | task_below);
	case FL_PROF_EV_P2P: /* :521-522 */
		return mask & (FL_PROF_EV_P2P | task_below);
	case FL_PROF_EV_PROXY_OP: /* :571 */
		return mask & (FL_PROF_EV_PROXY_OP | FL_PROF_EV_PROXY_STEP | FL_PROF_EV_NET_PLUGIN);
	case FL_PROF_EV_PROXY_STEP: /* :605, 624 */
		return mask & (FL_PROF_EV_PROXY_STEP | FL_PROF_EV_NET_PLUGIN);
	case FL_PROF_EV_PROXY_CTRL: /* :657 */
		return mask & FL_PROF_EV_PROXY_CTRL;
	case FL_PROF_EV_KERNEL_CH: /* :682 */
		return mask & FL_PROF_EV_KERNEL_CH;
	case FL_PROF_EV_NET_PLUGIN: /* :788 */
		return mask & FL_PROF_EV_NET_PLUGIN;
	default:
		return 0;
	}
}
