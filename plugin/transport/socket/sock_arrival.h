/*
 * When received bytes arrived, by the kernel's clock rather than the reader's:
 * a helper thread blocked in recv is woken when its last bytes arrive, but on a
 * loaded host it may get a CPU milliseconds later, and a wire interval ending
 * at its read would hold that wait. With SO_TIMESTAMPNS the kernel stamps each
 * received segment, and a read reports the stamp of the last segment it took
 * (or of a later one TCP merged into it): never before its bytes arrived,
 * never after the read.
 */
#ifndef FL_SOCK_ARRIVAL_H
#define FL_SOCK_ARRIVAL_H

#include <stddef.h>
#include <stdint.h>

/* Asks the kernel to stamp what fd receives; false where it cannot (reads then report 0). */
int sock_arrival_enable(int fd);

/*
 * recv(fd, buf, len, flags), retried on EINTR: 0 and *got, -1 at EOF, else the
 * errno. *ago_ns: how long before the call returned the last segment it read
 * had arrived; 0 when the kernel gave no stamp.
 */
int sock_recv_arrival(int fd, uint8_t *buf, size_t len, int flags, size_t *got,
		      uint64_t *ago_ns);

#endif
