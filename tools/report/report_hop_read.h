/*
 * One hop of a report read from its parsed table (report_hop_json.h) into a
 * view, every field checked by the same rules as the rest of the report
 * (report_fields.h): a wrong field stops the run naming the file, "hops[i]"
 * and the field.
 */
#ifndef FABRICLAB_REPORT_HOP_READ_H
#define FABRICLAB_REPORT_HOP_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"
#include "report_fields.h"
#include "report_hop_json.h"

/* A device of the writer's node (its `devices`): can NCCL hand it GPU memory? */
struct report_device_cap {
	const char *name;
	bool gdr_capable;
};

/* What a report's top level says of all its hops. */
struct report_hop_context {
	const char *transport; /* the file's `transport`, "" when it has none */
	const struct report_device_cap *devs;
	size_t ndevs;
	struct report_arena *sizes; /* where the views' size counts go */
};

/* "host", "cuda", "dmabuf" (len bytes) -> FL_PTR_*; 0 for anything else. */
int report_memory_bit(const char *name, size_t len);

/* The hop j parsed (hops[index] of r's file) into out. */
int report_read_hop(const struct report_reader *r, const struct report_json *j,
		    const struct report_hop_context *c, struct report_file_view *out);

#endif
