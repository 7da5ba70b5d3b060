/* Making and freeing the per-connection state: FIFO and shadow registrations, request pools. */
#include <stdlib.h>
#include <string.h>

#include "ib_comm.h"
#include "transport/pace.h"

#define IB_FIFO_BYTES (IB_FIFO_DEPTH * sizeof(struct ib_fifo_slot))

static int register_ring(struct ib_link *l, struct ib_fifo_slot **ring, struct ibv_mr **mr)
{
	*ring = aligned_alloc(4096, IB_FIFO_BYTES);
	if (!*ring)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a CTS FIFO");
	memset(*ring, 0, IB_FIFO_BYTES);
	*mr = ib_verbs->reg_mr(l->dev->hca->pd, *ring, IB_FIFO_BYTES, IB_MR_ACCESS);
	if (!*mr)
		return fl_fail(FL_ERR_SYSTEM, "ibv_reg_mr of the CTS FIFO on %s: %m",
			       l->dev->dev_name);
	return FL_OK;
}

static void release_ring(struct ib_fifo_slot **ring, struct ibv_mr **mr)
{
	if (*mr)
		ib_verbs->dereg_mr(*mr);
	free(*ring);
	*mr = NULL;
	*ring = NULL;
}

int ib_send_comm_init(struct ib_send_comm *c)
{
	c->link.kind = IB_REQ_SEND;
	c->nfree = IB_SEND_REQS;
	for (int i = 0; i < IB_SEND_REQS; i++) {
		c->reqs[i].kind = IB_REQ_SEND;
		c->reqs[i].index = (uint16_t)i;
		c->reqs[i].comm = c;
		c->free[i] = (uint16_t)(IB_SEND_REQS - 1 - i);
	}
	return register_ring(&c->link, &c->fifo, &c->fifo_mr);
}

void ib_send_comm_fini(struct ib_send_comm *c)
{
	ib_link_close(&c->link); /* QPs go before the memory they may still touch */
	release_ring(&c->fifo, &c->fifo_mr);
	fl_pace_destroy(c->peer_rx);
	c->peer_rx = NULL;
}

int ib_recv_comm_init(struct ib_recv_comm *c)
{
	c->link.kind = IB_REQ_RECV;
	for (int i = 0; i < IB_FIFO_DEPTH; i++) {
		c->reqs[i].kind = IB_REQ_RECV;
		c->reqs[i].index = (uint16_t)i;
		c->reqs[i].comm = c;
		c->flushes[i].kind = IB_REQ_FLUSH;
		c->flushes[i].comm = c;
	}
	return register_ring(&c->link, &c->shadow, &c->shadow_mr);
}

void ib_recv_comm_fini(struct ib_recv_comm *c)
{
	if (c->flush_qp) {
		ib_verbs->destroy_qp(c->flush_qp);
		c->flush_qp = NULL;
	}
	ib_link_close(&c->link);
	ib_flush_close(c);
	release_ring(&c->shadow, &c->shadow_mr);
}
