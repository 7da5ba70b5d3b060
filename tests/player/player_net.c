/* The net role beside the player (player_net.h). */
#include "player_net.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugin/entry/net_abi.h"
#include "plugin/base/fl_types.h"


/* One rank's net-role communicator: a listener and a ring connection per channel. */
struct net_rank {
	const struct player_net *cfg;
	uint64_t hash;
	int rank;
	void *ctx;
	void *listen[PLAYER_NET_MAX_CHANNELS], *send[PLAYER_NET_MAX_CHANNELS];
	void *recv[PLAYER_NET_MAX_CHANNELS];
	char handle[PLAYER_NET_MAX_CHANNELS][FL_HANDLE_SIZE];
	int have_handle[PLAYER_NET_MAX_CHANNELS];
};

static void handle_path(const struct net_rank *n, char *buf, size_t len, int rank, int channel)
{
	snprintf(buf, len, "%s/%016llx-%d-%d", n->cfg->handles, (unsigned long long)n->hash, rank,
		 channel);
}

static int put_handle(const struct net_rank *n, int channel, const char *h)
{
	char path[400], tmp[420];
	FILE *f;
	int ok;

	handle_path(n, path, sizeof(path), n->rank, channel);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (!f)
		return -1;
	ok = fwrite(h, FL_HANDLE_SIZE, 1, f) == 1;
	ok &= fclose(f) == 0;
	return ok && !rename(tmp, path) ? 0 : -1;
}

static int get_handle(const struct net_rank *n, int rank, int channel, char *h)
{
	char path[400];
	FILE *f;
	int ok;

	handle_path(n, path, sizeof(path), rank, channel);
	f = fopen(path, "rb");
	if (!f)
		return 0;
	ok = fread(h, FL_HANDLE_SIZE, 1, f) == 1;
	fclose(f);
	return ok;
}

/* player_net.force_order (player_net.h). */
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t order_cond = PTHREAD_COND_INITIALIZER;
static int even_net_done, odd_prof_done; /* per process: each node is a fork */

static void order_wait(const int *flag)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10; /* a lost wake-up costs time, never a hang */
	pthread_mutex_lock(&order_lock);
	while (!*flag && pthread_cond_timedwait(&order_cond, &order_lock, &until) == 0)
		;
	pthread_mutex_unlock(&order_lock);
}

static void order_set(int *flag)
{
	pthread_mutex_lock(&order_lock);
	*flag = 1;
	pthread_cond_broadcast(&order_cond);
	pthread_mutex_unlock(&order_lock);
}

/* NCCL's commAlloc: the net role's init, on the thread the profiler's init follows on. */
static int net_before_init(void *arg, uint64_t hash, int rank, void **state)
{
	const struct player_net *cfg = arg;
	struct net_rank *n = calloc(1, sizeof(*n));
	int rc;

	*state = n;
	if (!n)
		return -1;
	n->cfg = cfg;
	n->hash = hash;
	n->rank = rank;
	if (cfg->force_order && (rank & 1))
		order_wait(&even_net_done);
	rc = ncclNetPlugin_v12.init(&n->ctx, hash, NULL, NULL, NULL);
	if (cfg->force_order && !(rank & 1)) {
		order_set(&even_net_done);
		order_wait(&odd_prof_done);
	}
	return rc;
}

static int all_up(const struct net_rank *n)
{
	for (int c = 0; c < n->cfg->nchannels; c++)
		if (!n->send[c] || !n->recv[c])
			return 0;
	return 1;
}

/* NCCL's ring connect: listen for the previous rank, connect to the next, per channel. */
static int net_after_init(void *state)
{
	struct net_rank *n = state;
	struct fl_abi_dev_handle *dev = NULL;
	time_t deadline = time(NULL) + 30;
	int next = (n->rank + 1) % n->cfg->nranks, channels = n->cfg->nchannels, rc = 0;

	if (n->cfg->force_order && (n->rank & 1))
		order_set(&odd_prof_done); /* its profiler init has run */

	for (int c = 0; !rc && c < channels; c++) {
		char h[FL_HANDLE_SIZE] = { 0 };

		rc = ncclNetPlugin_v12.listen(n->ctx, 0, h, &n->listen[c]);
		rc = rc ? rc : put_handle(n, c, h);
	}
	while (!rc && !all_up(n) && time(NULL) < deadline) {
		for (int c = 0; !rc && c < channels; c++) {
			if (!n->have_handle[c])
				n->have_handle[c] = get_handle(n, next, c, n->handle[c]);
			if (!n->send[c] && n->have_handle[c])
				rc = ncclNetPlugin_v12.connect(n->ctx, 0, n->handle[c], &n->send[c],
							       &dev);
			if (!rc && !n->recv[c])
				rc = ncclNetPlugin_v12.accept(n->listen[c], &n->recv[c], &dev);
		}
		usleep(1000);
	}
	return rc ? rc : all_up(n) ? 0 : -1;
}

static int net_after_finalize(void *state)
{
	struct net_rank *n = state;
	int rc = 0;

	for (int c = 0; c < n->cfg->nchannels; c++) {
		rc |= n->send[c] ? ncclNetPlugin_v12.close_send(n->send[c]) : 0;
		rc |= n->recv[c] ? ncclNetPlugin_v12.close_recv(n->recv[c]) : 0;
		rc |= n->listen[c] ? ncclNetPlugin_v12.close_listen(n->listen[c]) : 0;
	}
	rc |= n->ctx ? ncclNetPlugin_v12.finalize(n->ctx) : 0;
	free(n);
	return rc;
}

void player_net_init(struct player_net *n, const char *handles_dir, int nranks, int nchannels,
		     int force_order)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->handles, sizeof(n->handles), "%s", handles_dir);
	n->nranks = nranks;
	n->nchannels = nchannels < PLAYER_NET_MAX_CHANNELS ? nchannels : PLAYER_NET_MAX_CHANNELS;
	n->force_order = force_order;
	n->hooks = (struct player_rank_hooks){ net_before_init, net_after_init, net_after_finalize,
					       n };
}

int player_net_device_name(char *buf, size_t len)
{
	struct fl_abi_props_v12 props;
	int ndev = 0, fds[2], status;
	ssize_t got;
	pid_t pid;

	if (len < 2 || pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		void *ctx = NULL;
		int ok = !ncclNetPlugin_v12.init(&ctx, 1, NULL, NULL, NULL) &&
			 !ncclNetPlugin_v12.devices(&ndev) && ndev > 0 &&
			 !ncclNetPlugin_v12.get_properties(0, &props);

		if (ok && write(fds[1], props.name, strlen(props.name)) < 0)
			ok = 0;
		_exit(ok ? 0 : 1);
	}
	close(fds[1]);
	memset(buf, 0, len);
	got = pid > 0 ? read(fds[0], buf, len - 1) : -1;
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || got <= 0)
		return -1;
	return 0;
}
