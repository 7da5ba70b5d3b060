/* The config of the connect in progress on this thread (call_config.h). */
#include "call_config.h"

#include <stddef.h>

static _Thread_local struct fl_abi_comm_config *connect_config;

void fl_call_set_connect_config(struct fl_abi_comm_config *config)
{
	connect_config = config;
}

struct fl_abi_comm_config *fl_call_connect_config(void)
{
	return connect_config;
}
