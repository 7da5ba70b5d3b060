/*
 * Who may drive the web lab: only its user's browser, on this machine.
 *
 * - Host must name the listen address or a loopback name. A DNS rebinding
 *   page (http://evil.example:PORT, its name later pointed at 127.0.0.1) is
 *   same-origin with itself, so the browser lets it talk to us, but its
 *   requests still say "Host: evil.example:PORT". An IP literal cannot be
 *   rebound, so on 0.0.0.0 any IPv4 literal is taken.
 * - A request carrying an Origin must come from the origin the Host names:
 *   a cross-site page's fetch, form or EventSource says where it comes from.
 * - Every POST is application/json: a cross-site page cannot send that
 *   without a CORS pre-flight (OPTIONS), which the server refuses, so even a
 *   browser that sent no Origin could not start a run.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lab_web.h"

static int refuse_host(char *why, size_t len, const char *host, const char *text)
{
	snprintf(why, len, "Host \"%.80s\": %s", host, text);
	return -1;
}

/* "name:port", "[v6]:port" or "name" (port 80) into name and port; -1 when malformed. */
static int split_host(const char *host, char *name, size_t len, unsigned *port)
{
	const char *colon = strrchr(host, ':'), *close = strrchr(host, ']');
	char *end;
	long p;

	if (host[0] == '[' && (!close || (colon && colon < close)))
		colon = NULL;
	if (host[0] == '[' && !close)
		return -1;
	if (!colon) {
		*port = 80;
		colon = host + strlen(host);
	} else {
		p = strtol(colon + 1, &end, 10);
		if (*end || end == colon + 1 || p <= 0 || p > 65535)
			return -1;
		*port = (unsigned)p;
	}
	if (colon == host || (size_t)(colon - host) >= len)
		return -1;
	snprintf(name, len, "%.*s", (int)(colon - host), host);
	return 0;
}

static bool is_loopback_name(const char *name)
{
	struct in_addr a;

	if (!strcasecmp(name, "localhost") || !strcmp(name, "[::1]"))
		return true;
	return inet_pton(AF_INET, name, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

int lab_guard_host(const struct lab_guard *g, const char *host, char *why, size_t len)
{
	char name[128];
	unsigned port;
	struct in_addr a;

	if (!host || !host[0]) {
		snprintf(why, len, "Host: missing (HTTP/1.1 with a Host header only)");
		return -1;
	}
	if (split_host(host, name, sizeof(name), &port))
		return refuse_host(why, len, host, "expected NAME:PORT");
	if (port != g->port)
		return refuse_host(why, len, host, "not this server's port");
	if (is_loopback_name(name) || !strcasecmp(name, g->listen_host))
		return 0;
	if (g->any_address && inet_pton(AF_INET, name, &a) == 1)
		return 0;
	return refuse_host(why, len, host, g->any_address ?
			   "this server answers to an IPv4 address or localhost only "
			   "(a name could be a DNS rebinding page)" :
			   "this server answers to its listen address or localhost only "
			   "(a name could be a DNS rebinding page)");
}

int lab_guard_origin(const char *origin, const char *host, char *why, size_t len)
{
	if (!origin)
		return 0;
	if (host && !strncasecmp(origin, "http://", 7) && !strcasecmp(origin + 7, host))
		return 0;
	snprintf(why, len, "Origin \"%.80s\": cross-origin requests are refused (only this "
		 "server's own page may call it)", origin);
	return -1;
}

int lab_guard_json_type(const char *type, char *why, size_t len)
{
	size_t n = strlen("application/json");

	if (type && !strncasecmp(type, "application/json", n) &&
	    (type[n] == '\0' || type[n] == ';' || isspace((unsigned char)type[n])))
		return 0;
	snprintf(why, len, "Content-Type \"%.80s\": expected application/json",
		 type ? type : "(none)");
	return -1;
}

int lab_guard_fetch_site(const char *site, char *why, size_t len)
{
	if (!site || !strcasecmp(site, "same-origin") || !strcasecmp(site, "none"))
		return 0;
	snprintf(why, len, "Sec-Fetch-Site \"%.40s\": the lab's API answers its own page only",
		 site);
	return -1;
}

/*
 * Headers a request names once at most. Of a repeated one libmicrohttpd hands
 * the first, while a proxy or a browser extension in between may have acted
 * on another: a second Host or Origin could pass a check meant for the other,
 * and a second Content-Length frames a different body. A body framed both by
 * Content-Length and by chunks is refused for the same reason.
 */
static const char *const single[LAB_SINGLE_HEADERS] = {
	"Host", "Origin", "Sec-Fetch-Site", "Content-Type", "Content-Length", "Transfer-Encoding"
};
enum { CONTENT_LENGTH = 4, TRANSFER_ENCODING = 5 };

int lab_guard_single(const char *name)
{
	for (int i = 0; i < LAB_SINGLE_HEADERS; i++)
		if (!strcasecmp(name, single[i]))
			return i;
	return -1;
}

int lab_guard_repeats(const unsigned count[LAB_SINGLE_HEADERS], char *why, size_t len)
{
	for (int i = 0; i < LAB_SINGLE_HEADERS; i++)
		if (count[i] > 1) {
			snprintf(why, len, "%s: given %u times; a request names each of Host, "
				 "Origin, Sec-Fetch-Site, Content-Type, Content-Length and "
				 "Transfer-Encoding once at most", single[i], count[i]);
			return -1;
		}
	if (count[CONTENT_LENGTH] && count[TRANSFER_ENCODING]) {
		snprintf(why, len, "Content-Length and Transfer-Encoding: a body is framed by one "
			 "of them, not both");
		return -1;
	}
	return 0;
}
