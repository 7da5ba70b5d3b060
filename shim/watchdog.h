/*
 * The no-progress timeout for a call that never returns. The shim's loops
 * give up after FABRICLAB_SHIM_TIMEOUT seconds without progress, but only
 * between calls: a plugin call that blocks (an inner waiting inside its own
 * test for a peer that is itself stuck) would hang the rank for ever, silently.
 * Each plugin call the shim makes is bracketed; a thread of the rank's own ends
 * the process (status 1, the spawner stops the others) once one has been
 * inside the plugin for longer than the timeout, naming the call and the peer.
 */
#ifndef SHIM_WATCHDOG_H
#define SHIM_WATCHDOG_H

/* call: "connect() to", "test() of a send to", ...; peer: its rank, or -1. */
void shim_call_begin(int rank, int timeout_ms, const char *call, int peer);
/* Returns rc, so that a call reads SHIM_WATCHED(w, "isend() to", peer, shim_net_isend(...)). */
int shim_call_end(int rc);

#define SHIM_WATCHED(w, call, peer, expr) \
	(shim_call_begin((w)->rank, (w)->timeout_ms, (call), (peer)), shim_call_end(expr))

#endif
