/*
 * The emulated GPU in the fabric's description (fabric/topo: "gpus", a node's own "gpus" over
 * them) and in fabric/gpu/fakecuda.c, which reads it:
 *  - the section survives writing and reading, a node's fields over the description's and the
 *    rest inherited; a misspelt field is refused with its path (gpus, nodes[1].gpus), a wrong
 *    type or value with the field's name;
 *  - the copy engine: a host<->device cudaMemcpy of N bytes at the description's rate R takes
 *    at least N / R (two copies one after the other: 2N / R, one engine); a node's own rate and
 *    FABRICLAB_FAKECUDA_COPY_RATE override it. Lower bounds only: a loaded machine only adds;
 *  - the GPU's reduction kernel adds what the GPU sees: a NIC write not yet flushed is not in
 *    its sum, a flushed one is (compute capability 8.0).
 * Each fakecuda case runs in a child of its own: the library reads its configuration once.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fabric/topo/topo_json.h"
#include "topo_refused.h"

#define COPY_BYTES (2u << 20)
#define RATE 40000000ull       /* bytes/s: 2 MiB takes 52 ms */
#define NODE1_RATE 10000000ull /* node1's own: 210 ms */

#define TWO_NODES(gpus1) "\"nodes\": [{\"name\": \"node0\", \"nics\": []}, " \
	"{\"name\": \"node1\", \"nics\": [], \"gpus\": " gpus1 "}]"

static void test_section_round_trip(void **state)
{
	static const char text[] = "{\"fabriclab_fabric\": 1, \"gpus\": {\"count\": 2, \"pci\": "
		"[\"0000:3b:00.0\", \"0000:5e:00.0\"], \"memory_bytes\": 1048576, \"protect\": true, "
		"\"compute_capability\": \"9.0\", \"copy_bytes_per_s\": 25000000000}, "
		TWO_NODES("{\"gdr\": false, \"dmabuf\": false, \"compute_capability\": \"8.0\", "
			  "\"count\": 1, \"copy_bytes_per_s\": 0}") "}";
	struct ft_topo t, back;
	struct ft_gpus g;
	char why[256], *written;

	(void)state;
	assert_int_equal(ft_parse_json(text, strlen(text), "t.json", &t, why, sizeof(why)), 0);
	written = ft_json_text(&t);
	assert_non_null(written);
	assert_int_equal(ft_parse_json(written, strlen(written), "back.json", &back, why,
				       sizeof(why)), 0);
	free(written);
	ft_node_gpus(&back, 0, &g); /* the description's, every field */
	assert_int_equal(g.count, 2);
	assert_int_equal(g.npci, 2);
	assert_string_equal(g.pci[1], "0000:5e:00.0");
	assert_true(g.gdr && g.dmabuf && g.protect);
	assert_int_equal(g.memory_bytes, 1048576);
	assert_int_equal(g.cc, 90);
	assert_int_equal(g.copy_bytes_per_s, 25000000000ull);
	ft_node_gpus(&back, 1, &g); /* node1's own over them */
	assert_int_equal(g.count, 1);
	assert_false(g.gdr || g.dmabuf);
	assert_int_equal(g.cc, 80);
	assert_int_equal(g.copy_bytes_per_s, 0);
	assert_true(g.protect && g.npci == 2 && g.memory_bytes == 1048576); /* inherited */
	ft_free(&back);
	ft_free(&t);
	/* nothing said: one GPU of 8.0 with GPUDirect and dma-buf, unpaced; none written back */
	ft_init(&t);
	assert_int_equal(ft_add_node(&t, "node0"), 0);
	ft_node_gpus(&t, 0, &g);
	assert_true(g.count == 1 && g.gdr && g.dmabuf && !g.protect && g.cc == 80);
	assert_true(g.copy_bytes_per_s == 0 && g.memory_bytes == 0 && g.npci == 0);
	written = ft_json_text(&t);
	assert_null(strstr(written, "gpus"));
	free(written);
	ft_free(&t);
}

static void test_section_errors(void **state)
{
	static const char *const bad[][2] = {
		{ "{\"fabriclab_fabric\": 1, \"gpus\": {\"cout\": 2}, \"nodes\": []}",
		  "t.json: gpus: unknown field \"cout\"" },
		{ "{\"fabriclab_fabric\": 1, " TWO_NODES("{\"copy_rate\": 5}") "}",
		  "t.json: nodes[1].gpus: unknown field \"copy_rate\"" },
		{ "{\"fabriclab_fabric\": 1, \"gpus\": {\"gdr\": 1}, \"nodes\": []}",
		  "gpus: gdr: expected true or false" },
		{ "{\"fabriclab_fabric\": 1, " TWO_NODES("{\"count\": 17}") "}",
		  "nodes[1].gpus: count: expected an integer from 0 to 16" },
		{ "{\"fabriclab_fabric\": 1, " TWO_NODES("{\"copy_bytes_per_s\": \"1GB\"}") "}",
		  "nodes[1].gpus: copy_bytes_per_s: expected an integer from 0 to" },
		{ "{\"fabriclab_fabric\": 1, \"gpus\": {\"compute_capability\": 9.0}, \"nodes\": []}",
		  "gpus: compute_capability: expected a string like \"9.0\"" },
		{ "{\"fabriclab_fabric\": 1, \"gpus\": {\"compute_capability\": \"nine\"}, "
		  "\"nodes\": []}", "gpus: compute_capability: \"nine\": expected MAJOR.MINOR" },
		{ "{\"fabriclab_fabric\": 1, \"gpus\": {\"pci\": [\"0000:3b:00.0\", \"3b:00\"]}, "
		  "\"nodes\": []}", "gpus: pci[1]: expected a PCI bus id like \"0000:3b:00.0\"" },
		{ "{\"fabriclab_fabric\": 1, \"gpus\": [1], \"nodes\": []}",
		  "gpus: expected an object" },
	};

	(void)state;
	assert_refused(bad, sizeof(bad) / sizeof(bad[0]));
}

/* ---- fakecuda, loaded in a child as the shim loads it ---- */

enum { H2D = 1, D2H = 2 };

struct cuda {
	int (*malloc_device)(void **ptr, size_t size);
	int (*copy)(void *dst, const void *src, size_t size, int kind);
	int (*sum)(float *dst, const float *mine, const float *theirs, size_t n);
	void (*nic_wrote)(const void *addr, unsigned long long ino, size_t off, size_t len);
	void (*nic_read)(const void *addr, unsigned long long ino, size_t off, size_t len);
};

/* <build>/tests/X -> <build>/libfabriclab-fakecuda.so */
static int load(struct cuda *cu)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void *so;

	exe[len > 0 ? len : 0] = '\0';
	snprintf(path, sizeof(path), "%s/../libfabriclab-fakecuda.so", dirname(exe));
	so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!so) {
		fprintf(stderr, "%s\n", dlerror());
		return -1;
	}
	*(void **)&cu->malloc_device = dlsym(so, "cudaMalloc");
	*(void **)&cu->copy = dlsym(so, "cudaMemcpy");
	*(void **)&cu->sum = dlsym(so, "fakecudaKernelSum");
	*(void **)&cu->nic_wrote = dlsym(so, "fakecudaNicWrote");
	*(void **)&cu->nic_read = dlsym(so, "fakecudaNicRead");
	return cu->malloc_device && cu->copy && cu->sum && cu->nic_wrote && cu->nic_read ? 0 : -1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The description every case reads: node0 copies at RATE, node1 at its own NODE1_RATE. */
static void describe(char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "/tmp/test_fabric_gpu.%d.json", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "{\"fabriclab_fabric\": 1, \"gpus\": {\"copy_bytes_per_s\": %llu}, "
		TWO_NODES("{\"copy_bytes_per_s\": %llu}") "}\n", RATE, NODE1_RATE);
	assert_int_equal(fclose(f), 0);
}

/* Exit status of a child: 0, or which check failed. */
static int copies_take(unsigned long long rate)
{
	double want = (double)COPY_BYTES / (double)rate, t0, t1, t2, t3;
	char *host = calloc(1, COPY_BYTES);
	struct cuda cu;
	void *dev;

	if (!host || load(&cu) || cu.malloc_device(&dev, COPY_BYTES))
		return 1;
	t0 = now_s();
	if (cu.copy(dev, host, COPY_BYTES, H2D))
		return 2;
	t1 = now_s();
	if (cu.copy(host, dev, COPY_BYTES, D2H))
		return 3;
	t2 = now_s();
	/* one engine each way: the second half waits for the first */
	if (cu.copy(dev, host, COPY_BYTES / 2, H2D) || cu.copy(dev, host, COPY_BYTES / 2, H2D))
		return 4;
	t3 = now_s();
	fprintf(stderr, "rate %llu: %.3f %.3f %.3f s, each at least %.3f s\n", rate, t1 - t0,
		t2 - t1, t3 - t2, want);
	return t1 - t0 < want ? 5 : t2 - t1 < want ? 6 : t3 - t2 < want ? 7 : 0;
}

static int in_child(const char *node, const char *rate_env, unsigned long long rate)
{
	char path[64];
	int status = -1;
	pid_t pid;

	describe(path, sizeof(path));
	pid = fork();
	if (pid == 0) {
		unsetenv("FABRICLAB_NODE_NAME");
		setenv("FABRICLAB_FABRIC", path, 1);
		setenv("FABRICLAB_FABRIC_NODE", node, 1);
		if (rate_env)
			setenv("FABRICLAB_FAKECUDA_COPY_RATE", rate_env, 1);
		_exit(copies_take(rate));
	}
	waitpid(pid, &status, 0);
	unlink(path);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

static void test_copy_engine_paces(void **state)
{
	(void)state;
	assert_int_equal(in_child("node0", NULL, RATE), 0);
	assert_int_equal(in_child("node1", NULL, NODE1_RATE), 0);
	/* the variable over the description (node0's 40 MB/s) */
	assert_int_equal(in_child("node0", "5000000", 5000000), 0);
	/* a variable that is no integer is ignored (said on stderr), not read as 0: unpaced */
	assert_int_equal(in_child("node0", "fast", RATE), 0);
}

/* dst = mine + theirs, where theirs took a NIC write: unflushed, then flushed. */
static int kernel_sums(void)
{
	enum { N = 1024 };
	static float host[N], got[N];
	struct cuda cu;
	float *mine, *theirs, *dst;

	if (load(&cu) || cu.malloc_device((void **)&mine, sizeof(host)) ||
	    cu.malloc_device((void **)&theirs, sizeof(host)) ||
	    cu.malloc_device((void **)&dst, sizeof(host)))
		return 1;
	for (int i = 0; i < N; i++)
		host[i] = (float)i;
	if (cu.copy(mine, host, sizeof(host), H2D) || cu.copy(theirs, host, sizeof(host), H2D))
		return 2;
	theirs[0] = 1000.0f; /* the NIC's write (memory left readable: no protect) */
	cu.nic_wrote(theirs, 0, 0, sizeof(float));
	if (cu.sum(dst, mine, theirs, N) || cu.copy(got, dst, sizeof(got), D2H))
		return 3;
	if (got[0] != 0.0f || got[N - 1] != 2.0f * (N - 1))
		return 4; /* the GPU saw the unflushed write */
	cu.nic_read(theirs, 0, 0, sizeof(float));
	if (cu.sum(dst, mine, theirs, N) || cu.copy(got, dst, sizeof(got), D2H))
		return 5;
	if (got[0] != 1000.0f || got[7] != 14.0f)
		return 6;
	return cu.sum(dst, mine, host, N) == 0 ? 7 : 0; /* host memory is no kernel's operand */
}

static void test_kernel_sums_what_the_gpu_sees(void **state)
{
	int status = -1;
	pid_t pid;

	(void)state;
	pid = fork();
	if (pid == 0) {
		unsetenv("FABRICLAB_FABRIC");
		unsetenv("FABRICLAB_FAKECUDA_PROTECT");
		unsetenv("FABRICLAB_FAKECUDA_CC");
		_exit(kernel_sums());
	}
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_section_round_trip),
		cmocka_unit_test(test_section_errors),
		cmocka_unit_test(test_copy_engine_paces),
		cmocka_unit_test(test_kernel_sums_what_the_gpu_sees),
	};

	/* against a user's shell: the description alone says what the GPUs are */
	unsetenv("FABRICLAB_FAKECUDA_COPY_RATE");
	unsetenv("FABRICLAB_FAKECUDA_DEVICES");
	unsetenv("FABRICLAB_FAKECUDA_LIMIT");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
