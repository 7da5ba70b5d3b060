#include "ib_meta.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "transport/socket/sock_bytes.h"
#include "transport/socket/sock_handle.h"

enum {
	M_NQPS = SOCK_RECORD_HEADER_SIZE,
	M_LINK = 11,
	M_PORT = 12,
	M_MTU = 13,
	M_LID = 14,
	M_GID = 16,
	M_QPN = 32,
	M_FIFO_ADDR = M_QPN + 4 * IB_MAX_QPS,
	M_FIFO_RKEY = M_FIFO_ADDR + 8,
	M_END = M_FIFO_RKEY + 4,
};

_Static_assert(M_END <= IB_META_SIZE, "metadata record fits");

void ib_meta_encode(const struct ib_meta *m, uint8_t buf[IB_META_SIZE])
{
	sock_record_start(buf, IB_META_SIZE, IB_META_MAGIC, IB_WIRE_VERSION);
	buf[M_NQPS] = m->nqps;
	buf[M_LINK] = m->link_layer;
	buf[M_PORT] = m->port;
	buf[M_MTU] = m->mtu;
	sock_put_u16(buf + M_LID, m->lid);
	memcpy(buf + M_GID, m->gid, 16);
	for (int i = 0; i < IB_MAX_QPS; i++)
		sock_put_u32(buf + M_QPN + 4 * i, m->qpn[i]);
	sock_put_u64(buf + M_FIFO_ADDR, m->fifo_addr);
	sock_put_u32(buf + M_FIFO_RKEY, m->fifo_rkey);
}

int ib_meta_decode(const uint8_t buf[IB_META_SIZE], struct ib_meta *m)
{
	memset(m, 0, sizeof(*m));
	if (sock_record_check(buf, IB_META_MAGIC, IB_WIRE_VERSION, FL_ERR_REMOTE, "ib metadata"))
		return FL_ERR_REMOTE;
	m->nqps = buf[M_NQPS];
	m->link_layer = buf[M_LINK];
	m->port = buf[M_PORT];
	m->mtu = buf[M_MTU];
	if (m->nqps < 1 || m->nqps > IB_MAX_QPS || m->mtu < IBV_MTU_256 || m->mtu > IBV_MTU_4096 ||
	    (m->link_layer != IBV_LINK_LAYER_INFINIBAND &&
	     m->link_layer != IBV_LINK_LAYER_ETHERNET))
		return fl_fail(FL_ERR_REMOTE, "ib metadata: %u QPs, MTU code %u, link layer %u",
			       m->nqps, m->mtu, m->link_layer);
	m->lid = sock_get_u16(buf + M_LID);
	memcpy(m->gid, buf + M_GID, 16);
	for (int i = 0; i < IB_MAX_QPS; i++)
		m->qpn[i] = sock_get_u32(buf + M_QPN + 4 * i);
	m->fifo_addr = sock_get_u64(buf + M_FIFO_ADDR);
	m->fifo_rkey = sock_get_u32(buf + M_FIFO_RKEY);
	return FL_OK;
}

void ib_io_start(struct ib_io *io, size_t len)
{
	io->len = len;
	io->done = 0;
}

static int again(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

int ib_io_send(int fd, struct ib_io *io, int *complete)
{
	ssize_t n = send(fd, io->buf + io->done, io->len - io->done, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && !again())
		return fl_fail(FL_ERR_SYSTEM, "side channel send: %s", strerror(errno));
	if (n > 0)
		io->done += (size_t)n;
	*complete = io->done == io->len;
	return FL_OK;
}

int ib_io_recv(int fd, struct ib_io *io, int *complete)
{
	ssize_t n = recv(fd, io->buf + io->done, io->len - io->done, MSG_DONTWAIT);

	if (n == 0)
		return fl_fail(FL_ERR_REMOTE, "side channel closed by the peer");
	if (n < 0 && !again())
		return fl_fail(FL_ERR_SYSTEM, "side channel receive: %s", strerror(errno));
	if (n > 0)
		io->done += (size_t)n;
	*complete = io->done == io->len;
	return FL_OK;
}
