/*
 * `fabriclab doctor`: one node's health for the fabric (docs/doctor.md). Each
 * check adds pass/info/warn/fail lines with the command a person would run to
 * look deeper; the exit status is 1 when any line fails.
 */
#ifndef FABRICLAB_DOCTOR_H
#define FABRICLAB_DOCTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "plugin/port/port_info.h"

enum doctor_level {
	DOCTOR_PASS,
	DOCTOR_INFO, /* a fact that neither passes nor fails: the check does not apply */
	DOCTOR_WARN,
	DOCTOR_FAIL,
};

#define DOCTOR_EXIT_OK 0
#define DOCTOR_EXIT_FAIL 1
#define DOCTOR_EXIT_USAGE 2
#define DOCTOR_EXIT_WARN 3 /* only with --strict */

struct doctor_check {
	char check[24]; /* "port", "rate", "counters", "gpudirect", ... */
	char subject[64]; /* "mlx5_0/1", "eth2", "" */
	int level;
	char message[640];
	char command[320]; /* what a person runs to look deeper, "" if nothing */
};

#define DOCTOR_PRIOS 8

/* One RoCE interface's lossless settings, as read (doctor_roce.c); `have_*` false = unknown. */
struct doctor_roce {
	char netdev[IFNAMSIZ];
	char port[FL_PORT_NAME_LEN];
	bool have_trust, have_pfc, have_ecn;
	char trust[8];            /* "pcp" or "dscp" */
	bool pfc[DOCTOR_PRIOS];
	bool ecn_np[DOCTOR_PRIOS]; /* notification point: sends CNPs for marked packets */
	bool ecn_rp[DOCTOR_PRIOS]; /* reaction point: slows down on CNPs (DCQCN) */
	long tc, sl;              /* NCCL_IB_TC, NCCL_IB_SL (0 unset) */
	int dscp;                 /* tc >> 2 */
	int prio;                 /* the priority NCCL's RoCE packets travel on */
	uint64_t rx_pause[DOCTOR_PRIOS], tx_pause[DOCTOR_PRIOS];
};

struct doctor {
	const char *root; /* sysfs root */
	double interval_s; /* 0: one sample, counters as absolute values */
	bool json, strict, require_rdma;
	struct fl_port_list *ports; /* the (last) sample */
	struct fl_port_list *base; /* the first sample with --interval, else NULL */
	int nverbs_devices; /* -1: libibverbs could not be loaded */
	bool dmabuf_probe; /* a verbs device accepted the dma-buf probe */
	bool dmabuf_probed;
	int nchecks, cap;
	struct doctor_check *checks;
	const char *prom; /* --prom FILE */
	const char *ext;  /* --ext SPEC, else FABRICLAB_TRANSPORT=ext:SPEC */
	struct doctor_roce roce[FL_PORT_MAX];
	int nroce;
};

void doctor_add(struct doctor *d, int level, const char *check, const char *subject,
		const char *command, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
const char *doctor_level_name(int level);

/* The checks, in the order they print. */
void doctor_check_verbs(struct doctor *d);
void doctor_check_ports(struct doctor *d);
void doctor_check_counters(struct doctor *d);
void doctor_check_gpudirect(struct doctor *d);
void doctor_check_placement(struct doctor *d);
/* GPUs and their GPUDirect attributes from the CUDA runtime, when it loads. */
void doctor_check_cuda(struct doctor *d);
void doctor_check_nccl_env(struct doctor *d);
void doctor_check_nccl_profiler(struct doctor *d);
/* RoCE: PFC, ECN and trust per priority, NCCL's traffic class mapped to its priority. */
void doctor_check_roce(struct doctor *d);
/* The plugin FABRICLAB_TRANSPORT=ext:SPEC (or --ext SPEC) wraps: version, path, devices. */
void doctor_check_ext(struct doctor *d);

/* --prom FILE: node_exporter textfile metrics (doctor_prom.c); 0, or -1 with errno. */
int doctor_write_prom(const struct doctor *d, const char *path);

/* Outputs (doctor_out.c). */
void doctor_print_text(const struct doctor *d, FILE *out);
int doctor_print_json(const struct doctor *d, FILE *out);
/* 1 when a check failed, 3 for warnings with --strict, else 0. */
int doctor_exit_status(const struct doctor *d);

int doctor_main(int argc, char **argv);
void doctor_usage(FILE *out);

#endif
