/* What the mimic test inner (mimic_net.c) saw; the tests read it. */
#ifndef MIMIC_RECORD_H
#define MIMIC_RECORD_H

#define MIMIC_NDEV 8       /* physical devices */
#define MIMIC_MAX_VDEVS 8  /* virtual devices it can make */

struct mimic_record {
	int inits, init_prof_null; /* inits, and those given no profiler callback */
	int vdev_calls, vdev_refused, vdevs;
	int vdev_ndevs[MIMIC_MAX_VDEVS], vdev_devs[MIMIC_MAX_VDEVS][8];
	int isends, irecvs, hinted_irecvs, early_done;
	int event_starts, event_stops;
	void *last_event_phandle;
};

#endif
