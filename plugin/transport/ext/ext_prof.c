/*
 * The inner plugin's net-plugin profiler events. NCCL v10+ hands net init a
 * callback (ncclProfilerCallback) and every isend and irecv buffer a handle
 * that callback reads: at each event start it takes the handle for NCCL's
 * proxy-event handle and follows it to the step's sub-args (2.30.7
 * src/plugin/profiler.cc:782-800). Plugins start events on those handles by
 * default (NCCL's IB: 2.30.7 src/transport/net_ib/p2p.cc:319 keeps a send's
 * handle, :216-219 and :489-490 start an event on it and on each receive's,
 * built in by makefiles/common.mk:192).
 *
 * Two kinds of request reach the inner with no handle of NCCL's: ext's own
 * hidden hello, and those of an NCCL before v10 (or another caller) that
 * passes none. NCCL's callback would read through whatever they carry. So the
 * inner is given ext's callback and, where NCCL gave no handle, ext's own: an
 * event started on it ends here (its event handle set to ext's marker, so its
 * updates and stop end here too); every other event goes to NCCL's callback
 * unchanged, as it would unwrapped. With no callback from NCCL (before v10)
 * every event ends here: the inner always has a callback to call, as under
 * NCCL v10+.
 */
#include "base/error.h"
#include "base/log.h"
#include "ext_internal.h"

/* ncclProfilerNetEventStart (2.30.7 src/include/nccl_common.h:63); stop and updates follow. */
#define NET_EVENT_START 0

static char no_handle_mark, own_event_mark;

void *ext_no_phandle = &no_handle_mark;

_Static_assert(FL_MAX_RECVS == 8, "one handle per buffer of a multi-receive");
void *ext_no_phandles[FL_MAX_RECVS] = {
	&no_handle_mark, &no_handle_mark, &no_handle_mark, &no_handle_mark,
	&no_handle_mark, &no_handle_mark, &no_handle_mark, &no_handle_mark,
};

int ext_prof_event(void **event, int type, void *phandle, int64_t plugin_id, void *data)
{
	fl_prof_fn nccl = fl_log_profiler();

	if (type == NET_EVENT_START) {
		if (phandle != ext_no_phandle && nccl)
			return nccl(event, type, phandle, plugin_id, data);
		if (event)
			*event = &own_event_mark;
		return FL_OK;
	}
	if (!event || *event == &own_event_mark || !nccl)
		return FL_OK;
	return nccl(event, type, phandle, plugin_id, data);
}
