/*
 * What the socket transport exchanges before any data moves: the listen handle
 * (through NCCL's bootstrap) and the hello that opens every TCP stream. Both
 * are fixed-size little-endian records; decoding validates every field, so
 * garbage is an error, never a crash.
 */
#ifndef FL_SOCK_HANDLE_H
#define FL_SOCK_HANDLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/fl_types.h"

#define SOCK_HANDLE_MAGIC 0x3148434f534c4637ULL /* "7FLSOCH1" */
#define SOCK_HELLO_MAGIC 0x3145434f534c4637ULL  /* "7FLSOCE1" */
#define SOCK_WIRE_VERSION 1
#define SOCK_HELLO_SIZE 128

struct sock_handle {
	struct sockaddr_storage addr; /* the listener's address and port */
	socklen_t addrlen;
	uint64_t nonce;               /* per listen; every hello must echo it */
	struct fl_endpoint listener;
};

enum sock_stream_kind { SOCK_STREAM_CONTROL = 0, SOCK_STREAM_DATA = 1 };

struct sock_hello {
	uint8_t kind;
	uint8_t index;     /* data stream number; 0 on control */
	uint8_t nstreams;  /* data streams of this connection */
	uint64_t nonce;
	uint64_t conn_id;  /* groups the streams of one connection */
	uint32_t inline_max; /* the sender's split rules, which the receiver follows */
	uint32_t min_chunk;
	struct fl_endpoint endpoint; /* the connector; zero on data streams */
};

/*
 * Every record put on the wire (handle, hello, the ib transport's metadata)
 * starts with its magic (8 bytes) and wire version (2 bytes), so a stranger's
 * bytes or a peer of another version are told apart before any field is used.
 */
#define SOCK_RECORD_HEADER_SIZE 10
/* Zeroes the record and writes its header. */
void sock_record_start(uint8_t *buf, size_t size, uint64_t magic, uint16_t version);
/* err, with "<what>: " and the reason, unless buf starts with this magic and version. */
int sock_record_check(const uint8_t *buf, uint64_t magic, uint16_t version, int err,
		      const char *what);

/* The same listener (address and nonce): a connect in progress is found by this. */
int sock_handle_same_listener(const struct sock_handle *a, const struct sock_handle *b);

void sock_handle_encode(const struct sock_handle *h, void *buf);
/* FL_ERR_ARGUMENT, with the reason, when buf is not a valid handle. */
int sock_handle_decode(const void *buf, struct sock_handle *h);

void sock_hello_encode(const struct sock_hello *h, uint8_t buf[SOCK_HELLO_SIZE]);
/* FL_ERR_REMOTE, with the reason, unless buf is a hello for this listener (nonce). */
int sock_hello_decode(const uint8_t buf[SOCK_HELLO_SIZE], uint64_t nonce, struct sock_hello *h);

#endif
