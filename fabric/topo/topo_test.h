/*
 * For tests: an emulated fabric of their own, described in a file in its state folder and named
 * by FABRICLAB_FABRIC (fabric/README.md), as the lab does for its ranks, instead of the
 * FABRICLAB_FAKEVERBS_* overrides.
 */
#ifndef FABRIC_TOPO_TEST_H
#define FABRIC_TOPO_TEST_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* The fake's own devices, on two nodes: what tests get unless they describe another fabric. */
#define FT_TEST_NODES "[{\"name\": \"node0\", \"nics\": [{\"name\": \"mlx5_0\", \"port\": " \
	"\"ib:4x:hdr\"}, {\"name\": \"mlx5_1\", \"port\": \"eth:4x:25g\"}]}, " \
	"{\"name\": \"node1\", \"nics\": [{\"name\": \"mlx5_0\", \"port\": \"ib:4x:hdr\"}, " \
	"{\"name\": \"mlx5_1\", \"port\": \"eth:4x:25g\"}]}]"

/*
 * Writes dir/fabric.json (dir exists: the fabric's state goes there too) and points
 * FABRICLAB_FABRIC at it. `emulation` adds members to its "emulation" object
 * (", \"retry_ms\": 500"), `members` to the description ("\"nodes\": [...], \"physics\":
 * {...}"); NULL or "" for none and FT_TEST_NODES. 0, or -1 when the file cannot be written.
 */
static inline int ft_test_describe(const char *dir, const char *emulation, const char *members)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/fabric.json", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "{\"fabriclab_fabric\": 1, \"emulation\": {\"state_dir\": \"%s\"%s}, %s}\n", dir,
		emulation ? emulation : "", members && *members ? members : "\"nodes\": " FT_TEST_NODES);
	if (fclose(f))
		return -1;
	setenv("FABRICLAB_FABRIC", path, 1);
	return 0;
}

#endif
