/* Writing report files so that a reader (or a crash) never sees half of one. */
#ifndef FL_REPORT_FILE_H
#define FL_REPORT_FILE_H

#include <stddef.h>

/* Creates dir and its parents as needed. */
int fl_report_mkdirs(const char *dir);
/*
 * Writes dir/name: into dir/.name.tmp, fsync, rename over dir/name, fsync dir.
 * On any failure the previous dir/name is left as it was.
 */
int fl_report_write_atomic(const char *dir, const char *name, const char *data, size_t len);
/* The same; without durable, no fsync: whole for readers, not across a crash. */
int fl_report_write_file(const char *dir, const char *name, const char *data, size_t len,
			 int durable);

/* Tests: called after each chunk reaches the temporary file (a crash point). */
extern void (*fl_report_write_hook)(size_t written, size_t total);

#endif
