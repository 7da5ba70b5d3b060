/*
 * What NCCL, the reports and the logs see of an inner plugin's devices: its
 * properties as it reports them, so NCCL's topology and GPUDirect choices are
 * what they would be without fabriclab, with four exceptions.
 *  - A failure names the inner (table name and file) and the device, and is
 *    logged once per device: NCCL's getProperties caller only sees the code.
 *  - A device name that a terminal or a report could misread (ESC, newline,
 *    U+202E...) is escaped here, once, where it enters (base/fl_text.h), so
 *    the logs, the .txt and .json reports and the hello all carry the same
 *    printable name, and `fabriclab report` reads back what was written.
 *  - maxRecvs is capped to FL_MAX_RECVS: NCCL groups up to maxRecvs receives of
 *    one recvComm into a single irecv when it is above 1 (2.30.7
 *    src/transport/net.cc:755 keeps props.maxRecvs, 1476-1502 groups subs while
 *    groupSize < maxRecvs, 1590 posts them as one irecv of subCount buffers, up
 *    to NCCL_PROXY_MAX_SUBS = MAXCHANNELS = 64, src/include/proxy.h:58 and
 *    device.h:91), and the wrap refuses an irecv of more than FL_MAX_RECVS
 *    buffers (NCCL's own IB transport advertises 8: net_ib/common.h:161). A
 *    value below 1 becomes 1 (NCCL would otherwise group without bound).
 *  - dma-buf is masked when the inner has no regMrDmaBuf (fabriclab always
 *    exports one, and NCCL checks for the slot, not the property).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "base/error.h"
#include "base/fl_text.h"
#include "base/log.h"
#include "ext_internal.h"

#define EXT_NAMED_DEVS 128
#define EXT_NAME_LEN 64 /* a report's device name holds 63 characters */

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static char names[EXT_NAMED_DEVS][EXT_NAME_LEN];
/* A bit per device told about: its failure, its maxRecvs. */
static _Atomic uint64_t warned_failed[EXT_NAMED_DEVS / 64 + 1];
static _Atomic uint64_t warned_recvs[EXT_NAMED_DEVS / 64 + 1];

/* True the first time for dev (the last bit stands for every device past the table). */
static int first_time(_Atomic uint64_t *warned, int dev)
{
	unsigned i = dev >= 0 && dev < EXT_NAMED_DEVS ? (unsigned)dev : EXT_NAMED_DEVS;
	uint64_t bit = 1ULL << (i % 64);

	return !(atomic_fetch_or(&warned[i / 64], bit) & bit);
}

/* The inner's name for logs: it comes from its table, so it is escaped too (fl_fail does it). */
static int failed(int dev, int rc)
{
	rc = fl_fail(rc, "ext: %s (%s) getProperties(%d) failed (error %d)", ext_plugin.name,
		     ext_plugin.path, dev, rc);
	if (first_time(warned_failed, dev))
		FL_WARN("%s", fl_error_text());
	return rc;
}

static void safe_name(int dev, struct fl_props *p)
{
	if (!p->name || (!fl_text_needs_escape(p->name) && strlen(p->name) < EXT_NAME_LEN))
		return;
	if (dev < 0 || dev >= EXT_NAMED_DEVS) {
		p->name = "(unsafe name)";
		return;
	}
	/*
	 * Escaped once per device: a name handed out may be read while the report thread asks
	 * again, so it is never rewritten (a device's name does not change).
	 */
	pthread_mutex_lock(&names_lock);
	if (!names[dev][0])
		fl_text_escape(names[dev], sizeof(names[dev]), p->name);
	pthread_mutex_unlock(&names_lock);
	p->name = names[dev];
}

static void capped_recvs(int dev, struct fl_props *p)
{
	int was = p->max_recvs;

	if (was >= 1 && was <= FL_MAX_RECVS)
		return;
	p->max_recvs = was < 1 ? 1 : FL_MAX_RECVS;
	if (first_time(warned_recvs, dev))
		FL_INFO("ext: %s device %d advertises maxRecvs %d; NCCL is told %d (fabriclab "
			"takes 1 to %d buffers per irecv)", ext_plugin.name, dev, was, p->max_recvs,
			FL_MAX_RECVS);
}

int ext_get_properties(int dev, struct fl_props *props)
{
	int rc = ext_life_props(dev, props);

	if (rc)
		return failed(dev, rc);
	safe_name(dev, props);
	capped_recvs(dev, props);
	/* fabriclab always exports regMrDmaBuf, and NCCL checks for it: masked without the inner's */
	if (!ext_plugin.reg_mr_dmabuf)
		props->ptr_support &= ~FL_PTR_DMABUF;
	return FL_OK;
}
