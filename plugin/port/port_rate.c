/* Rates as the kernel writes them: an IB port's `rate` file and ethtool's link mode names. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port_info.h"

static const char *skip_spaces(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* "(4X HDR)": the width and the speed generation's name, both optional in the text. */
static void parse_width_speed(const char *s, int *width, char *speed, size_t speed_len)
{
	char *end;
	long w;

	s = skip_spaces(s);
	if (*s != '(')
		return;
	w = strtol(s + 1, &end, 10);
	if (end == s + 1 || (*end != 'X' && *end != 'x') || w <= 0 || w > 64)
		return;
	if (width)
		*width = (int)w;
	s = skip_spaces(end + 1);
	if (speed && speed_len) {
		size_t n = strcspn(s, ")");

		if (n >= speed_len)
			n = speed_len - 1;
		memcpy(speed, s, n);
		speed[n] = '\0';
	}
}

int fl_port_rate_parse(const char *text, double *gbps, int *width, char *speed, size_t speed_len)
{
	const char *s = skip_spaces(text);
	char *end;
	double x;

	if (width)
		*width = 0;
	if (speed && speed_len)
		speed[0] = '\0';
	*gbps = 0.0;
	errno = 0;
	x = strtod(s, &end);
	if (end == s || errno || !(x > 0.0) || x > 1e6)
		return -1;
	s = skip_spaces(end);
	if (strncmp(s, "Gb/sec", 6) && strncmp(s, "Gb/s", 4))
		return -1;
	*gbps = x;
	parse_width_speed(s + strcspn(s, "("), width, speed, speed_len);
	return 0;
}

long fl_link_mode_mbps(const char *name)
{
	char *end;
	long mbps;

	if (!isdigit((unsigned char)name[0]))
		return 0;
	mbps = strtol(name, &end, 10);
	/* "100000baseCR4/Full": a speed is followed by "base"; "Autoneg", "Pause" are not speeds */
	return strncmp(end, "base", 4) || mbps <= 0 ? 0 : mbps;
}
