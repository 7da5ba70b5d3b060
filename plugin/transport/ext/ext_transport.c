/*
 * FABRICLAB_TRANSPORT=ext:<plugin>: another NCCL net plugin as fabriclab's
 * transport. Every byte still goes through that plugin; the wrap layer above
 * counts, traces and injects faults as for its own transports.
 */
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "ext_describe.h"
#include "ext_internal.h"

struct fl_host_net ext_plugin;
struct ext_ctx ext_process_ctx;
int ext_hello_on = 1;
int ext_direct_on = 1;

static int ext_devices(int *ndev)
{
	int rc = ext_life_devices(ndev);

	return rc ? fl_fail(rc, "FABRICLAB_TRANSPORT=ext:%s: %s devices() failed (error %d)",
			    ext_plugin.spec, ext_plugin.path, rc) : FL_OK;
}

/* NCCL_DEBUG=INFO: which plugin, from where, and what each device advertises. */
static void log_loaded(void)
{
	char what[EXT_PATH_LEN + 160], props[768];
	struct fl_props p;
	int ndev = 0;

	ext_describe_plugin(&ext_plugin, what, sizeof(what));
	if (ext_plugin.devices(&ndev))
		ndev = 0;
	FL_INFO("ext: wrapping %s; %d device(s)", what, ndev);
	for (int dev = 0; dev < ndev; dev++) {
		if (ext_inner_props(&ext_plugin, dev, &p)) {
			FL_INFO("ext: %s device %d: getProperties failed", ext_plugin.name, dev);
			continue;
		}
		ext_describe_props(&p, props, sizeof(props));
		FL_INFO("ext: %s device %d %s", ext_plugin.name, dev, props);
	}
}

static int ext_init(void)
{
	const char *env = getenv("FABRICLAB_TRANSPORT");
	long hello = 1, direct = 1;
	int rc;

	rc = fl_env_long("FABRICLAB_EXT_HELLO", 1, 0, 1, &hello);
	if (!rc)
		rc = fl_env_long("FABRICLAB_EXT_DIRECT", 1, 0, 1, &direct);
	if (rc)
		return rc;
	ext_hello_on = (int)hello;
	ext_direct_on = (int)direct;
	rc = ext_inner_choose(env && !strncmp(env, "ext:", 4) ? env + 4 : NULL,
			      fl_log_logger(), ext_prof_event, &ext_plugin, &ext_process_ctx);
	if (rc)
		return rc;
	log_loaded();
	return FL_OK;
}

static int ext_open_ctx(uint64_t comm_id, int traffic_class, void **tctx)
{
	struct ext_ctx *c = calloc(1, sizeof(*c));
	int rc;

	*tctx = NULL;
	if (!c)
		return fl_fail(FL_ERR_SYSTEM, "ext: out of memory for a communicator");
	/* The process-wide init again if the last communicator's finalize ended it (ext_life.c). */
	rc = ext_life_open();
	if (rc) {
		free(c);
		return rc;
	}
	c->config.traffic_class = traffic_class;
	rc = ext_inner_open_ctx(&ext_plugin, comm_id, fl_log_logger(), ext_prof_event, c);
	if (rc) {
		free(c);
		ext_life_close();
		return fl_fail(rc, "ext: %s init for communicator %016llx failed (error %d)",
			       ext_plugin.name, (unsigned long long)comm_id, rc);
	}
	*tctx = c;
	return FL_OK;
}

/* The last communicator's finalize also ends the process-wide init, as NCCL's unload would. */
static int ext_close_ctx(void *tctx)
{
	int rc, life;

	if (!tctx)
		return FL_OK;
	rc = ext_inner_close_ctx(&ext_plugin, tctx);
	free(tctx);
	if (rc)
		rc = fl_fail(rc, "ext: %s finalize failed (error %d)", ext_plugin.name, rc);
	life = ext_life_close();
	return rc ? rc : life;
}

/* tctx: the communicator's, or NULL when NCCL gave the process-wide ctx. */
static int ext_set_net_attr(void *tctx, void *attr)
{
	struct ext_ctx *c = tctx ? tctx : &ext_process_ctx;
	int rc = ext_inner_set_net_attr(&ext_plugin, c, attr);

	return rc ? fl_fail(rc, "ext: %s setNetAttr failed (error %d)", ext_plugin.name, rc) :
		    FL_OK;
}

static int ext_listen(int dev, const struct fl_endpoint *self, void *handle, void **listen_comm)
{
	return ext_listen_ctx(NULL, dev, self, handle, listen_comm);
}

static int ext_connect(int dev, const struct fl_endpoint *self, void *handle, void **send_comm)
{
	return ext_connect_ctx(NULL, dev, self, handle, send_comm, NULL);
}

/* The request's state rides in the caller's request object (struct fl_fwd_req). */
static const struct fl_forward ext_forward = {
	.sender_paces_peer_rx = true,
	.open_ctx = ext_open_ctx,
	.close_ctx = ext_close_ctx,
	.listen_ctx = ext_listen_ctx,
	.connect_ctx = ext_connect_ctx,
	.accept_dev = ext_accept_dev,
	.isend = ext_isend,
	.irecv = ext_irecv,
	.iflush = ext_iflush,
	.test = ext_test,
	.offload = ext_offload,
	.make_vdevice = ext_make_vdevice,
	.get_device_mr = ext_get_device_mr,
	.irecv_consumed = ext_irecv_consumed,
	.set_net_attr = ext_set_net_attr,
	.direct = ext_direct,
};

const struct fl_transport fl_ext_transport = {
	.name = "ext",
	.init = ext_init,
	.devices = ext_devices,
	.get_properties = ext_get_properties,
	.listen = ext_listen,
	.connect = ext_connect,
	.accept = ext_accept,
	.peer = ext_peer,
	.reg_mr = ext_reg_mr,
	.reg_mr_dmabuf = ext_reg_mr_dmabuf,
	.dereg_mr = ext_dereg_mr,
	.set_pacer = ext_set_pacer,
	.close_send = ext_close_send,
	.close_recv = ext_close_recv,
	.close_listen = ext_close_listen,
	.forward = &ext_forward,
};
