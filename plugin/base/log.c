#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "fl_text.h"

static _Atomic(fl_logger_fn) current_logger;
static _Atomic(fl_prof_fn) current_profiler;

void fl_log_set_logger(fl_logger_fn logger)
{
	if (logger)
		atomic_store_explicit(&current_logger, logger, memory_order_release);
}

fl_logger_fn fl_log_logger(void)
{
	return atomic_load_explicit(&current_logger, memory_order_acquire);
}

void fl_log_set_profiler(fl_prof_fn prof)
{
	if (prof)
		atomic_store_explicit(&current_profiler, prof, memory_order_release);
}

fl_prof_fn fl_log_profiler(void)
{
	return atomic_load_explicit(&current_profiler, memory_order_acquire);
}

void fl_log_emit(int level, const char *file, int line, const char *fmt, ...)
{
	fl_logger_fn logger = atomic_load_explicit(&current_logger, memory_order_acquire);
	char msg[512];
	va_list ap;

	if (!logger)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* NCCL's logger prints as given: whatever a message quotes reaches a terminal escaped */
	fl_text_escape_in_place(msg, sizeof(msg));
	/* NCCL tags its own warnings with every subsystem so a subsystem filter never hides them. */
	logger(level, level == FL_LOG_WARN ? ~0UL : FL_LOG_SUBSYS_NET, file, line,
	       "NET/fabriclab : %s", msg);
}
