/* Sockets for the side channel, on the interface the socket transport would choose. */
#include "ib_side.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "log.h"
#include "sock_config.h"
#include "sock_sys.h"

static pthread_mutex_t side_lock = PTHREAD_MUTEX_INITIALIZER;
static int side_ready;
static struct sock_iface side_iface;

int ib_side_init(void)
{
	struct sock_config cfg;
	int n = 0, rc = FL_OK;

	pthread_mutex_lock(&side_lock);
	if (!side_ready) {
		rc = sock_config_load(&cfg);
		if (!rc)
			rc = sock_iface_discover(&cfg, &side_iface, 1, &n);
		if (!rc && !n)
			rc = fl_fail(FL_ERR_SYSTEM, "ib: no network interface for the side channel "
				     "(check NCCL_SOCKET_IFNAME)");
		if (!rc) {
			char addr[SOCK_ADDR_STRLEN];

			side_ready = 1;
			sock_addr_format((struct sockaddr *)&side_iface.addr, addr, sizeof(addr));
			FL_INFO("ib: connection setup over %s %s", side_iface.name, addr);
		}
	}
	pthread_mutex_unlock(&side_lock);
	return rc;
}

int ib_side_listen(int *fd, struct sockaddr_storage *addr, socklen_t *addrlen)
{
	int rc = ib_side_init();

	*fd = -1;
	if (rc)
		return rc;
	*addr = side_iface.addr;
	*addrlen = side_iface.addrlen;
	if (addr->ss_family == AF_INET)
		((struct sockaddr_in *)addr)->sin_port = 0;
	else
		((struct sockaddr_in6 *)addr)->sin6_port = 0;
	*fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return fl_fail(FL_ERR_SYSTEM, "socket: %s", strerror(errno));
	if (bind(*fd, (struct sockaddr *)addr, *addrlen) || listen(*fd, SOMAXCONN) ||
	    getsockname(*fd, (struct sockaddr *)addr, addrlen)) {
		rc = fl_fail(FL_ERR_SYSTEM, "ib side channel listen on %s: %s", side_iface.name,
			     strerror(errno));
		close(*fd);
		*fd = -1;
	}
	return rc;
}

int ib_side_connect(const struct sockaddr_storage *addr, socklen_t addrlen, const char *name,
		    int *fd)
{
	*fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return fl_fail(FL_ERR_SYSTEM, "socket: %s", strerror(errno));
	if (sock_tune(*fd, 0))
		return FL_ERR_SYSTEM;
	if (connect(*fd, (const struct sockaddr *)addr, addrlen) && errno != EINPROGRESS &&
	    errno != EINTR)
		return fl_fail(FL_ERR_SYSTEM, "connect to %s: %s", name, strerror(errno));
	return FL_OK;
}

int ib_side_connected(int fd, const char *name, int *complete)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int err = 0;
	socklen_t len = sizeof(err);

	*complete = 0;
	if (poll(&pfd, 1, 0) <= 0 || !pfd.revents)
		return FL_OK;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	if (err)
		return fl_fail(FL_ERR_SYSTEM, "connect to %s: %s", name, strerror(err));
	*complete = 1;
	return FL_OK;
}
