/*
 * The shim's logger, standing in for NCCL's: NCCL_DEBUG picks the level
 * (VERSION, WARN, INFO, TRACE; unset = WARN), NCCL_DEBUG_SUBSYS the subsystems
 * for INFO and TRACE (comma list, leading ^ excludes, ALL; default
 * INIT,BOOTSTRAP,ENV as in NCCL). Lines go to stderr as
 * `host:pid:tid [rank] NCCL INFO msg`. The plugin gets shim_log as its logger.
 */
#ifndef SHIM_LOG_H
#define SHIM_LOG_H

#include "plugin/base/log.h"

/* NCCL's subsystem bits (ncclDebugLogSubSys). */
#define SHIM_LOG_INIT 0x1UL
#define SHIM_LOG_COLL 0x2UL
#define SHIM_LOG_P2P 0x4UL
#define SHIM_LOG_NET 0x10UL
#define SHIM_LOG_ENV 0x80UL
#define SHIM_LOG_BOOTSTRAP 0x1000UL
#define SHIM_LOG_ALL (~0UL)

/* Tags later lines with this rank (until then RANK from the environment, else -1). */
void shim_log_set_rank(int rank);
/* True when a line of this level and subsystem would be printed. */
int shim_log_enabled(int level, unsigned long flags);
/* Same shape as ncclDebugLogger_t. */
void shim_log(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define SHIM_WARN(...) shim_log(FL_LOG_WARN, SHIM_LOG_ALL, __FILE__, __LINE__, __VA_ARGS__)
#define SHIM_INFO(flags, ...) shim_log(FL_LOG_INFO, (flags), __FILE__, __LINE__, __VA_ARGS__)
#define SHIM_TRACE(flags, ...) shim_log(FL_LOG_TRACE, (flags), __FILE__, __LINE__, __VA_ARGS__)

#endif
