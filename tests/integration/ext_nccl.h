/*
 * NCCL's side of the ext tests: fabriclab's own ncclNetPlugin_vN tables (linked
 * in) driven as NCCL's proxy drives them, over a test inner from build/inner
 * (FABRICLAB_TRANSPORT=ext:...), each case in a child process (the transport
 * is chosen once per process), the final report read back with jansson.
 */
#ifndef EXT_NCCL_H
#define EXT_NCCL_H

#include <dirent.h>
#include <dlfcn.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin/entry/net_abi.h"
#include "plugin/base/fl_types.h"

static char ext_inner_dir[PATH_MAX + 16], ext_build_dir[PATH_MAX];
static int ext_failures;

#define CHECK(cond, ...)                                         \
	do {                                                     \
		if (!(cond)) {                                   \
			printf("  not ok: %s: ", #cond);         \
			printf(__VA_ARGS__);                     \
			printf("\n");                            \
			ext_failures++;                          \
		}                                                \
	} while (0)

/* NCCL's logger: WARN lines shown, the rest dropped. */
static inline void ext_logger(int level, unsigned long flags, const char *file, int line,
			      const char *fmt, ...)
{
	va_list ap;

	(void)flags, (void)file, (void)line;
	if (level > 2)
		return;
	va_start(ap, fmt);
	printf("  # ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

/* build/tests/<test> -> build/inner, build */
static inline int ext_find_dirs(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(ext_build_dir, sizeof(ext_build_dir) - 4, "%s", dirname(self));
	strcat(ext_build_dir, "/..");
	snprintf(ext_inner_dir, sizeof(ext_inner_dir), "%s/inner", ext_build_dir);
	setenv("FABRICLAB_SOCKET_IFNAME", "lo", 0);
	return 0;
}

static inline void ext_choose_inner(const char *inner)
{
	char env[PATH_MAX + 80];

	snprintf(env, sizeof(env), "ext:%s/libnccl-net-%s.so", ext_inner_dir, inner);
	setenv("FABRICLAB_TRANSPORT", env, 1);
}

/* The inner's exported record (e.g. mimic_record), once fabriclab loaded it. */
static inline void *ext_inner_symbol(const char *inner, const char *name)
{
	char path[PATH_MAX + 64];
	void *lib;

	snprintf(path, sizeof(path), "%s/libnccl-net-%s.so", ext_inner_dir, inner);
	lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	return lib ? dlsym(lib, name) : NULL;
}

static inline int ext_run_case(const char *name, void (*fn)(void))
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fn();
		fflush(stdout);
		_exit(ext_failures ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		printf("not ok - %s%s\n", name, WIFSIGNALED(status) ? " (killed by a signal)" : "");
		return 1;
	}
	printf("ok - %s\n", name);
	return 0;
}

/* connect and accept called in turn until both are there, as NCCL's proxy does (v12) */
static inline int ext_pair_v12(void *ctx, int dev, void **sc, void **rc)
{
	unsigned char handle[FL_HANDLE_SIZE] = { 0 };
	struct fl_abi_dev_handle *sdc = NULL, *rdc = NULL;
	void *lc = NULL;
	int err = ncclNetPlugin_v12.listen(ctx, dev, handle, &lc);

	*sc = *rc = NULL;
	for (int i = 0; !err && (!*sc || !*rc) && i < 200000; i++) {
		if (!*sc)
			err = ncclNetPlugin_v12.connect(ctx, dev, handle, sc, &sdc);
		if (!err && !*rc)
			err = ncclNetPlugin_v12.accept(lc, rc, &rdc);
	}
	if (lc)
		ncclNetPlugin_v12.close_listen(lc);
	return err ? err : *sc && *rc ? 0 : -1;
}

/*
 * One transfer as NCCL's proxy moves it (v12): the receive posted first, of
 * `slot` bytes, *request preset to `preset` before each try (2.30.7
 * src/transport/net.cc:1589), the send of `bytes`; both tested until done, the
 * receive's sizes zero-filled before each test as NCCL does (:1617-1619).
 * *got: what the receive's test wrote. 0 when both completed.
 */
static inline int ext_transfer_v12(void *sc, void *rc, void *sbuf, void *smh, void *rbuf,
				   void *rmh, size_t bytes, size_t slot, void *preset, void *sph,
				   void *rph, int *got)
{
	void *sreq = NULL, *rreq = NULL, *data = rbuf;
	int tag = 1, sd = 0, rd = 0, ssz = 0, guard = 0;

	*got = -1;
	while (!rreq && guard++ < 100000) {
		rreq = preset;
		if (ncclNetPlugin_v12.irecv(rc, 1, &data, &slot, &tag, &rmh, &rph, &rreq))
			return -1;
	}
	while (!sreq && guard++ < 200000)
		if (ncclNetPlugin_v12.isend(sc, sbuf, bytes, tag, smh, sph, &sreq))
			return -1;
	while ((!sd || !rd) && sreq && rreq && guard++ < 2000000) {
		if (!rd) {
			*got = 0;
			if (ncclNetPlugin_v12.test(rreq, &rd, got))
				return -1;
		}
		if (!sd && ncclNetPlugin_v12.test(sreq, &sd, &ssz))
			return -1;
	}
	return sd && rd ? 0 : -1;
}

/* The final report: the one JSON file in dir. */
static inline json_t *ext_report(const char *dir)
{
	char path[2 * PATH_MAX] = "";
	json_error_t err;
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n > 5 && !strcmp(e->d_name + n - 5, ".json"))
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
	}
	if (d)
		closedir(d);
	return path[0] ? json_load_file(path, 0, &err) : NULL;
}

static inline json_t *ext_hop(json_t *report, const char *view)
{
	size_t i;
	json_t *hop;

	json_array_foreach(json_object_get(report, "hops"), i, hop)
		if (!strcmp(json_string_value(json_object_get(hop, "view")), view))
			return hop;
	return NULL;
}

static inline long long ext_int(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? json_integer_value(v) : -1;
}

static inline double ext_real(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : -1.0;
}

/* A fresh folder for one case's report, named after the case. */
static inline void ext_report_dir(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "%s/fabriclab-%s.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 name);
	if (!mkdtemp(dir))
		dir[0] = '\0';
	setenv("FABRICLAB_REPORT_DIR", dir, 1);
	setenv("FABRICLAB_REPORT", "brief", 1);
	setenv("FABRICLAB_REPORT_INTERVAL", "0", 1);
}

static inline void ext_remove_dir(const char *dir)
{
	char cmd[PATH_MAX + 16];

	if (!dir[0] || ext_failures)
		return; /* a failing case keeps its report to look at */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("  # could not remove %s\n", dir);
}

#endif
