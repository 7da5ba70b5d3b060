/*
 * NCCL_IB_HCA syntax: "mlx5_0:1,mlx5_1" picks devices by name prefix, with an
 * optional port; a leading "^" excludes the listed ones instead; "=" (after
 * any "^") compares whole names. FABRICLAB_IB_HCA wins over NCCL_IB_HCA.
 */
#ifndef FL_IB_HCA_H
#define FL_IB_HCA_H

#define IB_HCA_MAX 32
#define IB_HCA_NAME_LEN 64

struct ib_hca_filter {
	int exclude;
	int exact;
	int n; /* 0 = no filter: every device */
	struct {
		char name[IB_HCA_NAME_LEN];
		int port; /* -1 = any port */
	} entries[IB_HCA_MAX];
};

/* FL_ERR_USAGE, naming `var`, when spec is malformed. NULL or "" = no filter. */
int ib_hca_parse(const char *var, const char *spec, struct ib_hca_filter *f);
/* 1 when the filter lets device `name`, port `port` through. */
int ib_hca_match(const struct ib_hca_filter *f, const char *name, int port);
/* Reads FABRICLAB_IB_HCA, else NCCL_IB_HCA. */
int ib_hca_from_env(struct ib_hca_filter *f);

#endif
