/* SPDX-License-Identifier: MIT */
/* bee.c: BEE sensors on grm: registration (the E_NAME definition in the
 * trace), generation, sensor states, naming and initialisation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bee_int.h"

#define NHASH	1024

/* Guards the sensor table, the class table and the named states.  Never
 * taken while a sensor's lock is held. */
pthread_mutex_t bee_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Sensor type slots: slot i is event id GMI_SENSOR_BASE + i and points at
 * the sensor whose type, its own or an aggregate, it is.  Appended under
 * bee_lock; read without it.
 */
static struct bee_sensor *_Atomic bee_slots[GMI_SENSOR_MAX];
static _Atomic unsigned bee_nslot;
static struct bee_sensor *bee_hash[NHASH];	/* by (name, cls, attr) */

/* Event_Sensor_State by name, for sensors not registered yet. */
struct bee_named {
	char			*name;
	int			state;
	struct bee_named	*next;
};
static struct bee_named *bee_named;

static char *_Atomic bee_client;	/* Event_Initialize's name */
static pthread_once_t bee_once = PTHREAD_ONCE_INIT;

static void
fork_prepare(void)
{
	pthread_mutex_lock(&bee_lock);
	bee_agg_fork(0);
}

static void
fork_parent(void)
{
	bee_agg_fork(1);
	pthread_mutex_unlock(&bee_lock);
}

static void
fork_child(void)
{
	bee_agg_fork(2);
	pthread_mutex_unlock(&bee_lock);
}

/* Attaches first, so that the library's fork handlers are registered
 * before these and run after them: ours take bee_lock, which is held
 * around calls into the library, never the other way round. */
static void
init_once(void)
{
	(void)GMI_Traced();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void
bee_init(void)
{
	pthread_once(&bee_once, init_once);
}

/* Aggregates still pending when the process exits (or the library is
 * unloaded) are recorded. */
__attribute__((destructor)) static void
bee_fini(void)
{
	int saved = errno;

	bee_agg_flush(E_ALL);
	errno = saved;
}

unsigned
bee_nslots(void)
{
	return atomic_load_explicit(&bee_nslot, memory_order_acquire);
}

struct bee_sensor *
bee_sensor_of(int eid)
{
	unsigned i = (unsigned)eid - GMI_SENSOR_BASE;

	if (eid < GMI_SENSOR_BASE || i >= bee_nslots())
		return NULL;
	return atomic_load_explicit(&bee_slots[i], memory_order_acquire);
}

/* Takes the next slot for a type of s; its event id, or -1 if all are
 * taken.  bee_lock held. */
static int
new_slot(struct bee_sensor *s)
{
	unsigned i = atomic_load_explicit(&bee_nslot, memory_order_relaxed);

	if (i >= GMI_SENSOR_MAX)
		return gmi_error(-1, "sensor %s: all %d sensor types are taken",
		    s->name, GMI_SENSOR_MAX);
	atomic_store_explicit(&bee_slots[i], s, memory_order_release);
	atomic_store_explicit(&bee_nslot, i + 1, memory_order_release);
	return GMI_SENSOR_BASE + (int)i;
}

/* Copies a sensor name, without the quotes of BEGIN("name"); 0, or -1 if
 * it is NULL, empty or too long for a description. */
static int
sensor_name(const char *in, char out[REC_DSC_MAX])
{
	size_t len;

	if (in == NULL)
		return -1;
	len = strlen(in);
	if (len >= 2 && in[0] == '"' && in[len - 1] == '"') {
		in++;
		len -= 2;
	}
	if (len == 0 || len >= REC_DSC_MAX)
		return -1;
	memcpy(out, in, len);
	out[len] = '\0';
	return 0;
}

static unsigned
hash(const char *name, int cls, int attr)
{
	uint32_t h = 2166136261u;

	while (*name != '\0')
		h = (h ^ (unsigned char)*name++) * 16777619u;
	h = (h ^ (uint32_t)cls) * 16777619u;
	h = (h ^ (uint32_t)attr) * 16777619u;
	return h % NHASH;
}

/* bee_lock held. */
static struct bee_sensor *
lookup(const char *name, int cls, int attr)
{
	struct bee_sensor *s;

	for (s = bee_hash[hash(name, cls, attr)]; s != NULL; s = s->hnext)
		if (s->cls == cls && s->attr == attr &&
		    strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

static int
named_state(const char *name)
{
	struct bee_named *nm;

	for (nm = bee_named; nm != NULL; nm = nm->next)
		if (strcmp(nm->name, name) == 0)
			return nm->state;
	return E_ACTIVE;
}

/* Makes the sensor (name, cls, attr); bee_lock held.  NULL on failure,
 * explained. */
static struct bee_sensor *
create(const char *name, int cls, int attr)
{
	struct bee_sensor *s;
	unsigned h = hash(name, cls, attr);
	int eid;

	s = calloc(1, sizeof *s);
	if (s == NULL || (s->name = strdup(name)) == NULL) {
		free(s);
		gmi_error(0, "sensor %s: out of memory", name);
		return NULL;
	}
	s->cls = cls;
	s->attr = attr;
	atomic_init(&s->state, named_state(name));
	pthread_mutex_init(&s->lock, NULL);
	eid = new_slot(s);
	if (eid < 0) {
		pthread_mutex_destroy(&s->lock);
		free(s->name);
		free(s);
		return NULL;
	}
	atomic_store(&s->self.eid, eid);
	s->hnext = bee_hash[h];
	bee_hash[h] = s;
	return s;
}

/* The sensor for (name, cls, attr), made if it is new; NULL if it cannot
 * be, explained. */
static struct bee_sensor *
bee_register(const char *name_in, int cls, int attr)
{
	char name[REC_DSC_MAX];
	const struct bee_class *cl = bee_class_get(cls);
	struct bee_sensor *s;

	if (sensor_name(name_in, name) != 0) {
		gmi_error(0, "sensor name NULL, empty or longer than %d bytes",
		    REC_DSC_MAX - 1);
		return NULL;
	}
	if (cl == NULL || cl->type == NULL) {
		gmi_error(0, "sensor %s: class %d has no sensors", name, cls);
		return NULL;
	}
	if (attr < E_ACT || attr > E_PROBE) {
		gmi_error(0, "sensor %s: attribute %d unknown", name, attr);
		return NULL;
	}
	bee_init();
	pthread_mutex_lock(&bee_lock);
	s = lookup(name, cls, attr);
	if (s == NULL)
		s = create(name, cls, attr);
	pthread_mutex_unlock(&bee_lock);
	return s;
}

/*
 * Puts the definition of s's type into the trace (the sensor's E_NAME
 * registration): a termination is defined as the end of the range its
 * activation (defined first) begins.  bee_lock held.  Returns whether it
 * is defined; if not (no buffer space, or nothing recorded right now) it
 * is tried again at the next event.
 */
static int
define_locked(struct bee_sensor *s)
{
	const struct bee_class *cl = bee_class_get(s->cls);
	struct bee_sensor *act;
	int eid = atomic_load(&s->self.eid), range = GMI_R_NONE, reid = 0;

	if (atomic_load(&s->self.defined))
		return 1;
	if (cl == NULL)
		return 0;
	if (s->attr == E_ACT) {
		range = GMI_R_BEGIN;
	} else if (s->attr == E_TERM) {
		act = lookup(s->name, s->cls, E_ACT);
		if (act == NULL)
			act = create(s->name, s->cls, E_ACT);
		if (act == NULL || !define_locked(act))
			return 0;
		range = GMI_R_END;
		reid = atomic_load(&act->self.eid);
	}
	if (gmi_define_type(eid, (uint8_t)s->cls, (uint8_t)s->attr,
	    (uint8_t)range, reid, cl->type, s->name) != GRM_OK ||
	    gmi_type_name(eid) == NULL)
		return 0;
	atomic_store_explicit(&s->self.defined, 1, memory_order_release);
	return 1;
}

static int
ensure_defined(struct bee_sensor *s)
{
	int r;

	if (atomic_load_explicit(&s->self.defined, memory_order_acquire))
		return 1;
	pthread_mutex_lock(&bee_lock);
	r = define_locked(s);
	pthread_mutex_unlock(&bee_lock);
	return r;
}

static const char *const attr_word[] = {
	"E_ACT", "E_TERM", "E_POINT", "E_AGGREGATE", "E_NAME", "E_PROBE"
};

/*
 * The format of s's aggregate type for accumulation mode acc: the source
 * attribute, the number of events, then per field of the class its latest
 * value, sum or mean (always a double), the latest for strings.
 */
static void
agg_format(const struct bee_sensor *s, const struct bee_class *cl, int acc,
	   char fmt[REC_FMT_MAX])
{
	static const char *const conv[] = { "%ld", "%lu", "%f" };
	static const char *const word[] = { "latest", "sum", "mean" };
	size_t len;
	unsigned i;

	len = (size_t)snprintf(fmt, REC_FMT_MAX, "%s count=%%lu",
	    attr_word[s->attr]);
	for (i = 0; i < cl->lay.n && len < REC_FMT_MAX; i++) {
		if (cl->lay.f[i].kind == REC_K_STR)
			len += (size_t)snprintf(fmt + len, REC_FMT_MAX - len,
			    " latest=%%s");
		else
			len += (size_t)snprintf(fmt + len, REC_FMT_MAX - len,
			    " %s=%s", word[acc], acc == E_MEAN ? "%f" :
			    conv[cl->lay.f[i].kind]);
	}
}

int
bee_agg_type(struct bee_sensor *s, int acc)
{
	struct bee_type *t = &s->agg[acc];
	const struct bee_class *cl;
	char fmt[REC_FMT_MAX];
	int eid;

	if (atomic_load_explicit(&t->defined, memory_order_acquire))
		return atomic_load(&t->eid);
	pthread_mutex_lock(&bee_lock);
	eid = atomic_load(&t->eid);
	if (eid == 0 && (eid = new_slot(s)) > 0)
		atomic_store(&t->eid, eid);
	cl = bee_class_get(s->cls);
	if (eid > 0 && cl != NULL && !atomic_load(&t->defined)) {
		agg_format(s, cl, acc, fmt);
		if (gmi_define_type(eid, (uint8_t)s->cls, REC_ATTR_AGGREGATE,
		    GMI_R_NONE, 0, fmt, s->name) == GRM_OK &&
		    gmi_type_name(eid) != NULL)
			atomic_store_explicit(&t->defined, 1,
			    memory_order_release);
	}
	eid = atomic_load(&t->defined) ? eid : 0;
	pthread_mutex_unlock(&bee_lock);
	return eid;
}

/* One event of sensor s, as its state and class say. */
static void
generate(struct bee_sensor *s, const void *var)
{
	const struct bee_class *cl = bee_class_get(s->cls);
	struct rec_field f[REC_ARGS_MAX];
	uint64_t rate;
	int st, n, eid = atomic_load_explicit(&s->self.eid,
	    memory_order_relaxed);

	if (cl == NULL || !ensure_defined(s))
		return;
	st = atomic_load_explicit(&s->state, memory_order_relaxed);
	if (st == E_PASSIVE || !gmi_type_on(eid))
		return;
	n = bee_decode(&cl->lay, var, f);
	if (n < 0) {
		gmi_error(0, "sensor %s: NULL variant for class %s", s->name,
		    cl->name);
		return;
	}
	if (st == E_DORMANT) {
		(void)gmi_set_dormant(eid, f, (unsigned)n);
		return;
	}
	rate = atomic_load_explicit(&cl->rate, memory_order_relaxed);
	if (BEE_RATE_DISP(rate) == E_HANDLE_IMM)
		(void)gmi_emit_fields(eid, f, (unsigned)n);
	else
		bee_agg_event(s, rate, f, (unsigned)n);
}

GRM_API void
Event_Sensor(const char *Name, Event_class_t Class, Event_attribute_t Attr,
	     const void *Variant, Event_id_t *EID)
{
	struct bee_sensor *s;
	int saved = errno, eid;

	if (*GMI_on_ == 0)
		return;
	eid = EID != NULL ? __atomic_load_n(EID, __ATOMIC_ACQUIRE) : 0;
	if (eid == 0) {
		if (!GMI_Traced())
			goto out;
		s = bee_register(Name, Class, (int)Attr);
		if (EID != NULL)
			__atomic_store_n(EID, s != NULL ?
			    atomic_load(&s->self.eid) : -1, __ATOMIC_RELEASE);
	} else {
		s = bee_sensor_of(eid);
	}
	if (s != NULL)
		generate(s, Variant);
out:
	errno = saved;
}

GRM_API void
Event_Generate(Event_class_t Class, Event_attribute_t Attr, Event_id_t EID,
	       const void *Variant)
{
	struct bee_sensor *s;
	int saved = errno;

	if (*GMI_on_ == 0 || !GMI_Traced())
		return;
	s = bee_sensor_of(EID);
	if (s == NULL) {
		gmi_error(0, "Event_Generate: %d is not a sensor", EID);
	} else {
		if (s->cls != Class || s->attr != (int)Attr)
			s = bee_register(s->name, Class, (int)Attr);
		if (s != NULL)
			generate(s, Variant);
	}
	errno = saved;
}

GRM_API Event_id_t
Event_Register_Name(const char *Name, Event_id_t *E_id)
{
	struct bee_sensor *s;
	int saved = errno, eid = E_FAILURE;

	s = bee_register(Name, E_EVENT, E_POINT);
	if (s != NULL) {
		eid = atomic_load(&s->self.eid);
		(void)ensure_defined(s);
	}
	if (E_id != NULL)
		*E_id = eid;
	errno = saved;
	return eid;
}

GRM_API const char *
Event_Sensor_Name(Event_id_t E_id)
{
	const struct bee_sensor *s = bee_sensor_of(E_id);
	const char *name;

	if (s != NULL)
		return s->name;
	name = gmi_type_name(E_id);
	return name != NULL ? name : "";
}

GRM_API int
Event_Sensor_Max(void)
{
	return GMI_SENSOR_MAX;
}

GRM_API Event_return_t
Event_Sensor_State(const char *Name, Event_sensor_state_t State)
{
	char name[REC_DSC_MAX];
	struct bee_named *nm;
	struct bee_sensor *s;
	int saved = errno, r = E_SUCCESS;
	unsigned h;

	if (sensor_name(Name, name) != 0 || State < E_ACTIVE ||
	    State > E_DORMANT)
		return gmi_error(E_FAILURE, "Event_Sensor_State: bad name or "
		    "state %d", (int)State);
	pthread_mutex_lock(&bee_lock);
	for (nm = bee_named; nm != NULL; nm = nm->next)
		if (strcmp(nm->name, name) == 0)
			break;
	if (nm == NULL && (nm = calloc(1, sizeof *nm)) != NULL &&
	    (nm->name = strdup(name)) == NULL) {
		free(nm);
		nm = NULL;
	}
	if (nm == NULL) {
		r = gmi_error(E_FAILURE, "Event_Sensor_State: out of memory");
		goto out;
	}
	if (nm->state == 0) {
		nm->next = bee_named;
		bee_named = nm;
	}
	nm->state = State;
	for (h = 0; h < NHASH; h++)
		for (s = bee_hash[h]; s != NULL; s = s->hnext)
			if (strcmp(s->name, name) == 0)
				atomic_store(&s->state, (int)State);
out:
	pthread_mutex_unlock(&bee_lock);
	errno = saved;
	return r;
}

GRM_API int
Event_Sensor_Get_State(Event_id_t EID)
{
	struct bee_sensor *s = bee_sensor_of(EID);
	int st;

	if (s == NULL)
		return E_FAILURE;
	st = atomic_load(&s->state);
	if (st == E_PASSIVE || bee_class_get(s->cls) == NULL)
		return E_PASSIVE;
	/* A type not defined yet (never met, or not traced) records
	 * nothing either. */
	if (!atomic_load(&s->self.defined) || !gmi_type_on(EID))
		return E_PASSIVE;
	return st;
}

GRM_API Event_return_t
Event_Initialize(const char *Client)
{
	char *c;

	bee_init();
	if (Client != NULL && (c = strdup(Client)) != NULL)
		/* An older name is not freed: callers may still hold it. */
		atomic_store(&bee_client, c);
	return E_SUCCESS;
}

GRM_API Event_return_t
Event_Finalize(const char *Name_of_client)
{
	(void)Name_of_client;
	bee_agg_flush(E_ALL);
	return GMI_Flush() == GRM_OK ? E_SUCCESS : E_FAILURE;
}

GRM_API const char *
Event_Client_Name(void)
{
	const char *c = atomic_load(&bee_client);

	return c != NULL ? c : program_invocation_short_name;
}
