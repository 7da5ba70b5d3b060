/*
 * Checks a CTF trace's metadata before babeltrace2 reads it: its CTF reader
 * spins forever on some damaged metadata (a packet cut short), so a file
 * that is not whole is refused here with a message, and the whole read is
 * bounded in time (trace_read_deadline) for what slips through.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "plugin/base/config.h"
#include "plugin/base/error.h"
#include "plugin/base/file_read.h"
#include "tools/common/tool_text.h"
#include "trace.h"

#define METADATA_MAX (64UL << 20)
#define PACKET_MAGIC 0x75d11d57u
#define PACKET_HEADER_BYTES 37 /* magic, uuid, checksum, sizes, schemes, version */
#define DEFAULT_TIMEOUT_MS (10L * 60 * 1000)

static uint32_t get_u32(const uint8_t *p, int swapped)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;

	return swapped ? __builtin_bswap32(v) : v;
}

/* Packetized metadata (LTTng's): every packet whole, their sizes adding up to the file. */
static int check_packets(const char *path, const uint8_t *buf, size_t len)
{
	size_t off = 0;
	int swapped = get_u32(buf, 0) != PACKET_MAGIC;

	while (off < len) {
		uint32_t content, packet;

		if (len - off < PACKET_HEADER_BYTES || get_u32(buf + off, swapped) != PACKET_MAGIC)
			return fl_fail(FL_ERR_USAGE, "%s: damaged CTF metadata: no whole packet "
				       "header at byte %zu of %zu", path, off, len);
		content = get_u32(buf + off + 24, swapped);
		packet = get_u32(buf + off + 28, swapped);
		if (content % 8 || packet % 8 || content > packet ||
		    content < PACKET_HEADER_BYTES * 8)
			return fl_fail(FL_ERR_USAGE, "%s: damaged CTF metadata: packet at byte %zu "
				       "claims %u of %u bits", path, off, content, packet);
		if (packet / 8 > len - off)
			return fl_fail(FL_ERR_USAGE, "%s: truncated CTF metadata: the packet at byte "
				       "%zu needs %u bytes, the file has %zu", path, off, packet / 8,
				       len - off);
		off += packet / 8;
	}
	return FL_OK;
}

/* Plain-text metadata: it starts as CTF says and its last statement is closed. */
static int check_text(const char *path, const char *text, size_t len)
{
	while (len && strchr(" \t\r\n", text[len - 1]))
		len--;
	if (strncmp(text, "/* CTF 1.8", 10))
		return fl_fail(FL_ERR_USAGE, "%s: not CTF metadata (neither packets nor text "
			       "starting with \"/* CTF 1.8\")", path);
	if (!len || (text[len - 1] != ';' && text[len - 1] != '}'))
		return fl_fail(FL_ERR_USAGE, "%s: truncated CTF metadata: it ends inside a "
			       "statement", path);
	return FL_OK;
}

int trace_check_metadata(const char *dir)
{
	char path[4096];
	size_t len;
	char *text;
	int rc;

	if (snprintf(path, sizeof(path), "%s/metadata", dir) >= (int)sizeof(path))
		return fl_fail(FL_ERR_USAGE, "%s: path too long", dir);
	rc = fl_read_regular(path, METADATA_MAX, &text, &len);
	if (rc)
		return rc;
	if (len < 4)
		rc = fl_fail(FL_ERR_USAGE, "%s: truncated CTF metadata (%zu bytes)", path, len);
	else if (get_u32((const uint8_t *)text, 0) == PACKET_MAGIC ||
		 get_u32((const uint8_t *)text, 1) == PACKET_MAGIC)
		rc = check_packets(path, (const uint8_t *)text, len);
	else
		rc = check_text(path, text, len);
	free(text);
	return rc;
}

static const char *kind_of(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISDIR(mode))
		return "a folder";
	return "not a regular file";
}

/*
 * babeltrace2 passes over a stream file that is not a regular file (a FIFO,
 * a link to /dev/zero) or is empty without a word: each is said here, once,
 * on stderr, and counted for the outputs (m->skipped_files).
 */
int trace_check_streams(const char *dir, struct trace_model *m)
{
	char path[4096];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return fl_fail(FL_ERR_USAGE, "%s: cannot list its streams: %m", dir);
	while ((e = readdir(d))) {
		const char *why = NULL;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "metadata") ||
		    !strcmp(e->d_name, "index"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			why = "cannot be read";
		else if (!S_ISREG(st.st_mode))
			why = kind_of(st.st_mode);
		else if (!st.st_size)
			why = "empty";
		if (!why)
			continue;
		fputs("fabriclab trace: skipped stream ", stderr);
		tool_text_put(stderr, path);
		fprintf(stderr, ": %s\n", why);
		m->skipped_files++;
	}
	closedir(d);
	return FL_OK;
}

static void deadline_passed(int sig)
{
	static const char msg[] = "fabriclab trace: reading the trace did not finish within "
				  "FABRICLAB_TRACE_TIMEOUT_MS (a damaged trace?)\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(2);
}

int trace_read_deadline(void)
{
	struct itimerval t = { { 0, 0 }, { 0, 0 } };
	long ms;
	int rc = fl_env_long("FABRICLAB_TRACE_TIMEOUT_MS", DEFAULT_TIMEOUT_MS, 1,
			     24L * 3600 * 1000, &ms);

	if (rc)
		return rc;
	t.it_value.tv_sec = ms / 1000;
	t.it_value.tv_usec = (ms % 1000) * 1000;
	signal(SIGALRM, deadline_passed);
	setitimer(ITIMER_REAL, &t, NULL);
	return FL_OK;
}

void trace_read_done(void)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
}
