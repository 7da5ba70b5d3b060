/*
 * The wrapped plugin's library, for what NCCL looks up in the net plugin's own
 * library besides the net tables (tuner, CollNet, GIN, RMA: ext_forward.c).
 * Once fabriclab's init chose a plugin from FABRICLAB_TRANSPORT=ext:a,b,... it
 * is that plugin's library, as NCCL takes these from the library whose init
 * won (2.28.9 src/plugin/net.cc:112-132, 269-290). NCCL looks some of them up
 * before it calls init (CollNet, GIN): then it is the list's first library that
 * opens, opened as the ext loader opens it (base/plugin_open), and dlopen counts
 * references to one object, so with a one-name list it is the loader's handle.
 */
#ifndef FL_EXT_LIB_H
#define FL_EXT_LIB_H

/* The ext transport's init kept this plugin's library (a handle it holds open). */
void ext_lib_chosen(void *handle);
/* NULL when FABRICLAB_TRANSPORT is not ext:..., or its plugin cannot be opened. */
void *ext_lib_handle(void);
/* The inner library's own definition of name (dlsym), NULL when it has none. */
void *ext_lib_symbol(const char *name);

#endif
