/*
 * Every answer of the web lab carries the same headers, libmicrohttpd's own
 * error pages included: not cached, not sniffed, not framed by another site,
 * nothing fetched from elsewhere.
 *
 * libmicrohttpd 0.9.75 writes its own 400, 413 and 431 pages (a malformed
 * request line or Content-Length, a header past the memory limit) without
 * asking the application, and has no option to add headers to them. It queues
 * them through its exported MHD_queue_response, called through the PLT
 * (src/microhttpd/connection.c:2343, transmit_error_response_len), so the
 * definition below, in the executable, comes first in the lookup and sees
 * every response before the library's own function queues it. The lab's test
 * checks that such a page carries the headers (test_lab_serve.sh), so a
 * library built to bind its calls internally would be noticed.
 */
#include <dlfcn.h>
#include <microhttpd.h>
#include <stdio.h>

#include "lab_web.h"

typedef enum MHD_Result (*queue_fn)(struct MHD_Connection *, unsigned int,
				    struct MHD_Response *);

static queue_fn real_queue;

static const char *const headers[][2] = {
	{ "Cache-Control", "no-store" },
	{ "X-Content-Type-Options", "nosniff" },
	{ "Referrer-Policy", "no-referrer" },
	{ "Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; "
				     "img-src 'self' data:; frame-ancestors 'self'; "
				     "form-action 'none'" },
};

int lab_headers_init(void)
{
	/* a function pointer through an object pointer: what dlsym(3) is for */
	*(void **)&real_queue = dlsym(RTLD_NEXT, "MHD_queue_response");
	return real_queue ? 0 : -1;
}

void lab_secure_headers(struct MHD_Response *r)
{
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++)
		if (!MHD_get_response_header(r, headers[i][0]))
			MHD_add_response_header(r, headers[i][0], headers[i][1]);
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
				   struct MHD_Response *response)
{
	lab_secure_headers(response);
	/* An error page of the library's names no type: with nosniff, a browser shows it as text. */
	if (status_code >= 400 && !MHD_get_response_header(response, "Content-Type"))
		MHD_add_response_header(response, "Content-Type", "text/html; charset=utf-8");
	return real_queue ? real_queue(connection, status_code, response) : MHD_NO;
}
