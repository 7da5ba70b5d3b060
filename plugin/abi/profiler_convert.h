/*
 * NCCL's profiler descriptors and state arguments of one version converted for a
 * plugin of an older one, as NCCL's own adapters convert them (profiler_convert.c
 * says which lines). Pure version knowledge: the chaining in entry/ uses it.
 */
#ifndef FL_PROFILER_CONVERT_H
#define FL_PROFILER_CONVERT_H

#include "profiler_abi.h"

/* NCCL's v<n> descriptor or state args for a next of version m <= n. */
union fl_abi_descr_buf {
	struct fl_prof_abi_descr_v1 v1;
	struct fl_prof_abi_descr_v2 v2;
	struct fl_prof_abi_descr_v3 v3;
	struct fl_prof_abi_descr_v4 v4;
	struct fl_prof_abi_descr_v5 v5;
	struct fl_prof_abi_descr_v6 v6;
	struct fl_prof_abi_descr_v7 v7;
};
union fl_abi_args_buf {
	union fl_prof_abi_state_args_v1 v1;
	union fl_prof_abi_state_args_v4 v4;
};
/* What to pass the next, parentObj set to parent; NULL when version m has no such event. */
const void *fl_abi_descr_for(int n, const void *d, int m, void *parent,
			     union fl_abi_descr_buf *buf);
/* 0 with *out the args to pass (may be NULL, as NCCL passes), -1 when version m gets none. */
int fl_abi_args_for(int n, int state, const void *args, int m, union fl_abi_args_buf *buf,
		    const void **out);

#endif
