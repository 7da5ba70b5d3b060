/*
 * For the tests of the fabric's description: descriptions the reader must refuse, each with a
 * phrase its reason must hold (the field's path and the accepted form). Include after cmocka.h.
 */
#ifndef TESTS_TOPO_REFUSED_H
#define TESTS_TOPO_REFUSED_H

#include <string.h>

#include "fabric/topo/topo_json.h"

static inline void assert_refused(const char *const bad[][2], size_t n)
{
	struct ft_topo t;
	char why[256];

	for (size_t i = 0; i < n; i++) {
		assert_int_equal(ft_parse_json(bad[i][0], strlen(bad[i][0]), "t.json", &t, why,
					       sizeof(why)), -1);
		print_message("%s\n", why);
		assert_non_null(strstr(why, bad[i][1]));
		ft_free(&t);
	}
}

#endif
