/* The probes of the `fabriclab` provider: this object is the only one that links liblttng-ust. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "fabriclab_tp.h"
