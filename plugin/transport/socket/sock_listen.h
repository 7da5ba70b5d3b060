/* Listening for socket connections, and the connect side that pairs with it. */
#ifndef FL_SOCK_LISTEN_H
#define FL_SOCK_LISTEN_H

#include "base/fl_types.h"
#include "sock_iface.h"

/*
 * Binds fd to iface's address on a port the kernel picks, listens, and fills
 * addr with where it listens. bufsize != 0: the buffer size accepted streams
 * inherit (set before listen() so the window scale matches).
 */
int sock_listen_bind(int fd, const struct sock_iface *iface, size_t bufsize,
		     struct sockaddr_storage *addr, socklen_t *addrlen);
/* Binds iface's address on port 0 and fills handle; never blocks. */
int sock_listen_open(const struct sock_iface *iface, const struct fl_endpoint *self, void *handle,
		     void **listen_comm);
/*
 * Takes whatever streams have arrived, drops strangers (bad or no hello), and
 * returns a recv comm once a connection's control and data streams are all in.
 */
int sock_listen_accept(void *listen_comm, void **recv_comm);
int sock_listen_close(void *listen_comm);

/* Opens (or continues opening) the streams to the listener in handle; never blocks. */
int sock_connect_step(const struct fl_endpoint *self, const void *handle, void **send_comm);

#endif
