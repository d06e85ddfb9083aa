/* gmi_int.h: the client library's internal state (hidden symbols). */
#ifndef GRM_GMI_INT_H
#define GRM_GMI_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include "grm.h"
#include "rec.h"
#include "seg.h"

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/* Process tracing state. */
enum { GMI_UNINIT = 0, GMI_ON = 1, GMI_OFF = 2 };

/* One event type; defined != 0 once GMI_DefineEvent succeeded. */
struct gmi_type {
	uint8_t		defined;
	uint8_t		cls;
	uint8_t		attr;
	uint8_t		has_str;
	uint16_t	fixed_len;	/* record length when !has_str */
	struct rec_fmt	fmt;
};

/* The calling thread's chunk.  data == NULL: no chunk yet. */
struct gmi_thread {
	char			*data;
	_Atomic uint64_t	*committed;
	uint32_t		off;
	uint32_t		cap;
	int32_t			idx;
	uint32_t		tid;
	uint64_t		lost;	/* events not recorded, not yet reported */
	int			keyed;	/* exit destructor registered */
};

extern _Atomic int gmi_state;
extern struct seg_hdr *gmi_seg;	/* shared; read only for `enabled` */
extern __thread struct gmi_thread gmi_thr
    __attribute__((tls_model("initial-exec")));

/* Attaches the process (once); returns the resulting state. */
int gmi_init(void);
/* Gives the thread a new chunk with room for need bytes; NULL if none
 * could be had in time (the event is then counted as lost). */
char *gmi_new_chunk(uint32_t need);
/* Locks (phase 0) or unlocks (1) the definition lock around fork. */
void gmi_def_lock_fork(int phase);
/* Sets up the predefined types (block begin/end/name). */
void gmi_define_predefined(void);
/* Tells the LM that free chunks fell below its threshold. */
void gmi_notify_lm(void);
/* Error reporting: returns code, with one line on stderr if GRM_DEBUG. */
int gmi_error(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* GRM_GMI_INT_H */
