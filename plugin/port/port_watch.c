/*
 * The ports as the report sees them: one sample at the plugin's init, the
 * base of the counter deltas, and a fresh sample at each report. Only the
 * init path and the report thread come here.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "port_info.h"
#include "base/sysfs_read.h"

static struct {
	pthread_once_t once;
	struct fl_port_list *base; /* NULL: not started or out of memory */
	uint64_t base_ns;
} watch = { .once = PTHREAD_ONCE_INIT };

static void take_base(void)
{
	watch.base = malloc(sizeof(*watch.base));
	if (!watch.base)
		return;
	fl_ports_scan(fl_sysfs_root(), watch.base);
	watch.base_ns = fl_clock_mono_ns();
}

void fl_port_watch_start(void)
{
	pthread_once(&watch.once, take_base);
}

const struct fl_port_list *fl_port_watch_base(void)
{
	return watch.base;
}

struct fl_port_list *fl_port_watch_now(double *seconds)
{
	struct fl_port_list *now;

	*seconds = 0.0;
	if (!watch.base)
		return NULL;
	now = malloc(sizeof(*now));
	if (!now)
		return NULL;
	/* The same ports as at init, so that every delta has its base. */
	memcpy(now, watch.base, sizeof(*now));
	fl_ports_refresh(fl_sysfs_root(), now);
	*seconds = (double)(fl_clock_mono_ns() - watch.base_ns) / 1e9;
	return now;
}

void fl_port_watch_stop(void)
{
	free(watch.base);
	watch.base = NULL;
}
