/*
 * The doctor's look at a wrapped plugin (FABRICLAB_TRANSPORT=ext:SPEC, or
 * --ext SPEC): found as fabriclab finds it, its ABI version and path, the
 * optional entries it has, and every property of every device, as the ext
 * transport reads them and as NCCL_DEBUG=INFO shows them at init.
 */
#include <stdlib.h>
#include <string.h>

#include "plugin/base/error.h"
#include "plugin/transport/ext/ext_describe.h"
#include "doctor.h"

#define EXT_CHECK "plugin"

static const char *spec_of(const struct doctor *d)
{
	const char *env = getenv("FABRICLAB_TRANSPORT");

	if (d->ext)
		return d->ext;
	return env && !strncmp(env, "ext:", 4) ? env + 4 : NULL;
}

static void check_devices(struct doctor *d, const struct fl_host_net *in)
{
	char props[768], subject[40];
	struct fl_props p;
	int ndev = 0;

	if (in->devices(&ndev) || ndev < 1) {
		doctor_add(d, DOCTOR_FAIL, EXT_CHECK, in->name, "NCCL_DEBUG=INFO fabriclab bench",
			   "%s reports no device (devices() gave %d): NCCL would skip it", in->name,
			   ndev);
		return;
	}
	for (int dev = 0; dev < ndev; dev++) {
		snprintf(subject, sizeof(subject), "%.20s/%d", in->name, dev);
		if (ext_inner_props(in, dev, &p)) {
			doctor_add(d, DOCTOR_FAIL, EXT_CHECK, subject, "", "getProperties(%d) "
				   "failed: %s", dev, fl_error_text());
			continue;
		}
		ext_describe_props(&p, props, sizeof(props));
		doctor_add(d, DOCTOR_INFO, EXT_CHECK, subject, "", "device %d %s", dev, props);
	}
}

void doctor_check_ext(struct doctor *d)
{
	const char *spec = spec_of(d);
	char what[EXT_PATH_LEN + 160];
	struct fl_host_net in;
	struct ext_ctx ctx;
	int rc;

	if (!spec)
		return;
	if (ext_inner_load(spec, &in)) {
		doctor_add(d, DOCTOR_FAIL, EXT_CHECK, spec, "ldd, nm -D --defined-only | grep "
			   "ncclNetPlugin", "%s", fl_error_text());
		return;
	}
	rc = ext_inner_init(&in, NULL, NULL, &ctx);
	if (rc) {
		ext_describe_plugin(&in, what, sizeof(what));
		doctor_add(d, DOCTOR_FAIL, EXT_CHECK, in.name, "NCCL_DEBUG=INFO fabriclab bench",
			   "%s: init failed (error %d)", what, rc);
		return;
	}
	/* its slots are read once init returned, as NCCL reads them (some fill them in init) */
	if (ext_inner_bind(&in)) {
		doctor_add(d, DOCTOR_FAIL, EXT_CHECK, in.name, "NCCL_DEBUG=INFO fabriclab bench",
			   "%s", fl_error_text());
		ext_inner_close_ctx(&in, &ctx);
		return;
	}
	ext_describe_plugin(&in, what, sizeof(what));
	doctor_add(d, DOCTOR_PASS, EXT_CHECK, in.name, "", "wrapping %s", what);
	check_devices(d, &in);
	ext_inner_close_ctx(&in, &ctx);
}
