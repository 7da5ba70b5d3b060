/*
 * Profiler mode names hops by rank: a process knows its own node but only the
 * rank of a peer. Every report lists the ranks its process held ({commHash,
 * rank} under its node), so the merge names each peer's node from the report
 * that held it. Hops stay per communicator: the same two ranks of two
 * communicators (or of a split, renumbered) are different hops.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "report.h"
#include "report_fields.h"

/* "0123456789abcdef" -> the hash; 0 for null or absent (net mode). */
static int get_hash(const struct report_reader *r, json_t *obj, const char *key, bool required,
		    uint64_t *out)
{
	char text[24] = "", *end;
	int err = report_get_string(r, obj, key, required, text, sizeof(text));

	*out = 0;
	if (err || !text[0])
		return err;
	*out = strtoull(text, &end, 16);
	if (*end || end - text != 16)
		return report_bad(r, key, "expected 16 hex digits");
	return 0;
}

int report_read_hop_mode(const struct report_reader *r, json_t *hop,
			 struct report_file_view *fv)
{
	char mode[16] = "net";
	int err = report_get_string(r, hop, "mode", false, mode, sizeof(mode));

	if (err)
		return err;
	if (strcmp(mode, "net") && strcmp(mode, "profiler"))
		return report_bad(r, "mode", "expected \"net\" or \"profiler\"");
	fv->v.profiler = !strcmp(mode, "profiler");
	err = get_hash(r, hop, "comm_hash", fv->v.profiler, &fv->key.comm_hash);
	return err ? err
		   : report_get_number(r, hop, "gpu_wait_seconds", false, &fv->v.gpu_wait_seconds);
}

int report_read_ranks(const char *path, json_t *root, struct report_file *f)
{
	struct report_reader r = { path, "" };
	json_t *arr, *e;
	size_t i;
	int err = report_get_array(&r, root, "ranks", false, &arr);

	if (err || !arr)
		return err;
	f->ranks = calloc(json_array_size(arr) + 1, sizeof(*f->ranks));
	if (!f->ranks)
		return fl_fail(FL_ERR_SYSTEM, "%s: out of memory", path);
	json_array_foreach (arr, i, e) {
		struct report_reader sub = report_reader_at(&r, "ranks", i);
		long long rank = -1;

		err = report_expect_object(&sub, e);
		err = err ? err : get_hash(&sub, e, "comm_hash", true, &f->ranks[i].comm_hash);
		err = err ? err : report_get_int(&sub, e, "rank", true, 0, &rank);
		if (err)
			return err;
		f->ranks[i].rank = (long)rank;
		f->nranks++;
	}
	return 0;
}

/* The node of the report that held (comm_hash, rank), NULL when none did. */
static const char *node_of(const struct report_set *set, uint64_t comm_hash, long rank)
{
	for (size_t f = 0; f < set->nfiles; f++) {
		const struct report_file *file = &set->files[f];

		for (size_t i = 0; file->superseded_by < 0 && i < file->nranks; i++)
			if (file->ranks[i].comm_hash == comm_hash && file->ranks[i].rank == rank)
				return file->node;
	}
	return NULL;
}

static void name_end(const struct report_set *set, uint64_t comm_hash, long rank, char *node,
		     size_t len)
{
	const char *known;

	if (strcmp(node, REPORT_UNKNOWN_NODE) || rank < 0)
		return;
	known = node_of(set, comm_hash, rank);
	if (known)
		snprintf(node, len, "%s", known);
}

void report_name_ranks(struct report_set *set)
{
	for (size_t f = 0; f < set->nfiles; f++) {
		struct report_file *file = &set->files[f];

		for (size_t i = 0; file->superseded_by < 0 && i < file->nviews; i++) {
			struct report_file_view *fv = &file->views[i];

			if (!fv->v.profiler)
				continue;
			name_end(set, fv->key.comm_hash, fv->v.src_rank, fv->key.src_node,
				 sizeof(fv->key.src_node));
			name_end(set, fv->key.comm_hash, fv->v.dst_rank, fv->key.dst_node,
				 sizeof(fv->key.dst_node));
		}
	}
}
