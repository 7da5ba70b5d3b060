#include "report_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fl_types.h"

#define CHUNK 4096

void (*fl_report_write_hook)(size_t written, size_t total);

int fl_report_mkdirs(const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return fl_fail(FL_ERR_USAGE, "report folder \"%s\": empty or too long", dir);
	memcpy(path, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return fl_fail(FL_ERR_SYSTEM, "cannot create report folder %s: %s", path,
				       strerror(errno));
		path[i] = i < n ? '/' : '\0';
	}
	return FL_OK;
}

static int write_all(int fd, const char *data, size_t len)
{
	size_t done = 0;

	while (done < len) {
		size_t want = len - done < CHUNK ? len - done : CHUNK;
		ssize_t n = write(fd, data + done, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : ENOSPC;
		done += (size_t)n;
		if (fl_report_write_hook)
			fl_report_write_hook(done, len);
	}
	return 0;
}

static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	/* Best effort: the rename is what makes the new file whole. */
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int fl_report_write_atomic(const char *dir, const char *name, const char *data, size_t len)
{
	return fl_report_write_file(dir, name, data, len, 1);
}

int fl_report_write_file(const char *dir, const char *name, const char *data, size_t len,
			 int durable)
{
	char tmp[PATH_MAX], final[PATH_MAX];
	int fd, err;

	if (snprintf(final, sizeof(final), "%s/%s", dir, name) >= (int)sizeof(final) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name) >= (int)sizeof(tmp))
		return fl_fail(FL_ERR_USAGE, "report path %s/%s is too long", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return fl_fail(FL_ERR_SYSTEM, "cannot write %s: %s", tmp, strerror(errno));
	err = write_all(fd, data, len);
	if (!err && durable && fsync(fd) != 0)
		err = errno;
	if (close(fd) != 0 && !err)
		err = errno;
	if (!err && rename(tmp, final) != 0)
		err = errno;
	if (err) {
		unlink(tmp);
		return fl_fail(FL_ERR_SYSTEM, "cannot write %s: %s", final, strerror(err));
	}
	if (durable)
		sync_dir(dir);
	return FL_OK;
}
