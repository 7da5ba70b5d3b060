#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"
#include "sock_comm.h"
#include "sock_sys.h"

void sock_fds_close(int ctrl_fd, const int *data_fds, unsigned n)
{
	if (ctrl_fd >= 0)
		close(ctrl_fd);
	for (unsigned i = 0; i < n; i++)
		if (data_fds[i] >= 0)
			close(data_fds[i]);
}

int sock_link_open(struct sock_link *link, enum sock_kind kind, int ctrl_fd, const int *data_fds,
		   const struct sock_rules *rules, const struct fl_endpoint *peer,
		   const char *addr)
{
	unsigned started = 0;
	int rc = FL_OK;

	link->ctrl_fd = ctrl_fd;
	link->rules = *rules;
	link->peer = *peer;
	sock_fault_init(&link->fault, peer->node, addr);
	if (rules->nstreams) {
		link->streams = calloc(rules->nstreams, sizeof(*link->streams));
		if (!link->streams)
			rc = fl_fail(FL_ERR_SYSTEM, "out of memory for %u socket streams",
				     rules->nstreams);
	}
	/* helpers block in send()/recv(); the control stream stays non-blocking */
	for (; !rc && started < rules->nstreams; started++) {
		rc = sock_set_nonblocking(data_fds[started], 0);
		if (!rc)
			rc = sock_stream_start(&link->streams[started], started, data_fds[started],
					       kind == SOCK_RECV, &link->fault);
		if (rc)
			break;
	}
	if (!rc)
		return FL_OK;
	for (unsigned i = 0; i < started; i++)
		sock_stream_stop(&link->streams[i]);
	sock_fds_close(ctrl_fd, data_fds, rules->nstreams);
	free(link->streams);
	link->streams = NULL;
	sock_fault_destroy(&link->fault);
	return rc;
}

int sock_link_failed(struct sock_link *link)
{
	if (!link->quiesced) {
		link->quiesced = 1;
		for (unsigned i = 0; i < link->rules.nstreams; i++)
			sock_stream_stop(&link->streams[i]);
		shutdown(link->ctrl_fd, SHUT_RDWR);
	}
	return sock_fault_report(&link->fault);
}

void sock_link_close(struct sock_link *link)
{
	for (unsigned i = 0; i < link->rules.nstreams; i++)
		sock_stream_stop(&link->streams[i]);
	for (unsigned i = 0; i < link->rules.nstreams; i++)
		close(link->streams[i].fd);
	close(link->ctrl_fd);
	free(link->streams);
	sock_fault_destroy(&link->fault);
}
