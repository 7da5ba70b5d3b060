/*
 * The hello a stranger sends to a listen port: the first 8 bytes of the input
 * are the listener's nonce, the rest the 128 bytes on the wire. A decode never
 * crashes; an accepted hello encodes back to bytes that decode the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/transport/socket/sock_bytes.h"
#include "plugin/transport/socket/sock_handle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t wire[SOCK_HELLO_SIZE] = { 0 }, again[SOCK_HELLO_SIZE];
	struct sock_hello h, back;
	uint64_t nonce;

	if (size < 8)
		return 0;
	nonce = sock_get_u64(data);
	memcpy(wire, data + 8, size - 8 < sizeof(wire) ? size - 8 : sizeof(wire));
	if (sock_hello_decode(wire, nonce, &h))
		return 0;
	if (h.nonce != nonce || h.index >= 16 || h.nstreams > 16)
		abort();
	sock_hello_encode(&h, again);
	if (sock_hello_decode(again, nonce, &back) || back.conn_id != h.conn_id ||
	    back.kind != h.kind || back.index != h.index || back.nstreams != h.nstreams ||
	    back.inline_max != h.inline_max || back.min_chunk != h.min_chunk)
		abort();
	return 0;
}
