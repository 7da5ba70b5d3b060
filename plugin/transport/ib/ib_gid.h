/*
 * Which GID a RoCE port's traffic uses. Like NCCL: RoCE v2 first (it routes
 * over IP), an IPv4-mapped address before an IPv6 one, a routable address
 * before a link-local one; NCCL_IB_GID_INDEX overrides. InfiniBand ports
 * address by LID and use GID 0 for the GRH.
 */
#ifndef FL_IB_GID_H
#define FL_IB_GID_H

#include <stdint.h>

#define IB_GID_MAX 128 /* entries examined per port */

enum ib_gid_kind { IB_GID_UNKNOWN = 0, IB_GID_IB, IB_GID_ROCE_V1, IB_GID_ROCE_V2 };

struct ib_gid_info {
	uint8_t raw[16];
	enum ib_gid_kind kind;
	int valid; /* non-zero address read without error */
};

/* Index of the best entry of gids[0..n); -1 when none is usable. */
int ib_gid_pick(const struct ib_gid_info *gids, int n);
/* "RoCE v2" / "IB/RoCE v1" as sysfs gid_attrs/types writes them. */
enum ib_gid_kind ib_gid_kind_from_text(const char *text);
const char *ib_gid_kind_name(enum ib_gid_kind kind);
/* Reads <root>/class/infiniband/<dev>/ports/<port>/gid_attrs/types/<index>. */
enum ib_gid_kind ib_gid_kind_from_sysfs(const char *root, const char *dev, int port, int index);
/* "fe80::1" style text, for logs. */
void ib_gid_format(const uint8_t raw[16], char *out, unsigned len);

#endif
