/*
 * The side channel of an ib connection: a TCP stream opened like the socket
 * transport's control stream (same handle, same hello with the listener's
 * nonce and the connector's identity), then fixed-size records: the sender's
 * QPs and FIFO, the receiver's QPs in reply, and a ready word once the
 * sender's QPs can take the receiver's first CTS. The stream stays open for
 * the connection's life: its end tells a peer that went away.
 */
#ifndef FL_IB_META_H
#define FL_IB_META_H

#include <stddef.h>
#include <stdint.h>

#include "ib_comm.h"

#define IB_META_MAGIC 0x31444d42494c4637ULL  /* "7FLIBMD1" */
#define IB_READY_MAGIC 0x31445242494c4637ULL /* "7FLIBRD1" */
#define IB_WIRE_VERSION 1
#define IB_META_SIZE 128
#define IB_READY_SIZE 8

void ib_meta_encode(const struct ib_meta *m, uint8_t buf[IB_META_SIZE]);
/* FL_ERR_REMOTE, with the reason, unless buf is a well-formed record of this version. */
int ib_meta_decode(const uint8_t buf[IB_META_SIZE], struct ib_meta *m);

/* A fixed-size record moving through a non-blocking stream. */
struct ib_io {
	uint8_t buf[256];
	size_t len, done;
};

void ib_io_start(struct ib_io *io, size_t len);
/* FL_OK with *complete once all len bytes went out / came in; an error on a broken stream. */
int ib_io_send(int fd, struct ib_io *io, int *complete);
int ib_io_recv(int fd, struct ib_io *io, int *complete);

#endif
