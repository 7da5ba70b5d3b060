/*
 * Who holds the web lab's connections, and how long a request may take.
 *
 * libmicrohttpd bounds a connection's idle time only: its timer starts again
 * with every byte read (0.9.75 src/microhttpd/connection.c:3792,
 * MHD_connection_handle_read), so a client sending one header line every 2 s
 * keeps its connection for ever, and 512 such clients held every slot of the
 * server (issue 49). This table, fed by MHD_OPTION_NOTIFY_CONNECTION, bounds
 * what an idle timer cannot:
 *  - a request's total time: one not received in full LAB_REQUEST_S after its
 *    connection opened (or after the previous answer on it) is closed by the
 *    server's ticker, whatever it trickles;
 *  - connections per client: one address holds at most LAB_CLIENT_MAX; one
 *    more from it closes that address's own oldest connection still sending
 *    its request (refused itself when there is none), so a crowd sharing the
 *    user's address (loopback) cannot keep the user out, it only takes turns;
 *  - connections in all: past LAB_SERVER_MAX, the oldest connection still
 *    sending a request of the address holding the most of them is closed, so
 *    a crowd from other addresses never closes the user's.
 * Being answered (an event stream, a cancel waiting for the lab's end) is not
 * sending a request: those are bounded by their own limits (LAB_MAX_STREAMS,
 * the cancel's wait).
 *
 * libmicrohttpd has no call to close a connection from outside, so a socket is
 * shut down and its polling thread, seeing the end of it, closes it as any
 * other. The descriptor cannot be reused before then: NOTIFY_CLOSED, which
 * takes it out of this table under the same lock, comes before the close
 * (0.9.75 src/microhttpd/daemon.c:3799-3845, MHD_cleanup_connections).
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "lab_web.h"

struct conn {
	bool used, closing, receiving;
	int fd;
	uint32_t client; /* IPv4 address; the server listens on IPv4 only */
	double since;    /* when it began sending the request it is on (receiving) */
};

static struct {
	pthread_mutex_t lock;
	struct conn slot[LAB_CONN_SLOTS];
	int live; /* used and not closing */
	struct lab_conn_counts counts;
} table = { .lock = PTHREAD_MUTEX_INITIALIZER };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* With the lock held. The polling thread closes it on its next pass. */
static void close_conn(struct conn *k, unsigned *count)
{
	shutdown(k->fd, SHUT_RDWR);
	k->closing = true;
	table.live--;
	(*count)++;
}

static int live_of(uint32_t client)
{
	int n = 0;

	for (int i = 0; i < LAB_CONN_SLOTS; i++)
		n += table.slot[i].used && !table.slot[i].closing && table.slot[i].client == client;
	return n;
}

/* The oldest connection of `client` still sending its request, other than `self`; NULL if none. */
static struct conn *oldest_receiving(uint32_t client, const struct conn *self)
{
	struct conn *best = NULL;

	for (int i = 0; i < LAB_CONN_SLOTS; i++) {
		struct conn *k = &table.slot[i];

		if (k->used && !k->closing && k->receiving && k != self && k->client == client &&
		    (!best || k->since < best->since))
			best = k;
	}
	return best;
}

/* The address with the most connections still sending a request, counted in one pass. */
static bool biggest_receiver(uint32_t *client)
{
	struct { uint32_t client; int n; } tally[2 * LAB_CONN_SLOTS] = { { 0, 0 } };
	int most = 0;

	for (int i = 0; i < LAB_CONN_SLOTS; i++) {
		const struct conn *k = &table.slot[i];
		unsigned h = (k->client * 2654435761u) % (2 * LAB_CONN_SLOTS);

		if (!k->used || k->closing || !k->receiving)
			continue;
		while (tally[h].n && tally[h].client != k->client) /* open addressing: never full */
			h = (h + 1) % (2 * LAB_CONN_SLOTS);
		tally[h].client = k->client;
		if (++tally[h].n > most) {
			most = tally[h].n;
			*client = k->client;
		}
	}
	return most > 0;
}

/* A new connection `k`: past a limit, someone still sending a request makes room, or k goes. */
static void admit(struct conn *k)
{
	struct conn *victim = NULL;
	uint32_t crowd;

	if (live_of(k->client) > LAB_CLIENT_MAX) {
		victim = oldest_receiving(k->client, k);
		close_conn(victim ? victim : k, &table.counts.client_limit);
	} else if (table.live > LAB_SERVER_MAX) {
		if (biggest_receiver(&crowd))
			victim = oldest_receiving(crowd, k);
		close_conn(victim ? victim : k, &table.counts.server_limit);
	}
}

static uint32_t client_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	if (sa && sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr;
	return 0;
}

void lab_conn_opened(struct MHD_Connection *c, void **ctx)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn *k = NULL;

	pthread_mutex_lock(&table.lock);
	for (int i = 0; i < LAB_CONN_SLOTS && !k && ci; i++)
		if (!table.slot[i].used)
			k = &table.slot[i];
	if (k) {
		*k = (struct conn){ .used = true, .receiving = true, .fd = ci->connect_fd,
				    .client = client_of(c), .since = now_s() };
		table.live++;
		admit(k);
	} else if (ci) { /* more than libmicrohttpd's own limit lets in: cannot happen */
		shutdown(ci->connect_fd, SHUT_RDWR);
	}
	*ctx = k;
	pthread_mutex_unlock(&table.lock);
}

void lab_conn_closed(void **ctx)
{
	struct conn *k = *ctx;

	if (!k)
		return;
	pthread_mutex_lock(&table.lock);
	if (!k->closing)
		table.live--;
	k->used = false;
	pthread_mutex_unlock(&table.lock);
	*ctx = NULL;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void lab_conn_answering(struct MHD_Connection *c)
{
	struct conn *k = conn_of(c);

	if (!k)
		return;
	pthread_mutex_lock(&table.lock);
	k->receiving = false;
	pthread_mutex_unlock(&table.lock);
}

void lab_conn_answered(struct MHD_Connection *c)
{
	struct conn *k = conn_of(c);

	if (!k)
		return;
	pthread_mutex_lock(&table.lock);
	k->receiving = true;
	k->since = now_s();
	pthread_mutex_unlock(&table.lock);
}

void lab_conn_reap(struct lab_conn_counts *counts)
{
	double now = now_s();

	pthread_mutex_lock(&table.lock);
	for (int i = 0; i < LAB_CONN_SLOTS; i++) {
		struct conn *k = &table.slot[i];

		if (k->used && !k->closing && k->receiving && now - k->since > LAB_REQUEST_S)
			close_conn(k, &table.counts.too_slow);
	}
	*counts = table.counts;
	pthread_mutex_unlock(&table.lock);
}
