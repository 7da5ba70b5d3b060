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
#include "report_hop_json.h"
#include "report_index.h"

/* "0123456789abcdef" -> the hash; 0 for null or absent (net mode). */
static int take_hash(const struct report_reader *r, const char *key, const struct report_value *v,
		     bool required, uint64_t *out)
{
	char text[24] = "", *end;
	int err = report_take_string(r, key, v, required, text, sizeof(text));

	*out = 0;
	if (err || !text[0])
		return err;
	*out = strtoull(text, &end, 16);
	if (*end || end - text != 16)
		return report_bad(r, key, "expected 16 hex digits");
	return 0;
}

static int get_hash(const struct report_reader *r, json_t *obj, const char *key, bool required,
		    uint64_t *out)
{
	struct report_value v = report_value_json(json_object_get(obj, key));

	return take_hash(r, key, &v, required, out);
}

int report_read_hop_mode(const struct report_reader *r, const struct report_json *j,
			 struct report_file_view *fv)
{
	const struct report_json_node *hop = report_json_root(j);
	struct report_value mode_v = report_value_hop(j, report_json_get(j, hop, "mode"));
	struct report_value hash_v = report_value_hop(j, report_json_get(j, hop, "comm_hash"));
	struct report_value wait_v = report_value_hop(j, report_json_get(j, hop, "gpu_wait_seconds"));
	char mode[16] = "net";
	int err = report_take_string(r, "mode", &mode_v, false, mode, sizeof(mode));

	if (err)
		return err;
	if (strcmp(mode, "net") && strcmp(mode, "profiler"))
		return report_bad(r, "mode", "expected \"net\" or \"profiler\"");
	fv->v.profiler = !strcmp(mode, "profiler");
	err = take_hash(r, "comm_hash", &hash_v, fv->v.profiler, &fv->key.comm_hash);
	return err ? err
		   : report_take_number(r, "gpu_wait_seconds", &wait_v, false,
					&fv->v.gpu_wait_seconds);
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

/* The ranks the reports in use held, each (comm_hash, rank) once: the first file's. */
struct held {
	const struct report_set *set;
	struct report_index ix;
	size_t *file, *rank; /* per entry: the file and its ranks[] index */
	size_t n;
	uint64_t comm_hash; /* the one looked up */
	long want;
};

static bool same_rank(const void *ctx, size_t e)
{
	const struct held *h = ctx;
	const struct report_rank *r = &h->set->files[h->file[e]].ranks[h->rank[e]];

	return r->comm_hash == h->comm_hash && r->rank == h->want;
}

static size_t *slot_of(struct held *h, uint64_t comm_hash, long rank)
{
	uint64_t key = comm_hash ^ ((uint64_t)rank * 0x9e3779b97f4a7c15ULL);

	h->comm_hash = comm_hash;
	h->want = rank;
	return report_index_slot(&h->ix, report_index_hash("", "", key), same_rank, h);
}

static int index_ranks(const struct report_set *set, struct held *h)
{
	size_t total = 0;

	memset(h, 0, sizeof(*h));
	h->set = set;
	for (size_t f = 0; f < set->nfiles; f++)
		total += set->files[f].superseded_by < 0 ? set->files[f].nranks : 0;
	h->file = malloc((total + 1) * sizeof(*h->file));
	h->rank = malloc((total + 1) * sizeof(*h->rank));
	if (!h->file || !h->rank || report_index_init(&h->ix, total))
		return fl_fail(FL_ERR_SYSTEM, "out of memory naming %zu ranks", total);
	for (size_t f = 0; f < set->nfiles; f++) {
		const struct report_file *file = &set->files[f];

		for (size_t i = 0; file->superseded_by < 0 && i < file->nranks; i++) {
			size_t *s = slot_of(h, file->ranks[i].comm_hash, file->ranks[i].rank);

			if (*s)
				continue;
			h->file[h->n] = f;
			h->rank[h->n] = i;
			*s = ++h->n;
		}
	}
	return 0;
}

static void free_ranks(struct held *h)
{
	report_index_free(&h->ix);
	free(h->file);
	free(h->rank);
}

static void name_end(struct held *h, uint64_t comm_hash, long rank, char *node, size_t len)
{
	size_t *s;

	if (strcmp(node, REPORT_UNKNOWN_NODE) || rank < 0)
		return;
	s = slot_of(h, comm_hash, rank);
	if (*s)
		snprintf(node, len, "%s", h->set->files[h->file[*s - 1]].node);
}

int report_name_ranks(struct report_set *set)
{
	struct held h;
	int err = index_ranks(set, &h);

	for (size_t f = 0; !err && f < set->nfiles; f++) {
		struct report_file *file = &set->files[f];

		for (size_t i = 0; file->superseded_by < 0 && i < file->nviews; i++) {
			struct report_file_view *fv = &file->views[i];

			if (!fv->v.profiler)
				continue;
			name_end(&h, fv->key.comm_hash, fv->v.src_rank, fv->key.src_node,
				 sizeof(fv->key.src_node));
			name_end(&h, fv->key.comm_hash, fv->v.dst_rank, fv->key.dst_node,
				 sizeof(fv->key.dst_node));
		}
	}
	free_ranks(&h);
	return err;
}
