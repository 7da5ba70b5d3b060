/*
 * A port spec's reported rate: LINK:WIDTH:SPEED[:STATE], the emulated NIC's
 * grammar (fabric/nic/fv_config.c), lanes times the lane rate. The names are
 * IBTA's speeds and the lane rates Ethernet names for the same codes.
 */
#include <string.h>
#include <strings.h>

#include "topo.h"

static const struct { const char *name; double mbps; } lane[] = {
	{ "sdr", 2500 }, { "ddr", 5000 }, { "qdr", 10000 }, { "fdr10", 10000 },
	{ "fdr", 14000 }, { "edr", 25000 }, { "hdr", 50000 }, { "ndr", 100000 },
	{ "2.5g", 2500 }, { "5g", 5000 }, { "10g", 10000 }, { "14g", 14000 },
	{ "25g", 25000 }, { "50g", 50000 }, { "100g", 100000 },
};

static const struct { const char *name; int lanes; } width[] = {
	{ "1x", 1 }, { "2x", 2 }, { "4x", 4 }, { "8x", 8 }, { "12x", 12 },
};

static size_t field(const char *s, int i, const char **start)
{
	for (; i > 0 && s; i--) {
		s = strchr(s, ':');
		s = s ? s + 1 : NULL;
	}
	*start = s;
	return s ? strcspn(s, ":") : 0;
}

double ft_port_mbps(const char *port)
{
	const char *w, *sp;
	size_t wl = field(port, 1, &w), sl = field(port, 2, &sp);
	int lanes = 0;

	for (size_t i = 0; i < sizeof(width) / sizeof(width[0]); i++)
		if (wl == strlen(width[i].name) && !strncasecmp(w, width[i].name, wl))
			lanes = width[i].lanes;
	for (size_t i = 0; lanes && i < sizeof(lane) / sizeof(lane[0]); i++)
		if (sl == strlen(lane[i].name) && !strncasecmp(sp, lane[i].name, sl))
			return lanes * lane[i].mbps;
	return 0;
}

bool ft_port_is_eth(const char *port)
{
	return !strncasecmp(port, "eth:", 4) || !strncasecmp(port, "roce:", 5);
}
