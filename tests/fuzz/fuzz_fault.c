/*
 * FABRICLAB_FAULT: any text parses or fails cleanly; what parses is described,
 * the description parses again, to rules whose description is the same text
 * (describe -> parse is the identity on the canonical form).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/fault/fault_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void describe_all(const struct fl_fault_spec *s, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (int i = 0; i < s->nrules && used < len; i++) {
		char one[FL_FAULT_DESCRIBE_LEN];

		fl_fault_describe(&s->rules[i], one, sizeof(one));
		used += (size_t)snprintf(out + used, len - used, "%s%s", i ? ";" : "", one);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fl_fault_spec first, second;
	static char text[4096], canon[FL_FAULT_MAX_RULES * FL_FAULT_DESCRIBE_LEN],
		again[FL_FAULT_MAX_RULES * FL_FAULT_DESCRIBE_LEN];

	if (size >= sizeof(text))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (fl_fault_parse(text, &first))
		return 0;
	describe_all(&first, canon, sizeof(canon));
	if (fl_fault_parse(canon, &second)) {
		fprintf(stderr, "\"%s\" described as \"%s\", which does not parse\n", text, canon);
		abort();
	}
	describe_all(&second, again, sizeof(again));
	if (first.nrules != second.nrules || strcmp(canon, again)) {
		fprintf(stderr, "\"%s\" -> \"%s\" -> \"%s\"\n", text, canon, again);
		abort();
	}
	for (int i = 0; i < first.nrules; i++)
		if (first.rules[i].throttle.fraction != second.rules[i].throttle.fraction ||
		    first.rules[i].slow.factor != second.rules[i].slow.factor) {
			fprintf(stderr, "\"%s\": rule %d's numbers changed through \"%s\"\n", text,
				i, canon);
			abort();
		}
	return 0;
}
