#include "shim_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "plugin/base/fl_text.h"

#define SUBSYS_DEFAULT (SHIM_LOG_INIT | SHIM_LOG_BOOTSTRAP | SHIM_LOG_ENV)

struct subsys_name {
	const char *name;
	unsigned long bit;
};

static const struct subsys_name subsys_names[] = {
	{ "INIT", 0x1 },     { "COLL", 0x2 },	  { "P2P", 0x4 },	 { "SHM", 0x8 },
	{ "NET", 0x10 },     { "GRAPH", 0x20 },	  { "TUNING", 0x40 },	 { "ENV", 0x80 },
	{ "ALLOC", 0x100 },  { "CALL", 0x200 },	  { "PROXY", 0x400 },	 { "NVLS", 0x800 },
	{ "BOOTSTRAP", 0x1000 }, { "REG", 0x2000 }, { "PROFILE", 0x4000 }, { "RAS", 0x8000 },
	{ "ALL", ~0UL },
};

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static int log_level = FL_LOG_WARN;
static unsigned long log_mask = SUBSYS_DEFAULT;
static char log_host[64];
static atomic_int log_rank = -1;
/* Complaints about the settings themselves, printed once after setup. */
static char setup_problem[320];

static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void complain(const char *fmt, ...)
{
	size_t used = strlen(setup_problem);
	va_list ap;

	if (used + 3 >= sizeof(setup_problem))
		return;
	if (used)
		used += (size_t)snprintf(setup_problem + used, sizeof(setup_problem) - used, "; ");
	va_start(ap, fmt);
	vsnprintf(setup_problem + used, sizeof(setup_problem) - used, fmt, ap);
	va_end(ap);
	fl_text_escape_in_place(setup_problem, sizeof(setup_problem));
}

static void parse_level(const char *v)
{
	static const char *const levels[] = { "NONE", "VERSION", "WARN", "INFO", "ABORT", "TRACE" };

	if (!v || !*v)
		return;
	for (int i = 0; i < (int)(sizeof(levels) / sizeof(levels[0])); i++) {
		if (!strcasecmp(v, levels[i])) {
			log_level = i;
			return;
		}
	}
	complain("NCCL_DEBUG=\"%s\" not understood (VERSION, WARN, INFO or TRACE); using WARN", v);
}

static unsigned long subsys_bit(const char *word, size_t len)
{
	for (size_t i = 0; i < sizeof(subsys_names) / sizeof(subsys_names[0]); i++) {
		const char *name = subsys_names[i].name;

		if (strlen(name) == len && !strncasecmp(word, name, len))
			return subsys_names[i].bit;
	}
	return 0;
}

static void parse_subsys(const char *v)
{
	unsigned long mask = 0;
	int invert = 0;

	if (!v || !*v)
		return;
	if (*v == '^') {
		invert = 1;
		v++;
	}
	while (*v) {
		size_t len = strcspn(v, ",");
		unsigned long bit = subsys_bit(v, len);

		if (!bit && len)
			complain("NCCL_DEBUG_SUBSYS: unknown subsystem \"%.*s\" ignored", (int)len,
				 v);
		mask |= bit;
		v += len;
		if (*v == ',')
			v++;
	}
	log_mask = invert ? ~mask : mask;
}

static void setup(void)
{
	const char *rank = getenv("RANK");
	char *dot;

	parse_level(getenv("NCCL_DEBUG"));
	parse_subsys(getenv("NCCL_DEBUG_SUBSYS"));
	if (gethostname(log_host, sizeof(log_host) - 1))
		strcpy(log_host, "localhost");
	dot = strchr(log_host, '.');
	if (dot)
		*dot = '\0';
	if (rank && atomic_load(&log_rank) < 0)
		atomic_store(&log_rank, atoi(rank));
	if (setup_problem[0])
		fprintf(stderr, "%s:%d:%d [%d] NCCL WARN %s\n", log_host, getpid(), gettid(),
			atomic_load(&log_rank), setup_problem);
}

void shim_log_set_rank(int rank)
{
	pthread_once(&setup_once, setup);
	atomic_store(&log_rank, rank);
}

int shim_log_enabled(int level, unsigned long flags)
{
	pthread_once(&setup_once, setup);
	if (level > log_level || level == FL_LOG_NONE)
		return 0;
	/* Warnings always pass: a subsystem filter should never hide a failure. */
	return level <= FL_LOG_WARN || (flags & log_mask);
}

static const char *level_word(int level)
{
	switch (level) {
	case FL_LOG_VERSION: return "VERSION";
	case FL_LOG_WARN: return "WARN";
	case FL_LOG_ABORT: return "ABORT";
	case FL_LOG_TRACE: return "TRACE";
	default: return "INFO";
	}
}

void shim_log(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
	char text[1024];
	const char *base;
	int len, start;
	va_list ap;

	if (!shim_log_enabled(level, flags))
		return;
	len = snprintf(text, sizeof(text), "%s:%d:%d [%d] ", log_host, getpid(), gettid(),
		       atomic_load(&log_rank));
	if (level == FL_LOG_WARN && file) {
		base = strrchr(file, '/');
		len += snprintf(text + len, sizeof(text) - len, "%s:%d ", base ? base + 1 : file,
				line);
	}
	len += snprintf(text + len, sizeof(text) - len, "NCCL %s ", level_word(level));
	start = len;
	va_start(ap, fmt);
	len += vsnprintf(text + len, sizeof(text) - len, fmt, ap);
	va_end(ap);
	if (len > (int)sizeof(text) - 2)
		len = sizeof(text) - 2;
	while (len > 0 && text[len - 1] == '\n')
		len--;
	/* a value the message quotes (an environment value, a name) is shown, never obeyed */
	text[len] = '\0';
	fl_text_escape_in_place(text + start, sizeof(text) - 1 - (size_t)start);
	len = (int)strlen(text);
	text[len++] = '\n';
	/* One write per line so lines of concurrent ranks do not interleave. */
	if (write(STDERR_FILENO, text, len) < 0)
		return;
}
