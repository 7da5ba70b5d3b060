/*
 * How long the inner's process-wide init lives. NCCL with a v11+ plugin
 * inits it once per communicator and finalizes each (2.30.7
 * src/plugin/net.cc:173, 309); when the last communicator's finalize brings
 * the plugin's reference count to 0, NCCL unloads it (:314-316, :78-91) and a
 * later communicator loads and inits it again. An inner may count its inits
 * and tear down at 0 (aws-ofi-nccl's finalize_v11, nccl_ofi_interface_nvidia.cpp).
 *
 * ext inits the inner once more for the process (comm id 0, ext_inner_init):
 * what devices, properties and an NCCL before v11 use. Left open, the
 * inner's count never reaches 0. So it is finalized with the last
 * communicator's ctx, as NCCL's unload would end it, and made again before
 * the next communicator's. Its devices and properties (read by the report
 * until the plugin goes) are answered meanwhile from a copy taken just
 * before the finalize, so nothing calls a finalized inner. Inners before v11
 * have no finalize, and an NCCL before v11 above us opens no communicator:
 * for them the process-wide init stays, as it would under NCCL.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "ext_internal.h"

#define EXT_SNAP_DEVS 64

/* Devices and properties as the inner said last, with its strings copied. */
struct ext_snapshot {
	int ndev;
	int ok[EXT_SNAP_DEVS];
	struct fl_props props[EXT_SNAP_DEVS];
	char name[EXT_SNAP_DEVS][64];
	char pci_path[EXT_SNAP_DEVS][256];
	char link_layer[EXT_SNAP_DEVS][16];
};

static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER;
static int users;            /* communicators whose ctx is open */
static int process_live = 1; /* ext_process_ctx is inited (ext_init made it) */
static struct ext_snapshot snap;

static const char *copy_into(char *buf, size_t len, const char *s)
{
	if (!s)
		return NULL;
	snprintf(buf, len, "%s", s);
	return buf;
}

/* Under life_lock, the inner still inited. */
static void take_snapshot(void)
{
	int ndev = 0;

	memset(&snap, 0, sizeof(snap));
	if (ext_plugin.devices(&ndev) || ndev < 0)
		ndev = 0;
	snap.ndev = ndev < EXT_SNAP_DEVS ? ndev : EXT_SNAP_DEVS;
	for (int d = 0; d < snap.ndev; d++) {
		struct fl_props *p = &snap.props[d];

		if (ext_inner_props(&ext_plugin, d, p))
			continue;
		p->name = copy_into(snap.name[d], sizeof(snap.name[d]), p->name);
		p->pci_path = copy_into(snap.pci_path[d], sizeof(snap.pci_path[d]), p->pci_path);
		p->link_layer = copy_into(snap.link_layer[d], sizeof(snap.link_layer[d]),
					  p->link_layer);
		snap.ok[d] = 1;
	}
}

int ext_life_open(void)
{
	int rc = FL_OK;

	pthread_mutex_lock(&life_lock);
	if (!process_live) {
		rc = ext_inner_init(&ext_plugin, fl_log_logger(), ext_prof_event,
				    &ext_process_ctx);
		if (rc)
			rc = fl_fail(rc, "ext: %s init again for the process, after its last "
				     "finalize, failed (error %d)", ext_plugin.name, rc);
		else
			process_live = 1;
	}
	if (!rc)
		users++;
	pthread_mutex_unlock(&life_lock);
	return rc;
}

int ext_life_close(void)
{
	int rc = FL_OK;

	pthread_mutex_lock(&life_lock);
	if (users > 0 && --users == 0 && process_live && ext_plugin.version >= 11 &&
	    ext_process_ctx.inner_ctx) {
		take_snapshot();
		rc = ext_inner_close_ctx(&ext_plugin, &ext_process_ctx);
		ext_process_ctx.inner_ctx = NULL;
		process_live = 0;
		if (rc)
			rc = fl_fail(rc, "ext: %s finalize of the process-wide init failed "
				     "(error %d)", ext_plugin.name, rc);
	}
	pthread_mutex_unlock(&life_lock);
	return rc;
}

int ext_life_devices(int *ndev)
{
	int rc = FL_OK;

	pthread_mutex_lock(&life_lock);
	if (process_live)
		rc = ext_plugin.devices(ndev);
	else
		*ndev = snap.ndev;
	pthread_mutex_unlock(&life_lock);
	return rc;
}

int ext_life_props(int dev, struct fl_props *props)
{
	int rc = FL_OK;

	pthread_mutex_lock(&life_lock);
	if (process_live)
		rc = ext_inner_props(&ext_plugin, dev, props);
	else if (dev >= 0 && dev < snap.ndev && snap.ok[dev])
		*props = snap.props[dev];
	else
		rc = FL_ERR_INTERNAL;
	pthread_mutex_unlock(&life_lock);
	return rc;
}
