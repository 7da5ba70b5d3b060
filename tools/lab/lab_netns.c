/*
 * `fabriclab lab --netns`: every node in a network namespace of its own, its
 * eth0 one end of a veth pair whose other end sits on a bridge in a hub
 * namespace. With --rails K a node has eth0..eth<K-1>, eth<k> on bridge br<k>
 * (rail k's leaf switch, subnet 198.18.<k>.0/24), and its K ranks share the
 * namespace. Only namespaces this run created are touched: the host's
 * interfaces and routes never change, and nothing can leave the namespaces
 * (no route out). Names carry the launcher's pid, so a setup left by a killed
 * run is recognised and removed by the next one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "shim/boot_socket.h"
#include "shim/shim.h"
#include "plugin/base/sysfs_read.h"
#include "lab.h"

#define NETNS_DIR "/run/netns"
#define PREFIX "fabriclab-"
#define BATCH_LEN 4096

void lab_netns_name(const struct lab_opts *o, int rank, char *buf, size_t len)
{
	if (rank < 0)
		snprintf(buf, len, PREFIX "%s-hub", o->run_id);
	else
		snprintf(buf, len, PREFIX "%s-node%d", o->run_id, rank);
}

/* A benchmarking range (RFC 2544), used only inside the namespaces. */
void lab_netns_addr(int rank, char *buf, size_t len)
{
	snprintf(buf, len, "198.18.0.%d", rank + 1);
}

/* The run that owns a name is alive when its pid runs a fabriclab. */
static bool owner_alive(const char *name)
{
	char comm[32];
	long pid = strtol(name + strlen(PREFIX), NULL, 10);

	if (pid <= 0 || fl_read_first_line(comm, sizeof(comm), "/proc/%ld/comm", pid))
		return false;
	return !strncmp(comm, "fabriclab", strlen("fabriclab"));
}

static int delete_netns(const char *name, char *why, size_t why_len)
{
	const char *argv[] = { "ip", "netns", "delete", name, NULL };

	return lab_cmd(argv, NULL, why, why_len);
}

int lab_netns_remove_stale(FILE *out)
{
	DIR *d = opendir(NETNS_DIR);
	struct dirent *e;
	char why[512];
	int removed = 0, failed = 0;

	if (!d)
		return 0; /* no namespace was ever named on this machine */
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, PREFIX, strlen(PREFIX)) || owner_alive(e->d_name))
			continue;
		if (delete_netns(e->d_name, why, sizeof(why))) {
			fprintf(stderr, "fabriclab lab: cannot remove stale %s: %s\n", e->d_name,
				why);
			failed++;
			continue;
		}
		removed++;
		fprintf(out,
			"fabriclab lab: removed stale network namespace %s (its run is gone)\n",
			e->d_name);
	}
	closedir(d);
	return failed ? -1 : removed;
}

static int ip_batch(const char *netns, const char *batch, char *why, size_t why_len)
{
	const char *with_ns[] = { "ip", "-n", netns, "-batch", "-", NULL };
	const char *plain[] = { "ip", "-batch", "-", NULL };

	return lab_cmd(netns ? with_ns : plain, batch, why, why_len);
}

static int add_namespaces(const struct lab_opts *o, char *why, size_t why_len)
{
	char batch[BATCH_LEN], name[96];
	size_t used = 0;

	for (int r = -1; r < o->nodes; r++) {
		lab_netns_name(o, r, name, sizeof(name));
		used += (size_t)snprintf(batch + used, sizeof(batch) - used, "netns add %s\n",
					 name);
	}
	return ip_batch(NULL, batch, why, why_len);
}

/* Node n's end of rail k on the hub: veth<n> for rail 0 (as --tc knows it), veth<n>r<k> else. */
static void hub_port(int node, int rail, char *buf, size_t len)
{
	if (rail)
		snprintf(buf, len, "veth%dr%d", node, rail);
	else
		snprintf(buf, len, "veth%d", node);
}

static int setup_node(const struct lab_opts *o, int node, char *why, size_t why_len)
{
	char batch[BATCH_LEN], ns[96], hub[96], port[32];
	size_t used;

	lab_netns_name(o, node, ns, sizeof(ns));
	lab_netns_name(o, -1, hub, sizeof(hub));
	used = (size_t)snprintf(batch, sizeof(batch), "link set lo up\n");
	for (int k = 0; k < o->rails && used < sizeof(batch); k++) {
		hub_port(node, k, port, sizeof(port));
		used += (size_t)snprintf(batch + used, sizeof(batch) - used,
					 "link add eth%d type veth peer name %s netns %s\n"
					 "addr add 198.18.%d.%d/24 dev eth%d\n"
					 "link set eth%d up\n",
					 k, port, hub, k, node + 1, k, k);
	}
	return ip_batch(ns, batch, why, why_len);
}

static int setup_hub(const struct lab_opts *o, char *why, size_t why_len)
{
	char batch[BATCH_LEN], hub[96], port[32];
	size_t used;

	lab_netns_name(o, -1, hub, sizeof(hub));
	used = (size_t)snprintf(batch, sizeof(batch), "link set lo up\n");
	for (int k = 0; k < o->rails && used < sizeof(batch); k++)
		used += (size_t)snprintf(batch + used, sizeof(batch) - used,
					 "link add br%d type bridge\nlink set br%d up\n", k, k);
	for (int r = 0; r < o->nodes; r++) {
		for (int k = 0; k < o->rails && used < sizeof(batch); k++) {
			hub_port(r, k, port, sizeof(port));
			used += (size_t)snprintf(batch + used, sizeof(batch) - used,
						 "link set %s master br%d\nlink set %s up\n",
						 port, k, port);
		}
	}
	return ip_batch(hub, batch, why, why_len);
}

int lab_netns_create(const struct lab_opts *o, char *why, size_t why_len)
{
	int rc = add_namespaces(o, why, why_len);

	for (int r = 0; !rc && r < o->nodes; r++) {
		rc = setup_node(o, r, why, why_len);
		if (!rc && lab_stop) {
			snprintf(why, why_len, "interrupted");
			rc = -1;
		}
	}
	if (!rc)
		rc = setup_hub(o, why, why_len);
	return rc;
}

void lab_netns_destroy(const struct lab_opts *o)
{
	char name[96], path[160], why[512];

	for (int r = -1; r < o->nodes; r++) {
		lab_netns_name(o, r, name, sizeof(name));
		snprintf(path, sizeof(path), NETNS_DIR "/%s", name);
		if (access(path, F_OK))
			continue;
		if (delete_netns(name, why, sizeof(why)))
			fprintf(stderr, "fabriclab lab: cleanup: %s\n", why);
	}
}

static int open_netns(const char *name, int *fd)
{
	char path[160];

	snprintf(path, sizeof(path), NETNS_DIR "/%s", name);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? -1 : 0;
}

/* What `ip netns exec` does too: a private mount of /sys, so the plugin reads eth0 there. */
static int own_sysfs(void)
{
	if (unshare(CLONE_NEWNS))
		return shim_fail(FL_ERR_SYSTEM, "unshare(CLONE_NEWNS): %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL))
		return shim_fail(FL_ERR_SYSTEM, "making / a slave mount: %s", strerror(errno));
	if (umount2("/sys", MNT_DETACH) && errno != EINVAL)
		return shim_fail(FL_ERR_SYSTEM, "umount /sys: %s", strerror(errno));
	if (mount("sysfs", "/sys", "sysfs", 0, NULL))
		return shim_fail(FL_ERR_SYSTEM, "mount sysfs on /sys: %s", strerror(errno));
	return FL_OK;
}

int lab_netns_enter(int rank, void *opts)
{
	const struct lab_opts *o = opts;
	char name[96];
	int fd, rc;

	lab_netns_name(o, lab_rank_node(o, rank), name, sizeof(name));
	if (open_netns(name, &fd))
		return shim_fail(FL_ERR_SYSTEM, "network namespace %s: %s", name, strerror(errno));
	rc = setns(fd, CLONE_NEWNET);
	close(fd);
	if (rc)
		return shim_fail(FL_ERR_SYSTEM, "entering network namespace %s: %s", name,
				 strerror(errno));
	return own_sysfs();
}

int lab_netns_listen(const struct lab_opts *o, int *fd, char *addr, size_t addr_len, char *why,
		     size_t why_len)
{
	int home, there, rc;
	char name[96];

	lab_netns_name(o, 0, name, sizeof(name));
	lab_netns_addr(0, addr, addr_len);
	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0 || open_netns(name, &there)) {
		snprintf(why, why_len, "opening network namespaces: %s", strerror(errno));
		if (home >= 0)
			close(home);
		return -1;
	}
	rc = setns(there, CLONE_NEWNET);
	if (!rc) {
		/* The socket stays in rank 0's namespace after we return to ours. */
		rc = shim_sock_listen(addr, "0", fd);
		if (rc)
			snprintf(why, why_len, "bootstrap socket in %s: %s", name,
				 shim_error_text());
		if (setns(home, CLONE_NEWNET)) {
			snprintf(why, why_len, "returning to our network namespace: %s",
				 strerror(errno));
			rc = -1;
		}
	} else {
		snprintf(why, why_len, "entering %s: %s", name, strerror(errno));
	}
	close(home);
	close(there);
	return rc ? -1 : 0;
}
