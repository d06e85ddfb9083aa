/* pv.h: the prove trace analyser's commands and shared helpers. */
#ifndef GRM_PV_H
#define GRM_PV_H

#include "tape.h"

/* Opens a trace; on error prints why and returns NULL. */
struct tape_r *pv_open(const char *path);
/* Prints the reader's error for path, closes r and returns exit status 1. */
int pv_fail(const char *path, struct tape_r *r);
/* Flushes stdout; returns 0, or 1 after printing a write error. */
int pv_flush(void);

/* Commands; each returns the exit status. */
int pv_dump(const char *path);
int pv_stats(const char *path);
/* prove svg FILE [-o OUT] [-w WIDTH]: argv holds the words after "svg". */
int pv_svg(int argc, char **argv);

#endif /* GRM_PV_H */
