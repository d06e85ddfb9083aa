/* SPDX-License-Identifier: MIT */
/* bee_class.c: BEE event classes (predefined and Event_Register_Class),
 * their switches (Event_Sensor_Control, Event_Enable...) and their
 * dispatch rate (Event_Handle_Rate). */
#include <stdlib.h>
#include <string.h>

#include "bee_int.h"

#define NCLASS		(E_CLASSMAX)	/* 0 .. 254; 255 is REC_CLASS_META */

/* E_STRING's variant is the string itself: a char array at offset 0 read
 * up to its NUL, at most REC_STR_MAX bytes. */
#define STRING_TYPE	"%1024s"
_Static_assert(REC_STR_MAX == 1024, "STRING_TYPE says REC_STR_MAX");
#define SAME(a, b)	((int)(a) == (int)(b))
_Static_assert(SAME(E_PROCEDURE, REC_CLASS_PROCEDURE) &&
    SAME(E_EVENT, REC_CLASS_EVENT) && SAME(E_STRING, REC_CLASS_STRING) &&
    SAME(E_MESSAGE, REC_CLASS_MESSAGE) && SAME(E_USER, REC_CLASS_USER),
    "BEE classes are rec's");
_Static_assert(SAME(E_ACT, REC_ATTR_ACT) && SAME(E_TERM, REC_ATTR_TERM) &&
    SAME(E_POINT, REC_ATTR_POINT) && SAME(E_AGGREGATE, REC_ATTR_AGGREGATE) &&
    SAME(E_NAME, REC_ATTR_NAME) && SAME(E_PROBE, REC_ATTR_PROBE),
    "BEE attributes are rec's");

/* Written under bee_lock; see struct bee_class for what readers may use
 * without it. */
static struct bee_class bee_classes[NCLASS] = {
	[E_PROCEDURE] = { .st = BEE_C_LIVE, .name = "E_PROCEDURE", .type = "" },
	[E_EVENT] = { .st = BEE_C_LIVE, .name = "E_EVENT", .type = "" },
	[E_STRING] = { .st = BEE_C_LIVE, .name = "E_STRING",
	    .type = STRING_TYPE, .size = REC_STR_MAX,
	    .lay = { .n = 1, .size = REC_STR_MAX, .f = { { BEE_CHARS,
	    REC_K_STR, REC_STR_MAX, 0 } } } },
	[E_MESSAGE] = { .st = BEE_C_LIVE, .name = "E_MESSAGE" },
	[E_USER] = { .st = BEE_C_LIVE, .name = "E_USER" },
};

struct bee_class *
bee_class_get(int cls)
{
	if (cls < 0 || cls >= NCLASS || atomic_load_explicit(
	    &bee_classes[cls].st, memory_order_acquire) != BEE_C_LIVE)
		return NULL;
	return &bee_classes[cls];
}

/* The live class called name; bee_lock held. */
static int
find_class(const char *name)
{
	int c;

	for (c = 0; c < NCLASS; c++)
		if (bee_class_get(c) != NULL &&
		    strcmp(bee_classes[c].name, name) == 0)
			return c;
	return -1;
}

GRM_API Event_class_t
Event_Register_Class(const char *Name, const char *Type, int Size)
{
	struct bee_class *cl;
	struct bee_layout lay;
	char *n, *t;
	int c;

	if (Name == NULL || *Name == '\0' || strlen(Name) >= REC_DSC_MAX)
		return gmi_error(E_FAILURE, "Event_Register_Class: class name "
		    "empty or longer than %d bytes", REC_DSC_MAX - 1);
	if (bee_layout_parse(Type, &lay) != 0)
		return gmi_error(E_FAILURE, "Event_Register_Class: %s: type "
		    "descriptor \"%.64s\" not supported (%%d %%i %%u %%x %%o "
		    "%%c %%f %%e %%g %%p %%s %%Ns with h, hh, l, ll, j, z, t; "
		    "at most %d fields)", Name, Type != NULL ? Type : "(null)",
		    REC_ARGS_MAX);
	if (Size < 0 || (uint32_t)Size != lay.size)
		return gmi_error(E_FAILURE, "Event_Register_Class: %s: size "
		    "%d, but a structure with the fields \"%.64s\" has %u "
		    "bytes", Name, Size, Type, lay.size);
	pthread_mutex_lock(&bee_lock);
	c = find_class(Name);
	if (c >= 0) {
		cl = &bee_classes[c];
		if (cl->type == NULL || strcmp(cl->type, Type) != 0 ||
		    cl->size != Size)
			c = gmi_error(E_FAILURE, "Event_Register_Class: class "
			    "%s exists with another type or size", Name);
		goto out;
	}
	for (c = E_CLASS_USER_MIN; c <= E_CLASS_USER_MAX; c++)
		if (atomic_load(&bee_classes[c].st) == BEE_C_FREE)
			break;
	if (c > E_CLASS_USER_MAX) {
		c = gmi_error(E_FAILURE, "Event_Register_Class: %s: all %d "
		    "user classes are taken", Name,
		    E_CLASS_USER_MAX - E_CLASS_USER_MIN + 1);
		goto out;
	}
	n = strdup(Name);
	t = strdup(Type);
	if (n == NULL || t == NULL) {
		free(n);
		free(t);
		c = gmi_error(E_FAILURE, "Event_Register_Class: out of memory");
		goto out;
	}
	cl = &bee_classes[c];
	cl->name = n;
	cl->type = t;
	cl->size = Size;
	cl->lay = lay;
	atomic_store(&cl->rate, BEE_RATE(1, E_LATEST, E_HANDLE_IMM));
	cl->sensors_off = cl->disabled = 0;
	atomic_store_explicit(&cl->st, BEE_C_LIVE, memory_order_release);
out:
	pthread_mutex_unlock(&bee_lock);
	return c;
}

GRM_API const char *
Event_Class_Name(Event_class_t Class)
{
	const struct bee_class *cl = bee_class_get(Class);

	return cl != NULL ? cl->name : "";
}

GRM_API Event_class_t
Event_Class_ID(const char *Name)
{
	int c;

	if (Name == NULL)
		return -1;
	pthread_mutex_lock(&bee_lock);
	c = find_class(Name);
	pthread_mutex_unlock(&bee_lock);
	return c;
}

/* Sets one of a class's switches (or every class's) and tells gmi.
 * Returns E_SUCCESS, or E_FAILURE if there is no such class. */
static int
set_switch(int cls, int sensors, int off)
{
	struct bee_class *cl;
	int c, found = 0;

	pthread_mutex_lock(&bee_lock);
	for (c = 0; c < NCLASS; c++) {
		if ((cls != E_ALL && c != cls) || (cl = bee_class_get(c)) ==
		    NULL)
			continue;
		if (sensors)
			cl->sensors_off = (uint8_t)off;
		else
			cl->disabled = (uint8_t)off;
		gmi_local_class((unsigned)c, !cl->sensors_off && !cl->disabled);
		found = 1;
	}
	pthread_mutex_unlock(&bee_lock);
	return found ? E_SUCCESS : E_FAILURE;
}

GRM_API void
Event_Sensor_Control(Event_class_t Class, int Flag)
{
	if (set_switch(Class, 1, !Flag) != E_SUCCESS)
		gmi_error(0, "Event_Sensor_Control: no class %d", Class);
}

GRM_API Event_return_t
Event_Enable(Event_class_t Class)
{
	if (set_switch(Class, 0, 0) != E_SUCCESS)
		return gmi_error(E_FAILURE, "Event_Enable: no class %d", Class);
	return E_SUCCESS;
}

GRM_API Event_return_t
Event_Disable(Event_class_t Class)
{
	if (set_switch(Class, 0, 1) != E_SUCCESS)
		return gmi_error(E_FAILURE, "Event_Disable: no class %d",
		    Class);
	return E_SUCCESS;
}

GRM_API Event_return_t
Event_Delete(Event_class_t Class)
{
	struct bee_class *cl = bee_class_get(Class);

	if (cl == NULL || Class < E_CLASS_USER_MIN)
		return gmi_error(E_FAILURE, "Event_Delete: %d is not a user "
		    "class", Class);
	bee_agg_flush(Class);
	pthread_mutex_lock(&bee_lock);
	atomic_store_explicit(&cl->st, BEE_C_DELETED, memory_order_release);
	gmi_local_class((unsigned)Class, 0);
	pthread_mutex_unlock(&bee_lock);
	return E_SUCCESS;
}

GRM_API Event_return_t
Event_Sensor_Filter(Event_class_t Class, const char *F)
{
	(void)Class;	/* one filter for every class, as in BEE */
	if (F != NULL && strcmp(F, "?") == 0)
		F = NULL;
	return gmi_local_filter(F) == GRM_OK ? E_SUCCESS : E_FAILURE;
}

GRM_API Event_return_t
Event_Handle_Rate(Event_class_t Class, long NrOfEvents,
		  Event_accumulation_t Accumulation_Mode,
		  Event_dispatch_t Dispatch_Mode)
{
	struct bee_class *cl;
	uint64_t rate;
	int c, found = 0, agg = Dispatch_Mode != E_HANDLE_IMM;

	if ((unsigned)Accumulation_Mode > E_MEAN ||
	    (unsigned)Dispatch_Mode > E_HANDLE_BY_TIME)
		return gmi_error(E_FAILURE, "Event_Handle_Rate: unknown mode "
		    "%d or %d", (int)Accumulation_Mode, (int)Dispatch_Mode);
	if (agg && NrOfEvents < 1)
		return gmi_error(E_FAILURE, "Event_Handle_Rate: %ld events "
		    "or seconds", NrOfEvents);
	if (!agg || NrOfEvents > 1L << 40)
		NrOfEvents = agg ? 1L << 40 : 1;
	rate = BEE_RATE(NrOfEvents, Accumulation_Mode, Dispatch_Mode);
	pthread_mutex_lock(&bee_lock);
	/* Check first: all classes change, or none. */
	for (c = 0; c < NCLASS; c++) {
		if ((Class != E_ALL && c != Class) ||
		    (cl = bee_class_get(c)) == NULL || cl->type == NULL)
			continue;
		found = 1;
		if (agg && cl->lay.n >= REC_ARGS_MAX) {
			pthread_mutex_unlock(&bee_lock);
			return gmi_error(E_FAILURE, "Event_Handle_Rate: class "
			    "%s has %d fields: no room for the count",
			    cl->name, REC_ARGS_MAX);
		}
	}
	if (!found && Class != E_ALL) {
		pthread_mutex_unlock(&bee_lock);
		return gmi_error(E_FAILURE, "Event_Handle_Rate: no class %d "
		    "with sensors", Class);
	}
	for (c = 0; c < NCLASS; c++)
		if ((Class == E_ALL || c == Class) &&
		    (cl = bee_class_get(c)) != NULL && cl->type != NULL)
			atomic_store(&cl->rate, rate);
	pthread_mutex_unlock(&bee_lock);
	/* What was pending under the old rate is recorded now. */
	bee_agg_flush(Class);
	return E_SUCCESS;
}
