/*
 * A topology file in whichever form the user has: fabriclab's description
 * (JSON with "fabriclab_fabric"), lldpctl's JSON (with "lldp", or a folder of
 * them, one per host), or ibnetdiscover's text. The form is told from the
 * content, not the name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fabric/topo/topo_json.h"
#include "topology.h"

#define MAX_TEXT (64u << 20) /* an ibnetdiscover file of 100k nodes is a few MB */

static char *slurp(const char *path, size_t *n, char *why, size_t len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    (size_t)size > MAX_TEXT || !(buf = malloc((size_t)size + 1)) ||
	    fread(buf, 1, (size_t)size, f) != (size_t)size) {
		snprintf(why, len, "%s: %s", path, f && errno == 0 ? "too large or unreadable" :
			 strerror(errno ? errno : EIO));
		free(buf);
		if (f)
			fclose(f);
		return NULL;
	}
	fclose(f);
	buf[size] = '\0';
	*n = (size_t)size;
	return buf;
}

int topo_read(const char *path, struct ft_topo *t, char *why, size_t len)
{
	struct stat st;
	const char *p;
	size_t n;
	char *text;
	int rc;

	ft_init(t);
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return topo_read_lldp(path, t, why, len);
	errno = 0;
	text = slurp(path, &n, why, len);
	if (!text)
		return -1;
	p = text + strspn(text, " \t\r\n");
	if (*p != '{')
		rc = topo_read_ibnet(text, path, t, why, len);
	else if (strstr(text, "\"fabriclab_fabric\""))
		rc = ft_parse_json(text, n, path, t, why, len);
	else if (strstr(text, "\"lldp\""))
		rc = topo_read_lldp(path, t, why, len);
	else {
		snprintf(why, len, "%s: a JSON object that is neither fabriclab's description "
			 "(\"fabriclab_fabric\") nor lldpctl -f json's (\"lldp\")", path);
		rc = -1;
	}
	free(text);
	return rc;
}
