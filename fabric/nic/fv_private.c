/* rdma-core's provider interface (IBVERBS_PRIVATE_34). perftest links libmlx5 and libefa, which
 * bind these names when they load, and libmlx5's constructor registers its driver. The fake has
 * no kernel commands for a provider to issue and never hands a device to a provider, so the
 * command wrappers are never reached through a fake device; if one is, it fails as a kernel
 * without the command would (EOPNOTSUPP). The argument lists are omitted: every caller's
 * arguments are ignored and each returns in the integer register its real prototype uses. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "fv_internal.h"

#pragma GCC visibility push(default)

#define UNSUPPORTED_CMD(name)		\
	int name(void);			\
	int name(void)			\
	{				\
		return EOPNOTSUPP;	\
	}

UNSUPPORTED_CMD(ibv_cmd_advise_mr)
UNSUPPORTED_CMD(ibv_cmd_alloc_dm)
UNSUPPORTED_CMD(ibv_cmd_alloc_mw)
UNSUPPORTED_CMD(ibv_cmd_alloc_pd)
UNSUPPORTED_CMD(ibv_cmd_attach_mcast)
UNSUPPORTED_CMD(ibv_cmd_close_xrcd)
UNSUPPORTED_CMD(ibv_cmd_create_ah)
UNSUPPORTED_CMD(ibv_cmd_create_counters)
UNSUPPORTED_CMD(ibv_cmd_create_cq)
UNSUPPORTED_CMD(ibv_cmd_create_cq_ex)
UNSUPPORTED_CMD(ibv_cmd_create_flow)
UNSUPPORTED_CMD(ibv_cmd_create_flow_action_esp)
UNSUPPORTED_CMD(ibv_cmd_create_qp)
UNSUPPORTED_CMD(ibv_cmd_create_qp_ex)
UNSUPPORTED_CMD(ibv_cmd_create_qp_ex2)
UNSUPPORTED_CMD(ibv_cmd_create_rwq_ind_table)
UNSUPPORTED_CMD(ibv_cmd_create_srq)
UNSUPPORTED_CMD(ibv_cmd_create_srq_ex)
UNSUPPORTED_CMD(ibv_cmd_create_wq)
UNSUPPORTED_CMD(ibv_cmd_dealloc_mw)
UNSUPPORTED_CMD(ibv_cmd_dealloc_pd)
UNSUPPORTED_CMD(ibv_cmd_dereg_mr)
UNSUPPORTED_CMD(ibv_cmd_destroy_ah)
UNSUPPORTED_CMD(ibv_cmd_destroy_counters)
UNSUPPORTED_CMD(ibv_cmd_destroy_cq)
UNSUPPORTED_CMD(ibv_cmd_destroy_flow)
UNSUPPORTED_CMD(ibv_cmd_destroy_flow_action)
UNSUPPORTED_CMD(ibv_cmd_destroy_qp)
UNSUPPORTED_CMD(ibv_cmd_destroy_rwq_ind_table)
UNSUPPORTED_CMD(ibv_cmd_destroy_srq)
UNSUPPORTED_CMD(ibv_cmd_destroy_wq)
UNSUPPORTED_CMD(ibv_cmd_detach_mcast)
UNSUPPORTED_CMD(ibv_cmd_free_dm)
UNSUPPORTED_CMD(ibv_cmd_get_context)
UNSUPPORTED_CMD(ibv_cmd_modify_cq)
UNSUPPORTED_CMD(ibv_cmd_modify_flow_action_esp)
UNSUPPORTED_CMD(ibv_cmd_modify_qp)
UNSUPPORTED_CMD(ibv_cmd_modify_qp_ex)
UNSUPPORTED_CMD(ibv_cmd_modify_srq)
UNSUPPORTED_CMD(ibv_cmd_modify_wq)
UNSUPPORTED_CMD(ibv_cmd_open_qp)
UNSUPPORTED_CMD(ibv_cmd_open_xrcd)
UNSUPPORTED_CMD(ibv_cmd_poll_cq)
UNSUPPORTED_CMD(ibv_cmd_post_recv)
UNSUPPORTED_CMD(ibv_cmd_post_send)
UNSUPPORTED_CMD(ibv_cmd_post_srq_recv)
UNSUPPORTED_CMD(ibv_cmd_query_context)
UNSUPPORTED_CMD(ibv_cmd_query_device_any)
UNSUPPORTED_CMD(ibv_cmd_query_mr)
UNSUPPORTED_CMD(ibv_cmd_query_port)
UNSUPPORTED_CMD(ibv_cmd_query_qp)
UNSUPPORTED_CMD(ibv_cmd_query_srq)
UNSUPPORTED_CMD(ibv_cmd_read_counters)
UNSUPPORTED_CMD(ibv_cmd_reg_dm_mr)
UNSUPPORTED_CMD(ibv_cmd_reg_dmabuf_mr)
UNSUPPORTED_CMD(ibv_cmd_reg_mr)
UNSUPPORTED_CMD(ibv_cmd_req_notify_cq)
UNSUPPORTED_CMD(ibv_cmd_rereg_mr)
UNSUPPORTED_CMD(ibv_cmd_resize_cq)
UNSUPPORTED_CMD(execute_ioctl)
UNSUPPORTED_CMD(ibv_read_ibdev_sysfs_file)

/* Read by providers while tearing down a context after the device went away. */
bool verbs_allow_disassociate_destroy;

/* A provider's constructor registers its driver: the fake matches no device to it. */
void verbs_register_driver_34(const void *ops);
void verbs_register_driver_34(const void *ops)
{
	(void)ops;
}

/* The context and object helpers a provider calls from its own verbs: never reached. */
void *_verbs_init_and_alloc_context(void);
void *_verbs_init_and_alloc_context(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

void *verbs_open_device(void);
void *verbs_open_device(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

void verbs_set_ops(void);
void verbs_set_ops(void)
{
}

void verbs_uninit_context(void);
void verbs_uninit_context(void)
{
}

void verbs_init_cq(void);
void verbs_init_cq(void)
{
}

void __verbs_log(void);
void __verbs_log(void)
{
}

unsigned int __ioctl_final_num_attrs(unsigned int num_attrs);
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs)
{
	return num_attrs;
}

#pragma GCC visibility pop
