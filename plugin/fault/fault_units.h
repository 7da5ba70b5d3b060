/* Units shared by the FABRICLAB_FAULT parser and its describer, so both speak one language. */
#ifndef FL_FAULT_UNITS_H
#define FL_FAULT_UNITS_H

#include <stddef.h>

struct fl_fault_unit {
	const char *name;
	double scale;
};

#define FL_FAULT_N_UNITS(a) (sizeof(a) / sizeof((a)[0]))

/* Durations in ns per unit. */
extern const struct fl_fault_unit fl_fault_duration_units[6];
/* Bytes per second per unit; the first four are the bit rates describe prefers. */
extern const struct fl_fault_unit fl_fault_rate_units[8];
#define FL_FAULT_N_BIT_RATE_UNITS 4

/* Digits with an optional '.' and digits (no sign, no exponent); returns the rest or NULL. */
const char *fl_fault_parse_decimal(const char *s, double *out);

#endif
