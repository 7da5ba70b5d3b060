#include "version.h"

/* Only this file sees the define, so a new commit rebuilds one object, not the tree. */
#ifndef FABRICLAB_VERSION
#error "FABRICLAB_VERSION is passed by the Makefile (scripts/version.sh)"
#endif

const char *fl_version(void)
{
	return FABRICLAB_VERSION;
}
