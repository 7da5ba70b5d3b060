/*
 * The shim: a small stand-in for NCCL that drives a net plugin the way NCCL
 * does, over host memory (or GPU memory: shim_mem.h). A world is one rank of a job: the bootstrap, the
 * loaded plugin, and a ring of connections (send to rank+1, receive from
 * rank-1). Collectives follow NCCL's proxy for the release FABRICLAB_SHIM_NCCL
 * (nccl_rules.h says what and where: slices, depth, whole-slot receives into a
 * staging ring, flushes, hints), isend tag = own rank, irecv tag = the
 * sender's rank, and test() polled.
 *
 * Environment: NCCL_NET_PLUGIN (default "fabriclab"), FABRICLAB_SHIM_NET_VERSION
 * (0 = highest), FABRICLAB_SHIM_DEV (0), FABRICLAB_SHIM_STEP (512K: Simple's
 * step, NCCL_BUFFSIZE / 8), FABRICLAB_SHIM_NCCL, FABRICLAB_SHIM_PROTO (nccl_rules.h),
 * FABRICLAB_SHIM_TIMEOUT (seconds without progress before giving up, 120; also the
 * longest one plugin call may take before the rank ends naming it: watchdog.h),
 * FABRICLAB_SHIM_IDLE_US (0: a rank with nothing to do yields the CPU and polls
 * again, as NCCL's proxy spins; N: after a few idle passes it sleeps N us, so
 * many ranks on few cores leave the CPU to the ones with work).
 * Every call returns an fl_result; on failure shim_error_text() says why.
 */
#ifndef SHIM_H
#define SHIM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin/base/fl_types.h"
#include "bootstrap.h"
#include "shim_error.h"
#include "shim_log.h"
#include "shim_mem.h"
#include "shim_net.h"
#include "nccl_rules.h"

#define SHIM_STEPS SHIM_NCCL_STEPS /* NCCL_STEPS: the most transfers in flight per connection */
/*
 * FABRICLAB_SHIM_CHANNELS: rings run side by side, each over connections of its own, as NCCL
 * opens a send and a receive connection per channel (2.28.9 src/transport/net.cc:291-317,
 * sendSetup/recvSetup per channelId: "Channel %02d/%d ... via NET"), each on its share of the
 * buffer. A hop then has a connection per channel.
 */
#define SHIM_MAX_CHANNELS 8
#define SHIM_STEP_DEFAULT (512 * 1024)
#define SHIM_TIMEOUT_DEFAULT_S 120

/* One send connection and one receive connection, to possibly different peers. */
struct shim_link {
	int send_peer;
	int recv_peer;
	void *send_comm;
	void *recv_comm;
	/* what receives land in: a collective's SHIM_STEPS steps, or p2p's shared slots */
	char *staging;
	void *staging_mh;
	size_t staging_bytes;
	/* LL and LL128: the SHIM_STEPS steps sends are packed into (host memory) */
	char *send_staging;
	void *send_staging_mh;
	/* NCCL's resources->step of each direction: where the next op's steps start */
	uint64_t send_step, recv_step;
};

struct shim_world {
	int rank;
	int nranks;
	int dev;
	int timeout_ms;
	long idle_ns; /* sleep when idle; 0 = yield */
	size_t step_bytes; /* Simple's step (FABRICLAB_SHIM_STEP) */
	struct shim_rules rules;
	int gdr_flush;     /* receives land in GPU memory and NCCL's needFlush holds */
	char *unpack;      /* LL and LL128: one chunk's payload, read out of the lines */
	int recv_group; /* FABRICLAB_SHIM_RECV_GROUP: sendrecv's messages per grouped irecv */
	uint64_t comm_id;
	/* A transfer failed: comms may still hold requests, so close leaves the plugin alone. */
	int broken;
	/* The first size test() reported that was not what was sent: the op fails once it ends. */
	char size_error[256];
	int net_loaded;
	struct shim_boot boot;
	struct shim_net net;
	struct fl_props props;
	struct shim_mem mem; /* FABRICLAB_SHIM_MEM: host or GPU buffers */
	int channels;        /* FABRICLAB_SHIM_CHANNELS: ring[0..channels) */
	struct shim_link ring[SHIM_MAX_CHANNELS];
};

/*
 * A buffer registered with both comms of its links: the ring's channels unless said
 * otherwise, or one link.
 */
struct shim_buf {
	void *data;  /* the caller's, in the world's memory */
	size_t size;
	void *net;   /* what the plugin moves: data, or a host bounce buffer when staged */
	struct shim_link *link; /* the first of nlinks */
	int nlinks;
	void *send_mh[SHIM_MAX_CHANNELS]; /* per link */
	void *recv_mh[SHIM_MAX_CHANNELS];
};

/*
 * Joins the job the environment describes (RANK, WORLD_SIZE, MASTER_ADDR,
 * MASTER_PORT), loads and initialises the plugin and connects the ring. When
 * the plugin's plain name does not load, fallback_dir (if not NULL) is tried.
 */
int shim_world_open(struct shim_world *w, const char *fallback_dir);
/* net_choose.c: loads and inits the first plugin of NCCL_NET_PLUGIN that inits with a device. */
int shim_net_choose(struct shim_world *w, const char *fallback_dir);
void shim_world_close(struct shim_world *w);

/*
 * Collective: every rank calls it. Listens, exchanges handles through the
 * bootstrap, then connects to send_peer and accepts from recv_peer. A peer
 * of -1 is no connection that way: a rank that sits a round out passes -1
 * for both and only takes part in the exchange.
 */
int shim_link_open(struct shim_world *w, int send_peer, int recv_peer, struct shim_link *link);
void shim_link_close(struct shim_world *w, struct shim_link *link);

int shim_buf_register(struct shim_world *w, struct shim_buf *buf, void *data, size_t size);
/* The same for the comms of another link, which must stay open until deregistered. */
int shim_buf_register_on(struct shim_world *w, struct shim_link *link, struct shim_buf *buf,
			 void *data, size_t size);
void shim_buf_deregister(struct shim_world *w, struct shim_buf *buf);

/* Ring all-reduce of floats, out of place (send == recv is in place). */
int shim_all_reduce_sum(struct shim_world *w, const struct shim_buf *send,
			const struct shim_buf *recv, size_t count);
/* Sends `bytes` of send to the next rank and receives as many from the previous one. */
int shim_sendrecv(struct shim_world *w, const struct shim_buf *send, const struct shim_buf *recv,
		  size_t bytes);
/*
 * The same on the buffers' own link (both registered on it); send or recv
 * NULL moves bytes one way only, as a link with one peer of -1 can.
 */
int shim_sendrecv_on(struct shim_world *w, const struct shim_buf *send,
		     const struct shim_buf *recv, size_t bytes);

/*
 * Runs rank_main in nranks forked children (no exec), each with RANK,
 * WORLD_SIZE, MASTER_ADDR, MASTER_PORT, FABRICLAB_NODE_NAME=node<r> (unless
 * set) and FABRICLAB_SOCKET_IFNAME=lo (unless it or NCCL_SOCKET_IFNAME is set);
 * rank 0 inherits the bootstrap socket. A child's exit status is rank_main's
 * return value. If one fails, the others get SIGTERM, then SIGKILL after 5 s.
 * FABRICLAB_SHIM_PIDFILE, when set, receives "rank pid" lines. FL_OK when every
 * rank exited 0, else an error naming the first rank that failed and how.
 */
int shim_spawn(int nranks, int (*rank_main)(void *arg), void *arg);

/* What shim_spawn_ex adds to shim_spawn; a zeroed struct behaves like shim_spawn. */
struct shim_spawn_opts {
	/*
	 * Where the ranks find rank 0's bootstrap socket, with listen_fd already
	 * bound and listening there (made by the caller, e.g. inside rank 0's
	 * network namespace, and closed by it afterwards); NULL: 127.0.0.1, and
	 * the spawner binds it.
	 */
	const char *master_addr;
	int listen_fd;
	/* Runs first in each child (e.g. to enter a namespace); non-zero fails the rank. */
	int (*enter)(int rank, void *ctx);
	void *ctx;
	/* Polled while the ranks run: when it turns non-zero they are stopped (SIGTERM). */
	const volatile sig_atomic_t *stop;
};

/*
 * shim_spawn with the options above. The children get the default action for
 * SIGINT and SIGTERM whatever the caller installed, so they can be stopped.
 */
int shim_spawn_ex(int nranks, int (*rank_main)(void *arg), void *arg,
		  const struct shim_spawn_opts *opts);

#endif
