/* Non-blocking, regular-files-only reads (file_read.h). */
#include "file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "fl_types.h"

static const char *kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "not a regular file (a folder)";
	if (S_ISFIFO(mode))
		return "not a regular file (a FIFO)";
	if (S_ISSOCK(mode))
		return "not a regular file (a socket)";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "not a regular file (a device)";
	return "not a regular file";
}

/*
 * fl_open_regular, with what fstat said of the opened file. listed: the
 * caller's folder listing said regular file, so the stat before the open is
 * left out (131 072 reports: one system call less each).
 */
static int open_regular(const char *path, bool listed, const char **why, struct stat *st_out)
{
	struct stat st;
	int fd;

	/* stat first: opening a device may have side effects even without reading */
	if (!listed && stat(path, &st)) {
		*why = strerror(errno);
		return -1;
	}
	if (!listed && !S_ISREG(st.st_mode)) {
		*why = kind_of(st.st_mode);
		return -1;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	/* it may have been swapped since the stat */
	if (fstat(fd, &st)) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		*why = kind_of(st.st_mode);
		return -1;
	}
	*st_out = st;
	return fd;
}

int fl_open_regular(const char *path, const char **why)
{
	struct stat st;

	return open_regular(path, false, why, &st);
}

/*
 * Reads fd to its end into a buffer of the size fstat gave (sysfs files say
 * 4096), growing it if the file grew; NULL when it passes max or a read fails.
 */
static char *read_all(int fd, size_t size, size_t max, size_t *len, int *too_large)
{
	size_t used = 0, cap = size ? size + 1 : 4096; /* + 1: the read that sees the end fits */
	char *buf = malloc(cap + 1);

	*too_large = 0;
	while (buf) {
		ssize_t n;

		if (used == cap) {
			char *grown = realloc(buf, (cap *= 2) + 1);

			if (!grown)
				break;
			buf = grown;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0) {
				buf[used] = '\0';
				*len = used;
				return buf;
			}
			break;
		}
		used += (size_t)n;
		if (used > max) {
			*too_large = 1;
			break;
		}
		/* fewer bytes than asked, and all fstat said: the end (no read of 0 to see it) */
		if (size && used == size && used < cap) {
			buf[used] = '\0';
			*len = used;
			return buf;
		}
	}
	free(buf);
	return NULL;
}

static int read_regular(const char *path, bool listed, size_t max, char **text, size_t *len)
{
	const char *why = NULL;
	struct stat st;
	int fd = open_regular(path, listed, &why, &st), too_large, err;

	*text = NULL;
	*len = 0;
	if (fd < 0)
		return fl_fail(FL_ERR_USAGE, "%s: %s", path, why);
	/* refused by its size, before a byte is read: a huge file would cost its size in memory */
	if (st.st_size < 0 || (uint64_t)st.st_size > max) {
		close(fd);
		return fl_fail(FL_ERR_USAGE, "%s: %lld bytes, larger than %zu bytes", path,
			       (long long)st.st_size, max);
	}
	errno = 0;
	*text = read_all(fd, (size_t)st.st_size, max, len, &too_large);
	err = errno;
	close(fd);
	if (*text)
		return FL_OK;
	if (too_large)
		return fl_fail(FL_ERR_USAGE, "%s: larger than %zu bytes", path, max);
	return fl_fail(FL_ERR_USAGE, "%s: cannot read: %s", path, strerror(err ? err : ENOMEM));
}

int fl_read_regular(const char *path, size_t max, char **text, size_t *len)
{
	return read_regular(path, false, max, text, len);
}

int fl_read_listed_regular(const char *path, size_t max, char **text, size_t *len)
{
	return read_regular(path, true, max, text, len);
}
