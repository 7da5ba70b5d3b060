/*
 * How one message travels: a 16-byte header on the control stream, then the
 * payload either inline behind it or cut into pieces over the data streams.
 * Sender and receiver run the same plan in the same (control) order, so they
 * agree on every piece without saying more on the wire.
 */
#ifndef FL_SOCK_PLAN_H
#define FL_SOCK_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define SOCK_MSG_HEADER_SIZE 16
#define SOCK_PIECE_ALIGN 4096

struct sock_msg_header {
	uint64_t size;
	int32_t tag;
	uint32_t seq; /* counts messages per connection; a gap means a broken stream */
};

/* The sender's rules, which travel in its hello. */
struct sock_rules {
	unsigned nstreams;
	size_t inline_max;
	size_t min_chunk;
};

struct sock_split {
	unsigned n;      /* pieces; 0 = payload rides inline on the control stream */
	unsigned first;  /* data stream of piece 0; piece i goes to (first + i) % nstreams */
	size_t chunk;    /* bytes per piece; the last may be shorter */
};

void sock_msg_encode(const struct sock_msg_header *h, uint8_t buf[SOCK_MSG_HEADER_SIZE]);
void sock_msg_decode(const uint8_t buf[SOCK_MSG_HEADER_SIZE], struct sock_msg_header *h);

/*
 * n = min(K, max(1, ceil(size / min_chunk))) pieces of a page-rounded equal
 * share; advances *rotor by n so the next message starts on the next stream.
 */
void sock_plan(const struct sock_rules *rules, size_t size, unsigned *rotor,
	       struct sock_split *split);

static inline size_t sock_piece_offset(const struct sock_split *s, unsigned i)
{
	return (size_t)i * s->chunk;
}

static inline size_t sock_piece_len(const struct sock_split *s, size_t size, unsigned i)
{
	size_t off = sock_piece_offset(s, i);

	return size - off < s->chunk ? size - off : s->chunk;
}

static inline unsigned sock_piece_stream(const struct sock_split *s, unsigned i,
					 unsigned nstreams)
{
	return (s->first + i) % nstreams;
}

#endif
