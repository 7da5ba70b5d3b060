/* A port's rate from the width and lane speed codes ibv_query_port reports. */
#ifndef FL_IB_SPEED_H
#define FL_IB_SPEED_H

/* Lanes for an active_width code (1x=1, 2x=16, 4x=2, 8x=4, 12x=8); 0 when unknown. */
int ib_width_lanes(int active_width);
/* Mbps per lane for an active_speed code (SDR=1 ... NDR=128, XDR=256); 0 when unknown. */
int ib_lane_mbps(int active_speed);
/* width x lane speed in Mbps; 0 when either code is unknown. */
int ib_port_mbps(int active_width, int active_speed);
/* "4X HDR" and the like, for logs; "?" parts for unknown codes. */
const char *ib_speed_name(int active_speed);

#endif
