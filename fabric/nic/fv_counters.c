/*
 * What the emulated fabric reports, machine-readably, in its state folder
 * (fabric/README.md, "What it reports"):
 *   schedule-<pid>.json  this process's NIC: messages executed, how many late
 *                        (the emulation, not the fabric, set their pace);
 *   counters.json        every element that carried traffic: bytes, messages,
 *                        time busy and time messages queued for it, and its fault.
 * Every process writes them as it exits; counters.json is rewritten whole each
 * time (under a lock, renamed into place), so the last process out leaves the
 * whole run's counts.
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#include "fv_internal.h"

static void element_name(const struct fv_config *cfg, int e, char *buf, size_t len)
{
	if (cfg->described && e < ft_elements(&cfg->topo))
		ft_element_name(&cfg->topo, e, buf, len);
	else /* no description: a NIC's place is node x FV_MAX_DEVS + its device's index */
		snprintf(buf, len, "node%d/device%d %s", e / 2 / FV_MAX_DEVS, e / 2 % FV_MAX_DEVS,
			 e % 2 ? "in" : "out");
}

static json_t *fault_json(const struct ft_fault *f)
{
	json_t *o = json_object();

	if (f->rate_pct)
		json_object_set_new(o, "rate_pct", json_integer(f->rate_pct));
	if (f->pause_every_ns) {
		json_object_set_new(o, "pause_every_ns", json_integer((json_int_t)f->pause_every_ns));
		json_object_set_new(o, "pause_for_ns", json_integer((json_int_t)f->pause_for_ns));
	}
	if (f->add_ns)
		json_object_set_new(o, "add_ns", json_integer((json_int_t)f->add_ns));
	return o;
}

static json_t *elements_json(const struct fv_config *cfg)
{
	json_t *a = json_array();
	char name[160];

	for (int e = 0; e < FV_MAX_ELEMENTS; e++) {
		struct fv_element *el = fv_element(e);
		struct ft_fault f;
		json_t *o;

		if (!el || !atomic_load(&el->messages))
			continue;
		element_name(cfg, e, name, sizeof(name));
		fv_element_fault(e, &f);
		o = json_object();
		json_object_set_new(o, "element", json_string(name));
		json_object_set_new(o, "index", json_integer(e));
		json_object_set_new(o, "bytes", json_integer((json_int_t)atomic_load(&el->bytes)));
		json_object_set_new(o, "messages",
				    json_integer((json_int_t)atomic_load(&el->messages)));
		json_object_set_new(o, "busy_ns", json_integer((json_int_t)atomic_load(&el->busy_ns)));
		json_object_set_new(o, "queued_ns",
				    json_integer((json_int_t)atomic_load(&el->queued_ns)));
		json_object_set_new(o, "fault", fault_json(&f));
		json_array_append_new(a, o);
	}
	return a;
}

/* Writes o to dir/name through a file of this process's, renamed into place. */
static void put(const char *dir, const char *name, json_t *o)
{
	char path[400], tmp[420];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	if (json_dump_file(o, tmp, JSON_INDENT(1) | JSON_PRESERVE_ORDER) || rename(tmp, path))
		fprintf(stderr, "fakeverbs: cannot write %s\n", path);
	json_decref(o);
}

static void write_counters(const struct fv_config *cfg)
{
	char lock[400];
	json_t *o = json_object();
	int fd;

	snprintf(lock, sizeof(lock), "%s/counters.lock", cfg->dir);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		flock(fd, LOCK_EX);
	json_object_set_new(o, "fabriclab_fabric_counters", json_integer(1));
	json_object_set_new(o, "rate_div", json_real(fv_physics()->rate_div));
	json_object_set_new(o, "elements", elements_json(cfg));
	put(cfg->dir, "counters.json", o);
	if (fd >= 0)
		close(fd);
}

void fv_counters_write(uint64_t executed, uint64_t late, uint64_t late_startup,
		       uint64_t late_loopback, uint64_t worst_ns)
{
	struct fv_config *cfg = fv_config_get();
	char name[64];
	json_t *o;

	if (!cfg || !fv_element(0))
		return;
	o = json_object();
	json_object_set_new(o, "pid", json_integer(getpid()));
	json_object_set_new(o, "node", json_string(cfg->described ?
						   cfg->topo.nodes[cfg->node].name : ""));
	json_object_set_new(o, "executed", json_integer((json_int_t)executed));
	json_object_set_new(o, "late", json_integer((json_int_t)late));
	json_object_set_new(o, "late_startup", json_integer((json_int_t)late_startup));
	json_object_set_new(o, "late_loopback", json_integer((json_int_t)late_loopback));
	json_object_set_new(o, "worst_late_ns", json_integer((json_int_t)worst_ns));
	snprintf(name, sizeof(name), "schedule-%d.json", (int)getpid());
	put(cfg->dir, name, o);
	write_counters(cfg);
}
