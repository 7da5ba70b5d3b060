/*
 * Handing NCCL's unique id (ncclUniqueId, NCCL_UNIQUE_ID_BYTES opaque bytes that rank 0 gets
 * from ncclGetUniqueId and every rank passes to ncclCommInitRank) from rank 0 to the others
 * through a file: one text line, "fabriclab-nccl-uid 1 <hex>", published whole by link(2) so
 * that a reader never sees half of it and a stale file from another run is refused, not reused.
 * No CUDA or NCCL here: the id is bytes.
 */
#ifndef FL_GPU_DRIVER_UID_H
#define FL_GPU_DRIVER_UID_H

#include <stddef.h>

#define DRV_UID_MAGIC "fabriclab-nccl-uid 1 "
#define DRV_UID_MAX_BYTES 1024

/* The line for len bytes of id (with its newline) into text: 0, or -1 when text is too small. */
int drv_uid_encode(const void *id, size_t len, char *text, size_t textlen);

/* The id from one such line: 0, or -1 when it is not exactly len bytes in that form. */
int drv_uid_decode(const char *text, void *id, size_t len);

/* Rank 0: writes the id to path, which must not exist yet. 0, or -1 with a message in err. */
int drv_uid_publish(const char *path, const void *id, size_t len, char *err, size_t errlen);

/* Ranks > 0: waits up to timeout_s for path to appear and reads the id from it. */
int drv_uid_wait(const char *path, void *id, size_t len, double timeout_s, char *err,
		 size_t errlen);

#endif
