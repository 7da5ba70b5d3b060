/*
 * The wrapped plugin's library, for what NCCL looks up in the net plugin's own
 * library besides the net tables (tuner, CollNet, GIN, RMA: ext_forward.c).
 * NCCL looks those up with dlsym, some before it calls the net plugin's init,
 * so the library is opened here on first use, by the name FABRICLAB_TRANSPORT
 * gives and as the ext loader opens it (base/plugin_open): dlopen counts its
 * references to one object, so this is the loader's handle too.
 */
#ifndef FL_EXT_LIB_H
#define FL_EXT_LIB_H

/* NULL when FABRICLAB_TRANSPORT is not ext:..., or its plugin cannot be opened. */
void *ext_lib_handle(void);
/* The inner library's own definition of name (dlsym), NULL when it has none. */
void *ext_lib_symbol(const char *name);

#endif
