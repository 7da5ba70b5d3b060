/* The wrapped plugin's library: the one whose init won, else the list's first that opens (ext_lib.h). */
#include "ext_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/plugin_open.h"
#include "ext_inner.h"

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static void *chosen; /* the handle ext_inner_choose kept: its plugin's init succeeded */
static void *first;  /* opened here, before any init: the list's first that opens */
static int tried;

static int open_one(const char *name, void *arg)
{
	char why[640];

	*(void **)arg = fl_plugin_open(name, "net", why, sizeof(why));
	return *(void **)arg ? FL_OK : FL_ERR_USAGE;
}

/* NCCL_NET_PLUGIN=a,b as NCCL splits it (host/host_find.c). */
static void *open_first(const char *list)
{
	void *h = NULL;
	int count;

	fl_host_each(list, open_one, &h, &count);
	return h; /* none opens: the ext loader's init names why */
}

void ext_lib_chosen(void *handle)
{
	pthread_mutex_lock(&lib_lock);
	chosen = handle;
	pthread_mutex_unlock(&lib_lock);
}

void *ext_lib_handle(void)
{
	const char *env;
	void *h;

	pthread_mutex_lock(&lib_lock);
	if (!chosen && !tried) {
		tried = 1;
		env = getenv("FABRICLAB_TRANSPORT");
		if (env && !strncmp(env, "ext:", 4) && env[4])
			first = open_first(env + 4);
	}
	h = chosen ? chosen : first;
	pthread_mutex_unlock(&lib_lock);
	return h;
}

void *ext_lib_symbol(const char *name)
{
	/* a wrapped fabriclab would answer through this very function: none of ours */
	static _Thread_local int looking;
	void *h = looking ? NULL : ext_lib_handle(), *sym;

	if (!h)
		return NULL;
	looking = 1;
	sym = dlsym(h, name);
	looking = 0;
	return sym;
}
