/* The description as a JSON file (fabric/README.md, "The description"). */
#ifndef FABRIC_TOPO_JSON_H
#define FABRIC_TOPO_JSON_H

#include <stddef.h>

#include "topo.h"

/*
 * Reads path into t (initialised here; ft_free it either way). 0, or -1 with
 * the reason in why: the file's line and column for malformed JSON, the
 * field's path ("nodes[2].nics[0].leaf") for a wrong or unknown field.
 */
int ft_read_json(const char *path, struct ft_topo *t, char *why, size_t len);
/* The same from text in memory; name is what the reasons call it. */
int ft_parse_json(const char *text, size_t n, const char *name, struct ft_topo *t, char *why,
		  size_t len);
/* Writes t to path (through a temporary file, renamed); 0, or -1 with the reason. */
int ft_write_json(const struct ft_topo *t, const char *path, char *why, size_t len);
/* The same as text (the lab's page draws it): malloc'd, NULL when out of memory. */
char *ft_json_text(const struct ft_topo *t);

#endif
