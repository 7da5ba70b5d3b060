/* The wrapped plugin's symbols for the layers above the transports (transport/wrapped_lib.h). */
#include "transport/wrapped_lib.h"

#include "ext_lib.h"

void *fl_transport_wrapped_symbol(const char *name)
{
	return ext_lib_symbol(name);
}
