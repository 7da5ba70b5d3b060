/* The TCP side channel's sockets: the socket transport's interface choice and tuning. */
#ifndef FL_IB_SIDE_H
#define FL_IB_SIDE_H

#include <stdint.h>
#include <sys/socket.h>

#include "ib_device.h"
#include "transport/socket/sock_iface.h"

/* Picks the interface side channels listen on (NCCL_SOCKET_IFNAME rules), once. */
int ib_side_init(void);
/* FABRICLAB_SOCKET_HELLO_TIMEOUT_MS: how long a side channel may take to say its hello. */
uint64_t ib_side_hello_timeout_ns(void);
/* Listens on the side-channel interface, port 0; fills the bound address. */
int ib_side_listen(int *fd, struct sockaddr_storage *addr, socklen_t *addrlen);

/* The sending side's step (ib_connect.c); the listening side (ib_listen.c). */
int ib_connect_step(struct ib_device *dev, const struct fl_endpoint *self, const void *handle,
		    void **send_comm);
int ib_listen_open(struct ib_device *dev, const struct fl_endpoint *self, void *handle,
		   void **listen_comm);
int ib_listen_accept(void *listen_comm, void **recv_comm);
int ib_listen_close(void *listen_comm);

#endif
