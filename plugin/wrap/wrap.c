/* Init, finalize, device queries and the choice of transport. */
#include "wrap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/error.h"
#include "base/identity.h"
#include "base/version.h"
#include "fault/fault.h"
#include "report/report.h"
#include "stats/hop_names.h"
#include "trace/trace.h"
#include "wrap_internal.h"

enum { TRANSPORT_AUTO, TRANSPORT_SOCKET, TRANSPORT_IB };

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_status;
static const struct fl_transport *chosen;
static const struct fl_transport *override;
static struct fl_wrap_ctx process_ctx = { .traffic_class = -1, .process_wide = 1 };
/*
 * v11+ communicators not yet finalized, under comms_lock with the report's final and resume,
 * so that a communicator initialized while the last one is being finalized is either before
 * the final report (which then waits for it) or after it (and resumes reporting).
 */
static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;
static int live_ctxs;

void fl_wrap_use_transport(const struct fl_transport *transport)
{
	override = transport;
}

const struct fl_transport *fl_wrap_transport(void)
{
	return chosen;
}

/* auto: verbs when an active port exists (the ib transport says at INFO why not), else sockets. */
static int choose_transport(void)
{
	static const char *const names[] = { "auto", "socket", "ib", NULL };
	int which, ndev = 0;
	const char *env = getenv("FABRICLAB_TRANSPORT");
	int rc;

	/* ext:<plugin> names another NCCL net plugin; the ext transport reads the rest. */
	if (!override && env && !strncmp(env, "ext:", 4)) {
		chosen = &fl_ext_transport;
		return FL_OK;
	}
	rc = fl_env_choice("FABRICLAB_TRANSPORT", names, TRANSPORT_AUTO, &which);
	if (rc || override || which == TRANSPORT_SOCKET) {
		chosen = override ? override : &fl_socket_transport;
		return rc;
	}
	rc = fl_ib_transport.init();
	if (!rc)
		rc = fl_ib_transport.devices(&ndev);
	if (which == TRANSPORT_IB) {
		chosen = &fl_ib_transport;
		if (!rc && !ndev)
			rc = fl_fail(FL_ERR_USAGE, "FABRICLAB_TRANSPORT=ib, but no active verbs port "
				     "(NCCL_DEBUG=INFO shows what the ib transport found)");
		return rc;
	}
	if (rc)
		FL_WARN("FABRICLAB_TRANSPORT=auto: ib transport unusable (%s)", fl_error_text());
	chosen = !rc && ndev ? &fl_ib_transport : &fl_socket_transport;
	FL_INFO("FABRICLAB_TRANSPORT=auto: %s", chosen == &fl_ib_transport ?
		"an active verbs port, using ib" : "no active verbs port, using sockets");
	return FL_OK;
}

/* The tracer hears of every report built and every drain of the hop table. */
static void trace_stop_hook(void)
{
	fl_trace_stop();
}

static const struct fl_report_hooks report_hooks = {
	.built = fl_trace_report, .tick = fl_trace_tick, .stop = trace_stop_hook,
	.live = fl_trace_live,
};

static void global_init(void)
{
	int ndev = 0;

	FL_INFO("fabriclab %s", fl_version());
	fl_clock_init();
	global_status = fl_identity_check();
	if (!global_status)
		global_status = fl_trace_start();
	if (!global_status && FL_FAULTS)
		fl_fault_set_observer(fl_trace_fault);
	if (!global_status)
		global_status = choose_transport();
	if (!global_status)
		global_status = chosen->init();
	if (!global_status)
		global_status = chosen->devices(&ndev);
	if (!global_status && FL_FAULTS)
		global_status = fl_fault_init(chosen);
	if (!global_status)
		global_status = fl_report_start(chosen, &report_hooks);
	if (global_status) {
		FL_WARN("init failed: %s", fl_error_text());
		return;
	}
	FL_INFO("using %s transport, %d device(s)", chosen->name, ndev);
}

static int init_once(fl_logger_fn logger)
{
	fl_log_set_logger(logger);
	pthread_once(&global_once, global_init);
	return global_status;
}

int fl_wrap_init(void **ctx, uint64_t comm_id, int traffic_class, fl_logger_fn logger)
{
	struct fl_wrap_ctx *c;
	int rc;

	*ctx = NULL;
	rc = init_once(logger);
	if (rc)
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c)
		return FL_ERR_SYSTEM;
	c->comm_id = comm_id;
	c->traffic_class = traffic_class;
	rc = chosen->forward && chosen->forward->open_ctx ?
		     chosen->forward->open_ctx(comm_id, traffic_class, &c->tctx) : FL_OK;
	if (rc) {
		FL_WARN("init of communicator %016llx failed: %s", (unsigned long long)comm_id,
			fl_error_text());
		free(c);
		return rc;
	}
	/* The profiler role, loaded too, tells this ctx its rank (hop_names.h). */
	fl_names_net_init(c, comm_id);
	pthread_mutex_lock(&comms_lock);
	if (live_ctxs++ == 0)
		fl_report_resume(); /* after a final report: this communicator is reported too */
	pthread_mutex_unlock(&comms_lock);
	*ctx = c;
	return FL_OK;
}

int fl_wrap_init_process(void **ctx, fl_logger_fn logger)
{
	int rc = init_once(logger);

	*ctx = rc ? NULL : &process_ctx;
	return rc;
}

/*
 * The last communicator's finalize is the end of the job as NCCL sees it: the final report
 * (a communicator initialized later reports again, fl_report_resume).
 */
int fl_wrap_finalize(void *ctx)
{
	struct fl_wrap_ctx *c = ctx;

	if (!c || c->process_wide)
		return FL_OK;
	if (chosen->forward && chosen->forward->close_ctx && chosen->forward->close_ctx(c->tctx))
		FL_WARN("finalize of communicator %016llx: %s", (unsigned long long)c->comm_id,
			fl_error_text());
	fl_names_net_fini(c);
	free(c);
	pthread_mutex_lock(&comms_lock);
	if (--live_ctxs == 0)
		fl_report_final("the last communicator's finalize");
	pthread_mutex_unlock(&comms_lock);
	return FL_OK;
}

int fl_wrap_devices(int *ndev)
{
	if (!chosen)
		return FL_ERR_INTERNAL;
	return chosen->devices(ndev);
}

int fl_wrap_get_properties(int dev, struct fl_props *props)
{
	int rc;

	if (!chosen)
		return FL_ERR_INTERNAL;
	rc = chosen->get_properties(dev, props);
	if (!rc && FL_FAULTS)
		fl_fault_props(dev, props);
	return rc;
}
