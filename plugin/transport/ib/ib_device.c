/* Discovery: HCAs, their active ports, the NCCL_IB_HCA filter, GIDs, speed and placement. */
#include "ib_device.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gdr_detect.h"
#include "ib_config.h"
#include "ib_hca.h"
#include "ib_mlx5.h"
#include "ib_speed.h"
#include "base/log.h"
#include "base/sysfs_read.h"

static int mr_reg(void *ctx, uintptr_t addr, size_t len, struct ib_mr *out);
static int mr_dereg(void *ctx, struct ib_mr *m);
static const struct ib_mr_ops mr_ops = { mr_reg, mr_dereg };
const struct fl_verbs *ib_verbs;
static struct ib_hca hcas[IB_MAX_HCAS];
static int nhcas;

/*
 * PCI relaxed ordering for data buffers, decided as NCCL decides it: asked for
 * (NCCL_IB_PCI_RELAXED_ORDERING 1, or 2 = the default) and the library has
 * ibv_reg_mr_iova2 (IBVERBS_1.8), the call that carries optional access flags.
 * The flag is an optional one: a device that cannot reorder ignores it, as
 * rdma-core defines optional flags, so no device query is needed.
 */
static bool relaxed_ordering(void)
{
	return ib_cfg.relaxed_ordering && ib_verbs->reg_mr_iova2;
}

int ib_data_access(void)
{
	return IB_MR_ACCESS | (relaxed_ordering() ? IBV_ACCESS_RELAXED_ORDERING : 0);
}

static int mr_reg(void *ctx, uintptr_t addr, size_t len, struct ib_mr *out)
{
	struct ib_hca *hca = ctx;
	struct ibv_mr *mr = relaxed_ordering() ?
		ib_verbs->reg_mr_iova2(hca->pd, (void *)addr, len, addr,
				       (unsigned int)ib_data_access()) :
		ib_verbs->reg_mr(hca->pd, (void *)addr, len, IB_MR_ACCESS);

	if (!mr)
		return fl_fail(FL_ERR_SYSTEM, "ibv_reg_mr of %zu bytes at %#lx on %s: %m", len,
			       (unsigned long)addr, hca->name);
	out->mr = mr;
	out->lkey = mr->lkey;
	out->rkey = mr->rkey;
	return FL_OK;
}

static int mr_dereg(void *ctx, struct ib_mr *m)
{
	struct ib_hca *hca = ctx;

	if (m->mr && ib_verbs->dereg_mr(m->mr))
		return fl_fail(FL_ERR_SYSTEM, "ibv_dereg_mr on %s: %m", hca->name);
	return FL_OK;
}

static void read_gid(struct ib_device *d, int index, struct ib_gid_info *g)
{
	struct ibv_gid_entry e;
	union ibv_gid gid;
	static const uint8_t zero[16];

	memset(g, 0, sizeof(*g));
	if (ib_verbs->query_gid_ex &&
	    !ib_verbs->query_gid_ex(d->hca->ctx, (uint32_t)d->port, (uint32_t)index, &e, 0,
				 sizeof(e))) {
		memcpy(g->raw, e.gid.raw, 16);
		g->kind = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? IB_GID_ROCE_V2 :
			  e.gid_type == IBV_GID_TYPE_ROCE_V1 ? IB_GID_ROCE_V1 : IB_GID_IB;
	} else if (!ib_verbs->query_gid(d->hca->ctx, (uint8_t)d->port, index, &gid)) {
		memcpy(g->raw, gid.raw, 16);
		g->kind = ib_gid_kind_from_sysfs(ib_cfg.sysfs_root, d->hca->name, d->port, index);
	} else {
		return;
	}
	g->valid = memcmp(g->raw, zero, 16) != 0;
}

/* InfiniBand addresses by LID and keeps GID 0; RoCE needs a GID of the right kind. */
static int choose_gid(struct ib_device *d, int table_len)
{
	struct ib_gid_info gids[IB_GID_MAX];
	int n = table_len < IB_GID_MAX ? table_len : IB_GID_MAX;
	int pick;

	if (d->link_layer != IBV_LINK_LAYER_ETHERNET)
		pick = 0;
	else if (ib_cfg.gid_index >= 0)
		pick = ib_cfg.gid_index;
	else
		pick = -1;
	if (pick >= 0 && pick >= table_len)
		return fl_fail(FL_ERR_USAGE, "NCCL_IB_GID_INDEX=%d: %s has %d GIDs", pick,
			       d->dev_name, table_len);
	for (int i = 0; i < n; i++)
		read_gid(d, i, &gids[i]);
	if (pick < 0)
		pick = ib_gid_pick(gids, n);
	if (pick < 0)
		return fl_fail(FL_ERR_SYSTEM, "%s: no usable RoCE GID", d->dev_name);
	if (pick < n) {
		memcpy(d->gid.raw, gids[pick].raw, 16);
		d->gid_kind = gids[pick].kind;
	} else {
		ib_verbs->query_gid(d->hca->ctx, (uint8_t)d->port, pick, &d->gid);
	}
	d->gid_index = pick;
	return FL_OK;
}

static void log_device(int i, const struct ib_device *d)
{
	char gid[96], addr[64];

	ib_gid_format(d->gid.raw, addr, sizeof(addr));
	snprintf(gid, sizeof(gid), "%s %s", ib_gid_kind_name(d->gid_kind), addr);
	FL_INFO("ib device %d: %s, %s, %dX %s = %d Mbps, %s %d (%s), pci %s%s%s%s", i, d->dev_name,
		d->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
		ib_width_lanes(d->width), ib_speed_name(d->lane_speed), d->speed_mbps,
		d->link_layer == IBV_LINK_LAYER_ETHERNET ? "GID" : "LID",
		d->link_layer == IBV_LINK_LAYER_ETHERNET ? d->gid_index : d->lid,
		d->link_layer == IBV_LINK_LAYER_ETHERNET ? gid : "GID 0",
		d->pci_path ? d->pci_path : "none",
		d->ptr_support & FL_PTR_CUDA ? ", GPUDirect" : "",
		d->ptr_support & FL_PTR_DMABUF ? ", dma-buf" : "",
		d->data_direct ? ", mlx5 DataDirect (forceFlush)" : "");
}

static int ptr_support(struct ib_hca *hca)
{
	int p = FL_PTR_HOST;

	if (gdr_peermem_client(ib_cfg.sysfs_root))
		p |= FL_PTR_CUDA;
	if (gdr_dmabuf_supported(ib_verbs, hca->pd))
		p |= FL_PTR_DMABUF;
	return p;
}

/*
 * The DataDirect device's PCI path: libmlx5's sysfs path under /sys (2.30.7
 * src/transport/net_ib/init.cc:337, 380, 425), resolved under FABRICLAB_SYSFS_ROOT when it is
 * there, else as given.
 */
static char *dd_pci_path(const char *sysfs_rel)
{
	char joined[PATH_MAX + 8], *real;

	snprintf(joined, sizeof(joined), "%s%s%s", ib_cfg.sysfs_root,
		 sysfs_rel[0] == '/' ? "" : "/", sysfs_rel);
	real = realpath(joined, NULL);
	return real ? real : strdup(joined);
}

static int add_port(struct ib_hca *hca, int port, const struct ibv_port_attr *pa,
		    const char *dd_path, struct ib_device *d)
{
	memset(d, 0, sizeof(*d));
	d->hca = hca;
	d->port = port;
	snprintf(d->name, sizeof(d->name), "%.*s%s", IB_NAME_LEN - 5, hca->name,
		 dd_path ? "_dma" : "");
	snprintf(d->dev_name, sizeof(d->dev_name), "%.11s:%u", d->name, (unsigned char)port);
	d->link_layer = pa->link_layer == IBV_LINK_LAYER_ETHERNET ? IBV_LINK_LAYER_ETHERNET :
								     IBV_LINK_LAYER_INFINIBAND;
	d->lid = pa->lid;
	d->mtu = pa->active_mtu;
	d->width = pa->active_width;
	d->lane_speed = pa->active_speed;
	d->speed_mbps = ib_port_mbps(pa->active_width, pa->active_speed);
	if (choose_gid(d, pa->gid_tbl_len))
		return FL_ERR_USAGE;
	d->pci_path = dd_path ? dd_pci_path(dd_path) :
		fl_sysfs_device_path(ib_cfg.sysfs_root, "infiniband", hca->name);
	d->ptr_support = ptr_support(hca);
	d->data_direct = dd_path != NULL;
	return FL_OK;
}

/*
 * Whether the HCA has an mlx5 DataDirect device: NCCL_IB_DATA_DIRECT on, dma-buf capable, and
 * libmlx5 answering (2.30.7 src/transport/net_ib/init.cc:376-394); path gets its sysfs path.
 */
static int hca_data_direct(struct ibv_device *dev, struct ib_hca *hca, char *path, size_t len)
{
	if (!ib_cfg.data_direct || !(ptr_support(hca) & FL_PTR_DMABUF))
		return 0;
	if (!ib_mlx5_data_direct(dev, hca->ctx, path, len))
		return 0;
	FL_INFO("ib: %s: mlx5 DataDirect device at /sys%s%s", hca->name, path,
		ib_cfg.data_direct == 2 ? " (offered beside the plain one: NCCL_IB_DATA_DIRECT=2)" : "");
	return 1;
}

/*
 * A port's devices, as NCCL exposes them: the plain one, or for DataDirect only the DataDirect
 * one unless NCCL_IB_DATA_DIRECT=2 asks for both (init.cc:383-386, 397).
 */
static int add_devices(struct ib_hca *hca, int port, const struct ibv_port_attr *pa,
		       const char *dd_path, struct ib_device *out, int max, int *count)
{
	int plain = !dd_path || ib_cfg.data_direct == 2, rc = FL_OK, added = 0;

	if (plain && *count < max && !(rc = add_port(hca, port, pa, NULL, &out[*count])))
		(*count)++, added++;
	if (!rc && dd_path && *count < max && !(rc = add_port(hca, port, pa, dd_path, &out[*count])))
		(*count)++, added++;
	return rc ? -1 : added;
}

/* Opens one HCA; 0 with nothing kept when the filter leaves none of its ports. */
static int open_hca(struct ibv_device *dev, const struct ib_hca_filter *filter,
		    struct ib_device *out, int max, int *count)
{
	struct ib_hca *hca = &hcas[nhcas];
	const char *name = ib_verbs->get_device_name(dev);
	char dd_path[PATH_MAX];
	int kept = 0, dd;

	if (!name || nhcas == IB_MAX_HCAS)
		return FL_OK;
	memset(hca, 0, sizeof(*hca));
	snprintf(hca->name, sizeof(hca->name), "%s", name);
	hca->ctx = ib_verbs->open_device(dev);
	if (!hca->ctx) {
		FL_INFO("ib: cannot open %s: %m", name);
		return FL_OK;
	}
	if (ib_verbs->query_device(hca->ctx, &hca->attr) ||
	    !(hca->pd = ib_verbs->alloc_pd(hca->ctx))) {
		FL_INFO("ib: %s does not answer (query or protection domain failed)", name);
		ib_verbs->close_device(hca->ctx);
		return FL_OK;
	}
	ib_mr_cache_init(&hca->mrs, &mr_ops, hca);
	dd = hca_data_direct(dev, hca, dd_path, sizeof(dd_path));
	for (int port = 1; port <= hca->attr.phys_port_cnt && *count < max; port++) {
		struct ibv_port_attr pa;
		int added;

		if (fl_verbs_query_port(ib_verbs, hca->ctx, (uint8_t)port, &pa) ||
		    pa.state != IBV_PORT_ACTIVE || !ib_hca_match(filter, name, port))
			continue;
		added = add_devices(hca, port, &pa, dd ? dd_path : NULL, out, max, count);
		if (added < 0)
			return FL_ERR_USAGE;
		kept += added;
	}
	if (!kept) {
		ib_mr_cache_destroy(&hca->mrs);
		ib_verbs->dealloc_pd(hca->pd);
		ib_verbs->close_device(hca->ctx);
		return FL_OK;
	}
	ib_async_watch(hca, out + *count - kept, kept);
	nhcas++;
	return FL_OK;
}

int ib_devices_discover(const struct fl_verbs *v, struct ib_device *out, int max, int *count)
{
	struct ib_hca_filter filter;
	struct ibv_device **list;
	int n = 0, rc;

	*count = 0;
	ib_verbs = v;
	rc = ib_hca_from_env(&filter);
	if (rc)
		return rc;
	list = v->get_device_list(&n);
	if (!list)
		return FL_OK; /* no RDMA driver: no devices, not an error */
	for (int i = 0; i < n && !rc; i++)
		rc = open_hca(list[i], &filter, out, max, count);
	v->free_device_list(list);
	for (int i = 0; !rc && i < *count; i++)
		log_device(i, &out[i]);
	if (!rc && *count)
		FL_INFO("ib: PCI relaxed ordering for data buffers %s", relaxed_ordering() ? "on" :
			ib_cfg.relaxed_ordering ? "off (the library has no ibv_reg_mr_iova2)" :
			"off (NCCL_IB_PCI_RELAXED_ORDERING=0)");
	return rc;
}

int ib_device_check(const struct ib_device *dev)
{
	if (atomic_load_explicit(&dev->hca->fatal, memory_order_relaxed))
		return fl_fail(FL_ERR_SYSTEM, "%s: the HCA reported a fatal error "
			       "(IBV_EVENT_DEVICE_FATAL)", dev->dev_name);
	if (atomic_load_explicit(&dev->port_down, memory_order_relaxed))
		return fl_fail(FL_ERR_SYSTEM, "%s: port went down (IBV_EVENT_PORT_ERR)",
			       dev->dev_name);
	return FL_OK;
}

void ib_devices_release(struct ib_device *devs, int ndevs)
{
	for (int i = 0; i < ndevs; i++) {
		free(devs[i].pci_path);
		devs[i].pci_path = NULL;
	}
	for (int i = 0; i < nhcas; i++) {
		ib_mr_cache_destroy(&hcas[i].mrs);
		ib_verbs->dealloc_pd(hcas[i].pd);
		ib_verbs->close_device(hcas[i].ctx);
	}
	nhcas = 0;
}
