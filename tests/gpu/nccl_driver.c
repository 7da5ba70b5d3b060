/*
 * nccl_driver: real NCCL on one GPU with nothing but the CUDA toolkit (no nvcc, no PyTorch).
 * N processes, each its own NCCL_HOSTID, so that NCCL takes them for N hosts and carries every
 * byte over its NET transport, the one NCCL_NET/NCCL_NET_PLUGIN select (fabriclab, or NCCL's
 * own Socket to compare with); all-reduce and send/recv over nccl-tests' sizes, every element
 * checked. tests/gpu/run.sh drives it; `nccl_driver --help` says the options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver_args.h"
#include "driver_launch.h"
#include "driver_rank.h"

#define PROBE_TIMEOUT_S 60.0

static void print_plan(const struct drv_args *a)
{
	size_t sizes[64], n = drv_sizes(a, sizes, 64);
	char buf[4096];

	printf("nccl_driver dry run: %d rank(s)%s on CUDA device %d, ops:%s%s, %d warm-up + %d "
	       "timed calls per size, timeout %.0f s\nsizes (B):", a->ranks,
	       a->rank >= 0 ? " (this process: one of them)" : ", forked here", a->device,
	       a->ops & DRV_OP_ALL_REDUCE ? " all_reduce" : "",
	       a->ops & DRV_OP_SENDRECV ? " sendrecv" : "", a->warmup, a->iters, a->timeout_s);
	for (size_t i = 0; i < n; i++)
		printf(" %zu", sizes[i]);
	printf("\nunique id file: %s\n", a->id_file[0] ? a->id_file : "(a fresh folder per run)");
	for (int r = 0; r < a->ranks; r++) {
		if (a->rank >= 0 && r != a->rank)
			continue;
		printf("rank %d:", r);
		if (a->rank < 0)
			printf(" NCCL_HOSTID=%s%d", a->hostid_prefix, r);
		for (int i = 0; i < a->n_rank_env; i++)
			if (!drv_expand_rank(a->rank_env[i], r, buf, sizeof(buf)))
				printf(" %s", buf);
		printf("\n");
	}
}

/* A fresh folder for the id file when none was named: 0, or -1 ("" in dir when one was). */
static int pick_id_file(struct drv_args *a, char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	dir[0] = '\0';
	if (a->id_file[0])
		return 0;
	if (snprintf(dir, len, "%s/fabriclab-nccl-id.XXXXXX", tmp && *tmp ? tmp : "/tmp") >= (int)len ||
	    !mkdtemp(dir))
		return -1;
	if (snprintf(a->id_file, sizeof(a->id_file), "%s/id", dir) >= (int)sizeof(a->id_file)) {
		rmdir(dir);
		return -1;
	}
	return 0;
}

static int launch_all(struct drv_args *a)
{
	char msg[1024], dir[PATH_MAX];
	int rc;

	/* A named id file must not exist: the other ranks would read a stale id and wait on a
	 * root that is gone. Refused before anything touches the GPU. */
	if (a->id_file[0] && access(a->id_file, F_OK) == 0) {
		fprintf(stderr, "nccl_driver: --id-file %s exists (left by another run?): remove it "
			"or name a new one\n", a->id_file);
		return DRV_EXIT_USAGE;
	}
	rc = drv_probe(a, drv_gpu_probe, msg, sizeof(msg), PROBE_TIMEOUT_S);
	if (rc) {
		fprintf(stderr, "nccl_driver: %s\n", msg[0] ? msg : "GPU probe failed");
		return rc;
	}
	if (pick_id_file(a, dir, sizeof(dir))) {
		fprintf(stderr, "nccl_driver: cannot make a folder for the unique id: %s\n", dir);
		return DRV_EXIT_FAILED;
	}
	rc = drv_launch(a, drv_rank_run, NULL, msg, sizeof(msg));
	if (rc)
		fprintf(stderr, "nccl_driver: %s\n", msg);
	if (dir[0]) {
		unlink(a->id_file);
		rmdir(dir);
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct drv_args a;
	char err[1024];
	int rc;

	if (drv_args_parse(argc, argv, &a, err, sizeof(err))) {
		fprintf(stderr, "nccl_driver: %s\n", err);
		return DRV_EXIT_USAGE;
	}
	if (a.help) {
		drv_usage(stdout);
		return DRV_EXIT_OK;
	}
	if (a.version) {
		int v = drv_nccl_version();

		printf("nccl_driver: NCCL header %d, library %d (%d.%d.%d)\n",
		       drv_nccl_header_version(), v, v / 10000, v / 100 % 100, v % 100);
		return DRV_EXIT_OK;
	}
	if (a.dry_run) {
		print_plan(&a);
		return DRV_EXIT_OK;
	}
	if (a.rank < 0)
		return launch_all(&a);
	rc = drv_rank_run(&a, a.rank, NULL, err, sizeof(err));
	if (rc)
		fprintf(stderr, "nccl_driver: rank %d: %s\n", a.rank, err);
	return rc;
}
