/* Thin helpers over the socket API that every part of the socket transport uses. */
#ifndef FL_SOCK_SYS_H
#define FL_SOCK_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

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
/*
 * The control stream's calls on the data path, made as plain system calls:
 * same arguments, results and errno as send/sendmsg/recv/recvmsg. libc's
 * wrappers are cancellation points, and glibc (2.36 on Debian 12) switches
 * the thread's cancel type around each call with two atomic read-modify-
 * writes: at small messages, where every test polls the socket, 1.8% of the
 * CPU samples of an all_reduce (docs/benchmarks.md). Nothing cancels NCCL's
 * proxy thread. Under a sanitizer the libc calls stay: its interceptors see them.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SOCK_SYS_RAW 0
#else
#define SOCK_SYS_RAW 1
#endif

static inline ssize_t sock_sys_send(int fd, const void *buf, size_t len, int flags)
{
	return SOCK_SYS_RAW ? syscall(SYS_sendto, fd, buf, len, flags, NULL, 0)
			    : send(fd, buf, len, flags);
}

static inline ssize_t sock_sys_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return SOCK_SYS_RAW ? syscall(SYS_sendmsg, fd, msg, flags) : sendmsg(fd, msg, flags);
}

static inline ssize_t sock_sys_recv(int fd, void *buf, size_t len, int flags)
{
	return SOCK_SYS_RAW ? syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL)
			    : recv(fd, buf, len, flags);
}

static inline ssize_t sock_sys_recvmsg(int fd, struct msghdr *msg, int flags)
{
	return SOCK_SYS_RAW ? syscall(SYS_recvmsg, fd, msg, flags) : recvmsg(fd, msg, flags);
}

/* "1.2.3.4:5" or "[::1]:5". */
void sock_addr_format(const struct sockaddr *sa, char *out, size_t len);
/* The fd's remote address as text; "?" when unknown. */
void sock_peer_format(int fd, char *out, size_t len);

#endif
