/* Thin helpers over the socket API that every part of the socket transport uses. */
#ifndef FL_SOCK_SYS_H
#define FL_SOCK_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define SOCK_ADDR_STRLEN 64 /* "[ipv6]:port" */

/* From the kernel's random pool; falls back to clock and address bits. */
uint64_t sock_random_u64(void);
/* TCP_NODELAY, and SO_SNDBUF/SO_RCVBUF when bufsize != 0. */
int sock_tune(int fd, size_t bufsize);
int sock_set_nonblocking(int fd, int nonblocking);
/*
 * A non-blocking TCP connect to addr, tuned as sock_tune(bufsize) says. *fd
 * holds the socket as soon as it exists: the caller closes it, on error too.
 * *connected when it finished at once; else sock_connect_check says when.
 * peer names the other end in messages.
 */
int sock_connect_start(const struct sockaddr_storage *addr, socklen_t addrlen, size_t bufsize,
		       const char *peer, int *fd, int *connected);
/* Without waiting: *connected once the connect finished, an error if it failed. */
int sock_connect_check(int fd, const char *peer, int *connected);
/* "1.2.3.4:5" or "[::1]:5". */
void sock_addr_format(const struct sockaddr *sa, char *out, size_t len);
/* The fd's remote address as text; "?" when unknown. */
void sock_peer_format(int fd, char *out, size_t len);

#endif
