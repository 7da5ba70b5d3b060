#include "bootstrap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/base/fl_types.h"
#include "boot_socket.h"
#include "shim_env.h"
#include "shim_error.h"
#include "shim_log.h"

#define BOOT_MAGIC 0x666c2d626f6f7431ULL /* "fl-boot1" */
#define BOOT_VERSION 1
#define HELLO_TIMEOUT_MS 5000

enum boot_op { OP_ALLGATHER = 1, OP_GATHER = 2 };

struct boot_hello {
	uint64_t magic;
	uint32_t version;
	int32_t rank;
	int32_t nranks;
	int32_t pad;
};

struct boot_ack {
	uint64_t magic;
	uint32_t version;
	int32_t status; /* 0 = welcome, else the reason in text */
	char text[112];
};

/* Precedes every message, so ranks that fell out of step are caught, not misread. */
struct boot_header {
	uint32_t op;
	uint32_t seq;
	uint64_t len;
};

static int inherited_listener = -1;

void shim_boot_inherit_listener(int fd)
{
	inherited_listener = fd;
}

static int read_int_env(const char *name, long min, long max, long *out)
{
	const char *v = shim_env(name);

	if (!v)
		return shim_fail(FL_ERR_USAGE, "%s is not set (expected a torchrun-style job: "
				 "RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)", name);
	return shim_env_long(name, 0, min, max, out);
}

int shim_boot_init_env(struct shim_boot *boot, int timeout_ms)
{
	const char *addr = shim_env("MASTER_ADDR");
	const char *port = shim_env("MASTER_PORT");
	long rank, nranks;
	int rc;

	rc = read_int_env("WORLD_SIZE", 1, 1 << 20, &nranks);
	if (!rc)
		rc = read_int_env("RANK", 0, nranks - 1, &rank);
	if (rc)
		return rc;
	if (nranks > 1 && (!addr || !port))
		return shim_fail(FL_ERR_USAGE, "%s is not set (needed with WORLD_SIZE=%ld)",
				 addr ? "MASTER_PORT" : "MASTER_ADDR", nranks);
	return shim_boot_init(boot, (int)rank, (int)nranks, addr, port, timeout_ms);
}

static void ack_send(int fd, int status, const char *text)
{
	struct boot_ack ack = { .magic = BOOT_MAGIC, .version = BOOT_VERSION, .status = status };

	snprintf(ack.text, sizeof(ack.text), "%s", text);
	shim_sock_send(fd, &ack, sizeof(ack), shim_deadline_ms(HELLO_TIMEOUT_MS));
}

/*
 * Reads a newcomer's hello. Returns FL_OK with *rank set, FL_IN_PROGRESS for a
 * stray connection to drop (not ours), or an error that ends the job.
 */
static int root_check_hello(struct shim_boot *boot, int fd, uint64_t deadline_ns, int *rank)
{
	uint64_t hello_deadline = shim_deadline_ms(HELLO_TIMEOUT_MS);
	struct boot_hello h;
	char why[112];

	if (shim_sock_recv(fd, &h, sizeof(h), hello_deadline < deadline_ns ? hello_deadline :
					      deadline_ns) || h.magic != BOOT_MAGIC) {
		SHIM_INFO(SHIM_LOG_BOOTSTRAP, "bootstrap: dropping a connection that is not a rank "
			  "of this job");
		return FL_IN_PROGRESS;
	}
	if (h.version != BOOT_VERSION)
		snprintf(why, sizeof(why), "bootstrap version %u, rank 0 speaks %u", h.version,
			 BOOT_VERSION);
	else if (h.nranks != boot->nranks)
		snprintf(why, sizeof(why), "WORLD_SIZE=%d, rank 0 has WORLD_SIZE=%d", h.nranks,
			 boot->nranks);
	else if (h.rank <= 0 || h.rank >= boot->nranks)
		snprintf(why, sizeof(why), "RANK=%d is out of range", h.rank);
	else if (boot->rank_fds[h.rank] >= 0)
		snprintf(why, sizeof(why), "RANK=%d joined twice", h.rank);
	else
		why[0] = '\0';
	if (why[0]) {
		ack_send(fd, 1, why);
		return shim_fail(FL_ERR_USAGE, "bootstrap: a peer was refused: %s", why);
	}
	*rank = h.rank;
	return FL_OK;
}

static int root_gather_ranks(struct shim_boot *boot, int listen_fd)
{
	uint64_t deadline = shim_deadline_ms(SHIM_BOOT_CONNECT_S * 1000);
	int joined = 1;

	while (joined < boot->nranks) {
		int fd, rank = -1, rc;

		rc = shim_sock_accept(listen_fd, deadline, &fd);
		if (rc)
			return shim_fail_context(rc, "bootstrap: only %d of %d ranks joined within "
						 "%d s: ", joined, boot->nranks,
						 SHIM_BOOT_CONNECT_S);
		rc = root_check_hello(boot, fd, deadline, &rank);
		if (rc) {
			close(fd);
			if (rc == FL_IN_PROGRESS)
				continue;
			return rc;
		}
		boot->rank_fds[rank] = fd;
		joined++;
	}
	for (int r = 1; r < boot->nranks; r++)
		ack_send(boot->rank_fds[r], 0, "welcome");
	return FL_OK;
}

static int root_init(struct shim_boot *boot, const char *addr, const char *port)
{
	int listen_fd = inherited_listener, rc;

	inherited_listener = -1;
	boot->rank_fds = malloc(sizeof(int) * (size_t)boot->nranks);
	if (!boot->rank_fds)
		return shim_fail(FL_ERR_SYSTEM, "bootstrap: out of memory");
	for (int r = 0; r < boot->nranks; r++)
		boot->rank_fds[r] = -1;
	if (boot->nranks == 1) {
		if (listen_fd >= 0)
			close(listen_fd);
		return FL_OK;
	}
	if (listen_fd < 0) {
		rc = shim_sock_listen(addr, port, &listen_fd);
		if (rc)
			return shim_fail_context(rc, "bootstrap: ");
	}
	rc = root_gather_ranks(boot, listen_fd);
	close(listen_fd);
	return rc;
}

static int peer_init(struct shim_boot *boot, const char *addr, const char *port)
{
	struct boot_hello h = { .magic = BOOT_MAGIC, .version = BOOT_VERSION, .rank = boot->rank,
				.nranks = boot->nranks };
	uint64_t deadline = shim_deadline_ms(SHIM_BOOT_CONNECT_S * 1000);
	struct boot_ack ack;
	int rc;

	if (inherited_listener >= 0)
		close(inherited_listener);
	inherited_listener = -1;
	rc = shim_sock_connect(addr, port, deadline, &boot->root_fd);
	if (rc)
		return shim_fail_context(rc, "bootstrap: rank 0 not reachable within %d s: ",
					 SHIM_BOOT_CONNECT_S);
	rc = shim_sock_send(boot->root_fd, &h, sizeof(h), deadline);
	/* Rank 0 answers once every rank joined, so wait as long as joining may take. */
	if (!rc)
		rc = shim_sock_recv(boot->root_fd, &ack, sizeof(ack),
				    shim_deadline_ms(2 * SHIM_BOOT_CONNECT_S * 1000));
	if (rc)
		return shim_fail_context(rc, "bootstrap: no welcome from rank 0 at %s:%s: ", addr,
					 port);
	if (ack.magic != BOOT_MAGIC || ack.status) {
		ack.text[sizeof(ack.text) - 1] = '\0';
		return shim_fail(FL_ERR_USAGE, "bootstrap: rank 0 at %s:%s refused us: %s", addr,
				 port,
				 ack.magic == BOOT_MAGIC ? ack.text : "not a fabriclab bootstrap");
	}
	return FL_OK;
}

int shim_boot_init(struct shim_boot *boot, int rank, int nranks, const char *addr,
		   const char *port, int timeout_ms)
{
	int rc;

	*boot = (struct shim_boot){ .rank = rank, .nranks = nranks, .timeout_ms = timeout_ms,
				    .root_fd = -1 };
	rc = rank == 0 ? root_init(boot, addr, port) : peer_init(boot, addr, port);
	if (rc) {
		shim_boot_close(boot);
		return rc;
	}
	SHIM_INFO(SHIM_LOG_BOOTSTRAP, "bootstrap: rank %d of %d joined through %s:%s", rank, nranks,
		  addr ? addr : "-", port ? port : "-");
	return FL_OK;
}

static int send_msg(int fd, uint32_t op, uint32_t seq, const void *buf, size_t len,
		    uint64_t deadline)
{
	struct boot_header h = { .op = op, .seq = seq, .len = len };
	int rc = shim_sock_send(fd, &h, sizeof(h), deadline);

	return rc ? rc : shim_sock_send(fd, buf, len, deadline);
}

static int recv_msg(int fd, uint32_t op, uint32_t seq, void *buf, size_t len, uint64_t deadline)
{
	struct boot_header h;
	int rc = shim_sock_recv(fd, &h, sizeof(h), deadline);

	if (rc)
		return rc;
	if (h.op != op || h.seq != seq || h.len != len)
		return shim_fail(FL_ERR_INTERNAL, "out of step: got operation %u #%u (%llu bytes), "
				 "expected %u #%u (%zu bytes)", h.op, h.seq,
				 (unsigned long long)h.len, op, seq, len);
	return shim_sock_recv(fd, buf, len, deadline);
}

static int root_collect(struct shim_boot *boot, uint32_t op, void *all, size_t size,
			uint64_t deadline)
{
	for (int r = 1; r < boot->nranks; r++) {
		int rc = recv_msg(boot->rank_fds[r], op, boot->seq, (char *)all + (size_t)r * size,
				  size, deadline);

		if (rc)
			return shim_fail_context(rc, "bootstrap: waiting for rank %d: ", r);
	}
	return FL_OK;
}

int shim_boot_allgather(struct shim_boot *boot, const void *mine, void *all, size_t size)
{
	uint64_t deadline = shim_deadline_ms(boot->timeout_ms);
	size_t total = size * (size_t)boot->nranks;
	uint32_t seq = ++boot->seq;
	int rc;

	memcpy((char *)all + (size_t)boot->rank * size, mine, size);
	if (boot->rank) {
		rc = send_msg(boot->root_fd, OP_ALLGATHER, seq, mine, size, deadline);
		if (!rc)
			rc = recv_msg(boot->root_fd, OP_ALLGATHER, seq, all, total, deadline);
		if (rc)
			return shim_fail_context(rc, "bootstrap: exchange with rank 0: ");
		return FL_OK;
	}
	rc = root_collect(boot, OP_ALLGATHER, all, size, deadline);
	for (int r = 1; !rc && r < boot->nranks; r++) {
		rc = send_msg(boot->rank_fds[r], OP_ALLGATHER, seq, all, total, deadline);
		if (rc)
			return shim_fail_context(rc, "bootstrap: answering rank %d: ", r);
	}
	return rc;
}

int shim_boot_barrier(struct shim_boot *boot)
{
	char one = 1, *all = malloc((size_t)boot->nranks);
	int rc;

	if (!all)
		return shim_fail(FL_ERR_SYSTEM, "bootstrap: out of memory");
	rc = shim_boot_allgather(boot, &one, all, 1);
	free(all);
	return rc;
}

int shim_boot_gather_doubles(struct shim_boot *boot, const double *mine, size_t n, double *all)
{
	uint64_t deadline = shim_deadline_ms(boot->timeout_ms);
	uint32_t seq = ++boot->seq;
	int rc;

	if (boot->rank) {
		rc = send_msg(boot->root_fd, OP_GATHER, seq, mine, n * sizeof(double), deadline);
		if (rc)
			return shim_fail_context(rc, "bootstrap: sending to rank 0: ");
		return FL_OK;
	}
	memcpy(all, mine, n * sizeof(double));
	return root_collect(boot, OP_GATHER, all, n * sizeof(double), deadline);
}

void shim_boot_close(struct shim_boot *boot)
{
	if (boot->root_fd >= 0)
		close(boot->root_fd);
	boot->root_fd = -1;
	if (boot->rank_fds) {
		for (int r = 1; r < boot->nranks; r++) {
			if (boot->rank_fds[r] >= 0)
				close(boot->rank_fds[r]);
		}
		free(boot->rank_fds);
		boot->rank_fds = NULL;
	}
}
