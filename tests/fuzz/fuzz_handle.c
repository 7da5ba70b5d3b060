/*
 * The socket listen handle as NCCL's bootstrap delivers it (any 128 bytes): a
 * decode never crashes, and whatever decodes encodes back to a handle that
 * decodes to the same listener.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/fl_types.h"
#include "plugin/transport/socket/sock_handle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf[FL_HANDLE_SIZE] = { 0 }, again[FL_HANDLE_SIZE];
	struct sock_handle h, back;

	memcpy(buf, data, size < sizeof(buf) ? size : sizeof(buf));
	if (sock_handle_decode(buf, &h))
		return 0;
	sock_handle_encode(&h, again);
	if (sock_handle_decode(again, &back) || !sock_handle_same_listener(&h, &back) ||
	    memcmp(&h.listener, &back.listener, sizeof(h.listener)))
		abort();
	return 0;
}
