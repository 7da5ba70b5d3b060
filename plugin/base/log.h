/* Logging through the logger NCCL hands to init (subsystem NET), so NCCL_DEBUG=INFO shows us. */
#ifndef FL_LOG_H
#define FL_LOG_H

#include <stdint.h>

enum fl_log_level {
	FL_LOG_NONE = 0,
	FL_LOG_VERSION = 1,
	FL_LOG_WARN = 2,
	FL_LOG_INFO = 3,
	FL_LOG_ABORT = 4,
	FL_LOG_TRACE = 5,
};

#define FL_LOG_SUBSYS_INIT 0x1UL
#define FL_LOG_SUBSYS_NET 0x10UL

/* Same shape as ncclDebugLogger_t (the level enum is passed as an int). */
typedef void (*fl_logger_fn)(int level, unsigned long flags, const char *file, int line,
			     const char *fmt, ...);

/* ncclProfilerCallback_t (v10+): kept only to hand on to a wrapped plugin (ext). */
typedef int (*fl_prof_fn)(void **event, int type, void *phandle, int64_t plugin_id, void *ext);

void fl_log_set_logger(fl_logger_fn logger);
/* The logger NCCL handed init (NULL before), for a wrapped plugin's own init. */
fl_logger_fn fl_log_logger(void);
void fl_log_set_profiler(fl_prof_fn prof);
fl_prof_fn fl_log_profiler(void);
void fl_log_emit(int level, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define FL_WARN(...) fl_log_emit(FL_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define FL_INFO(...) fl_log_emit(FL_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
#define FL_TRACE(...) fl_log_emit(FL_LOG_TRACE, __FILE__, __LINE__, __VA_ARGS__)

#endif
