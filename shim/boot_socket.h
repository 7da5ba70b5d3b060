/* Blocking-style TCP helpers with deadlines, for the bootstrap and the spawner. */
#ifndef SHIM_BOOT_SOCKET_H
#define SHIM_BOOT_SOCKET_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t shim_now_ns(void);
uint64_t shim_deadline_ms(int timeout_ms);

/* Binds addr:port (port "0" = any free one) and listens. */
int shim_sock_listen(const char *addr, const char *port, int *fd);
/* The port a bound socket ended up on. */
int shim_sock_port(int fd, int *port);
/* Connects, retrying refused or unreachable attempts until the deadline. */
int shim_sock_connect(const char *addr, const char *port, uint64_t deadline_ns, int *fd);
int shim_sock_accept(int listen_fd, uint64_t deadline_ns, int *fd);
/* Whole buffers or an error: closed by the peer, reset, or past the deadline. */
int shim_sock_send(int fd, const void *buf, size_t len, uint64_t deadline_ns);
int shim_sock_recv(int fd, void *buf, size_t len, uint64_t deadline_ns);

#endif
