/*
 * The suite's skip convention (tests/run.sh): a test program that could not run some of its
 * checks here exits with FL_TEST_SKIPPED (77, as automake's test drivers use) and prints the
 * reason as the last line of its output. A failure always wins over a skip.
 */
#ifndef FL_TEST_SKIP_H
#define FL_TEST_SKIP_H

#include <stdio.h>

#define FL_TEST_SKIPPED 77

/* The exit status of a test program: failed (cmocka's count of failed tests) wins, then a skip. */
static inline int fl_test_status(int failed, const char *skip_reason)
{
	if (failed)
		return failed > 0 && failed < FL_TEST_SKIPPED ? failed : 1;
	if (skip_reason) {
		fflush(stderr);
		printf("skipped: %s\n", skip_reason);
		fflush(stdout);
		return FL_TEST_SKIPPED;
	}
	return 0;
}

#endif
