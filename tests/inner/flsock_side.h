/*
 * A side channel beside a connection of the socket transport, for fixtures
 * that stand in for what a real plugin carries out of band (flsock_gate.h: the
 * acceptor's answer; flsock_cts.h: the receiver's posted buffers): an abstract
 * Unix socket (no file) named by a prefix and the handle's nonce, bytes 40..47
 * (plugin/transport/socket/sock_handle.c H_NONCE), so both ends find it.
 */
#ifndef FLSOCK_SIDE_H
#define FLSOCK_SIDE_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define SIDE_NONCE_AT 40

static void side_address(const void *handle, const char *prefix, struct sockaddr_un *a,
			 socklen_t *len)
{
	const unsigned char *nonce = (const unsigned char *)handle + SIDE_NONCE_AT;
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1,
		     "flsock-%s-%02x%02x%02x%02x%02x%02x%02x%02x", prefix, nonce[0], nonce[1],
		     nonce[2], nonce[3], nonce[4], nonce[5], nonce[6], nonce[7]);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* listen: 1 binds and listens (the listen comm's end), 0 connects (the send comm's). -1 on error. */
static int side_open(const void *handle, const char *prefix, int listen_end)
{
	struct sockaddr_un a;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	side_address(handle, prefix, &a, &len);
	if (fd >= 0 && (listen_end ? bind(fd, (struct sockaddr *)&a, len) || listen(fd, 4)
				   : connect(fd, (struct sockaddr *)&a, len))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

#endif
