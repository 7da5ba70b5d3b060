/* Who this process is: node name and rank, as they appear in handles and reports. */
#ifndef FL_IDENTITY_H
#define FL_IDENTITY_H

#include "fl_types.h"

/*
 * Node = FABRICLAB_NODE_NAME, else NODE_NAME (Kubernetes downward API), else
 * the hostname. Rank from FABRICLAB_RANK, RANK, OMPI_COMM_WORLD_RANK or
 * SLURM_PROCID, else -1 (NCCL's tags tell the wrap later).
 */
void fl_identity_local(struct fl_endpoint *ep, int dev, const char *dev_name, uint64_t comm_hash);
/*
 * Ranks in the job from FABRICLAB_WORLD_SIZE, WORLD_SIZE, OMPI_COMM_WORLD_SIZE
 * or SLURM_NTASKS, else -1: lets a merge say which ranks left no report. At
 * most FL_WORLD_SIZE_MAX, as many as `fabriclab report` takes (REPORT_MAX_WORLD
 * in tools/report/report.h): a larger value fails init, never a report the merge
 * would refuse.
 */
#define FL_WORLD_SIZE_MAX (1 << 24)
int fl_identity_world_size(void);

/*
 * FL_ERR_USAGE, naming the variable and its value (escaped), when the rank
 * variable in effect is not a plain number, the world size variable in effect
 * is not a number from 1 to FL_WORLD_SIZE_MAX, or the node name is longer than
 * FL_NODE_NAME_LEN - 1 or holds anything but letters, digits, '-', '_', '.'.
 */
int fl_identity_check(void);

#endif
