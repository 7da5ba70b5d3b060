/*
 * Out-of-band exchange between the ranks of one job, over TCP, the way a
 * torchrun job is described: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
 * Rank 0 listens; the others connect (retrying for up to 30 s) and prove they
 * belong with a magic and a version. Every operation goes through rank 0 and
 * has a deadline, so a dead or stuck rank makes the others fail, not hang.
 */
#ifndef SHIM_BOOTSTRAP_H
#define SHIM_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#define SHIM_BOOT_CONNECT_S 30

struct shim_boot {
	int rank;
	int nranks;
	int timeout_ms; /* per operation */
	int root_fd;    /* ranks > 0: the connection to rank 0 */
	int *rank_fds;  /* rank 0: the connection to each rank (index 0 unused) */
	uint32_t seq;   /* operations so far; both ends must agree */
};

/*
 * Hands rank 0 of a spawned job a socket already bound and listening, so that
 * no other process can take the port between choosing and binding it.
 */
void shim_boot_inherit_listener(int fd);

/* Joins the job described by RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT. */
int shim_boot_init_env(struct shim_boot *boot, int timeout_ms);
int shim_boot_init(struct shim_boot *boot, int rank, int nranks, const char *addr,
		   const char *port, int timeout_ms);
/* all[r * size ...] = rank r's `mine`, on every rank. */
int shim_boot_allgather(struct shim_boot *boot, const void *mine, void *all, size_t size);
int shim_boot_barrier(struct shim_boot *boot);
/* On rank 0, all[r * n ...] = rank r's values; other ranks pass all = NULL. */
int shim_boot_gather_doubles(struct shim_boot *boot, const double *mine, size_t n, double *all);
void shim_boot_close(struct shim_boot *boot);

#endif
