/*
 * `fabriclab lab --serve`: the lab in the browser. One run at a time: a page
 * asks for a fabric, a size, a scenario and a target; the server starts the
 * real lab as a child process, streams its step times as they happen
 * (Server-Sent Events) and serves the merged report when it is done.
 */
#ifndef FABRICLAB_LAB_WEB_H
#define FABRICLAB_LAB_WEB_H

#include <stddef.h>
#include <sys/types.h>

#define LAB_PROGRESS_ENV "FABRICLAB_LAB_PROGRESS"

enum lab_job_state { JOB_IDLE, JOB_RUNNING, JOB_DONE, JOB_FAILED, JOB_CANCELLED };

struct lab_job_request {
	char fabric[8];
	int nodes;
	char scenario[16];
	int target; /* -1: the lab picks one */
	int steps;  /* 0: the lab's default */
};

/* Where runs go and which binary runs them; once, before the server starts. */
void lab_job_setup(const char *dir, const char *self_path);
/* 0 started; -1 with *http and why set (409 a run is going on, 400 a bad request). */
int lab_job_start(const struct lab_job_request *req, int *http, char *why, size_t len);
/* 0 asked to stop; -1 when nothing runs. */
int lab_job_cancel(void);
/* The state now, with the run's number (0 before the first). */
enum lab_job_state lab_job_state(int *run);
const char *lab_job_state_name(enum lab_job_state s);
/* A file of the current run ("progress.tsv", "result.json", "report.html", "lab.out"). */
int lab_job_path(const char *name, char *path, size_t len);
/* Stops a run still going (the server is stopping). */
void lab_job_shutdown(void);

/* The page (lab_page.c). */
extern const char lab_page_html[];

int lab_serve_main(int argc, char **argv);

#endif
