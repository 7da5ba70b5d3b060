#include "report.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "base/error.h"
#include "report_live.h"

#define DEFAULT_DIR "fabriclab-reports"
#define DEFAULT_INTERVAL_S 10
#define MAX_INTERVAL_S 86400
#define LIVE_WINDOW_MIN_MS 100
#define LIVE_WINDOW_MAX_MS 60000

/* Relative to the folder at the first init: a later chdir does not move the reports. */
static int absolute_dir(const char *dir, char *out, size_t len)
{
	char cwd[PATH_MAX];

	if (dir[0] == '/') {
		if (snprintf(out, len, "%s", dir) >= (int)len)
			return fl_fail(FL_ERR_USAGE, "FABRICLAB_REPORT_DIR is too long");
		return FL_OK;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return fl_fail(FL_ERR_SYSTEM, "cannot resolve FABRICLAB_REPORT_DIR=\"%s\": no "
			       "current folder", dir);
	if (snprintf(out, len, "%s/%s", strcmp(cwd, "/") ? cwd : "", dir) >= (int)len)
		return fl_fail(FL_ERR_USAGE, "FABRICLAB_REPORT_DIR is too long");
	return FL_OK;
}

int fl_report_config_from_env(struct fl_report_config *cfg)
{
	static const char *const modes[] = { "off", "brief", "full", NULL };
	static const char *const dir_names[] = { "FABRICLAB_REPORT_DIR", NULL };
	const char *dir = fl_env_first(dir_names);
	int mode, rc;

	memset(cfg, 0, sizeof(*cfg));
	rc = fl_env_choice("FABRICLAB_REPORT", modes, FL_REPORT_FULL, &mode);
	if (!rc)
		rc = fl_env_long("FABRICLAB_REPORT_INTERVAL", DEFAULT_INTERVAL_S, 0, MAX_INTERVAL_S,
				 &cfg->interval_s);
	if (!rc)
		rc = fl_env_long("FABRICLAB_LIVE_WINDOW_MS", FL_LIVE_WINDOW_MS_DEFAULT,
				 LIVE_WINDOW_MIN_MS, LIVE_WINDOW_MAX_MS, &cfg->live_window_ms);
	if (!rc)
		rc = absolute_dir(dir ? dir : DEFAULT_DIR, cfg->dir, sizeof(cfg->dir));
	cfg->mode = (enum fl_report_mode)mode;
	return rc;
}
