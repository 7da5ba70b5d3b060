#include "ib_speed.h"

struct code {
	int code;
	int value;
	const char *name;
};

static const struct code widths[] = {
	{ 1, 1, "1X" }, { 16, 2, "2X" }, { 2, 4, "4X" }, { 4, 8, "8X" }, { 8, 12, "12X" },
};

/* Data rate per lane after line coding, as the IB specification names them. */
static const struct code speeds[] = {
	{ 1, 2500, "SDR" },	{ 2, 5000, "DDR" },	{ 4, 10000, "QDR" },
	{ 8, 10000, "FDR10" },	{ 16, 14000, "FDR" },	{ 32, 25000, "EDR" },
	{ 64, 50000, "HDR" },	{ 128, 100000, "NDR" }, { 256, 200000, "XDR" },
};

static const struct code *find(const struct code *t, int n, int code)
{
	for (int i = 0; i < n; i++)
		if (t[i].code == code)
			return &t[i];
	return 0;
}

int ib_width_lanes(int active_width)
{
	const struct code *c = find(widths, sizeof(widths) / sizeof(widths[0]), active_width);

	return c ? c->value : 0;
}

int ib_lane_mbps(int active_speed)
{
	const struct code *c = find(speeds, sizeof(speeds) / sizeof(speeds[0]), active_speed);

	return c ? c->value : 0;
}

int ib_port_mbps(int active_width, int active_speed)
{
	return ib_width_lanes(active_width) * ib_lane_mbps(active_speed);
}

const char *ib_speed_name(int active_speed)
{
	const struct code *c = find(speeds, sizeof(speeds) / sizeof(speeds[0]), active_speed);

	return c ? c->name : "?";
}
