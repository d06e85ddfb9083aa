/* SPDX-License-Identifier: MIT */
/* grm/bee.h: BEE event sensors (Bruegge, CMU-CS-90-180) on top of grm. */
#ifndef GRM_BEE_H
#define GRM_BEE_H

#include <grm.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The sensors and event kernel functions of BEE, recording into a grm trace
 * (grm_bee(3); doc/bee-compat.md says which BEE functions exist here and
 * what replaces the others).
 *
 * A sensor is a macro with a static event id per call site.  In a process
 * that is not traced it costs one load and one branch, as GMI_Event does,
 * and its arguments are not evaluated.  The
 * first time a sensor is met, its name is registered: each (name, class,
 * attribute) gets an event type of its own, whose definition (class,
 * attribute, the class's type descriptor as format, the name as
 * description) goes into the trace: that is BEE's E_NAME registration.
 * The name of a sensor must be the same string every time its call site
 * runs.
 *
 * A sensor is active (each event is recorded, or aggregated as set by
 * Event_Handle_Rate), passive (nothing is recorded: its class was switched
 * off by Event_Sensor_Control or Event_Disable, its name does not contain
 * the sensor filter, Event_Sensor_State made it passive, or grmctl switched
 * its class, event id or filter from outside), or dormant (Event_Sensor_State:
 * each event only replaces the sensor's latest value, kept in the host's
 * shared segment, which the Local Monitor reads when the trace is probed).
 *
 * Functions return E_SUCCESS or E_FAILURE (or what BEE says); sensors
 * return nothing.  Nothing is printed unless GRM_DEBUG is set, which
 * explains every failure on stderr.  Everything may be called from any
 * thread.
 */

typedef int Event_class_t;	/* class number, or E_FAILURE */
typedef int Event_id_t;		/* sensor event id; 0: not registered yet */
typedef int Event_return_t;	/* E_SUCCESS or E_FAILURE */

#define E_SUCCESS	0
#define E_FAILURE	(-1)

#ifndef TRUE
#define TRUE	1
#endif
#ifndef FALSE
#define FALSE	0
#endif

/* Predefined classes (BEE section 9.1) and grm's own.  User classes from
 * Event_Register_Class are numbered E_CLASS_USER_MIN .. E_CLASS_USER_MAX. */
enum {
	E_ALL = -1,		/* every class: Event_Sensor_Control, Event_Enable,
				   Event_Disable, Event_Handle_Rate */
	E_PROCEDURE = 0,	/* BEGIN/END ranges; GMI blocks are this class */
	E_EVENT = 1,		/* BEGIN_EVENT/END_EVENT ranges, POINT_EVENT */
	E_STRING = 2,		/* variant: a NUL-terminated string */
	E_MESSAGE = 3,		/* GMI_MessageSend/Recv; no sensors */
	E_USER = 8,		/* GMI_DefineEvent types; no sensors */
	E_CLASS_USER_MIN = 16,
	E_CLASS_USER_MAX = 254
};
#define E_CLASSMAX	255

/* Attributes (BEE section 9.2), as records carry them (REC_ATTR_*). */
typedef enum event_attribute {
	E_ACT = 0,		/* activation of a range */
	E_TERM = 1,		/* termination of a range */
	E_POINT = 2,		/* a point */
	E_AGGREGATE = 3,	/* aggregate of several events (Event_Handle_Rate) */
	E_NAME = 4,		/* a sensor's name */
	E_PROBE = 5		/* a dormant sensor's value, read when probed */
} Event_attribute_t;

/* Event_Handle_Rate: how events are accumulated, and when dispatched. */
typedef enum event_accumulation {
	E_LATEST = 0,		/* keep the latest values */
	E_ADD = 1,		/* sum numbers; strings: the latest */
	E_MEAN = 2		/* mean of numbers; strings: the latest */
} Event_accumulation_t;

typedef enum event_dispatch {
	E_HANDLE_IMM = 0,	/* record every event (the default) */
	E_HANDLE_BY_EVENTS = 1,	/* one aggregate every N events */
	E_HANDLE_BY_TIME = 2	/* one aggregate every N seconds */
} Event_dispatch_t;

/* Sensor states (Event_Sensor_State, Event_Sensor_Get_State). */
typedef enum event_sensor_state {
	E_ACTIVE = 1,
	E_PASSIVE = 2,
	E_DORMANT = 3
} Event_sensor_state_t;

/* ---- 8.1 Sensors ---- */

/*
 * The language independent sensor: registers Name with (Class, Attr) the
 * first time, keeping its event id in *EID (0 before; never change it),
 * then records the event.  Variant points to the event's data, laid out
 * as the class's type descriptor says (Event_Register_Class); NULL for a
 * class without fields.
 */
void Event_Sensor(const char *Name, Event_class_t Class,
		  Event_attribute_t Attr, const void *Variant, Event_id_t *EID);

#if defined(__GNUC__) && !defined(GRM_NO_INLINE)
#define BEE_ON_()	__builtin_expect(*GMI_on_ != 0, 1)
#else
#define BEE_ON_()	1
#endif

/* Event_Sensor, checking inline whether anything is recorded. */
#define EVENT_SENSOR(Name, Class, Attr, Variant, EID) do {		\
	if (BEE_ON_())							\
		Event_Sensor((Name), (Class), (Attr), (Variant), (EID));	\
} while (0)

/* A sensor of any class with a hidden static event id. */
#define EVENT(Name, Class, Attr, Variant) do {				\
	static Event_id_t bee_eid_;					\
	EVENT_SENSOR((Name), (Class), (Attr), (Variant), &bee_eid_);	\
} while (0)

/* Ranges of class E_PROCEDURE and E_EVENT, and points of E_EVENT. */
#define BEGIN_PROCEDURE(Sensor_Name)	\
	EVENT((Sensor_Name), E_PROCEDURE, E_ACT, (const void *)0)
#define END_PROCEDURE(Sensor_Name)	\
	EVENT((Sensor_Name), E_PROCEDURE, E_TERM, (const void *)0)
#define BEGIN_EVENT(Sensor_Name)	\
	EVENT((Sensor_Name), E_EVENT, E_ACT, (const void *)0)
#define END_EVENT(Sensor_Name)		\
	EVENT((Sensor_Name), E_EVENT, E_TERM, (const void *)0)
#define POINT_EVENT(Sensor_Name)	\
	EVENT((Sensor_Name), E_EVENT, E_POINT, (const void *)0)

/*
 * A routine's body as an E_PROCEDURE range (BEE figure 15): BEE_BEGIN(name)
 * replaces the opening brace and BEE_END(name) the closing one; the
 * sensor's name is name as written (an identifier; a string literal loses
 * its quotes).  Every return inside is written BEE_RET (no value) or
 * BEE_RETURN(value), which record the termination first; with GCC or
 * Clang, BEE_RETURN evaluates value before the termination is recorded.
 * Falling off the end through BEE_END records the termination too.  Use
 * one BEE_BEGIN per routine; nested ranges take BEGIN_PROCEDURE and
 * END_PROCEDURE.  BEGIN, END, RET and RETURN are the same macros unless
 * GRM_BEE_NO_SHORT_NAMES is defined before including this header.
 */
#define BEE_BEGIN(name) {						\
	static const char bee_name_[] = #name;				\
	static Event_id_t bee_act_, bee_term_;				\
	EVENT_SENSOR(bee_name_, E_PROCEDURE, E_ACT, (const void *)0,	\
	    &bee_act_);
#define BEE_TERM_()							\
	EVENT_SENSOR(bee_name_, E_PROCEDURE, E_TERM, (const void *)0,	\
	    &bee_term_)
#define BEE_END(name)	BEE_TERM_(); }
#define BEE_RET		do { BEE_TERM_(); return; } while (0)
#if defined(__GNUC__) && !defined(__cplusplus)
#define BEE_RETURN(value) do {						\
	__auto_type bee_rv_ = (value);					\
	BEE_TERM_();							\
	return bee_rv_;							\
} while (0)
#else
#define BEE_RETURN(value) do { BEE_TERM_(); return (value); } while (0)
#endif

#ifndef GRM_BEE_NO_SHORT_NAMES
#define BEGIN(name)	BEE_BEGIN(name)
#define END(name)	BEE_END(name)
#define RET		BEE_RET
#define RETURN(value)	BEE_RETURN(value)
#endif

/* ---- 8.2 Sensor functions ---- */

/* Most sensor event types a process can have (one per name, class and
 * attribute, plus one per aggregated sensor and accumulation mode). */
int Event_Sensor_Max(void);

/* Makes every sensor of Class (or E_ALL) active (Flag TRUE) or passive. */
void Event_Sensor_Control(Event_class_t Class, int Flag);

/*
 * Sets the sensor filter: every sensor whose name does not contain F
 * becomes passive, every other one active again.  NULL, "" or "?" (BEE's
 * initial value) clears it.  As in BEE there is one filter for all
 * classes (Class is ignored); it applies to GMI_DefineEvent types too, by
 * their description.  E_FAILURE if F is 128 bytes or longer.
 */
Event_return_t Event_Sensor_Filter(Event_class_t Class, const char *F);

/* Sets the state of every sensor called Name, registered now or later:
 * E_ACTIVE, E_PASSIVE or E_DORMANT.  grm's own function (BEE has no call
 * for dormant sensors). */
Event_return_t Event_Sensor_State(const char *Name,
				  Event_sensor_state_t State);

/* The state of sensor EID now, switches from outside included, or
 * E_FAILURE if EID is not a sensor.  grm's own function. */
int Event_Sensor_Get_State(Event_id_t EID);

/* ---- 8.3 Initialization ---- */

/* Starts tracing if GRM_MM asks for it and names the client (NULL: the
 * program's name).  Optional: the first sensor does the same.  E_SUCCESS
 * also when the process is not traced. */
Event_return_t Event_Initialize(const char *Client);

/* Records the aggregates still pending and waits until everything the
 * process recorded reached the Main Monitor (GMI_Flush): E_FAILURE if that
 * was not confirmed within about 5 seconds.  The process goes on; sensors
 * keep recording. */
Event_return_t Event_Finalize(const char *Name_of_client);

/* ---- 8.4 Naming ---- */

/* The name given to Event_Initialize, or the program's. */
const char *Event_Client_Name(void);

/* The name of Class, or "" if there is none. */
const char *Event_Class_Name(Event_class_t Class);

/* The class called Name, or -1. */
Event_class_t Event_Class_ID(const char *Name);

/*
 * Defines class Name whose event variant is a C structure of Size bytes
 * with the fields Type lists, printf/scanf style, in order: %d %i (int;
 * hh, h, l, ll, j, z, t: char, short, long...), %u %x %X %o (unsigned, the
 * same sizes), %c (char), %f %e %g (float; with l: double), %p (void *),
 * %s (char *, a NUL-terminated string) and %Ns (char[N] within the
 * structure).  Fields are at their natural alignment as a C compiler lays
 * them out; Size must be the structure's sizeof.  Returns the new class
 * number, the same number if Name exists with this Type and Size, or
 * E_FAILURE (Size wrong, Type unsupported or more than 16 fields, Name
 * taken, no class number left).
 */
Event_class_t Event_Register_Class(const char *Name, const char *Type,
				   int Size);

/* Registers Name as an E_EVENT point sensor (its definition goes into the
 * trace) and returns its event id, also stored in *E_id if not NULL;
 * E_FAILURE if it cannot be registered. */
Event_id_t Event_Register_Name(const char *Name, Event_id_t *E_id);

/* The name of sensor E_id (or the description of a GMI event type), or
 * "" if there is none. */
const char *Event_Sensor_Name(Event_id_t E_id);

/* ---- 8.5 Generation ---- */

/* Records an event of the sensor named as EID, with class Class and
 * attribute Attr (registering that combination if it is new). */
void Event_Generate(Event_class_t Class, Event_attribute_t Attr,
		    Event_id_t EID, const void *Variant);

/* ---- 8.6 Handling ---- */

/*
 * How events of Class (or E_ALL) are handed on: E_HANDLE_IMM records each
 * one; E_HANDLE_BY_EVENTS records one aggregate per sensor every
 * NrOfEvents events, E_HANDLE_BY_TIME one when an event comes NrOfEvents
 * seconds or more after the first event of the aggregate.  An aggregate is
 * a record of the sensor's own aggregate type (same class and name,
 * attribute E_AGGREGATE): the number of events, then per field the latest
 * value (E_LATEST), the sum (E_ADD) or the mean (E_MEAN, a double) of the
 * numbers; strings keep the latest.  Aggregates pending when the rate
 * changes are recorded first; those pending at Event_Finalize or exit are
 * recorded then.  E_FAILURE for a bad mode, NrOfEvents < 1 when
 * aggregating, an unknown class, or a class of 16 fields (the count takes
 * one).
 */
Event_return_t Event_Handle_Rate(Event_class_t Class, long NrOfEvents,
				 Event_accumulation_t Accumulation_Mode,
				 Event_dispatch_t Dispatch_Mode);

/* Switch Class (or E_ALL) on or off in this process, apart from
 * Event_Sensor_Control: a class records while both say on. */
Event_return_t Event_Enable(Event_class_t Class);
Event_return_t Event_Disable(Event_class_t Class);

/* Deletes user class Class: its sensors record nothing more and its name
 * is free again; its number is not given out again. */
Event_return_t Event_Delete(Event_class_t Class);

#ifdef __cplusplus
}
#endif

#endif /* GRM_BEE_H */
