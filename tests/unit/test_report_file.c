/*
 * Atomic report files (plugin/report_file.c): a crash in the middle of a write
 * (a child that _exit()s halfway) or a failing write (file size limit) leaves
 * the previous file whole; folders are created as needed.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/report/report_file.h"

static char dir[256];

static int make_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/fabriclab-report-file.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int remove_dir(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	char *buf = malloc(1 << 20);

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f) {
		free(buf);
		return NULL;
	}
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

static void assert_file(const char *name, const char *want, size_t want_len)
{
	size_t len = 0;
	char *got = slurp(name, &len);

	assert_non_null(got);
	assert_int_equal(len, want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
}

static int exists(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

static char *filled(size_t len, char c)
{
	char *b = malloc(len);

	assert_non_null(b);
	memset(b, c, len);
	return b;
}

static void test_write_replaces_the_file_whole(void **state)
{
	(void)state;
	assert_int_equal(fl_report_write_atomic(dir, "r.json", "{\"v\": 1}\n", 9), 0);
	assert_file("r.json", "{\"v\": 1}\n", 9);
	assert_int_equal(fl_report_write_atomic(dir, "r.json", "{}\n", 3), 0);
	assert_file("r.json", "{}\n", 3);
	assert_false(exists(".r.json.tmp"));
}

static void crash_halfway(size_t written, size_t total)
{
	if (written * 2 >= total)
		_exit(42);
}

/* The child dies with half the new content written: readers still see the old file. */
static void test_crash_mid_write_keeps_the_previous_file(void **state)
{
	size_t big = 200000, tmp_len = 0;
	char *old = filled(5000, 'o'), *new = filled(big, 'n'), *tmp;
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(fl_report_write_atomic(dir, "c.json", old, 5000), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fl_report_write_hook = crash_halfway;
		fl_report_write_atomic(dir, "c.json", new, big);
		_exit(0); /* not reached when the hook works */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);
	assert_file("c.json", old, 5000);
	/* The crash really was mid-write: half a temporary file is left behind. */
	tmp = slurp(".c.json.tmp", &tmp_len);
	assert_non_null(tmp);
	assert_true(tmp_len >= big / 2 && tmp_len < big);
	free(tmp);
	/* The next write goes through and cleans up. */
	assert_int_equal(fl_report_write_atomic(dir, "c.json", new, big), 0);
	assert_file("c.json", new, big);
	assert_false(exists(".c.json.tmp"));
	free(old);
	free(new);
}

/* Writes that fail (here: past the file size limit) leave the old file and no temporary. */
static void test_failing_write_keeps_the_previous_file(void **state)
{
	char *new = filled(100000, 'x');
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(fl_report_write_atomic(dir, "f.json", "old\n", 4), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit lim = { 4096, 4096 };

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &lim))
			_exit(2);
		_exit(fl_report_write_atomic(dir, "f.json", new, 100000) ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1); /* the write reported its failure */
	assert_file("f.json", "old\n", 4);
	assert_false(exists(".f.json.tmp"));
	free(new);
}

static void test_unwritable_temporary_is_an_error(void **state)
{
	char path[512];

	(void)state;
	assert_int_equal(fl_report_write_atomic(dir, "u.json", "old\n", 4), 0);
	snprintf(path, sizeof(path), "%s/.u.json.tmp", dir);
	assert_int_equal(mkdir(path, 0755), 0); /* a folder where the temporary must go */
	assert_int_not_equal(fl_report_write_atomic(dir, "u.json", "new\n", 4), 0);
	assert_file("u.json", "old\n", 4);
	rmdir(path);
}

static void test_folders_are_created(void **state)
{
	char nested[512], file[512];
	FILE *f;

	(void)state;
	snprintf(nested, sizeof(nested), "%s/a/b/c", dir);
	assert_int_equal(fl_report_mkdirs(nested), 0);
	assert_int_equal(fl_report_mkdirs(nested), 0); /* already there */
	assert_int_equal(fl_report_write_atomic(nested, "n.json", "{}", 2), 0);
	snprintf(file, sizeof(file), "%s/plain", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(nested, sizeof(nested), "%s/plain/sub", dir);
	assert_int_not_equal(fl_report_mkdirs(nested), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_replaces_the_file_whole),
		cmocka_unit_test(test_crash_mid_write_keeps_the_previous_file),
		cmocka_unit_test(test_failing_write_keeps_the_previous_file),
		cmocka_unit_test(test_unwritable_temporary_is_an_error),
		cmocka_unit_test(test_folders_are_created),
	};

	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
