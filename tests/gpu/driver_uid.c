/* NCCL's unique id from rank 0 to the other ranks through a file (driver_uid.h says the form). */
#include "driver_uid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POLL_NS 10000000L /* 10 ms between looks for the file */

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

int drv_uid_encode(const void *id, size_t len, char *text, size_t textlen)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *b = id;
	size_t magic = strlen(DRV_UID_MAGIC);

	if (textlen < magic + 2 * len + 2)
		return -1;
	memcpy(text, DRV_UID_MAGIC, magic);
	for (size_t i = 0; i < len; i++) {
		text[magic + 2 * i] = hex[b[i] >> 4];
		text[magic + 2 * i + 1] = hex[b[i] & 15];
	}
	text[magic + 2 * len] = '\n';
	text[magic + 2 * len + 1] = '\0';
	return 0;
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int drv_uid_decode(const char *text, void *id, size_t len)
{
	unsigned char *b = id;
	size_t magic = strlen(DRV_UID_MAGIC);

	if (strncmp(text, DRV_UID_MAGIC, magic))
		return -1;
	text += magic;
	for (size_t i = 0; i < len; i++) {
		int hi = nibble(text[2 * i]), lo = hi < 0 ? -1 : nibble(text[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		b[i] = (unsigned char)(hi << 4 | lo);
	}
	text += 2 * len;
	return strcmp(text, "\n") && strcmp(text, "") ? -1 : 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int drv_uid_publish(const char *path, const void *id, size_t len, char *err, size_t errlen)
{
	char text[sizeof(DRV_UID_MAGIC) + 2 * DRV_UID_MAX_BYTES + 2], tmp[4200];
	int fd, rc = 0;

	if (len > DRV_UID_MAX_BYTES || drv_uid_encode(id, len, text, sizeof(text)))
		return fail(err, errlen, "unique id of %zu bytes: at most %d", len,
			    DRV_UID_MAX_BYTES);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
		return fail(err, errlen, "--id-file %s: path too long", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(err, errlen, "--id-file %s: cannot create %s: %s", path, tmp,
			    strerror(errno));
	if (write_all(fd, text, strlen(text)))
		rc = fail(err, errlen, "--id-file %s: cannot write %s: %s", path, tmp,
			  strerror(errno));
	if (close(fd) && !rc)
		rc = fail(err, errlen, "--id-file %s: cannot write %s: %s", path, tmp,
			  strerror(errno));
	/* link(2) fails on an existing name: the id appears whole or not at all, and an id left
	 * by another run is never taken for this one's. */
	if (!rc && link(tmp, path))
		rc = fail(err, errlen, errno == EEXIST ?
			  "--id-file %s exists (left by another run?): remove it or name a new one" :
			  "--id-file %s: cannot publish: %s", path, strerror(errno));
	unlink(tmp);
	return rc;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The file's text into buf: its length, or -1 with errno (ENOENT: not there yet). */
static ssize_t read_text(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return -1;
	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

int drv_uid_wait(const char *path, void *id, size_t len, double timeout_s, char *err,
		 size_t errlen)
{
	char text[sizeof(DRV_UID_MAGIC) + 2 * DRV_UID_MAX_BYTES + 8];
	const struct timespec pause = { 0, POLL_NS };
	double deadline = now_s() + timeout_s;

	if (len > DRV_UID_MAX_BYTES)
		return fail(err, errlen, "unique id of %zu bytes: at most %d", len,
			    DRV_UID_MAX_BYTES);
	for (;;) {
		ssize_t n = read_text(path, text, sizeof(text));

		if (n >= 0) {
			if (drv_uid_decode(text, id, len))
				return fail(err, errlen,
					    "--id-file %s: not a unique id (expected one line "
					    "\"%s<%zu hex digits>\")", path, DRV_UID_MAGIC, 2 * len);
			return 0;
		}
		if (errno != ENOENT)
			return fail(err, errlen, "--id-file %s: cannot read: %s", path,
				    strerror(errno));
		if (now_s() > deadline)
			return fail(err, errlen,
				    "--id-file %s: no unique id after %.0f s (did rank 0 start? "
				    "--id-timeout sets the wait)", path, timeout_s);
		nanosleep(&pause, NULL);
	}
}
