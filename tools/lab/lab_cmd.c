/*
 * Outside commands (ip, tc) run without a shell: arguments are never parsed
 * again, and what the command says on failure comes back as the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"

extern char **environ;

static void join_argv(const char *const argv[], char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; argv[i] && used + 1 < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
}

/* Everything the command printed, last line kept whole when it fits. */
static void read_all(int fd, char *out, size_t len)
{
	size_t used = 0;
	char scrap[512];
	ssize_t n;

	for (;;) {
		char *dst = used + 1 < len ? out + used : scrap;
		size_t room = used + 1 < len ? len - used - 1 : sizeof(scrap);

		n = read(fd, dst, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (dst == out + used)
			used += (size_t)n;
	}
	out[used] = '\0';
	while (used && (out[used - 1] == '\n' || out[used - 1] == ' '))
		out[--used] = '\0';
}

static int spawn_with_pipes(const char *const argv[], int in[2], int out[2], pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none;
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, out[1], 2);
	posix_spawn_file_actions_addclose(&fa, in[1]);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	/* Our handlers only set a flag: the command itself must still die of Ctrl-C. */
	posix_spawnattr_init(&attr);
	sigemptyset(&none);
	sigaddset(&none, SIGINT);
	sigaddset(&none, SIGTERM);
	sigaddset(&none, SIGHUP);
	sigaddset(&none, SIGPIPE);
	posix_spawnattr_setsigdefault(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawnp(pid, argv[0], &fa, &attr, (char *const *)argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

static void write_all(int fd, const char *text)
{
	size_t left = text ? strlen(text) : 0;

	while (left) {
		ssize_t n = write(fd, text, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		text += n;
		left -= (size_t)n;
	}
}

int lab_cmd(const char *const argv[], const char *input, char *why, size_t why_len)
{
	char said[512], line[256];
	int in[2], out[2], status, rc;
	pid_t pid;

	join_argv(argv, line, sizeof(line));
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		snprintf(why, why_len, "%s: pipe: %s", line, strerror(errno));
		return -1;
	}
	rc = spawn_with_pipes(argv, in, out, &pid);
	close(in[0]);
	close(out[1]);
	if (rc) {
		close(in[1]);
		close(out[0]);
		snprintf(why, why_len, "%s: cannot run %s: %s", line, argv[0], strerror(rc));
		return -1;
	}
	/* ip's batches here are a few hundred bytes: they fit the pipe, no deadlock. */
	write_all(in[1], input);
	close(in[1]);
	read_all(out[0], said, sizeof(said));
	close(out[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		snprintf(why, why_len, "%s: killed by signal %d%s%s", line, WTERMSIG(status),
			 *said ? ": " : "", said);
	else
		snprintf(why, why_len, "%s: exit status %d%s%s", line, WEXITSTATUS(status),
			 *said ? ": " : "", said);
	return -1;
}
