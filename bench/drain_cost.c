/*
 * The report thread's cost of reading the interval rings of one hop whose requests are spread
 * over C connections, as NCCL spreads a hop over its channels (each channel a connection of
 * its own): every connection's runs are in time order, but the channels' runs interleave, so
 * a drain merges C ordered stretches. bench/drain_count.sh counts the instructions of
 * fl_hops_drain under callgrind, per request.
 *
 * Request i goes to channel i % C, posted at i us and done 0.8 C us later: a channel's
 * requests do not overlap each other (one run each, as small messages make), the channels'
 * do. The union must come out exact: checked here, and the run fails otherwise.
 * Usage: drain_cost CHANNELS [REQUESTS] [DRAIN_EVERY]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/clock.h"
#include "plugin/stats/hop.h"

#define MAX_CHANNELS 16

static struct fl_conn_stats conns[MAX_CHANNELS];

static void attach_all(int channels)
{
	struct fl_endpoint self, peer;
	struct fl_hop_key key;

	memset(&self, 0, sizeof(self));
	memset(&peer, 0, sizeof(peer));
	strcpy(self.node, "node0");
	strcpy(self.dev_name, "mlx5_0");
	strcpy(peer.node, "node1");
	strcpy(peer.dev_name, "mlx5_0");
	fl_hop_key_make(&key, FL_HOP_SEND, &self, &peer);
	for (int c = 0; c < channels; c++) {
		fl_stats_init(&conns[c]);
		fl_hop_attach(&conns[c], &key, 0, 0, 1);
	}
}

/*
 * Request `seq` of a channel completes, its wire time the middle of it; the channel's next
 * request is posted first, as NCCL keeps requests posted: the drains' watermark (the oldest
 * post still outstanding) then follows the requests.
 */
static void request(struct fl_conn_stats *s, long seq, uint64_t post, uint64_t next_post,
		    uint64_t took)
{
	struct fl_xfer_times t = { .ready_ns = post, .wire_start_ns = post + took / 4,
				   .wire_end_ns = post + took - took / 4 };

	fl_stats_post(s, (unsigned)(seq + 1) % 2, next_post);
	fl_stats_complete(s, (unsigned)seq % 2, 8, post + took, &t);
}

int main(int argc, char **argv)
{
	int channels = argc > 1 ? atoi(argv[1]) : 2;
	long requests = argc > 2 ? atol(argv[2]) : 200000, every = argc > 3 ? atol(argv[3]) : 512;
	uint64_t turn = 1000, took, base, want;
	struct fl_hop_snapshot *snaps = NULL;
	int n;

	if (channels < 1 || channels > MAX_CHANNELS || requests < 1 || every < 1) {
		fprintf(stderr, "usage: drain_cost CHANNELS(1-%d) [REQUESTS] [DRAIN_EVERY]\n",
			MAX_CHANNELS);
		return 2;
	}
	took = turn * (uint64_t)channels * 8 / 10;
	/* in the past, so that no drain's floor (now, with nothing outstanding) cuts a request */
	base = fl_clock_ns() - (uint64_t)requests * turn - 2 * took - 1000000;
	attach_all(channels);
	for (int c = 0; c < channels; c++)
		fl_stats_post(&conns[c], 0, base + (uint64_t)c * turn);
	for (long i = 0; i < requests; i++) {
		uint64_t post = base + (uint64_t)i * turn;
		struct fl_conn_stats *s = &conns[i % channels];

		request(s, i / channels, post, post + (uint64_t)channels * turn, took);
		if ((i + 1) % every == 0)
			fl_hops_drain();
	}
	for (int c = 0; c < channels; c++) /* the last posts were never sent */
		fl_stats_unpost(&conns[c], (unsigned)((requests - 1 - c) / channels + 1) % 2);
	n = fl_hops_snapshot(&snaps);
	/* one channel: gaps between requests; several: each request overlaps the next */
	want = channels == 1 ? (uint64_t)requests * took
			     : (uint64_t)(requests - 1) * turn + took;
	if (n != 1 || snaps[0].active_ns != want || snaps[0].t.union_bridges ||
	    snaps[0].t.ring_overflows) {
		fprintf(stderr, "drain_cost: union %llu ns, want %llu (%d hops, %llu bridges, %llu "
			"overflows)\n", n ? (unsigned long long)snaps[0].active_ns : 0ULL,
			(unsigned long long)want, n,
			n ? (unsigned long long)snaps[0].t.union_bridges : 0ULL,
			n ? (unsigned long long)snaps[0].t.ring_overflows : 0ULL);
		return 1;
	}
	printf("%d channels, %ld requests, a drain every %ld: union exact (%llu ns)\n", channels,
	       requests, every, (unsigned long long)want);
	free(snaps);
	return 0;
}
