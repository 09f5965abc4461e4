/* Per-profile outcome counts over a recent window (summary.h): a ring of buckets per profile,
 * each with its Scheduled / Unschedulable / Error counts and the reasons of its Unschedulable
 * attempts. */
#include "scheduler/decisions/summary.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"

#define MAX_PROFILES 64
#define MAX_REASONS 16 /* distinct reasons kept per bucket; more are only counted (other) */

struct reason {
	char *text;
	int count;
};

struct bucket {
	int64_t start; /* bucket index (now / bucket_s) it counts, -1 unused */
	int scheduled, unschedulable, errors;
	int nreasons, other;
	struct reason reasons[MAX_REASONS];
};

struct profile {
	char *name;
	struct bucket *b; /* nbuckets */
};

struct sk_summary {
	pthread_mutex_t mu;
	int window_s, bucket_s, nbuckets;
	int nprofiles;
	struct profile p[MAX_PROFILES];
};

struct sk_summary *sk_summary_new(int window_s, int bucket_s)
{
	if (bucket_s <= 0 || window_s < bucket_s)
		return NULL;
	struct sk_summary *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->window_s = window_s;
	s->bucket_s = bucket_s;
	s->nbuckets = (window_s + bucket_s - 1) / bucket_s;
	pthread_mutex_init(&s->mu, NULL);
	return s;
}

static void bucket_reset(struct bucket *b, int64_t start)
{
	for (int i = 0; i < b->nreasons; i++)
		free(b->reasons[i].text);
	memset(b, 0, sizeof *b);
	b->start = start;
}

void sk_summary_free(struct sk_summary *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nprofiles; i++) {
		for (int k = 0; k < s->nbuckets; k++)
			bucket_reset(&s->p[i].b[k], -1);
		free(s->p[i].b);
		free(s->p[i].name);
	}
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static struct profile *find_profile(struct sk_summary *s, const char *name, bool create)
{
	for (int i = 0; i < s->nprofiles; i++)
		if (!strcmp(s->p[i].name, name))
			return &s->p[i];
	if (!create || s->nprofiles == MAX_PROFILES)
		return NULL;
	struct profile *p = &s->p[s->nprofiles];
	p->name = strdup(name);
	p->b = calloc((size_t)s->nbuckets, sizeof *p->b);
	if (!p->name || !p->b) {
		free(p->name);
		free(p->b);
		p->name = NULL;
		p->b = NULL;
		return NULL;
	}
	for (int k = 0; k < s->nbuckets; k++)
		p->b[k].start = -1;
	s->nprofiles++;
	return p;
}

static void add_reason(struct bucket *b, const char *text)
{
	for (int i = 0; i < b->nreasons; i++)
		if (!strcmp(b->reasons[i].text, text)) {
			b->reasons[i].count++;
			return;
		}
	char *t = b->nreasons < MAX_REASONS ? strdup(text) : NULL;
	if (!t) {
		b->other++;
		return;
	}
	b->reasons[b->nreasons++] = (struct reason){ t, 1 };
}

void sk_summary_add(struct sk_summary *s, const char *profile, enum sk_result result, const char *const *reasons,
		    int nreasons, int64_t now_s)
{
	if (!s || !profile)
		return;
	int64_t idx = now_s / s->bucket_s;
	pthread_mutex_lock(&s->mu);
	struct profile *p = find_profile(s, profile, true);
	if (p) {
		struct bucket *b = &p->b[idx % s->nbuckets];
		if (b->start != idx)
			bucket_reset(b, idx);
		if (result == SK_RESULT_SCHEDULED)
			b->scheduled++;
		else if (result == SK_RESULT_UNSCHEDULABLE)
			b->unschedulable++;
		else
			b->errors++;
		for (int i = 0; result == SK_RESULT_UNSCHEDULABLE && i < nreasons; i++) {
			bool dup = false; /* each reason once per attempt */
			for (int k = 0; k < i && !dup; k++)
				dup = !strcmp(reasons[k], reasons[i]);
			if (!dup)
				add_reason(b, reasons[i]);
		}
	}
	pthread_mutex_unlock(&s->mu);
}

static int cmp_reason(const void *x, const void *y)
{
	const struct reason *a = x, *b = y;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->text, b->text);
}

/* One profile's window: sums over the buckets that are still inside it. */
static cJSON *profile_json(const struct sk_summary *s, const struct profile *p, int64_t now_s, int top)
{
	int64_t cur = now_s / s->bucket_s;
	int sched = 0, unsched = 0, errors = 0, n = 0;
	struct reason *all = calloc((size_t)s->nbuckets * MAX_REASONS + 1, sizeof *all);
	if (!all)
		return NULL;
	for (int k = 0; k < s->nbuckets; k++) {
		const struct bucket *b = &p->b[k];
		if (b->start < 0 || b->start > cur || cur - b->start >= s->nbuckets)
			continue;
		sched += b->scheduled;
		unsched += b->unschedulable;
		errors += b->errors;
		for (int i = 0; i < b->nreasons; i++) {
			int x = 0;
			while (x < n && strcmp(all[x].text, b->reasons[i].text))
				x++;
			if (x == n)
				all[n++].text = b->reasons[i].text;
			all[x].count += b->reasons[i].count;
		}
	}
	qsort(all, (size_t)n, sizeof *all, cmp_reason);
	cJSON *o = cJSON_CreateObject();
	cJSON *tr = o ? cJSON_AddArrayToObject(o, "topReasons") : NULL;
	bool ok = tr && cJSON_AddNumberToObject(o, "windowSeconds", s->window_s) &&
		  cJSON_AddNumberToObject(o, "scheduled", sched) && cJSON_AddNumberToObject(o, "unschedulable", unsched) &&
		  cJSON_AddNumberToObject(o, "errors", errors);
	for (int i = 0; ok && i < n && i < top; i++) {
		cJSON *e = cJSON_CreateObject();
		ok = e && cJSON_AddItemToArray(tr, e) && cJSON_AddStringToObject(e, "reason", all[i].text) &&
		     cJSON_AddNumberToObject(e, "count", all[i].count);
	}
	free(all);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *sk_summary_json(struct sk_summary *s, int64_t now_s, int top)
{
	cJSON *j = cJSON_CreateObject();
	if (!s || !j)
		return j;
	pthread_mutex_lock(&s->mu);
	bool ok = true;
	for (int i = 0; ok && i < s->nprofiles; i++) {
		cJSON *p = profile_json(s, &s->p[i], now_s, top);
		ok = p != NULL;
		if (ok)
			cJSON_AddItemToObject(j, s->p[i].name, p);
	}
	pthread_mutex_unlock(&s->mu);
	if (!ok) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

void sk_summary_add_outcome(struct sk_summary *s, const struct sk_outcome *o, int64_t now_s)
{
	/* the distinct reasons of the rejected nodes (the same reason is usually the same pointer) */
	const char *reasons[64];
	int n = 0;
	for (int i = 0; i < o->nfilter && o->filter; i++)
		for (int r = 0; o->filter[i].status && r < o->filter[i].status->nreasons; r++) {
			const char *x = o->filter[i].status->reasons[r];
			int k = 0;
			while (k < n && reasons[k] != x && strcmp(reasons[k], x))
				k++;
			if (k == n && n < 64)
				reasons[n++] = x;
		}
	sk_summary_add(s, o->profile, o->result, reasons, n, now_s);
}
