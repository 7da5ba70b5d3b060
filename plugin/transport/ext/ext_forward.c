/*
 * What NCCL looks up in the net plugin's own library besides its net tables,
 * forwarded from the wrapped plugin's library (FABRICLAB_TRANSPORT=ext:...), so
 * that a job wrapped by fabriclab keeps the wrapped plugin's tuner, CollNet
 * (SHARP), GIN and RMA plugins, and a job whose plugin has none behaves as if
 * fabriclab had none.
 *
 * Where NCCL looks, by dlsym on the net plugin's handle:
 *  - tuner, when NCCL_TUNER_PLUGIN names none that loads: 2.23.4
 *    src/misc/tuner.cc:132-140, 201-205 (v3, v2); 2.28.9 src/plugin/tuner.cc:63;
 *    2.30.7 src/plugin/tuner.cc:62-64, tuner/tuner_v6.cc:15 (v6 .. v2);
 *  - CollNet, at load, before init: 2.23.4 src/net.cc:484 (v8 .. v5); 2.28.9
 *    src/plugin/net.cc:112-120 (v11 .. v6); 2.30.7 net/net_v12.cc:25 (v12 .. v6);
 *  - GIN: 2.28.9 src/plugin/net.cc:123-132 (v11); 2.30.7 src/plugin/gin.cc:239-243
 *    (v14, v13); RMA: 2.30.7 src/plugin/rma.cc:207 (v14, v13).
 *
 * "As if fabriclab had none" cannot be had from a table that exists: a tuner
 * whose init fails fails the communicator (2.28.9 src/init.cc:1354, 2.30.7
 * src/init.cc:1641: NCCLCHECK), a CollNet whose init fails is disabled after the
 * attempt (2.28.9 net.cc:190-192), and a present tuner is called for every
 * collective. So each symbol is a GNU indirect function: dlsym runs its resolver
 * and returns what it returns (glibc elf/dl-sym.c, STT_GNU_IFUNC), here the
 * wrapped library's own table, or NULL when it has none, which NCCL reads as
 * "absent" exactly (no INFO or WARN line that it would not print unwrapped).
 * NCCL then calls the wrapped plugin's table itself: its results reach NCCL
 * unchanged, and none of these calls is measured (CollNet traffic included).
 * Nothing in the plugin or the programs linked with it refers to these symbols,
 * so their resolvers run only inside dlsym, after the library was relocated.
 */
#include <string.h>

#include "ext_lib.h"

typedef void (*entry_fn)(void); /* what a resolver returns: the address, whatever it holds */

static entry_fn entry_of(const char *name)
{
	void *table = ext_lib_symbol(name);
	entry_fn entry;

	memcpy(&entry, &table, sizeof(entry));
	return entry;
}

#define FORWARD(sym)                                                            \
	static entry_fn resolve_##sym(void)                                     \
	{                                                                       \
		return entry_of(#sym);                                          \
	}                                                                       \
	__attribute__((visibility("default"), ifunc("resolve_" #sym))) void sym(void)

/* Declared here only: the resolvers above are their whole definition. */
void ncclTunerPlugin_v2(void);
void ncclTunerPlugin_v3(void);
void ncclTunerPlugin_v4(void);
void ncclTunerPlugin_v5(void);
void ncclTunerPlugin_v6(void);
void ncclCollNetPlugin_v5(void);
void ncclCollNetPlugin_v6(void);
void ncclCollNetPlugin_v7(void);
void ncclCollNetPlugin_v8(void);
void ncclCollNetPlugin_v9(void);
void ncclCollNetPlugin_v10(void);
void ncclCollNetPlugin_v11(void);
void ncclCollNetPlugin_v12(void);
void ncclGinPlugin_v11(void);
void ncclGinPlugin_v13(void);
void ncclGinPlugin_v14(void);
void ncclRmaPlugin_v13(void);
void ncclRmaPlugin_v14(void);

FORWARD(ncclTunerPlugin_v2);
FORWARD(ncclTunerPlugin_v3);
FORWARD(ncclTunerPlugin_v4);
FORWARD(ncclTunerPlugin_v5);
FORWARD(ncclTunerPlugin_v6);
FORWARD(ncclCollNetPlugin_v5);
FORWARD(ncclCollNetPlugin_v6);
FORWARD(ncclCollNetPlugin_v7);
FORWARD(ncclCollNetPlugin_v8);
FORWARD(ncclCollNetPlugin_v9);
FORWARD(ncclCollNetPlugin_v10);
FORWARD(ncclCollNetPlugin_v11);
FORWARD(ncclCollNetPlugin_v12);
FORWARD(ncclGinPlugin_v11);
FORWARD(ncclGinPlugin_v13);
FORWARD(ncclGinPlugin_v14);
FORWARD(ncclRmaPlugin_v13);
FORWARD(ncclRmaPlugin_v14);
