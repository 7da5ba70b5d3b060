/*
 * Opening inputs that may not be what their name says. A FIFO named like a
 * report, or a sysfs attribute a test tree replaced by one, would block a
 * plain open() or read() forever: these open without blocking, refuse
 * anything but a regular file (sysfs attributes are regular files) and read
 * a bounded size.
 */
#ifndef FL_FILE_READ_H
#define FL_FILE_READ_H

#include <stddef.h>

/*
 * A read-only fd of the regular file at path, or -1 with *why saying why not
 * (no fl_fail: a missing sysfs attribute is common and must not overwrite an
 * error being reported).
 */
int fl_open_regular(const char *path, const char **why);
/*
 * The whole regular file, NUL-terminated, malloc'd into *text (the caller
 * frees it). FL_ERR_USAGE, with the path and why, when it is not a regular
 * file, cannot be read or is larger than max bytes.
 */
int fl_read_regular(const char *path, size_t max, char **text, size_t *len);
/*
 * The same for a file the caller's folder listing (readdir's d_type) showed as
 * a regular file: no stat before the open. The opened file's fstat still
 * refuses anything else, should it have been swapped since the listing.
 */
int fl_read_listed_regular(const char *path, size_t max, char **text, size_t *len);

#endif
