/*
 * The lab's fabrics. tcp: the socket transport on loopback. roce and ib: the
 * verbs transport over the emulated fabric (fabric/: the NIC in
 * build/libfabriclab-fakeverbs.so, an Ethernet link layer with RoCE v2 GIDs,
 * or InfiniBand with LIDs, configured by the run's topology.json), with each
 * rank's gradients in emulated GPU memory (build/libfabriclab-fakecuda.so) on
 * a node whose kernel offers GPUDirect RDMA (nvidia_peermem in the run's
 * sysfs). The plugin then registers CUDA memory everywhere except where nogdr
 * applies: there the shim stages through host memory, as NCCL does, and every
 * copy between host and GPU runs at the rate of the emulated GPU's copy engine
 * (the description's gpus.copy_bytes_per_s: --copy-rate), so GPUDirect
 * switched off costs step time as it does on a cluster.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab.h"

#define FAKE_VERBS "libfabriclab-fakeverbs.so"
#define FAKE_CUDA "libfabriclab-fakecuda.so"

static const char *const names[] = { "tcp", "roce", "ib" };

const char *lab_fabric_name(enum lab_fabric f)
{
	return names[f];
}

int lab_fabric_parse(const char *name, enum lab_fabric *out)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i])) {
			*out = (enum lab_fabric)i;
			return 0;
		}
	return -1;
}

/* A test library next to the tool; the lab cannot emulate the fabric without it. */
static int beside_tool(const struct lab_opts *o, const char *lib, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", o->tool_dir ? o->tool_dir : ".", lib);
	if (!access(path, R_OK))
		return 0;
	fprintf(stderr, "fabriclab lab: --fabric %s needs %s next to the fabriclab binary "
		"(built by make): %s\n", lab_fabric_name(o->fabric), lib, strerror(errno));
	return -1;
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 96];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "fabriclab lab: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* A sysfs of the run's own where the peer memory client is loaded, and nothing else. */
static int peermem_sysfs(const struct lab_opts *o, char *root, size_t len)
{
	char path[PATH_MAX + 64];

	snprintf(root, len, "%s/sysfs", o->run_dir);
	snprintf(path, sizeof(path), "%s/module/nvidia_peermem", root);
	for (char *p = path + strlen(o->run_dir) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST) {
		fprintf(stderr, "fabriclab lab: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return write_file(path, "version", "2.0 (emulated by fabriclab lab)\n");
}

/* A FABRICLAB_FAKEVERBS_* or _FAKECUDA_* variable from the shell overrides the description in
 * every rank. */
static void note_overrides(void)
{
	extern char **environ;

	for (char **e = environ; *e; e++)
		if (!strncmp(*e, "FABRICLAB_FAKEVERBS_", 20) ||
		    !strncmp(*e, "FABRICLAB_FAKECUDA_", 19))
			fprintf(stderr, "fabriclab lab: note: %.*s from your environment overrides the "
				"fabric's description (fabric/README.md)\n", (int)strcspn(*e, "="), *e);
}

int lab_fabric_env(const struct lab_opts *o)
{
	char verbs[PATH_MAX + 64], cuda[PATH_MAX + 64], root[PATH_MAX + 16];
	char description[PATH_MAX + 16];

	if (o->fabric == LAB_TCP) {
		setenv("FABRICLAB_TRANSPORT", "socket", 1);
		unsetenv("FABRICLAB_SHIM_MEM");
		return 0;
	}
	if (beside_tool(o, FAKE_VERBS, verbs, sizeof(verbs)) ||
	    beside_tool(o, FAKE_CUDA, cuda, sizeof(cuda)) || peermem_sysfs(o, root, sizeof(root)) ||
	    lab_topology_write((struct lab_opts *)o, description, sizeof(description)))
		return -1;
	setenv("FABRICLAB_TRANSPORT", "ib", 1);
	setenv("FABRICLAB_IBVERBS_LIB", verbs, 1);
	/* the emulated fabric is its description: nodes, NICs, GPUs, switches, physics, faults */
	setenv("FABRICLAB_FABRIC", description, 1);
	note_overrides();
	lab_like_env(o);
	setenv("FABRICLAB_SYSFS_ROOT", root, 1);
	setenv("FABRICLAB_SHIM_MEM", "cuda", 1);
	setenv("FABRICLAB_CUDART_LIB", cuda, 1);
	setenv("FABRICLAB_CUDA_DRIVER_LIB", cuda, 1);
	unsetenv("NCCL_IB_HCA");
	unsetenv("FABRICLAB_IB_HCA");
	return 0;
}

void lab_fabric_enter(const struct lab_opts *o, int rank)
{
	char node[16];

	lab_rails_enter(o, rank);
	if (o->fabric == LAB_TCP)
		return;
	snprintf(node, sizeof(node), "node%d", lab_rank_node(o, rank));
	setenv("FABRICLAB_FABRIC_NODE", node, 1);
}
