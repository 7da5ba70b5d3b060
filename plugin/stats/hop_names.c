/* The net ctx <-> profiler rank join and the connections it names (hop_names.h). */
#include "hop_names.h"

#include <pthread.h>
#include <string.h>

struct named_ctx {
	const void *net_ctx; /* NULL = free entry */
	uint64_t comm_id;
	pthread_t thread;
	int rank; /* -1 until the profiler role tells it */
};

struct pending_rank {
	int used;
	uint64_t comm_hash;
	pthread_t thread;
	int rank;
};

struct named_conn {
	const void *conn; /* NULL = free entry */
	uint64_t seq;     /* order of coming up */
	int is_send;
	struct fl_endpoint self, peer;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct named_ctx ctxs[FL_NAMES_MAX_CTXS];
static struct pending_rank pending[FL_NAMES_MAX_PENDING];
static unsigned next_pending; /* oldest overwritten first when full */
static struct named_conn conns[FL_NAMES_MAX_CONNS];
static uint64_t next_seq;

/* A profiler init that came first on this thread, taken. */
static int take_pending(uint64_t comm_id)
{
	for (int i = 0; i < FL_NAMES_MAX_PENDING; i++) {
		struct pending_rank *p = &pending[i];

		if (p->used && p->comm_hash == comm_id && pthread_equal(p->thread, pthread_self())) {
			p->used = 0;
			return p->rank;
		}
	}
	return -1;
}

void fl_names_net_init(const void *net_ctx, uint64_t comm_id)
{
	if (!net_ctx || !comm_id)
		return;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < FL_NAMES_MAX_CTXS; i++) {
		if (!ctxs[i].net_ctx) {
			ctxs[i] = (struct named_ctx){ net_ctx, comm_id, pthread_self(),
						      take_pending(comm_id) };
			break;
		}
	}
	pthread_mutex_unlock(&lock);
}

void fl_names_net_fini(const void *net_ctx)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; net_ctx && i < FL_NAMES_MAX_CTXS; i++)
		if (ctxs[i].net_ctx == net_ctx)
			memset(&ctxs[i], 0, sizeof(ctxs[i]));
	pthread_mutex_unlock(&lock);
}

/*
 * The unbound ctx of this hash on this thread; else the only unbound one of
 * this hash (v1..v3 learn the hash from a Coll event, on another thread).
 */
static struct named_ctx *unbound_ctx(uint64_t comm_hash)
{
	struct named_ctx *only = NULL;
	int n = 0;

	for (int i = 0; i < FL_NAMES_MAX_CTXS; i++) {
		struct named_ctx *c = &ctxs[i];

		if (!c->net_ctx || c->comm_id != comm_hash || c->rank >= 0)
			continue;
		if (pthread_equal(c->thread, pthread_self()))
			return c;
		only = c;
		n++;
	}
	return n == 1 ? only : NULL;
}

void fl_names_prof_init(uint64_t comm_hash, int rank)
{
	struct named_ctx *c;

	if (!comm_hash || rank < 0)
		return;
	pthread_mutex_lock(&lock);
	c = unbound_ctx(comm_hash);
	if (c) {
		c->rank = rank;
	} else {
		/* Profiler only, or its net init is still to come on this thread. */
		pending[next_pending] = (struct pending_rank){ 1, comm_hash, pthread_self(), rank };
		next_pending = (next_pending + 1) % FL_NAMES_MAX_PENDING;
	}
	pthread_mutex_unlock(&lock);
}

int fl_names_rank_of(const void *net_ctx)
{
	int rank = -1;

	pthread_mutex_lock(&lock);
	for (int i = 0; net_ctx && i < FL_NAMES_MAX_CTXS; i++)
		if (ctxs[i].net_ctx == net_ctx)
			rank = ctxs[i].rank;
	pthread_mutex_unlock(&lock);
	return rank;
}

void fl_names_conn_up(const void *conn, int is_send, const struct fl_endpoint *self,
		      const struct fl_endpoint *peer)
{
	if (!conn || !self->comm_hash || self->rank < 0 || peer->rank < 0)
		return;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < FL_NAMES_MAX_CONNS; i++) {
		if (!conns[i].conn) {
			conns[i] = (struct named_conn){ conn, next_seq++, is_send != 0, *self,
							*peer };
			break;
		}
	}
	pthread_mutex_unlock(&lock);
}

void fl_names_conn_down(const void *conn)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; conn && i < FL_NAMES_MAX_CONNS; i++)
		if (conns[i].conn == conn)
			memset(&conns[i], 0, sizeof(conns[i]));
	pthread_mutex_unlock(&lock);
}

static int conn_matches(const struct named_conn *c, uint64_t comm_hash, int rank, int peer,
			int is_send)
{
	return c->conn && c->is_send == (is_send != 0) && c->self.comm_hash == comm_hash &&
	       c->self.rank == rank && c->peer.rank == peer;
}

/* The k-th matching connection by the order they came up. */
static const struct named_conn *kth_match(uint64_t comm_hash, int rank, int peer, int is_send,
					  int k)
{
	const struct named_conn *found = NULL;
	uint64_t after = 0;

	for (int round = 0; round <= k; round++) {
		found = NULL;
		for (int i = 0; i < FL_NAMES_MAX_CONNS; i++) {
			const struct named_conn *c = &conns[i];

			if (conn_matches(c, comm_hash, rank, peer, is_send) &&
			    (round == 0 || c->seq > after) && (!found || c->seq < found->seq))
				found = c;
		}
		if (!found)
			return NULL;
		after = found->seq;
	}
	return found;
}

int fl_names_find(uint64_t comm_hash, int rank, int peer, int is_send, int channel,
		  struct fl_endpoint *self, struct fl_endpoint *peer_out)
{
	const struct named_conn *c = NULL;
	int n = 0;

	if (!comm_hash || rank < 0 || peer < 0)
		return -1;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < FL_NAMES_MAX_CONNS; i++)
		n += conn_matches(&conns[i], comm_hash, rank, peer, is_send);
	if (n)
		c = kth_match(comm_hash, rank, peer, is_send, (channel < 0 ? 0 : channel) % n);
	if (c) {
		*self = c->self;
		*peer_out = c->peer;
	}
	pthread_mutex_unlock(&lock);
	return c ? 0 : -1;
}

void fl_names_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(ctxs, 0, sizeof(ctxs));
	memset(pending, 0, sizeof(pending));
	memset(conns, 0, sizeof(conns));
	next_pending = 0;
	next_seq = 0;
	pthread_mutex_unlock(&lock);
}
