/* fabriclab's version string, one for the plugin, the tool, the reports and the package. */
#ifndef FL_VERSION_H
#define FL_VERSION_H

/* "0.2.0+g1a2b3c4d" and the like: scripts/version.sh at build time. */
const char *fl_version(void);

#endif
