/* The decision-record store (store.h): building a record from an outcome in one allocation, and
 * the bounded index (per pod, global order, accounted bytes). */
#include "scheduler/decisions/store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedkit/plugin.h"

/* ---------- building a record ---------- */

/* A bump allocator over the record's one allocation: the first pass (base NULL) only measures. */
struct arena {
	char *base;
	size_t used;
};

static void *arena_take(struct arena *a, size_t n)
{
	size_t off = (a->used + 7) & ~(size_t)7;
	a->used = off + n;
	return a->base ? a->base + off : NULL;
}

static const char *arena_str(struct arena *a, const char *s)
{
	if (!s)
		return NULL;
	size_t l = strlen(s) + 1;
	char *p = arena_take(a, l);
	if (p)
		memcpy(p, s, l);
	return p;
}

/* The reasons of st packed as "r1\0r2\0..." (in the record's allocation). */
static const char *arena_reasons(struct arena *a, const struct sk_status *st)
{
	size_t len = 1;
	for (int i = 0; st && i < st->nreasons; i++)
		len += strlen(st->reasons[i]) + 1;
	char *out = arena_take(a, len);
	if (!out)
		return NULL;
	char *p = out;
	for (int i = 0; st && i < st->nreasons; i++) {
		size_t l = strlen(st->reasons[i]) + 1;
		memcpy(p, st->reasons[i], l);
		p += l;
	}
	*p = '\0';
	return out;
}

/* Does the record take the attempt's node names and totals instead of copying them? */
static bool taking(const struct sk_outcome *o)
{
	return o->scores && o->score_nodes && o->take_scores && o->take_score_nodes && o->take_scores == o->scores &&
	       *o->take_score_nodes == (const char **)o->score_nodes;
}

/* Lays the record out in a (measuring when a->base is NULL). r is NULL when measuring. */
static void layout(struct arena *a, struct sk_decision *r, const struct sk_outcome *o)
{
	struct sk_decision tmp;
	if (!r)
		r = &tmp;
	const struct sk_pod *pod = o->pod;
	r->ns = arena_str(a, pod && pod->ns ? pod->ns : "");
	r->name = arena_str(a, pod && pod->name ? pod->name : "");
	r->uid = arena_str(a, pod && pod->uid ? pod->uid : "");
	r->profile = arena_str(a, o->profile ? o->profile : "");
	r->message = arena_str(a, o->message ? o->message : "");
	r->nominated_node = arena_str(a, o->nominated_node ? o->nominated_node : "");
	r->node = arena_str(a, o->node);
	r->prefilter_message = arena_str(a, o->prefilter_message);
	r->nominated_path = arena_str(a, o->nominated_path);
	r->nfilter = o->nfilter > 0 && o->filter ? o->nfilter : 0;
	r->filter = arena_take(a, (size_t)r->nfilter * sizeof(*r->filter));
	const char *last_plugin = NULL, *last_interned = "";
	for (int i = 0; i < r->nfilter; i++) {
		const struct sk_outcome_filter *f = &o->filter[i];
		const char *reasons = arena_reasons(a, f->status);
		if (r->filter) {
			/* node names are interned already; plugin names are interned here (a module's
			 * name must outlive its unload), once per run of the same plugin */
			if (f->plugin != last_plugin) {
				last_plugin = f->plugin;
				last_interned = f->plugin ? sk_intern(f->plugin) : "";
			}
			r->filter[i].node = f->node ? f->node : "";
			r->filter[i].plugin = last_interned;
			r->filter[i].code = sk_code_string(f->status ? f->status->code : SK_SUCCESS);
			r->filter[i].reasons = reasons;
			r->filter[i].nreasons = f->status ? f->status->nreasons : 0;
		}
	}
	const struct sk_rec_trace *tr = o->trace;
	r->ntimes = tr ? tr->ntimes : 0;
	r->times = arena_take(a, (size_t)r->ntimes * sizeof(*r->times));
	for (int i = 0; r->times && i < r->ntimes; i++)
		r->times[i] = (struct sk_dec_time){ tr->times[i].point, tr->times[i].seconds, tr->times[i].runs };
	r->nvictims = tr ? tr->nvictims : 0;
	r->victims_total = tr ? tr->victims_total : 0;
	r->victims = arena_take(a, (size_t)r->nvictims * sizeof(char *));
	for (int i = 0; i < r->nvictims; i++) {
		const char *v = arena_str(a, tr->victims[i] ? tr->victims[i] : "");
		if (r->victims)
			r->victims[i] = v;
	}
	r->ncandidates = tr ? tr->ncandidates : 0;
	r->candidates_total = tr ? tr->candidates_total : 0;
	r->candidates = arena_take(a, (size_t)r->ncandidates * sizeof(*r->candidates));
	for (int i = 0; r->candidates && i < r->ncandidates; i++)
		r->candidates[i] = (struct sk_dec_candidate){ tr->candidates[i].node, tr->candidates[i].victims,
							      tr->candidates[i].pdb_violations, tr->candidates[i].dropped };
	const struct sk_score_table *t = o->scores && o->score_nodes ? o->scores : NULL;
	r->nplugins = t ? t->nplugins : 0;
	r->nnodes = t ? t->nnodes : 0;
	size_t nn = (size_t)r->nnodes;
	r->plugin = arena_take(a, (size_t)r->nplugins * sizeof(char *));
	r->weight = arena_take(a, (size_t)r->nplugins * sizeof(int32_t));
	/* normalised scores are 0-100 (sk_fw_run_score checks): one byte each */
	r->norm = arena_take(a, (size_t)r->nplugins * nn);
	/* raw scores only for the plugins whose NormalizeScore changed them */
	r->has_raw = t && t->raw;
	r->raw_row = arena_take(a, (size_t)r->nplugins * sizeof(int16_t));
	int nrows = 0;
	for (int p = 0; r->has_raw && p < r->nplugins; p++)
		if (memcmp(t->raw + (size_t)p * nn, t->scores + (size_t)p * nn, nn * sizeof(int64_t))) {
			if (r->raw_row)
				r->raw_row[p] = (int16_t)nrows;
			nrows++;
		} else if (r->raw_row) {
			r->raw_row[p] = -1;
		}
	r->raw = arena_take(a, (size_t)nrows * nn * sizeof(int64_t));
	if (a->base && t) {
		for (int p = 0; p < r->nplugins; p++) {
			r->plugin[p] = sk_intern(t->plugin[p]); /* a module's name outlives its unload */
			r->weight[p] = t->weight[p];
			if (!r->has_raw)
				r->raw_row[p] = -1;
			else if (r->raw_row[p] >= 0)
				memcpy(r->raw + (size_t)r->raw_row[p] * nn, t->raw + (size_t)p * nn, nn * sizeof(int64_t));
		}
		uint8_t *restrict dst = r->norm;
		const int64_t *restrict src = t->scores;
		for (size_t k = 0, cells = (size_t)r->nplugins * nn; k < cells; k++)
			dst[k] = (uint8_t)src[k];
	}
	if (taking(o))
		return; /* the node names and totals are the attempt's, taken by sk_decision_build */
	r->nodes = arena_take(a, nn * sizeof(char *));
	r->total = arena_take(a, nn * sizeof(int64_t));
	if (a->base && t && nn) {
		/* node names are interned (process lifetime): the pointers are kept */
		memcpy(r->nodes, o->score_nodes, nn * sizeof(char *));
		memcpy(r->total, t->total, nn * sizeof(int64_t));
	}
}

struct sk_decision *sk_decision_build(const struct sk_outcome *o, uint64_t seq, int64_t time_ns)
{
	struct arena m = { NULL, sizeof(struct sk_decision) };
	layout(&m, NULL, o);
	/* not calloc: the arrays are all written, and zeroing tens of KiB per attempt shows */
	struct sk_decision *r = malloc(m.used);
	if (!r)
		return NULL;
	memset(r, 0, sizeof *r);
	struct arena a = { (char *)r, sizeof(struct sk_decision) };
	layout(&a, r, o);
	if (taking(o)) {
		struct sk_score_table *t = o->take_scores;
		r->nodes = *o->take_score_nodes;
		r->total = t->total;
		*o->take_score_nodes = NULL;
		t->total = NULL;
		r->owns_scores = true;
		m.used += (size_t)r->nnodes * (sizeof(char *) + sizeof(int64_t));
	}
	r->seq = seq;
	r->time_ns = time_ns;
	r->bytes = m.used;
	r->result = o->result;
	r->attempts = o->attempts;
	r->duration_s = o->duration_s;
	r->num_all_nodes = o->num_all_nodes;
	r->prefilter_nodes = o->prefilter_nodes;
	r->nominated_path_fit = o->nominated_path_fit;
	r->permit_wait = o->permit_wait;
	r->refs = 1;
	return r;
}

void sk_decision_unref(struct sk_decision *r)
{
	if (!r || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (r->owns_scores) {
		free((void *)r->nodes);
		free(r->total);
	}
	free(r);
}

static struct sk_decision *dec_ref(struct sk_decision *r)
{
	__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
	return r;
}

/* ---------- the store ---------- */

struct dec_pod {
	struct dec_pod *next; /* hash chain */
	uint64_t hash;
	int n;
	struct sk_decision *head, *tail; /* oldest first */
	char key[];                      /* "ns\0name\0" */
};

#define POD_BYTES(p) (sizeof(struct dec_pod) + strlen((p)->key) + strlen((p)->key + strlen((p)->key) + 1) + 2)

struct sk_decisions {
	pthread_mutex_t mu;
	struct sk_decisions_opts opts;
	struct sk_decision *oldest, *newest;
	struct dec_pod **buckets;
	size_t nbuckets;
	int records, pods;
	int64_t bytes;
	uint64_t seq, added, evicted;
};

static uint64_t hash_key(const char *ns, const char *name)
{
	uint64_t h = 1469598103934665603ULL;
	for (const char *p = ns; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ 0xff) * 1099511628211ULL;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

struct sk_decisions *sk_decisions_new(const struct sk_decisions_opts *opts)
{
	struct sk_decisions *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	if (opts)
		d->opts = *opts;
	if (d->opts.per_pod <= 0)
		d->opts.per_pod = SK_DECISIONS_DEFAULT_PER_POD;
	if (d->opts.max_records <= 0)
		d->opts.max_records = SK_DECISIONS_DEFAULT_MAX;
	if (d->opts.max_bytes <= 0)
		d->opts.max_bytes = SK_DECISIONS_DEFAULT_MAX_BYTES;
	d->nbuckets = 64;
	while (d->nbuckets < (size_t)d->opts.max_records && d->nbuckets < (1u << 20))
		d->nbuckets <<= 1;
	d->buckets = calloc(d->nbuckets, sizeof *d->buckets);
	if (!d->buckets) {
		free(d);
		return NULL;
	}
	pthread_mutex_init(&d->mu, NULL);
	return d;
}

void sk_decisions_free(struct sk_decisions *d)
{
	if (!d)
		return;
	for (struct sk_decision *r = d->oldest, *n; r; r = n) {
		n = r->gnext;
		sk_decision_unref(r);
	}
	for (size_t b = 0; b < d->nbuckets; b++)
		for (struct dec_pod *p = d->buckets[b], *n; p; p = n) {
			n = p->next;
			free(p);
		}
	free(d->buckets);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

static struct dec_pod **find_pod(struct sk_decisions *d, const char *ns, const char *name, uint64_t h)
{
	struct dec_pod **pp = &d->buckets[h & (d->nbuckets - 1)];
	for (; *pp; pp = &(*pp)->next) {
		struct dec_pod *p = *pp;
		if (p->hash == h && !strcmp(p->key, ns) && !strcmp(p->key + strlen(p->key) + 1, name))
			return pp;
	}
	return pp;
}

/* Removes the oldest record of its pod, which is r (records of a pod are added in store order). */
static void evict(struct sk_decisions *d, struct sk_decision *r)
{
	struct dec_pod *p = r->pod;
	p->head = r->pnext;
	if (!p->head)
		p->tail = NULL;
	p->n--;
	if (r->gprev)
		r->gprev->gnext = r->gnext;
	else
		d->oldest = r->gnext;
	if (r->gnext)
		r->gnext->gprev = r->gprev;
	else
		d->newest = r->gprev;
	d->records--;
	d->bytes -= (int64_t)r->bytes;
	d->evicted++;
	if (p->n == 0) {
		struct dec_pod **pp = find_pod(d, p->key, p->key + strlen(p->key) + 1, p->hash);
		if (*pp == p)
			*pp = p->next;
		d->bytes -= (int64_t)POD_BYTES(p);
		d->pods--;
		free(p);
	}
	r->pod = NULL;
	sk_decision_unref(r);
}

static int64_t wall_ns(const struct sk_decisions *d)
{
	if (d->opts.wall_ns)
		return d->opts.wall_ns(d->opts.ctx);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

uint64_t sk_decisions_add(struct sk_decisions *d, const struct sk_outcome *o)
{
	if (!d || !o || !o->pod)
		return 0;
	/* built outside the lock: the copy is the expensive part */
	struct sk_decision *r = sk_decision_build(o, 0, wall_ns(d));
	uint64_t seq = sk_decisions_insert(d, r);
	sk_decision_unref(r);
	return seq;
}

int64_t sk_decisions_now_ns(const struct sk_decisions *d) { return wall_ns(d); }

uint64_t sk_decisions_insert(struct sk_decisions *d, struct sk_decision *r)
{
	if (!d || !r)
		return 0;
	dec_ref(r);
	pthread_mutex_lock(&d->mu);
	r->seq = ++d->seq;
	uint64_t h = hash_key(r->ns, r->name);
	struct dec_pod **pp = find_pod(d, r->ns, r->name, h);
	struct dec_pod *p = *pp;
	if (!p) {
		size_t ln = strlen(r->ns), lm = strlen(r->name);
		p = calloc(1, sizeof *p + ln + lm + 2);
		if (!p) {
			pthread_mutex_unlock(&d->mu);
			sk_decision_unref(r);
			return 0;
		}
		p->hash = h;
		memcpy(p->key, r->ns, ln + 1);
		memcpy(p->key + ln + 1, r->name, lm + 1);
		*pp = p;
		d->pods++;
		d->bytes += (int64_t)POD_BYTES(p);
	}
	r->pod = p;
	if (p->tail)
		p->tail->pnext = r;
	else
		p->head = r;
	p->tail = r;
	p->n++;
	r->gprev = d->newest;
	if (d->newest)
		d->newest->gnext = r;
	else
		d->oldest = r;
	d->newest = r;
	d->records++;
	d->bytes += (int64_t)r->bytes;
	d->added++;
	uint64_t seq = r->seq;
	while (p->n > d->opts.per_pod)
		evict(d, p->head);
	/* the newest record stays even when it alone passes max_bytes */
	while (d->oldest && d->oldest != d->newest &&
	       (d->records > d->opts.max_records || d->bytes > d->opts.max_bytes))
		evict(d, d->oldest);
	pthread_mutex_unlock(&d->mu);
	return seq;
}

void sk_decisions_stats(struct sk_decisions *d, struct sk_decisions_stats *out)
{
	memset(out, 0, sizeof *out);
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	*out = (struct sk_decisions_stats){ .records = d->records, .pods = d->pods, .bytes = d->bytes,
					    .added = d->added, .evicted = d->evicted, .per_pod = d->opts.per_pod,
					    .max_records = d->opts.max_records, .max_bytes = d->opts.max_bytes };
	pthread_mutex_unlock(&d->mu);
}

int sk_decisions_pod(struct sk_decisions *d, const char *ns, const char *name, struct sk_decision ***out)
{
	*out = NULL;
	if (!d || !ns || !name)
		return 0;
	pthread_mutex_lock(&d->mu);
	struct dec_pod *p = *find_pod(d, ns, name, hash_key(ns, name));
	int n = p ? p->n : 0;
	struct sk_decision **v = n ? malloc((size_t)n * sizeof *v) : NULL;
	if (n && !v) {
		pthread_mutex_unlock(&d->mu);
		return -1;
	}
	int i = n;
	for (struct sk_decision *r = p ? p->head : NULL; r; r = r->pnext)
		v[--i] = dec_ref(r);
	pthread_mutex_unlock(&d->mu);
	*out = v;
	return n;
}

static bool matches(const struct sk_decision *r, const struct sk_decisions_filter *f)
{
	if (!f)
		return true;
	if (f->profile && *f->profile && strcmp(f->profile, r->profile))
		return false;
	if (f->result && *f->result && strcmp(f->result, sk_result_string(r->result)))
		return false;
	if (f->ns && *f->ns && strcmp(f->ns, r->ns))
		return false;
	if (f->latest_per_pod && r->pod && r->pod->tail != r)
		return false;
	return true;
}

int sk_decisions_recent(struct sk_decisions *d, const struct sk_decisions_filter *f, struct sk_decision ***out)
{
	*out = NULL;
	if (!d)
		return 0;
	int limit = f && f->limit > 0 ? f->limit : 100;
	struct sk_decision **v = malloc((size_t)limit * sizeof *v);
	if (!v)
		return -1;
	int n = 0;
	pthread_mutex_lock(&d->mu);
	for (struct sk_decision *r = d->newest; r && n < limit; r = r->gprev)
		if (matches(r, f))
			v[n++] = dec_ref(r);
	pthread_mutex_unlock(&d->mu);
	*out = v;
	return n;
}
