#include "ib_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/error.h"
#include "base/fl_types.h"
#include "ib_stripe.h"
#include "base/sysfs_read.h"

struct ib_config ib_cfg;

static int load_nqps(int *nqps)
{
	const char *var = getenv("FABRICLAB_IB_QPS") && *getenv("FABRICLAB_IB_QPS") ?
				  "FABRICLAB_IB_QPS" : "NCCL_IB_QPS_PER_CONNECTION";
	long v;
	int rc = fl_env_long(var, 1, 1, IB_MAX_QPS, &v);

	*nqps = (int)v;
	return rc;
}

struct knob {
	const char *name;
	long def, min, max;
	int *out;
};

int ib_config_load(struct ib_config *cfg)
{
	const struct knob knobs[] = {
		{ "NCCL_IB_GID_INDEX", -1, -1, 255, &cfg->gid_index },
		{ "NCCL_IB_TC", 0, 0, 255, &cfg->tc },
		{ "NCCL_IB_SL", 0, 0, 15, &cfg->sl },
		{ "NCCL_IB_TIMEOUT", 20, 1, 31, &cfg->timeout },
		{ "NCCL_IB_RETRY_CNT", 7, 0, 7, &cfg->retry_cnt },
		{ "NCCL_IB_DISABLE", 0, 0, 1, &cfg->disabled },
		{ "NCCL_IB_PCI_RELAXED_ORDERING", 2, 0, 2, &cfg->relaxed_ordering },
		{ "FABRICLAB_IB_PACE_PIECE_US", 100, 10, 1000000, &cfg->pace_piece_us },
		/* NCCL's default and range (2.30.7 src/transport/net_ib/init.cc:13, 378-386) */
		{ "NCCL_IB_DATA_DIRECT", 1, 0, 2, &cfg->data_direct },
	};
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	rc = load_nqps(&cfg->nqps);
	for (size_t i = 0; !rc && i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		long v;

		rc = fl_env_long(knobs[i].name, knobs[i].def, knobs[i].min, knobs[i].max, &v);
		*knobs[i].out = (int)v;
	}
	return rc ? rc : fl_sysfs_root_copy(cfg->sysfs_root, sizeof(cfg->sysfs_root));
}
