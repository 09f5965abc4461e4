/* CycleState (schedkit/plugin.h): per-attempt slots, one per plugin instance, with clone and
 * free ops, the skip bits PreFilter and PreScore set, and the pods a plugin asks to activate. See
 * upstream pkg/scheduler/framework/cycle_state.go. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/framework/fw_internal.h"

/* ---------- cycle state ---------- */

/* A per-thread free list of released cycle states: the struct with its slot, used-list and skip
 * arrays, all zero, its mutex initialised. Preemption's dry run clones the cycle state once per
 * candidate node (~500 per preemptor at 5,000 nodes) and frees each clone at once; taking the shell
 * back saves six callocs, six frees and a mutex init per clone, and the used list lets the clone,
 * the free and the reset visit the few slots PreFilter filled instead of one per plugin. A shell is
 * reused only for the same slot count and holds nothing of its previous state: the slots (their
 * data released, unlisted), skip bits, Filter and PreFilter-extension lists (their arrays, room
 * for nslots plugins, are kept), pods to activate and metrics flag are
 * reset when it is put here. */
#define SHELL_CACHE 8
struct shell_cache {
	int n;
	struct sk_cycle_state *shell[SHELL_CACHE];
};
static _Thread_local struct shell_cache tls_shells;
static pthread_key_t shells_key;
static pthread_once_t shells_once = PTHREAD_ONCE_INIT;

static void shell_destroy(struct sk_cycle_state *cs)
{
	pthread_mutex_destroy(&cs->mu);
	free(cs->filters);
	free(cs->exts);
	free(cs->used);
	free(cs->slots);
	free(cs->skip);
	free(cs);
}

/* Thread exit: the exiting thread's shells go (the key's value is only a marker). */
static void shells_drain(void *marker)
{
	(void)marker;
	while (tls_shells.n > 0)
		shell_destroy(tls_shells.shell[--tls_shells.n]);
}

static void shells_key_create(void) { (void)pthread_key_create(&shells_key, shells_drain); }

static struct sk_cycle_state *shell_take(int nslots)
{
	struct shell_cache *c = &tls_shells;
	for (int i = c->n - 1; i >= 0; i--) {
		struct sk_cycle_state *cs = c->shell[i];
		if (cs->nslots != nslots)
			continue;
		c->shell[i] = c->shell[--c->n];
		return cs;
	}
	return NULL;
}

/* Keeps cs (slots already released) for reuse on this thread; false when the cache is full. */
static bool shell_put(struct sk_cycle_state *cs)
{
	struct shell_cache *c = &tls_shells;
	if (c->n == SHELL_CACHE)
		return false;
	if (c->n == 0) {
		/* registers the thread-exit drain (once per thread that caches) */
		if (pthread_once(&shells_once, shells_key_create) != 0 ||
		    pthread_setspecific(shells_key, (void *)1) != 0)
			return false;
	}
	for (int i = 0; i < cs->nused; i++) /* released; only the used ones can be listed */
		cs->slots[cs->used[i]].listed = false;
	cs->nused = 0;
	memset(cs->skip, 0, (size_t)(cs->nslots ? cs->nslots : 1));
	cs->nfilters = -1;
	cs->nexts = -1;
	cs->record_plugin_metrics = false;
	c->shell[c->n++] = cs;
	return true;
}

static struct sk_cycle_state *cycle_state_alloc(int nslots)
{
	struct sk_cycle_state *cs = shell_take(nslots);
	if (cs)
		return cs;
	cs = calloc(1, sizeof(*cs));
	if (!cs)
		return NULL;
	cs->nslots = nslots;
	cs->slots = calloc((size_t)(nslots ? nslots : 1), sizeof(*cs->slots));
	cs->used = calloc((size_t)(nslots ? nslots : 1), sizeof(*cs->used));
	cs->skip = calloc((size_t)(nslots ? nslots : 1), 1);
	/* room for every plugin: a profile's Filter list names each instance once (framework.c), so
	 * sk_fw_run_pre_filter and the clones below never need another array */
	cs->filters = calloc((size_t)(nslots ? nslots : 1), sizeof(*cs->filters));
	cs->exts = calloc((size_t)(nslots ? nslots : 1), sizeof(*cs->exts));
	if (!cs->slots || !cs->used || !cs->skip || !cs->filters || !cs->exts) {
		free(cs->filters);
		free(cs->exts);
		free(cs->used);
		free(cs->slots);
		free(cs->skip);
		free(cs);
		return NULL;
	}
	cs->nfilters = -1;
	cs->nexts = -1;
	pthread_mutex_init(&cs->mu, NULL);
	return cs;
}

struct sk_cycle_state *sk_cycle_state_new(const struct sk_framework *fw, bool record_plugin_metrics)
{
	struct sk_cycle_state *cs = cycle_state_alloc(fw->nplugins);
	if (cs)
		cs->record_plugin_metrics = record_plugin_metrics;
	return cs;
}

static void slot_release(struct cs_slot *s)
{
	if (s->data && !s->borrowed && s->ops && s->ops->free)
		s->ops->free(s->data);
	s->data = NULL;
	s->ops = NULL;
	s->borrowed = false;
}

/* Sets slot i (data NULL: empty); a slot is listed in cs->used when it first gets data. */
static void slot_set(struct sk_cycle_state *cs, int i, void *data, const struct sk_state_ops *ops, bool borrowed)
{
	struct cs_slot *s = &cs->slots[i];
	s->data = data;
	s->ops = data ? ops : NULL; /* an empty slot stays all zero */
	s->borrowed = borrowed;
	if (data && !s->listed) {
		s->listed = true;
		cs->used[cs->nused++] = i;
	}
}

void sk_cycle_state_free(struct sk_cycle_state *cs)
{
	if (!cs)
		return;
	for (int i = 0; i < cs->nused; i++)
		slot_release(&cs->slots[cs->used[i]]);
	for (int i = 0; i < cs->nactivate; i++)
		free(cs->activate[i]);
	free(cs->activate);
	cs->activate = NULL;
	cs->nactivate = cs->capactivate = 0;
	if (shell_put(cs))
		return;
	shell_destroy(cs);
}

struct sk_cycle_state *sk_cycle_state_clone(const struct sk_cycle_state *cs)
{
	struct sk_cycle_state *c = cycle_state_alloc(cs->nslots);
	if (!c)
		return NULL;
	c->record_plugin_metrics = cs->record_plugin_metrics;
	memcpy(c->skip, cs->skip, (size_t)cs->nslots);
	/* the Filter list PreFilter left follows from the skip bits copied above: the clone's Filter
	 * runs take the same plain loop as the original's */
	if (cs->nfilters >= 0 && cs->nfilters <= cs->nslots && cs->filters) {
		memcpy(c->filters, cs->filters, (size_t)cs->nfilters * sizeof(*c->filters));
		c->nfilters = cs->nfilters;
		c->filters_batched = cs->filters_batched;
	}
	if (cs->nexts >= 0 && cs->nexts <= cs->nslots && cs->exts) { /* the same for the extensions */
		memcpy(c->exts, cs->exts, (size_t)cs->nexts * sizeof(*c->exts));
		c->nexts = cs->nexts;
	}
	for (int k = 0; k < cs->nused; k++) {
		int i = cs->used[k];
		const struct cs_slot *s = &cs->slots[i];
		if (!s->data)
			continue;
		if (s->ops && s->ops->clone) {
			void *data = s->ops->clone(s->data);
			if (!data) {
				sk_cycle_state_free(c);
				return NULL;
			}
			slot_set(c, i, data, s->ops, false);
		} else {
			slot_set(c, i, s->data, s->ops, true);
		}
	}
	return c;
}

void *sk_cycle_state_get(const struct sk_cycle_state *cs, int slot)
{
	return cs && slot >= 0 && slot < cs->nslots ? cs->slots[slot].data : NULL;
}

void sk_cycle_state_put(struct sk_cycle_state *cs, int slot, void *data, const struct sk_state_ops *ops)
{
	if (!cs || slot < 0 || slot >= cs->nslots) {
		if (data && ops && ops->free)
			ops->free(data);
		return;
	}
	slot_release(&cs->slots[slot]);
	slot_set(cs, slot, data, ops, false);
}

void sk_cycle_state_activate_pod(struct sk_cycle_state *cs, const char *pod_key)
{
	pthread_mutex_lock(&cs->mu);
	for (int i = 0; i < cs->nactivate; i++)
		if (strcmp(cs->activate[i], pod_key) == 0)
			goto out;
	if (cs->nactivate == cs->capactivate) {
		int cap = cs->capactivate ? cs->capactivate * 2 : 4;
		char **a = realloc(cs->activate, (size_t)cap * sizeof(*a));
		if (!a)
			goto out;
		cs->activate = a;
		cs->capactivate = cap;
	}
	char *k = strdup(pod_key);
	if (k)
		cs->activate[cs->nactivate++] = k;
out:
	pthread_mutex_unlock(&cs->mu);
}

int sk_cycle_state_take_pods_to_activate(struct sk_cycle_state *cs, char ***keys)
{
	pthread_mutex_lock(&cs->mu);
	int n = cs->nactivate;
	*keys = cs->activate;
	cs->activate = NULL;
	cs->nactivate = cs->capactivate = 0;
	pthread_mutex_unlock(&cs->mu);
	return n;
}

bool sk_cycle_state_skip_filter(const struct sk_cycle_state *cs, int slot)
{
	return slot >= 0 && slot < cs->nslots && (cs->skip[slot] & SKIP_FILTER);
}
bool sk_cycle_state_skip_score(const struct sk_cycle_state *cs, int slot)
{
	return slot >= 0 && slot < cs->nslots && (cs->skip[slot] & SKIP_SCORE);
}
bool sk_cycle_state_records_plugin_metrics(const struct sk_cycle_state *cs) { return cs->record_plugin_metrics; }
