#include "sock_plan.h"

#include "sock_bytes.h"

void sock_msg_encode(const struct sock_msg_header *h, uint8_t buf[SOCK_MSG_HEADER_SIZE])
{
	sock_put_u64(buf, h->size);
	sock_put_u32(buf + 8, (uint32_t)h->tag);
	sock_put_u32(buf + 12, h->seq);
}

void sock_msg_decode(const uint8_t buf[SOCK_MSG_HEADER_SIZE], struct sock_msg_header *h)
{
	h->size = sock_get_u64(buf);
	h->tag = (int32_t)sock_get_u32(buf + 8);
	h->seq = sock_get_u32(buf + 12);
}

static size_t div_round_up(size_t a, size_t b)
{
	return a / b + (a % b != 0);
}

void sock_plan(const struct sock_rules *rules, size_t size, unsigned *rotor,
	       struct sock_split *split)
{
	size_t pieces;

	split->n = 0;
	split->first = 0;
	split->chunk = 0;
	if (!rules->nstreams || size <= rules->inline_max)
		return;
	pieces = div_round_up(size, rules->min_chunk);
	if (pieces > rules->nstreams)
		pieces = rules->nstreams;
	split->chunk = div_round_up(div_round_up(size, pieces), SOCK_PIECE_ALIGN) *
		       SOCK_PIECE_ALIGN;
	/* rounding the share up can leave the last piece empty: drop it */
	split->n = (unsigned)div_round_up(size, split->chunk);
	split->first = *rotor;
	*rotor = (*rotor + split->n) % rules->nstreams;
}
