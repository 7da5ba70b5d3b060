/*
 * What sysfs does not show about an Ethernet interface: its ethtool statistics
 * (pause and discard counters) and the link modes it supports (the highest
 * speed it could train to). The real /sys is paired with the SIOCETHTOOL
 * ioctl on the same interface; a fixture tree brings text files written the
 * way `ethtool -S <if>` and `ethtool <if>` print them.
 */
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/file_read.h"
#include "port_info.h"

#define MAX_STRINGS 8192 /* a NIC with more statistics than this is not read */

bool fl_sysfs_is_real(const char *root)
{
	return !strcmp(root, "/sys") || !strcmp(root, "/sys/");
}

static int ethtool_ioctl(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

/* Number of strings in a string set, 0 when the driver has none. */
static uint32_t string_count(int fd, const char *ifname, int set)
{
	struct {
		struct ethtool_sset_info hdr;
		uint32_t len;
	} info;

	memset(&info, 0, sizeof(info));
	info.hdr.cmd = ETHTOOL_GSSET_INFO;
	info.hdr.sset_mask = 1ULL << set;
	if (ethtool_ioctl(fd, ifname, &info) || !(info.hdr.sset_mask & (1ULL << set)))
		return 0;
	return info.len > MAX_STRINGS ? 0 : info.len;
}

/* The names of a string set, ETH_GSTRING_LEN bytes each; NULL on failure. */
static struct ethtool_gstrings *strings_of(int fd, const char *ifname, int set, uint32_t n)
{
	struct ethtool_gstrings *g = calloc(1, sizeof(*g) + (size_t)n * ETH_GSTRING_LEN);

	if (!g)
		return NULL;
	g->cmd = ETHTOOL_GSTRINGS;
	g->string_set = (uint32_t)set;
	g->len = n;
	if (ethtool_ioctl(fd, ifname, g) || g->len != n) {
		free(g);
		return NULL;
	}
	return g;
}

static const char *string_at(const struct ethtool_gstrings *g, uint32_t i, char *buf)
{
	memcpy(buf, g->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
	buf[ETH_GSTRING_LEN] = '\0';
	return buf;
}

static void add_ethtool(struct fl_counter_set *s, const char *stat, uint64_t value)
{
	char name[FL_COUNTER_NAME_LEN];
	int severity = fl_ethtool_counter_severity(stat);

	if (severity < 0)
		return;
	snprintf(name, sizeof(name), "ethtool/%s", stat);
	fl_counter_add(s, name, value, 64, false, severity);
}

static void ioctl_stats(const char *ifname, struct fl_counter_set *s)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ethtool_gstrings *names = NULL;
	struct ethtool_stats *stats = NULL;
	char buf[ETH_GSTRING_LEN + 1];
	uint32_t n;

	if (fd < 0)
		return;
	n = string_count(fd, ifname, ETH_SS_STATS);
	if (n)
		names = strings_of(fd, ifname, ETH_SS_STATS, n);
	if (names)
		stats = calloc(1, sizeof(*stats) + (size_t)n * sizeof(uint64_t));
	if (stats) {
		stats->cmd = ETHTOOL_GSTATS;
		stats->n_stats = n;
		if (!ethtool_ioctl(fd, ifname, stats) && stats->n_stats == n)
			for (uint32_t i = 0; i < n; i++)
				add_ethtool(s, string_at(names, i, buf), stats->data[i]);
	}
	free(stats);
	free(names);
	close(fd);
}

static FILE *fixture_file(const char *root, const char *ifname, const char *file)
{
	char path[PATH_MAX + 64];

	const char *why;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/class/net/%s/%s", root, ifname, file);
	fd = fl_open_regular(path, &why);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/* "     rx_pause_ctrl_phy: 12" lines; the "NIC statistics:" header has no number. */
static void fixture_stats(const char *root, const char *ifname, struct fl_counter_set *s)
{
	FILE *f = fixture_file(root, ifname, "ethtool-S.txt");
	char line[256], stat[ETH_GSTRING_LEN + 1];
	unsigned long long v;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %32[^: ]: %llu", stat, &v) == 2)
			add_ethtool(s, stat, v);
	fclose(f);
}

void fl_ethtool_stats(const char *root, const char *ifname, struct fl_counter_set *s)
{
	if (fl_sysfs_is_real(root))
		ioctl_stats(ifname, s);
	else
		fixture_stats(root, ifname, s);
}

/* The supported-modes bitmap: the kernel says how many words it needs on the first call. */
static struct ethtool_link_settings *link_settings(int fd, const char *ifname)
{
	struct ethtool_link_settings *ls = calloc(1, sizeof(*ls) + 3 * 128 * sizeof(uint32_t));
	int8_t words;

	if (!ls)
		return NULL;
	ls->cmd = ETHTOOL_GLINKSETTINGS;
	if (ethtool_ioctl(fd, ifname, ls) || ls->link_mode_masks_nwords >= 0) {
		free(ls);
		return NULL;
	}
	words = (int8_t)-ls->link_mode_masks_nwords;
	memset(ls, 0, sizeof(*ls));
	ls->cmd = ETHTOOL_GLINKSETTINGS;
	ls->link_mode_masks_nwords = words;
	if (words <= 0 || ethtool_ioctl(fd, ifname, ls) || ls->link_mode_masks_nwords != words) {
		free(ls);
		return NULL;
	}
	return ls;
}

static long ioctl_max_mbps(const char *ifname)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ethtool_link_settings *ls = NULL;
	struct ethtool_gstrings *names = NULL;
	char buf[ETH_GSTRING_LEN + 1];
	long best = 0;
	uint32_t n = 0;

	if (fd < 0)
		return 0;
	ls = link_settings(fd, ifname);
	if (ls)
		n = string_count(fd, ifname, ETH_SS_LINK_MODES);
	if (n)
		names = strings_of(fd, ifname, ETH_SS_LINK_MODES, n);
	for (uint32_t bit = 0; names && bit < n && bit < 32u * ls->link_mode_masks_nwords; bit++) {
		/* supported modes come first in link_mode_masks */
		long mbps = fl_link_mode_mbps(string_at(names, bit, buf));

		if ((ls->link_mode_masks[bit / 32] >> (bit % 32)) & 1 && mbps > best)
			best = mbps;
	}
	free(names);
	free(ls);
	close(fd);
	return best;
}

/* The words after "Supported link modes:", up to the next "Name:" line. */
static long fixture_max_mbps(const char *root, const char *ifname)
{
	FILE *f = fixture_file(root, ifname, "ethtool.txt");
	char line[512];
	bool in_modes = false;
	long best = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *words = line, *colon = strchr(line, ':'), *save = NULL;

		if (colon && !strncmp(line + strspn(line, " \t"), "Supported link modes:", 21)) {
			in_modes = true;
			words = colon + 1;
		} else if (colon) {
			in_modes = false;
		}
		if (!in_modes)
			continue;
		for (char *w = strtok_r(words, " \t\n", &save); w;
		     w = strtok_r(NULL, " \t\n", &save))
			if (fl_link_mode_mbps(w) > best)
				best = fl_link_mode_mbps(w);
	}
	fclose(f);
	return best;
}

long fl_ethtool_max_mbps(const char *root, const char *ifname)
{
	return fl_sysfs_is_real(root) ? ioctl_max_mbps(ifname) : fixture_max_mbps(root, ifname);
}
