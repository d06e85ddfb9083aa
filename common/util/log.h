/* SPDX-License-Identifier: MIT */
/* log.h: logging for the daemons and tools (never used by libgrm). */
#ifndef GRM_LOG_H
#define GRM_LOG_H

enum { GRM_LOG_FATAL, GRM_LOG_WARN, GRM_LOG_INFO, GRM_LOG_DEBUG };

extern int log_level;

/* Sets the program name prefixed to every line and the level (from
 * GRM_DEBUG: set means GRM_LOG_DEBUG). */
void log_init(const char *prog, int level);
void log_msg(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Logs at GRM_LOG_FATAL and exits 1. */
void fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* Levels are checked before the arguments are evaluated. */
#define log_warn(...)	do { if (log_level >= GRM_LOG_WARN) \
	log_msg(GRM_LOG_WARN, __VA_ARGS__); } while (0)
#define log_info(...)	do { if (log_level >= GRM_LOG_INFO) \
	log_msg(GRM_LOG_INFO, __VA_ARGS__); } while (0)
#define log_debug(...)	do { if (log_level >= GRM_LOG_DEBUG) \
	log_msg(GRM_LOG_DEBUG, __VA_ARGS__); } while (0)

#endif /* GRM_LOG_H */
