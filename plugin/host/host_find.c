/*
 * NCCL_NET_PLUGIN as NCCL reads it (2.30.7 src/plugin/net.cc:256-296; the same
 * in 2.28.9 :262-300): `none` in any case means no external plugin (:266), a
 * list is split at commas with empty names skipped (strtok_r, :269, :289), at
 * most NCCL_NET_MAX_PLUGINS - 2 = 14 names are kept and the rest ignored
 * (:273-276), and each is tried in order: the first whose init succeeds with
 * at least one device is the communicator's (ncclNetPluginInit, :166-184). The
 * one place a plugin list is split, for the ext transport and the shim alike.
 */
#include "host_net.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"

#define LIST_LEN 1024  /* callers refuse longer lists with their own message first */
#define MAX_NAMES 14   /* NCCL_NET_MAX_PLUGINS (16) less its 2 internal plugins */

int fl_host_is_none(const char *list)
{
	return list && !strcasecmp(list, "none");
}

int fl_host_each(const char *list, int (*try_one)(const char *name, void *arg), void *arg,
		 int *tried)
{
	char names[LIST_LEN];
	char *save = NULL, *name;
	int rc = FL_ERR_USAGE;

	*tried = 0;
	if (!list || strlen(list) >= sizeof(names))
		return FL_ERR_USAGE;
	snprintf(names, sizeof(names), "%s", list);
	for (name = strtok_r(names, ",", &save); name && *tried < MAX_NAMES;
	     name = strtok_r(NULL, ",", &save)) {
		(*tried)++;
		rc = try_one(name, arg);
		if (rc == FL_OK)
			return FL_OK;
	}
	return rc;
}
