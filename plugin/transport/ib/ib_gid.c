#include "ib_gid.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "base/sysfs_read.h"

static int is_v4_mapped(const uint8_t *g)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g, prefix, sizeof(prefix));
}

static int is_link_local(const uint8_t *g)
{
	return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

/* Higher is better; 0 = not usable. */
static int score(const struct ib_gid_info *g)
{
	int s;

	if (!g->valid)
		return 0;
	s = g->kind == IB_GID_ROCE_V2 ? 8 : g->kind == IB_GID_ROCE_V1 ? 4 : 2;
	if (is_v4_mapped(g->raw))
		s += 2;
	else if (!is_link_local(g->raw))
		s += 1;
	return s;
}

int ib_gid_pick(const struct ib_gid_info *gids, int n)
{
	int best = -1, best_score = 0;

	for (int i = 0; i < n; i++) {
		int s = score(&gids[i]);

		if (s > best_score) {
			best = i;
			best_score = s;
		}
	}
	return best;
}

enum ib_gid_kind ib_gid_kind_from_text(const char *text)
{
	if (!strncmp(text, "RoCE v2", 7))
		return IB_GID_ROCE_V2;
	if (!strncmp(text, "IB/RoCE v1", 10) || !strncmp(text, "RoCE v1", 7))
		return IB_GID_ROCE_V1;
	if (!strncmp(text, "IB", 2))
		return IB_GID_IB;
	return IB_GID_UNKNOWN;
}

const char *ib_gid_kind_name(enum ib_gid_kind kind)
{
	switch (kind) {
	case IB_GID_IB: return "IB";
	case IB_GID_ROCE_V1: return "RoCE v1";
	case IB_GID_ROCE_V2: return "RoCE v2";
	default: return "unknown";
	}
}

enum ib_gid_kind ib_gid_kind_from_sysfs(const char *root, const char *dev, int port, int index)
{
	char text[32];

	fl_read_first_line(text, sizeof(text), "%s/class/infiniband/%s/ports/%d/gid_attrs/types/%d",
			   root, dev, port, index);
	return ib_gid_kind_from_text(text);
}

void ib_gid_format(const uint8_t raw[16], char *out, unsigned len)
{
	if (!inet_ntop(AF_INET6, raw, out, len))
		snprintf(out, len, "?");
}
