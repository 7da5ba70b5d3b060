/* The doctor's findings for people (one line per check) and as JSON (docs/doctor.md). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/base/json_out.h"
#include "plugin/base/version.h"
#include "doctor.h"

static void node_name(char *buf, size_t len)
{
	if (gethostname(buf, len))
		snprintf(buf, len, "unknown");
	buf[len - 1] = '\0';
}

static void count_levels(const struct doctor *d, int counts[4])
{
	memset(counts, 0, 4 * sizeof(counts[0]));
	for (int i = 0; i < d->nchecks; i++)
		counts[d->checks[i].level]++;
}

static int exit_of(const struct doctor *d, const int counts[4])
{
	if (counts[DOCTOR_FAIL])
		return DOCTOR_EXIT_FAIL;
	return counts[DOCTOR_WARN] && d->strict ? DOCTOR_EXIT_WARN : DOCTOR_EXIT_OK;
}

int doctor_exit_status(const struct doctor *d)
{
	int counts[4];

	count_levels(d, counts);
	return exit_of(d, counts);
}

void doctor_print_text(const struct doctor *d, FILE *out)
{
	char node[256], level[8];
	int counts[4];

	node_name(node, sizeof(node));
	fprintf(out, "fabriclab doctor: node %s, sysfs %s", node, d->root);
	if (d->interval_s > 0)
		fprintf(out, ", counters sampled %g s apart", d->interval_s);
	fprintf(out, "\n");
	for (int i = 0; i < d->nchecks; i++) {
		const struct doctor_check *c = &d->checks[i];
		size_t k;

		for (k = 0; doctor_level_name(c->level)[k] && k < sizeof(level) - 1; k++)
			level[k] = (char)toupper((unsigned char)doctor_level_name(c->level)[k]);
		level[k] = '\0';
		fprintf(out, "%-4s  %-9s %s%s%s\n", level, c->check, c->subject,
			c->subject[0] ? ": " : "", c->message);
		if (c->command[0])
			fprintf(out, "      look deeper: %s\n", c->command);
	}
	count_levels(d, counts);
	fprintf(out, "summary: %d pass, %d info, %d warn, %d fail: exit status %d\n",
		counts[DOCTOR_PASS], counts[DOCTOR_INFO], counts[DOCTOR_WARN], counts[DOCTOR_FAIL],
		exit_of(d, counts));
}

static void checks_json(struct fl_json *j, const struct doctor *d)
{
	fl_json_array(j, "checks");
	for (int i = 0; i < d->nchecks; i++) {
		const struct doctor_check *c = &d->checks[i];

		fl_json_object_inline(j, NULL);
		fl_json_string(j, "level", doctor_level_name(c->level));
		fl_json_string(j, "check", c->check);
		fl_json_string(j, "subject", c->subject);
		fl_json_string(j, "message", c->message);
		fl_json_string(j, "command", c->command[0] ? c->command : NULL);
		fl_json_end(j);
	}
	fl_json_end(j);
}

int doctor_print_json(const struct doctor *d, FILE *out)
{
	struct fl_json j;
	char node[256], *text = NULL;
	size_t len = 0;
	int counts[4];

	if (fl_json_init(&j))
		return -1;
	node_name(node, sizeof(node));
	count_levels(d, counts);
	fl_json_object(&j, NULL);
	fl_json_string(&j, "schema", "fabriclab-doctor");
	fl_json_int(&j, "schema_version", 1);
	fl_json_string(&j, "fabriclab_version", fl_version());
	fl_json_string(&j, "node", node);
	fl_json_string(&j, "sysfs_root", d->root);
	fl_json_double(&j, "interval_s", d->interval_s);
	fl_json_int(&j, "verbs_devices", d->nverbs_devices);
	fl_json_object_inline(&j, "summary");
	fl_json_int(&j, "pass", counts[DOCTOR_PASS]);
	fl_json_int(&j, "info", counts[DOCTOR_INFO]);
	fl_json_int(&j, "warn", counts[DOCTOR_WARN]);
	fl_json_int(&j, "fail", counts[DOCTOR_FAIL]);
	fl_json_end(&j);
	fl_json_int(&j, "exit_status", exit_of(d, counts));
	checks_json(&j, d);
	fl_ports_json(&j, "ports", d->ports, d->base, d->interval_s);
	fl_json_end(&j);
	if (fl_json_finish(&j, &text, &len))
		return -1;
	fwrite(text, 1, len, out);
	fputc('\n', out);
	free(text);
	return ferror(out) ? -1 : 0;
}
