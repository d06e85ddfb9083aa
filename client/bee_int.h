/* SPDX-License-Identifier: MIT */
/* bee_int.h: the BEE layer's internal state (client/bee*.c, hidden). */
#ifndef GRM_BEE_INT_H
#define GRM_BEE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "gmi_int.h"
#include "grm/bee.h"

/* How a variant field is stored in the user's structure. */
enum bee_ctype {
	BEE_I8, BEE_I16, BEE_I32, BEE_I64,	/* signed integers */
	BEE_U8, BEE_U16, BEE_U32, BEE_U64,	/* unsigned integers */
	BEE_CHAR,				/* %c: char, its code */
	BEE_F32, BEE_F64,			/* float, double */
	BEE_PTR,				/* %p: void * */
	BEE_STRP,				/* %s: char * */
	BEE_CHARS				/* %Ns: char[N] in place */
};

struct bee_field {
	uint8_t		ctype;		/* enum bee_ctype */
	uint8_t		kind;		/* enum rec_kind it is recorded as */
	uint16_t	size;		/* bytes in the structure */
	uint32_t	off;		/* offset in the structure */
};

/* A class's variant: a C structure laid out by natural alignment. */
struct bee_layout {
	unsigned		n;
	uint32_t		size;	/* sizeof the structure */
	struct bee_field	f[REC_ARGS_MAX];
};

/* Parses a type descriptor (Event_Register_Class); 0 or -1. */
int bee_layout_parse(const char *type, struct bee_layout *out);
/* Decodes the variant at var into f[l->n]; strings point into it (or
 * at the string a char * field points to).  Returns l->n, or -1 if var
 * is NULL while fields are expected. */
int bee_decode(const struct bee_layout *l, const void *var,
	       struct rec_field *f);

/* Event_Handle_Rate settings packed in one word, read without a lock. */
#define BEE_RATE(nr, acc, disp) \
	((uint64_t)(nr) << 8 | (uint64_t)(acc) << 4 | (uint64_t)(disp))
#define BEE_RATE_NR(r)		((r) >> 8)
#define BEE_RATE_ACC(r)		((int)((r) >> 4 & 15))
#define BEE_RATE_DISP(r)	((int)((r) & 15))

enum { BEE_C_FREE = 0, BEE_C_LIVE = 1, BEE_C_DELETED = 2 };

/* An event class.  Everything but st, rate and the switches is written
 * once, before st turns LIVE (release), and never freed. */
struct bee_class {
	_Atomic int		st;		/* BEE_C_* */
	const char		*name;
	const char		*type;		/* descriptor; NULL: no sensors */
	int			size;
	struct bee_layout	lay;
	_Atomic uint64_t	rate;		/* BEE_RATE() */
	uint8_t			sensors_off;	/* Event_Sensor_Control; bee_lock */
	uint8_t			disabled;	/* Event_Disable; bee_lock */
};

/* A live class, or NULL (unknown, deleted, or out of range). */
struct bee_class *bee_class_get(int cls);

/* One event type of the sensor layer: its id and whether its definition
 * is in the trace. */
struct bee_type {
	_Atomic int	eid;		/* 0: none yet */
	_Atomic int	defined;
};

struct bee_agg;

/*
 * A sensor: one (name, class, attribute).  Made under bee_lock and never
 * freed; name, cls, attr and self.eid never change.  The aggregate types
 * (one per accumulation mode) are made when first needed.
 */
struct bee_sensor {
	char			*name;
	int			cls;
	int			attr;
	struct bee_type		self;
	struct bee_type		agg[3];		/* by Event_accumulation_t */
	_Atomic int		state;		/* E_ACTIVE, E_PASSIVE, E_DORMANT */
	pthread_mutex_t		lock;		/* the pending aggregate */
	struct bee_agg		*pend;		/* under lock */
	struct bee_sensor	*hnext;		/* hash chain; bee_lock */
};

/* Registration, class table and switches. */
extern pthread_mutex_t bee_lock;
/* The sensor whose type (its own or an aggregate) is eid, or NULL. */
struct bee_sensor *bee_sensor_of(int eid);
/* Number of sensor type slots used so far (for walks over every sensor). */
unsigned bee_nslots(void);
/* Defines aggregate type acc of s if need be; its eid, or 0. */
int bee_agg_type(struct bee_sensor *s, int acc);

/* Aggregation (bee_agg.c). */
void bee_agg_event(struct bee_sensor *s, uint64_t rate,
		   const struct rec_field *f, unsigned n);
/* Records what is pending for the sensors of cls (or E_ALL). */
void bee_agg_flush(int cls);
void bee_agg_fork(int phase);	/* 0: lock all, 1: parent, 2: child */

#endif /* GRM_BEE_INT_H */
