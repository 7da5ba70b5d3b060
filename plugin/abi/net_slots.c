/* Which slot of a bound net plugin table is NULL where NCCL needs one (net_slots.h). */
#include "net_slots.h"

#include <stddef.h>
#include <string.h>

#include "nccl_abi.h"

struct slot {
	const char *label; /* NCCL's name of the slot, for the message */
	size_t v5;         /* its offset in a v5 table (no regMrDmaBuf: later slots sit earlier) */
	size_t v6;         /* its offset from v6 on (nccl_abi.h asserts every version agrees) */
};

#define SLOT(field, label) \
	{ label, offsetof(struct fl_abi_net_v5, field), offsetof(struct fl_abi_net_v6, field) }

static const struct slot required[] = {
	SLOT(devices, "devices"),       SLOT(get_properties, "getProperties"),
	SLOT(listen, "listen"),         SLOT(connect, "connect"),
	SLOT(accept, "accept"),         SLOT(reg_mr, "regMr"),
	SLOT(dereg_mr, "deregMr"),      SLOT(isend, "isend"),
	SLOT(irecv, "irecv"),           SLOT(test, "test"),
	SLOT(close_send, "closeSend"),  SLOT(close_recv, "closeRecv"),
	SLOT(close_listen, "closeListen"),
};

static int is_null(const void *table, size_t offset)
{
	void (*fn)(void);

	memcpy(&fn, (const char *)table + offset, sizeof(fn));
	return !fn;
}

const char *fl_abi_missing_slot(const void *table, int version)
{
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (is_null(table, version == 5 ? required[i].v5 : required[i].v6))
			return required[i].label;
	if (version >= 11 && is_null(table, offsetof(struct fl_abi_net_v11, finalize)))
		return "finalize";
	return NULL;
}
