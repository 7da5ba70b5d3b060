/* A test artifact: a shared object that loads but is no NCCL net plugin (no ncclNetPlugin_vN). */
__attribute__((visibility("default"))) int fabriclab_not_a_net_plugin = 1;
