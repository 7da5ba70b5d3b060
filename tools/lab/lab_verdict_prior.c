/*
 * What the lab tells the diagnosis about the fabric it emulates: how often a
 * healthy hop whose requests the wire paces runs near its line
 * (fl_verdict_params.line_odds, FABRICLAB_VERDICT_LINE_ODDS). A preset's
 * emulated NIC pays a cost per message and a latency scaled with its rate, so
 * its healthy hops run far below line in most runs: of the validation
 * generator's tuning set, the healthy twins whose hops the wire paces had
 * their median hop within 70-105% of line in 15 of 85 runs with --like and in
 * 97 of 106 without (bench/validate, 2026-12-07; docs/report-format.md). The
 * ranks and the merged report read it from the environment the lab passes
 * on; a user's own setting wins.
 */
#include <stdlib.h>

#include "lab.h"

void lab_verdict_prior(const struct lab_opts *o)
{
	if (o->like && !getenv("FABRICLAB_VERDICT_LINE_ODDS"))
		setenv("FABRICLAB_VERDICT_LINE_ODDS", "0.2", 1);
}
