/*
 * What the wrapped net plugin's own library defines, for the layers above the
 * transports that look there as NCCL would look in the net plugin's library
 * (the profiler role: NCCL takes `ncclProfiler_*` from the net plugin's library
 * when no profiler plugin is set, 2.30.7 src/plugin/profiler.cc:64). The ext
 * transport implements it (ext/ext_wrapped.c); with no ext transport in use it
 * answers NULL.
 */
#ifndef FL_WRAPPED_LIB_H
#define FL_WRAPPED_LIB_H

/* The wrapped library's definition of name (dlsym), NULL when there is none. */
void *fl_transport_wrapped_symbol(const char *name);

#endif
