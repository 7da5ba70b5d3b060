#include "gdr_detect.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

const char *gdr_peermem_client(const char *sysfs_root)
{
	static const struct {
		const char *path;
		const char *name;
	} clients[] = {
		{ "module/nvidia_peermem/version", "nvidia_peermem" },
		{ "kernel/mm/memory_peers/nv_mem/version", "nv_peer_mem" },
		{ "kernel/mm/memory_peers/nv_mem_nc/version", "nv_peer_mem (nc)" },
	};

	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++) {
		char path[4200];

		snprintf(path, sizeof(path), "%s/%s", sysfs_root, clients[i].path);
		if (!access(path, F_OK))
			return clients[i].name;
	}
	return NULL;
}

int gdr_dmabuf_supported(const struct fl_verbs *v, struct ibv_pd *pd)
{
	struct ibv_mr *mr;

	if (!v->reg_dmabuf_mr || !pd)
		return 0;
	errno = 0;
	mr = v->reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
	if (mr) {
		v->dereg_mr(mr);
		return 1;
	}
	return errno != EOPNOTSUPP && errno != EPROTONOSUPPORT && errno != ENOSYS;
}
