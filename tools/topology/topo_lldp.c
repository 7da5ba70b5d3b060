/*
 * `lldpctl -f json` (lldpd's client) as a topology: each host's interfaces
 * and, across each, the switch (its chassis' system name) and its port (the
 * port's id). One file per host, named <host>.json, in a folder (a lone file
 * is its host's). Both of lldpd's JSON forms are read, as its tests show them
 * (lldpd tests/integration/test_lldpcli.py, test_json_output and
 * test_json0_output):
 *   json   {"lldp": {"interface": {"eth0": {"chassis": {"leaf0": {...}},
 *                     "port": {"id": {"type": "ifname", "value": "swp5"}, ...}}}}}
 *          ("interface" an array of such one-key objects where there are several)
 *   json0  {"lldp": [{"interface": [{"name": "eth0", "chassis": [{"name": [{"value": "leaf0"}]}],
 *                     "port": [{"id": [{"type": "ifname", "value": "swp5"}]}]}]}]}
 * LLDP sees only the switches next to the hosts: every one is a leaf, and
 * what lies between leaves is the spine layer, whose switches it does not name.
 */
#include <ctype.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "topology.h"

struct neighbour {
	char ifname[FT_DEV_LEN];
	char sw[FT_NAME_LEN];
	char port[32];
};

static int fail(char *why, size_t len, const char *file, const char *what)
{
	snprintf(why, len, "%s: %s (lldpctl -f json)", file, what);
	return -1;
}

/* json0 wraps every value in [{"value": ...}] or [{...}]: the first element, unwrapped. */
static json_t *first(json_t *v)
{
	return json_is_array(v) ? json_array_get(v, 0) : v;
}

static const char *text(json_t *v)
{
	v = first(v);
	if (json_is_object(v))
		v = json_object_get(v, "value");
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The neighbour's system name: json keys the chassis by it, json0 has a "name". */
static const char *chassis_name(json_t *chassis)
{
	const char *key;
	json_t *v;

	chassis = first(chassis);
	if (!json_is_object(chassis))
		return NULL;
	if (json_object_get(chassis, "name"))
		return text(json_object_get(chassis, "name"));
	json_object_foreach(chassis, key, v)
		return key;
	return NULL;
}

static int neighbour_of(const char *ifname, json_t *iface, struct neighbour *n, char *what,
			size_t wlen)
{
	json_t *port = first(json_object_get(iface, "port"));
	const char *sw = chassis_name(json_object_get(iface, "chassis"));
	const char *id = json_is_object(port) ? text(json_object_get(port, "id")) : NULL;

	if (!sw || !id) {
		snprintf(what, wlen, "lldp.interface.%s: expected its neighbour's \"chassis\" (a "
			 "system name) and \"port\" with an \"id\"", ifname);
		return -1;
	}
	snprintf(n->ifname, sizeof(n->ifname), "%s", ifname);
	snprintf(n->sw, sizeof(n->sw), "%s", sw);
	snprintf(n->port, sizeof(n->port), "%s", id);
	return 0;
}

/* The switch port's number: the last digits of its name ("swp5", "Ethernet1/12"); 0 none. */
static int port_number(const char *name)
{
	const char *e = name + strlen(name);

	while (e > name && !isdigit((unsigned char)e[-1]))
		e--;
	while (e > name && isdigit((unsigned char)e[-1]))
		e--;
	return atoi(e);
}

static int add_neighbour(struct ft_topo *t, int node, const struct neighbour *n)
{
	int sw = ft_find_switch(t, n->sw), c;

	if (sw < 0)
		sw = ft_add_switch(t, n->sw, FT_LEAF);
	c = sw < 0 ? -1 : ft_add_nic(t, node, n->ifname, "");
	if (c < 0)
		return -1;
	t->nics[c].leaf = sw;
	t->nics[c].leaf_port = port_number(n->port);
	snprintf(t->nics[c].port_name, sizeof(t->nics[c].port_name), "%s", n->port);
	return 0;
}

/* Every interface of one host's output, in either form. */
static int read_interfaces(json_t *ifs, struct ft_topo *t, int node, char *what, size_t wlen)
{
	struct neighbour n;
	const char *key;
	size_t i;
	json_t *v, *inner;

	if (json_is_object(ifs)) {
		json_object_foreach(ifs, key, v)
			if (neighbour_of(key, v, &n, what, wlen) || add_neighbour(t, node, &n))
				return -1;
		return 0;
	}
	json_array_foreach(ifs, i, v) {
		if (json_object_get(v, "name")) { /* json0 */
			const char *name = text(json_object_get(v, "name"));

			if (!name || neighbour_of(name, v, &n, what, wlen) ||
			    add_neighbour(t, node, &n))
				return name ? -1 : (snprintf(what, wlen, "lldp.interface[%zu]: no "
							     "\"name\"", i), -1);
			continue;
		}
		json_object_foreach(v, key, inner)
			if (neighbour_of(key, inner, &n, what, wlen) || add_neighbour(t, node, &n))
				return -1;
	}
	return 0;
}

static int read_host(const char *path, const char *host, struct ft_topo *t, char *why, size_t len)
{
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err), *lldp, *ifs;
	char what[256] = "expected {\"lldp\": {\"interface\": ...}}";
	int node, rc = -1;

	if (!root) {
		snprintf(why, len, "%s:%d:%d: %s", path, err.line, err.column, err.text);
		return -1;
	}
	lldp = first(json_object_get(root, "lldp"));
	ifs = json_is_object(lldp) ? json_object_get(lldp, "interface") : NULL;
	node = ft_add_node(t, host);
	if (node >= 0 && (json_is_object(ifs) || json_is_array(ifs)))
		rc = read_interfaces(ifs, t, node, what, sizeof(what));
	json_decref(root);
	return rc ? fail(why, len, path, what) : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder's <host>.json files, sorted, so that hosts come in the same order every time. */
static int read_folder(const char *dir, struct ft_topo *t, char *why, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *names[4096], path[4096];
	size_t n = 0;
	int rc = 0;

	if (!d)
		return fail(why, len, dir, "cannot open the folder");
	while ((e = readdir(d)) && n < sizeof(names) / sizeof(names[0])) {
		size_t l = strlen(e->d_name);

		if (l > 5 && !strcmp(e->d_name + l - 5, ".json") && e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), by_name);
	for (size_t i = 0; i < n; i++) {
		char host[FT_NAME_LEN];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		snprintf(host, sizeof(host), "%.*s", (int)(strlen(names[i]) - 5), names[i]);
		if (!rc && names[i])
			rc = read_host(path, host, t, why, len);
		free(names[i]);
	}
	return rc || n ? rc : fail(why, len, dir, "no <host>.json files");
}

int topo_read_lldp(const char *path, struct ft_topo *t, char *why, size_t len)
{
	struct stat st;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char host[FT_NAME_LEN];
	int rc;

	ft_init(t);
	snprintf(t->layout, sizeof(t->layout), "lldp");
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		rc = read_folder(path, t, why, len);
	} else {
		snprintf(host, sizeof(host), "%.*s", (int)strcspn(base, "."), base);
		rc = read_host(path, host, t, why, len);
	}
	return rc ? rc : ft_check(t, why, len);
}
