/* What the device-offload test inner (devoff_net.c) was called with; the test reads it. */
#ifndef DEVOFF_RECORD_H
#define DEVOFF_RECORD_H

#include <stddef.h>

#define DEVOFF_VDEV_RESULT 5   /* the device makeVDevice hands back */
#define DEVOFF_BAD_DEV 99      /* makeVDevice of this device fails with DEVOFF_VDEV_ERROR */
#define DEVOFF_VDEV_ERROR 4
#define DEVOFF_DPTR ((void *)0xd0ff5000)

struct devoff_record {
	int inits;
	int vdev_calls, vdev_ndevs, vdev_devs[8];
	int dmr_calls;
	void *dmr_comm, *dmr_mhandle;
	int consumed_calls, consumed_n, consumed_early; /* early: before test said done */
	void *consumed_comm, *consumed_req;
	void *send_comm, *recv_comm;           /* the last made */
	const void *send_devh, *recv_devh;     /* what connect/accept handed back */
	const void *recv_devh_asked;           /* *recvDevComm as NCCL passed it, last call */
	int accept_calls, accept_asked_changed; /* calls whose *recvDevComm differed */
	int reg_types;
	int isends, irecvs, tests;
	int last_send_tag, last_recv_tag;
	void *last_send_phandle, *last_recv_phandle, *last_irecv_req;
};

#endif
