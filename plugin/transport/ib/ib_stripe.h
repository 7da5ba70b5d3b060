/*
 * How one message spreads over a connection's QPs: equal shares rounded up
 * to 128 bytes (so NCCL's LL128 lines never straddle QPs), and each share cut
 * into pieces no larger than a work request should carry (pacing consults
 * the pacer per piece). Every QP gets a final write-with-immediate, empty if
 * its share is, so the receiver sees each message once on every QP, in order.
 */
#ifndef FL_IB_STRIPE_H
#define FL_IB_STRIPE_H

#include <stddef.h>

#define IB_MAX_QPS 8
#define IB_STRIPE_ALIGN 128
#define IB_PIECE_MAX (1u << 20) /* bytes per RDMA write */

struct ib_share {
	size_t off;
	size_t len;
};

/* Fills shares[0..nqps) for a message of size bytes. */
void ib_stripe_split(size_t size, int nqps, struct ib_share *shares);

/* Pieces a share of len bytes is posted as (at least 1: the final write). */
static inline unsigned ib_stripe_pieces(size_t len)
{
	return len ? (unsigned)((len + IB_PIECE_MAX - 1) / IB_PIECE_MAX) : 1;
}

#endif
