/*
 * Knobs of the socket transport, read once at init. A bad value makes init
 * fail with a message naming the variable.
 */
#ifndef FL_SOCK_CONFIG_H
#define FL_SOCK_CONFIG_H

#include <limits.h>
#include <stddef.h>

#define SOCK_MAX_STREAMS 16  /* data streams per connection */
#define SOCK_MAX_DEVS 16     /* interfaces the transport offers */
#define SOCK_IFSPEC_LEN 256

struct sock_config {
	int nstreams;            /* FABRICLAB_SOCKET_NSTREAMS: data streams per connection */
	size_t inline_max;       /* FABRICLAB_SOCKET_INLINE: payloads up to this ride on control */
	size_t min_chunk;        /* FABRICLAB_SOCKET_MIN_CHUNK: smallest piece per data stream */
	long hello_timeout_ms;   /* FABRICLAB_SOCKET_HELLO_TIMEOUT_MS: silent strangers dropped */
	size_t sock_buf;         /* FABRICLAB_SOCKET_BUF: SO_SNDBUF/SO_RCVBUF, 0 = autotuning */
	int family;              /* NCCL_SOCKET_FAMILY: AF_UNSPEC, AF_INET or AF_INET6 */
	char ifspec[SOCK_IFSPEC_LEN]; /* FABRICLAB_SOCKET_IFNAME, else NCCL_SOCKET_IFNAME */
	char sysfs_root[PATH_MAX];    /* FABRICLAB_SYSFS_ROOT, for tests */
};

/*
 * Measured on loopback, 2 vCPUs, 8 requests in flight: 64 KiB inline moved
 * 32 KiB messages 2.4-3.3x faster than 16 KiB; 128 KiB pieces beat 32-64 KiB
 * ones on 128 KiB messages. Data streams with helper threads are opt-in: no
 * measurement has shown them faster (on 2 vCPUs 512 KiB steps fell to 0.4x of
 * NCCL Socket with 1 or 2), so every host gets what NCCL's own Socket
 * transport does on an ordinary host: everything on one non-blocking stream
 * driven by the proxy thread. docs/benchmarks.md says how to judge it on a
 * many-core host.
 */
#define SOCK_DEFAULT_NSTREAMS 0
#define SOCK_DEFAULT_INLINE (64 << 10)
#define SOCK_DEFAULT_MIN_CHUNK (128 << 10)
#define SOCK_DEFAULT_HELLO_TIMEOUT_MS 10000
#define SOCK_MAX_INLINE (1 << 20)
#define SOCK_MIN_CHUNK_FLOOR 4096
#define SOCK_MIN_CHUNK_CEIL (1 << 30)

/* Which variable the interface selection came from, for messages. */
const char *sock_ifspec_variable(void);

/* The configuration init loaded; read-only afterwards. */
extern struct sock_config sock_cfg;

/* Fills cfg from the environment; FL_ERR_USAGE (with fl_fail text) on a bad value. */
int sock_config_load(struct sock_config *cfg);

#endif
