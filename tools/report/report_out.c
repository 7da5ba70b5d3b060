/* Output files appear whole or not at all: a scraper or a viewer never sees half of one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/base/error.h"
#include "report.h"

static int finish(FILE *f, const char *tmp)
{
	int bad = fflush(f) || fsync(fileno(f));

	bad |= fclose(f) != 0;
	return bad ? fl_fail(FL_ERR_SYSTEM, "%s: %s", tmp, strerror(errno)) : 0;
}

int report_write_atomic(const char *path, int (*emit)(const struct report_set *, FILE *),
			const struct report_set *set)
{
	char *tmp = NULL;
	FILE *f = NULL;
	int fd, err;

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", path);
	fd = mkstemp(tmp);
	/* Readable by a node_exporter or web server running as another user. */
	if (fd < 0 || fchmod(fd, 0644) || !(f = fdopen(fd, "w"))) {
		err = fl_fail(FL_ERR_SYSTEM, "%s: %s", fd < 0 ? path : tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return err;
	}
	err = emit(set, f);
	if (err)
		fclose(f);
	else
		err = finish(f, tmp);
	if (!err && rename(tmp, path))
		err = fl_fail(FL_ERR_SYSTEM, "%s: %s", path, strerror(errno));
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}
