/*
 * Device offload through FABRICLAB_TRANSPORT=ext: fabriclab's own tables
 * (NCCL side v9..v12, plus v6/v7 for what they lack) driven as NCCL drives
 * them, over the devoff test inner, which records every call. Each optional
 * entry (makeVDevice, getDeviceMr, irecvConsumed, the device handles of
 * connect/accept: NCCL's own pointer, to every call) must reach the inner with
 * the same arguments and give back the inner's results; the data calls stay measured by the wrap layer; and over
 * an inner without them (flsock-v12) the slots are NULL and the properties say
 * host-driven. Every case runs in a child process: the transport is chosen once
 * per process.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin/entry/net_abi.h"
#include "plugin/base/fl_types.h"
#include "tests/inner/devoff_record.h"

#define MESSAGES 300 /* more than the wrap's and ext's request pools: irecvConsumed frees them */
#define MSG_BYTES 256
#define TAG 3

static char inner_dir[PATH_MAX];
static int failures;
static unsigned long long logged_recv_bytes, logged_recv_messages;

#define CHECK(cond, ...)                                         \
	do {                                                     \
		if (!(cond)) {                                   \
			printf("  not ok: %s: ", #cond);         \
			printf(__VA_ARGS__);                     \
			printf("\n");                            \
			failures++;                              \
		}                                                \
	} while (0)

/* Keeps what the wrap layer says about each receive connection at close (its counters). */
static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt,
		   ...)
{
	unsigned long long bytes, messages;
	char text[1024];
	const char *at;
	va_list ap;

	(void)level, (void)flags, (void)file, (void)line;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!strstr(text, "connection ") || !strstr(text, " recv ") ||
	    !(at = strstr(text, " bytes in ")))
		return;
	while (at > text && at[-1] != ' ')
		at--;
	if (sscanf(at, "%llu bytes in %llu messages", &bytes, &messages) == 2) {
		logged_recv_bytes += bytes;
		logged_recv_messages += messages;
	}
}

/* ---- NCCL's side: one version's table, called as NCCL calls it ---- */

#define SAME_SLOT(v, slot, ...)                                            \
	((v) == 6    ? ncclNetPlugin_v6.slot(__VA_ARGS__) :                \
	 (v) == 7    ? ncclNetPlugin_v7.slot(__VA_ARGS__) :                \
	 (v) == 9    ? ncclNetPlugin_v9.slot(__VA_ARGS__) :                \
	 (v) == 10   ? ncclNetPlugin_v10.slot(__VA_ARGS__) :               \
	 (v) == 11   ? ncclNetPlugin_v11.slot(__VA_ARGS__) :               \
		       ncclNetPlugin_v12.slot(__VA_ARGS__))

static void *ctx;

static int nccl_init(int v)
{
	struct fl_abi_comm_config cfg = { .traffic_class = -1 };

	switch (v) {
	case 6: return ncclNetPlugin_v6.init(logger);
	case 7: return ncclNetPlugin_v7.init(logger);
	case 9: return ncclNetPlugin_v9.init(logger);
	case 10: return ncclNetPlugin_v10.init(logger, NULL);
	case 11: return ncclNetPlugin_v11.init(&ctx, 42, &cfg, logger, NULL);
	default: return ncclNetPlugin_v12.init(&ctx, 42, &cfg, logger, NULL);
	}
}

struct slots {
	const void *make_vdevice, *get_device_mr, *irecv_consumed;
};

static struct slots nccl_slots(int v)
{
	struct slots s = { 0 };

#define READ_SLOTS(t)                                                  \
	do {                                                           \
		s.get_device_mr = (const void *)(t).get_device_mr;     \
		s.irecv_consumed = (const void *)(t).irecv_consumed;   \
	} while (0)
#define READ_ALL(t)                                                    \
	do {                                                           \
		READ_SLOTS(t);                                         \
		s.make_vdevice = (const void *)(t).make_vdevice;       \
	} while (0)
	switch (v) {
	case 6: break; /* v6 has no such slots at all */
	case 7: READ_SLOTS(ncclNetPlugin_v7); break;
	case 9: READ_ALL(ncclNetPlugin_v9); break;
	case 10: READ_ALL(ncclNetPlugin_v10); break;
	case 11: READ_ALL(ncclNetPlugin_v11); break;
	default: READ_ALL(ncclNetPlugin_v12); break;
	}
#undef READ_ALL
#undef READ_SLOTS
	return s;
}

/* The device type and the virtual device list, from whichever props the version has. */
static int nccl_props(int v, int dev, int *type, int *type_version, int *ndevs, int *devs)
{
	struct fl_abi_props_v12 p12 = { 0 };
	struct fl_abi_props_v11 p11 = { 0 };
	struct fl_abi_props_v9 p9 = { 0 };
	struct fl_abi_props_v7 p7 = { 0 };
	struct fl_abi_props_v6 p6 = { 0 };
	int rc;

	*type = *type_version = *ndevs = -1;
#define TAKE(p)                                                                   \
	do {                                                                      \
		*type = (p).net_device_type;                                      \
		*type_version = (p).net_device_version;                           \
		*ndevs = (p).vprops.ndevs;                                        \
		for (int i = 0; i < (p).vprops.ndevs && i < 8; i++)               \
			devs[i] = (p).vprops.devs[i];                             \
	} while (0)
	switch (v) {
	case 6: return ncclNetPlugin_v6.get_properties(dev, &p6);
	case 7:
		rc = ncclNetPlugin_v7.get_properties(dev, &p7);
		*type = p7.net_device_type;
		*type_version = p7.net_device_version;
		return rc;
	case 9: rc = ncclNetPlugin_v9.get_properties(dev, &p9); TAKE(p9); return rc;
	case 10: rc = ncclNetPlugin_v10.get_properties(dev, &p9); TAKE(p9); return rc;
	case 11: rc = ncclNetPlugin_v11.get_properties(dev, &p11); TAKE(p11); return rc;
	default: rc = ncclNetPlugin_v12.get_properties(dev, &p12); TAKE(p12); return rc;
	}
#undef TAKE
}

static int nccl_make_vdevice(int v, int *d, int ndevs, const int *devs)
{
	struct fl_abi_vprops_v12 p12 = { .ndevs = ndevs };
	struct fl_abi_vprops_v9 p9 = { .ndevs = ndevs };

	for (int i = 0; i < ndevs; i++)
		p9.devs[i] = p12.devs[i] = devs[i];
	switch (v) {
	case 9: return ncclNetPlugin_v9.make_vdevice(d, &p9);
	case 10: return ncclNetPlugin_v10.make_vdevice(d, &p9);
	case 11: return ncclNetPlugin_v11.make_vdevice(d, &p9);
	default: return ncclNetPlugin_v12.make_vdevice(d, &p12);
	}
}

static int nccl_listen(int v, int dev, void *handle, void **lc)
{
	switch (v) {
	case 6: return ncclNetPlugin_v6.listen(dev, handle, lc);
	case 7: return ncclNetPlugin_v7.listen(dev, handle, lc);
	case 9: return ncclNetPlugin_v9.listen(dev, handle, lc);
	case 10: return ncclNetPlugin_v10.listen(dev, handle, lc);
	case 11: return ncclNetPlugin_v11.listen(ctx, dev, handle, lc);
	default: return ncclNetPlugin_v12.listen(ctx, dev, handle, lc);
	}
}

static int nccl_connect(int v, int dev, void *handle, void **sc, struct fl_abi_dev_handle **dc)
{
	struct fl_abi_comm_config cfg = { .traffic_class = -1 };

	switch (v) {
	case 6: return ncclNetPlugin_v6.connect(dev, handle, sc);
	case 7: return ncclNetPlugin_v7.connect(dev, handle, sc, dc);
	case 9: return ncclNetPlugin_v9.connect(dev, handle, sc, dc);
	case 10: return ncclNetPlugin_v10.connect(dev, &cfg, handle, sc, dc);
	case 11: return ncclNetPlugin_v11.connect(ctx, dev, handle, sc, dc);
	default: return ncclNetPlugin_v12.connect(ctx, dev, handle, sc, dc);
	}
}

static int nccl_accept(int v, void *lc, void **rc, struct fl_abi_dev_handle **dc)
{
	switch (v) {
	case 6: return ncclNetPlugin_v6.accept(lc, rc);
	case 7: return ncclNetPlugin_v7.accept(lc, rc, dc);
	case 9: return ncclNetPlugin_v9.accept(lc, rc, dc);
	case 10: return ncclNetPlugin_v10.accept(lc, rc, dc);
	case 11: return ncclNetPlugin_v11.accept(lc, rc, dc);
	default: return ncclNetPlugin_v12.accept(lc, rc, dc);
	}
}

static int nccl_reg_mr(int v, void *comm, void *data, size_t size, void **mh)
{
	switch (v) {
	case 6: return ncclNetPlugin_v6.reg_mr(comm, data, (int)size, FL_PTR_HOST, mh);
	case 7: return ncclNetPlugin_v7.reg_mr(comm, data, (int)size, FL_PTR_HOST, mh);
	case 9: return ncclNetPlugin_v9.reg_mr(comm, data, size, FL_PTR_HOST, mh);
	case 10: return ncclNetPlugin_v10.reg_mr(comm, data, size, FL_PTR_HOST, mh);
	case 11: return ncclNetPlugin_v11.reg_mr(comm, data, size, FL_PTR_HOST, mh);
	default: return ncclNetPlugin_v12.reg_mr(comm, data, size, FL_PTR_HOST, mh);
	}
}

static int nccl_isend(int v, void *sc, void *data, size_t size, void *mh, void *ph, void **req)
{
	switch (v) {
	case 6: return ncclNetPlugin_v6.isend(sc, data, (int)size, TAG, mh, req);
	case 7: return ncclNetPlugin_v7.isend(sc, data, (int)size, TAG, mh, req);
	case 9: return ncclNetPlugin_v9.isend(sc, data, size, TAG, mh, req);
	case 10: return ncclNetPlugin_v10.isend(sc, data, size, TAG, mh, ph, req);
	case 11: return ncclNetPlugin_v11.isend(sc, data, size, TAG, mh, ph, req);
	default: return ncclNetPlugin_v12.isend(sc, data, size, TAG, mh, ph, req);
	}
}

static int nccl_irecv(int v, void *rc, void *data, size_t size, void *mh, void *ph, void **req)
{
	int small = (int)size, tag = TAG;

	switch (v) {
	case 6: return ncclNetPlugin_v6.irecv(rc, 1, &data, &small, &tag, &mh, req);
	case 7: return ncclNetPlugin_v7.irecv(rc, 1, &data, &small, &tag, &mh, req);
	case 9: return ncclNetPlugin_v9.irecv(rc, 1, &data, &size, &tag, &mh, req);
	case 10: return ncclNetPlugin_v10.irecv(rc, 1, &data, &size, &tag, &mh, &ph, req);
	case 11: return ncclNetPlugin_v11.irecv(rc, 1, &data, &size, &tag, &mh, &ph, req);
	default: return ncclNetPlugin_v12.irecv(rc, 1, &data, &size, &tag, &mh, &ph, req);
	}
}

static int nccl_irecv_consumed(int v, void *rc, void *req)
{
	return v == 7 ? ncclNetPlugin_v7.irecv_consumed(rc, 1, req) :
	       v == 9 ? ncclNetPlugin_v9.irecv_consumed(rc, 1, req) :
	       v == 10 ? ncclNetPlugin_v10.irecv_consumed(rc, 1, req) :
	       v == 11 ? ncclNetPlugin_v11.irecv_consumed(rc, 1, req) :
			 ncclNetPlugin_v12.irecv_consumed(rc, 1, req);
}

static int nccl_get_device_mr(int v, void *comm, void *mh, void **dptr)
{
	return v == 7 ? ncclNetPlugin_v7.get_device_mr(comm, mh, dptr) :
	       v == 9 ? ncclNetPlugin_v9.get_device_mr(comm, mh, dptr) :
	       v == 10 ? ncclNetPlugin_v10.get_device_mr(comm, mh, dptr) :
	       v == 11 ? ncclNetPlugin_v11.get_device_mr(comm, mh, dptr) :
			 ncclNetPlugin_v12.get_device_mr(comm, mh, dptr);
}

/* ---- one connection, set up as NCCL does: connect and accept called until both are there ---- */

struct conn {
	void *lc, *sc, *rc;
	struct fl_abi_dev_handle *sdc, *rdc;
	struct fl_abi_dev_handle nccl_rdc; /* what NCCL allocates for an UNPACK receive */
};

/*
 * NCCL's device handles: NULL for a send; for a receive on an UNPACK v7 device
 * an object of its own, passed to every accept call, asking for offload
 * (2.30.7 src/transport/net.cc:817-836, 1062-1071); NULL on a host device.
 */
static int connect_pair(int v, int dev, struct conn *c)
{
	unsigned char handle[FL_HANDLE_SIZE] = { 0 };
	int rc = nccl_listen(v, dev, handle, &c->lc), type = 0, tver = 0, ndevs, devs[8];

	c->sdc = NULL;
	c->rdc = NULL;
	if (!rc && !nccl_props(v, dev, &type, &tver, &ndevs, devs) &&
	    type == FL_ABI_DEVICE_UNPACK && tver == 7) {
		c->nccl_rdc = (struct fl_abi_dev_handle){ .net_device_type = type,
							  .net_device_version = tver };
		c->rdc = &c->nccl_rdc;
	}
	for (int i = 0; !rc && (!c->sc || !c->rc) && i < 100000; i++) {
		if (!c->sc)
			rc = nccl_connect(v, dev, handle, &c->sc, &c->sdc);
		if (!rc && !c->rc)
			rc = nccl_accept(v, c->lc, &c->rc, &c->rdc);
	}
	return rc ? rc : c->sc && c->rc ? 0 : -1;
}

static void close_pair(int v, struct conn *c)
{
	CHECK(SAME_SLOT(v, close_send, c->sc) == 0, "closeSend");
	CHECK(SAME_SLOT(v, close_recv, c->rc) == 0, "closeRecv");
	CHECK(SAME_SLOT(v, close_listen, c->lc) == 0, "closeListen");
}

/*
 * MESSAGES messages, one in flight, as a NCCL step: isend + irecv, test both
 * until done, then (when NCCL can) irecvConsumed on the receive. Returns the
 * number whose bytes arrived intact.
 */
static int traffic(int v, struct conn *c, const struct devoff_record *rec, int consumed,
		   int inner_ph)
{
	static unsigned char out[MSG_BYTES], in[MSG_BYTES];
	void *smh = NULL, *rmh = NULL, *sreq, *rreq, *ph = (void *)(uintptr_t)0xfeed;
	int good = 0;

	CHECK(nccl_reg_mr(v, c->sc, out, sizeof(out), &smh) == 0, "regMr send");
	CHECK(nccl_reg_mr(v, c->rc, in, sizeof(in), &rmh) == 0, "regMr recv");
	for (int m = 0; m < MESSAGES; m++) {
		int sd = 0, rd = 0, ssz = -1, rsz = -1, guard = 0;

		memset(out, m & 0xff, sizeof(out));
		memset(in, 0, sizeof(in));
		sreq = rreq = NULL;
		/* as NCCL's proxy: both posted in turn, each "not now" retried later */
		while ((!sreq || !rreq) && guard++ < 2000) {
			if (!sreq)
				CHECK(nccl_isend(v, c->sc, out, sizeof(out), smh, ph, &sreq) == 0,
				      "isend");
			if (!rreq)
				CHECK(nccl_irecv(v, c->rc, in, sizeof(in), rmh, ph, &rreq) == 0,
				      "irecv");
		}
		if (!sreq || !rreq) {
			CHECK(0, "message %d: isend/irecv never accepted (a request pool ran dry)", m);
			return good;
		}
		while ((!sd || !rd) && guard++ < 100000) {
			if (!rd)
				CHECK(SAME_SLOT(v, test, rreq, &rd, &rsz) == 0, "test recv");
			if (!sd)
				CHECK(SAME_SLOT(v, test, sreq, &sd, &ssz) == 0, "test send");
		}
		if (consumed)
			CHECK(nccl_irecv_consumed(v, c->rc, rreq) == 0, "irecvConsumed");
		if (consumed && m == MESSAGES - 1) {
			CHECK(rec->consumed_req == rec->last_irecv_req,
			      "irecvConsumed reached the inner with its own request");
			CHECK(rec->consumed_comm == rec->recv_comm, "irecvConsumed: the inner's comm");
			CHECK(rec->consumed_n == 1, "irecvConsumed: n %d", rec->consumed_n);
		}
		good += sd && rd && rsz == MSG_BYTES && ssz == MSG_BYTES && in[0] == (m & 0xff) &&
			in[MSG_BYTES - 1] == (m & 0xff);
	}
	CHECK(rec->last_send_tag == TAG && rec->last_recv_tag == TAG, "tags passed through");
	CHECK(v < 10 || !inner_ph ||
	      (rec->last_send_phandle == ph && rec->last_recv_phandle == ph),
	      "profiler handles passed through (v10+ on both sides)");
	CHECK(SAME_SLOT(v, dereg_mr, c->sc, smh) == 0, "deregMr");
	CHECK(SAME_SLOT(v, dereg_mr, c->rc, rmh) == 0, "deregMr");
	return good;
}

static const struct devoff_record *record_of(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);

	return lib ? dlsym(lib, "devoff_record") : NULL;
}

/* ---- the cases ---- */

static void offload_case(int v, const char *inner)
{
	char path[PATH_MAX + 64], env[PATH_MAX + 80];
	int type, tver, ndevs, devs[8] = { 0 }, vd = -1, good;
	const struct devoff_record *rec;
	const int fuse[2] = { 0, 1 }, bad[2] = { 0, DEVOFF_BAD_DEV };
	struct slots s;
	struct conn c = { 0 };
	void *dptr = NULL, *mh = NULL;
	static unsigned char buf[64];

	snprintf(path, sizeof(path), "%s/libnccl-net-%s.so", inner_dir, inner);
	snprintf(env, sizeof(env), "ext:%s", path);
	setenv("FABRICLAB_TRANSPORT", env, 1);
	CHECK(nccl_init(v) == 0, "init");
	rec = record_of(path);
	if (!rec) {
		CHECK(0, "%s not loaded by fabriclab, or no devoff_record", path);
		return;
	}
	s = nccl_slots(v);
	CHECK(s.get_device_mr && s.irecv_consumed, "v%d: getDeviceMr and irecvConsumed advertised", v);
	CHECK((v >= 9) == !!s.make_vdevice, "v%d: makeVDevice advertised from v9 on", v);
	CHECK(nccl_props(v, 0, &type, &tver, &ndevs, devs) == 0, "getProperties(0)");
	CHECK(type == FL_ABI_DEVICE_UNPACK && tver == 7, "device 0: type %d version %d", type, tver);
	if (v >= 9) {
		CHECK(nccl_make_vdevice(v, &vd, 2, fuse) == 0, "makeVDevice");
		CHECK(vd == DEVOFF_VDEV_RESULT, "makeVDevice gave device %d", vd);
		CHECK(rec->vdev_ndevs == 2 && rec->vdev_devs[0] == 0 && rec->vdev_devs[1] == 1,
		      "the inner got ndevs %d devs %d,%d", rec->vdev_ndevs, rec->vdev_devs[0],
		      rec->vdev_devs[1]);
		CHECK(nccl_props(v, vd, &type, &tver, &ndevs, devs) == 0 && ndevs == 2 &&
		      devs[0] == 0 && devs[1] == 1, "the virtual device's vProps: %d devices", ndevs);
		CHECK(nccl_make_vdevice(v, &vd, 2, bad) == DEVOFF_VDEV_ERROR,
		      "makeVDevice: the inner's error comes back unchanged");
	}
	CHECK(connect_pair(v, 0, &c) == 0, "connect/accept on device 0");
	CHECK(c.sdc == rec->send_devh && c.sdc, "sendDevComm %p, the inner gave %p", (void *)c.sdc,
	      rec->send_devh);
	CHECK(c.rdc == &c.nccl_rdc && rec->recv_devh == &c.nccl_rdc,
	      "recvDevComm %p: NCCL's own %p, which the inner filled (%p)", (void *)c.rdc,
	      (void *)&c.nccl_rdc, rec->recv_devh);
	CHECK(rec->recv_devh_asked == &c.nccl_rdc && rec->accept_asked_changed == 0,
	      "every accept of the inner got NCCL's pointer (last %p, %d of %d calls differed)",
	      rec->recv_devh_asked, rec->accept_asked_changed, rec->accept_calls);
	CHECK(c.nccl_rdc.handle == rec->recv_comm && c.nccl_rdc.size == 128,
	      "NCCL's handle filled by the inner (handle %p size %zu)", c.nccl_rdc.handle,
	      c.nccl_rdc.size);
	CHECK(nccl_reg_mr(v, c.rc, buf, sizeof(buf), &mh) == 0, "regMr");
	CHECK(nccl_get_device_mr(v, c.rc, mh, &dptr) == 0, "getDeviceMr");
	CHECK(dptr == DEVOFF_DPTR && rec->dmr_comm == rec->recv_comm && rec->dmr_mhandle == mh,
	      "getDeviceMr: dptr %p, the inner got comm %p (its own %p) mhandle %p (NCCL's %p)",
	      dptr, rec->dmr_comm, rec->recv_comm, rec->dmr_mhandle, mh);
	CHECK(rec->isends == 0 && rec->irecvs == 0, "no hidden hello on a GPU-unpack device");
	good = traffic(v, &c, rec, 1, strstr(inner, "v12") != NULL);
	CHECK(good == MESSAGES, "%d of %d messages intact", good, MESSAGES);
	CHECK(rec->consumed_calls == MESSAGES && rec->consumed_early == 0,
	      "irecvConsumed reached the inner %d times (%d before done)", rec->consumed_calls,
	      rec->consumed_early);
	close_pair(v, &c);
	CHECK(logged_recv_messages == MESSAGES &&
	      logged_recv_bytes == (unsigned long long)MESSAGES * MSG_BYTES,
	      "the wrap layer counted %llu bytes in %llu messages", logged_recv_bytes,
	      logged_recv_messages);
}

/* Device 1 of devoff is host-driven: the hello moves, and its receive is consumed too. */
static void host_device_case(int v)
{
	char path[PATH_MAX + 64], env[PATH_MAX + 80];
	const struct devoff_record *rec;
	struct conn c = { 0 };

	snprintf(path, sizeof(path), "%s/libnccl-net-devoff-v12.so", inner_dir);
	snprintf(env, sizeof(env), "ext:%s", path);
	setenv("FABRICLAB_TRANSPORT", env, 1);
	CHECK(nccl_init(v) == 0, "init");
	rec = record_of(path);
	if (!rec) {
		CHECK(0, "no devoff_record");
		return;
	}
	CHECK(connect_pair(v, 1, &c) == 0, "connect/accept on device 1");
	CHECK(c.sdc == NULL && c.rdc == NULL, "host device: no device handles (%p, %p)",
	      (void *)c.sdc, (void *)c.rdc);
	CHECK(rec->isends == 0 && rec->irecvs == 0 && rec->tests == 0,
	      "connect/accept moved nothing of the hello (isends %d irecvs %d tests %d): it "
	      "waits for the first isend/irecv", rec->isends, rec->irecvs, rec->tests);
	CHECK(traffic(v, &c, rec, 1, 1) == MESSAGES, "messages intact");
	CHECK(rec->isends == MESSAGES + 1 && rec->irecvs == MESSAGES + 1 &&
	      rec->consumed_calls == MESSAGES + 1,
	      "the hello moved first (isends %d irecvs %d) and its receive was consumed (%d)",
	      rec->isends, rec->irecvs, rec->consumed_calls);
	close_pair(v, &c);
}

/* An inner without offload: nothing advertised, host device, NULL device handles. */
static void absent_case(int v)
{
	char path[PATH_MAX + 64], env[PATH_MAX + 80];
	int type, tver, ndevs, devs[8];
	struct slots s;
	struct conn c = { 0 };

	snprintf(path, sizeof(path), "%s/libnccl-net-flsock-v12.so", inner_dir);
	snprintf(env, sizeof(env), "ext:%s", path);
	setenv("FABRICLAB_TRANSPORT", env, 1);
	CHECK(nccl_init(v) == 0, "init");
	s = nccl_slots(v);
	CHECK(!s.make_vdevice && !s.get_device_mr && !s.irecv_consumed,
	      "v%d: no optional slot (%p %p %p)", v, s.make_vdevice, s.get_device_mr,
	      s.irecv_consumed);
	CHECK(nccl_props(v, 0, &type, &tver, &ndevs, devs) == 0, "getProperties");
	CHECK(type == FL_ABI_DEVICE_HOST && tver == 0, "host device: type %d version %d", type, tver);
	CHECK(connect_pair(v, 0, &c) == 0, "connect/accept");
	CHECK(c.sdc == NULL && c.rdc == NULL, "no device handles (%p, %p)", (void *)c.sdc,
	      (void *)c.rdc);
	close_pair(v, &c);
}

/* NCCL v6 knows no device handles: an offloading device is refused, not driven wrongly. */
static void v6_case(void)
{
	char path[PATH_MAX + 64], env[PATH_MAX + 80];
	int type, tver, ndevs, devs[8];

	snprintf(path, sizeof(path), "%s/libnccl-net-devoff-v12.so", inner_dir);
	snprintf(env, sizeof(env), "ext:%s", path);
	setenv("FABRICLAB_TRANSPORT", env, 1);
	CHECK(nccl_init(6) == 0, "init");
	CHECK(nccl_props(6, 0, &type, &tver, &ndevs, devs) != 0,
	      "getProperties of a GPU-unpack device at v6 must fail");
	CHECK(nccl_props(6, 1, &type, &tver, &ndevs, devs) == 0, "the host device works at v6");
}

static int run(const char *name, void (*fn)(int), int v)
{
	pid_t pid;
	int status = -1;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fn(v);
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	printf("%s %s (NCCL side v%d)\n", WIFEXITED(status) && !WEXITSTATUS(status) ? "ok -" :
	       "not ok -", name, v);
	return !(WIFEXITED(status) && !WEXITSTATUS(status));
}

static void v6_adapter(int v)
{
	(void)v;
	v6_case();
}

static void devoff_v12(int v)
{
	offload_case(v, "devoff-v12");
}

static void devoff_v9(int v)
{
	offload_case(v, "devoff-v9");
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	int bad = 0;

	(void)argc;
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(inner_dir, sizeof(inner_dir), "%s/../inner", dirname(self));
	setenv("FABRICLAB_SOCKET_IFNAME", "lo", 1);
	setenv("FABRICLAB_REPORT", "off", 1);
	for (int v = 9; v <= 12; v++)
		bad += run("offload forwarded over devoff-v12", devoff_v12, v);
	bad += run("offload forwarded over devoff-v9", devoff_v9, 9);
	bad += run("offload forwarded over devoff-v9", devoff_v9, 12);
	bad += run("offload forwarded (no makeVDevice) over devoff-v12", devoff_v12, 7);
	bad += run("host device of devoff: hello moved and consumed", host_device_case, 12);
	bad += run("absent over flsock-v12", absent_case, 9);
	bad += run("absent over flsock-v12", absent_case, 12);
	bad += run("GPU-unpack device refused at v6", v6_adapter, 6);
	printf("%d case(s) failed\n", bad);
	return bad ? 1 : 0;
}
