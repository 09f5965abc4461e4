/* Per-node sums kept across scheduling cycles (schedkit/node_memo.h): contributions per node
 * info (keyed by its pointer, trusted while its generation is unchanged) in the order of the last
 * list walked, so that walking an unchanged list finds each node at its position without hashing;
 * an open-addressing index (node info pointer -> position) for the others. A memo that follows
 * one of the scheduling snapshot's lists from one update to the next reads the update's change
 * log instead of walking the list (docs/plugins.md, "Counts across cycles"). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/node_memo.h"
#include "schedkit/plugin.h"
#include "scheduler/backend/cache.h"
#include "scheduler/framework/node_memo_host.h"

/* ---------- aggregates ---------- */

struct sk_node_sums *sk_node_sums_new(void)
{
	struct sk_node_sums *a = calloc(1, sizeof(*a));
	if (a)
		atomic_init(&a->refs, 1);
	return a;
}

struct sk_node_sums *sk_node_sums_ref(struct sk_node_sums *a)
{
	if (a)
		atomic_fetch_add(&a->refs, 1);
	return a;
}

void sk_node_sums_unref(struct sk_node_sums *a)
{
	if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	for (int i = 0; i < SK_NODE_SUMS_MAPS; i++)
		sk_tpmap_free(&a->maps[i]);
	free(a->keys);
	free(a);
}

static int note_key(struct sk_node_sums *a, const char *key)
{
	for (int i = 0; i < a->nkeys; i++)
		if (a->keys[i] == key || strcmp(a->keys[i], key) == 0)
			return 0;
	if (a->nkeys == a->capkeys) {
		int cap = a->capkeys ? a->capkeys * 2 : 4;
		const char **k = realloc(a->keys, (size_t)cap * sizeof(*k));
		if (!k)
			return -1;
		a->keys = k;
		a->capkeys = cap;
	}
	a->keys[a->nkeys++] = key;
	return 0;
}

static struct sk_node_sums *agg_copy(const struct sk_node_sums *src)
{
	struct sk_node_sums *a = sk_node_sums_new();
	if (!a)
		return NULL;
	for (int i = 0; i < SK_NODE_SUMS_MAPS; i++)
		if (sk_tpmap_copy(&a->maps[i], &src->maps[i]) < 0)
			goto oom;
	for (int i = 0; i < src->nkeys; i++)
		if (note_key(a, src->keys[i]) < 0)
			goto oom;
	return a;
oom:
	sk_node_sums_unref(a);
	return NULL;
}

int sk_node_sums_own(struct sk_node_sums **a)
{
	if (atomic_load(&(*a)->refs) == 1)
		return 0;
	struct sk_node_sums *c = agg_copy(*a);
	if (!c)
		return -1;
	sk_node_sums_unref(*a);
	*a = c;
	return 0;
}

int sk_node_sums_add(struct sk_node_sums *a, int map, const char *key, const char *value, int64_t delta)
{
	if (map == 0 && note_key(a, key) < 0)
		return -1;
	return sk_tpmap_add_or_delete(&a->maps[map], key, value, delta);
}

/* ---------- contributions ---------- */

int sk_node_contribs_add(struct sk_node_contribs *cs, int map, const char *key, const char *value, int64_t delta)
{
	for (int i = 0; i < cs->n; i++) {
		struct sk_node_contrib *c = &cs->c[i];
		if (c->map == map && (c->key == key || strcmp(c->key, key) == 0) &&
		    (c->value == value || strcmp(c->value, value) == 0)) {
			c->delta += delta;
			return 0;
		}
	}
	if (cs->n == cs->cap) {
		int cap = cs->cap ? cs->cap * 2 : 2;
		struct sk_node_contrib *c = realloc(cs->c, (size_t)cap * sizeof(*c));
		if (!c)
			return -1;
		cs->c = c;
		cs->cap = cap;
	}
	cs->c[cs->n++] = (struct sk_node_contrib){ .key = key, .value = value, .delta = delta, .map = map };
	return 0;
}

static int apply(struct sk_node_sums *a, const struct sk_node_contribs *cs, int64_t sign)
{
	for (int i = 0; i < cs->n; i++)
		if (cs->c[i].delta != 0 &&
		    sk_node_sums_add(a, cs->c[i].map, cs->c[i].key, cs->c[i].value, sign * cs->c[i].delta) < 0)
			return -1;
	return 0;
}

/* ---------- the memo ---------- */

struct memo_node;

struct sk_node_memo {
	pthread_mutex_t mu;              /* held between try_lock and unlock */
	void *sig;                       /* the signature the contributions belong to (owner: sig_free) */
	void (*sig_free)(void *sig);
	int n, cap;
	struct memo_node *nodes;         /* in the order of the last list walked */
	int icap;
	int *index;                      /* open addressing: node info pointer -> position + 1 */
	struct sk_node_sums *agg;        /* the sums; one reference */
	uint32_t epoch;
	int last_recounted, last_dropped;
	/* The snapshot list the sums were last brought up to date with (snap NULL: none, or not a
	 * snapshot's list): which of its lists, and the update it had seen (sk_snapshot_changes). */
	const struct sk_snapshot *snap;
	int kind;
	uint64_t serial;
	bool untrusted;     /* an entry of generation 0 is held: recounted by every walk, never followed */
	bool last_followed; /* the last update read the change log */
};

struct memo_node {
	const struct sk_node_info *ni;
	int64_t gen;            /* ni->generation the contribution was computed at; 0 = recount */
	uint32_t epoch;         /* the last update that saw ni in its list */
	struct sk_node_contribs c;
};

static void memo_init(struct sk_node_memo *m)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->mu, NULL);
}

struct sk_node_memo *sk_node_memo_new(void)
{
	struct sk_node_memo *m = malloc(sizeof(*m));
	if (m)
		memo_init(m);
	return m;
}

void *sk_node_memo_sig(const struct sk_node_memo *m) { return m->sig; }

void sk_node_memo_last(const struct sk_node_memo *m, int *recounted, int *dropped)
{
	*recounted = m->last_recounted;
	*dropped = m->last_dropped;
}

static void forget_nodes(struct sk_node_memo *m)
{
	for (int i = 0; i < m->n; i++)
		free(m->nodes[i].c.c);
	m->n = 0;
	free(m->index);
	m->index = NULL;
	m->icap = 0;
	m->snap = NULL;
	m->untrusted = false;
}

void sk_node_memo_reset(struct sk_node_memo *m, void *sig, void (*sig_free)(void *))
{
	forget_nodes(m);
	sk_node_sums_unref(m->agg);
	m->agg = NULL;
	if (m->sig && m->sig_free)
		m->sig_free(m->sig);
	m->sig = sig;
	m->sig_free = sig_free;
}

static void memo_destroy(struct sk_node_memo *m)
{
	sk_node_memo_reset(m, NULL, NULL);
	free(m->nodes);
	m->nodes = NULL;
	m->cap = 0;
	pthread_mutex_destroy(&m->mu);
}

void sk_node_memo_free(struct sk_node_memo *m)
{
	if (!m)
		return;
	memo_destroy(m);
	free(m);
}

bool sk_node_memo_try_lock(struct sk_node_memo *m) { return pthread_mutex_trylock(&m->mu) == 0; }
void sk_node_memo_unlock(struct sk_node_memo *m) { pthread_mutex_unlock(&m->mu); }

static size_t ptr_hash(const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 17);
}

/* Rebuilds the index over nodes[0..n); -1 on OOM. */
static int reindex(struct sk_node_memo *m)
{
	int cap = 16;
	while (cap < 2 * m->n + 2)
		cap *= 2;
	if (cap != m->icap) {
		int *ix = malloc((size_t)cap * sizeof(*ix));
		if (!ix)
			return -1;
		free(m->index);
		m->index = ix;
		m->icap = cap;
	}
	memset(m->index, 0, (size_t)m->icap * sizeof(*m->index));
	size_t mask = (size_t)m->icap - 1;
	for (int i = 0; i < m->n; i++) {
		size_t j = ptr_hash(m->nodes[i].ni) & mask;
		while (m->index[j])
			j = (j + 1) & mask;
		m->index[j] = i + 1;
	}
	return 0;
}

static int find(const struct sk_node_memo *m, const struct sk_node_info *ni)
{
	if (!m->icap)
		return -1;
	size_t mask = (size_t)m->icap - 1;
	for (size_t j = ptr_hash(ni) & mask; m->index[j]; j = (j + 1) & mask)
		if (m->nodes[m->index[j] - 1].ni == ni)
			return m->index[j] - 1;
	return -1;
}

/* Appends a node not yet known (its contribution empty, to be counted); -1 on OOM. */
static int append(struct sk_node_memo *m, const struct sk_node_info *ni)
{
	if (m->n == m->cap) {
		int cap = m->cap ? m->cap * 2 : 64;
		struct memo_node *nn = realloc(m->nodes, (size_t)cap * sizeof(*nn));
		if (!nn)
			return -1;
		m->nodes = nn;
		m->cap = cap;
	}
	m->nodes[m->n] = (struct memo_node){ .ni = ni, .gen = 0 };
	m->n++;
	if (m->n * 2 + 2 > m->icap) {
		if (reindex(m) < 0)
			return -1;
	} else {
		size_t mask = (size_t)m->icap - 1, j = ptr_hash(ni) & mask;
		while (m->index[j])
			j = (j + 1) & mask;
		m->index[j] = m->n;
	}
	return m->n - 1;
}

/* How many node infos ahead the list walk prefetches. */
#define MEMO_PREFETCH 8

/* Below this many nodes to recount, the caller's thread counts them alone. */
#define PARALLEL_MIN 64

struct recount_job {
	struct sk_node_memo *m;
	const int *todo;
	sk_node_contrib_fn fn;
	void *ctx;
	atomic_int failed;
};

static void recount_one(int i, void *p)
{
	struct recount_job *j = p;
	struct memo_node *e = &j->m->nodes[j->todo[i]];
	e->c.n = 0;
	if (j->fn(e->ni, j->ctx, &e->c) < 0)
		atomic_store(&j->failed, 1);
}

/* Recounts nodes[todo[0..n)]: their old contributions out of the sums, the new ones counted (in
 * parallel: each touches only its own entry) and added. */
static int recount(struct sk_node_memo *m, struct sk_handle *h, const int *todo, int n, sk_node_contrib_fn fn, void *ctx)
{
	for (int i = 0; i < n; i++) {
		struct memo_node *e = &m->nodes[todo[i]];
		if (apply(m->agg, &e->c, -1) < 0)
			return -1;
		e->c.n = 0;
		e->gen = 0;
	}
	struct recount_job j = { .m = m, .todo = todo, .fn = fn, .ctx = ctx };
	atomic_init(&j.failed, 0);
	if (h && n >= PARALLEL_MIN)
		sk_handle_parallel_for(h, n, recount_one, &j);
	else
		for (int i = 0; i < n; i++)
			recount_one(i, &j);
	if (atomic_load(&j.failed))
		return -1;
	for (int i = 0; i < n; i++) {
		struct memo_node *e = &m->nodes[todo[i]];
		if (apply(m->agg, &e->c, 1) < 0)
			return -1;
		e->gen = e->ni->generation;
		m->untrusted |= e->gen == 0;
	}
	m->last_recounted += n;
	return 0;
}

/* Drops the nodes this update did not see (their contributions subtracted) and puts the others
 * in list order, so that the next walk of an unchanged list finds each node at its position. */
static int sweep_and_order(struct sk_node_memo *m, struct sk_node_info *const *list, int n, int seen, bool reorder)
{
	if (!reorder && seen == m->n) /* every entry was seen by this update: none to drop */
		return 0;
	int kept = 0;
	for (int i = 0; i < m->n; i++) {
		struct memo_node *e = &m->nodes[i];
		if (e->epoch == m->epoch) {
			kept++;
			continue;
		}
		if (apply(m->agg, &e->c, -1) < 0)
			return -1;
		m->last_dropped++;
	}
	if (!reorder && kept == m->n)
		return 0;
	struct memo_node *nn = malloc((size_t)(kept ? kept : 1) * sizeof(*nn));
	if (!nn)
		return -1;
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (!list[i]->node)
			continue;
		int pos = find(m, list[i]);
		if (pos >= 0 && m->nodes[pos].epoch == m->epoch) {
			nn[k++] = m->nodes[pos];
			m->nodes[pos].c.c = NULL; /* moved */
			m->nodes[pos].epoch = m->epoch - 1;
		}
	}
	for (int i = 0; i < m->n; i++)
		free(m->nodes[i].c.c);
	free(m->nodes);
	m->nodes = nn;
	m->n = k;
	m->cap = kept ? kept : 1;
	return reindex(m);
}

/* The walk of list: 0, or -1 on OOM. */
static int walk(struct sk_node_memo *m, struct sk_handle *h, struct sk_node_info *const *list, int n, sk_node_contrib_fn fn,
		void *ctx)
{
	int *todo = NULL, ntodo = 0, captodo = 0;
	m->last_recounted = m->last_dropped = 0;
	m->untrusted = false; /* generation-0 entries are recounted below and noted again */
	if (!m->agg && !(m->agg = sk_node_sums_new()))
		goto oom;
	if (sk_node_sums_own(&m->agg) < 0) /* the last cycle's state may still hold the sums */
		goto oom;
	m->epoch++;
	/* Each node is first looked for right after the previous one's entry: a list that only
	 * gained or lost a few nodes stays aligned without hashing. Many misses: put the entries in
	 * list order again. */
	int cur = 0, misses = 0, seen = 0;
	for (int i = 0; i < n; i++) {
		const struct sk_node_info *ni = list[i];
		/* The walk reads one field of each node info, a cache miss apiece at 5,000 nodes: ask
		 * for a later one's early. */
		if (i + MEMO_PREFETCH < n)
			__builtin_prefetch(&list[i + MEMO_PREFETCH]->generation);
		/* The common case, the node info as counted: an unchanged generation means an unchanged
		 * node info (its node too), so nothing else of it is read. */
		if (cur < m->n && m->nodes[cur].ni == ni && m->nodes[cur].gen != 0 && m->nodes[cur].gen == ni->generation) {
			struct memo_node *e = &m->nodes[cur++];
			seen += e->epoch != m->epoch;
			e->epoch = m->epoch;
			continue;
		}
		if (!ni->node)
			continue;
		int pos = cur < m->n && m->nodes[cur].ni == ni ? cur : (misses++, find(m, ni));
		if (pos < 0 && (pos = append(m, ni)) < 0)
			goto oom;
		cur = pos + 1;
		struct memo_node *e = &m->nodes[pos];
		seen += e->epoch != m->epoch; /* each entry once, even were a node listed twice */
		e->epoch = m->epoch;
		if (e->gen != 0 && e->gen == ni->generation)
			continue;
		if (ntodo == captodo) {
			int cap = captodo ? captodo * 2 : 16;
			int *t = realloc(todo, (size_t)cap * sizeof(*t));
			if (!t)
				goto oom;
			todo = t;
			captodo = cap;
		}
		todo[ntodo++] = pos;
	}
	if (recount(m, h, todo, ntodo, fn, ctx) < 0 || sweep_and_order(m, list, n, seen, misses > 16 + m->n / 16) < 0)
		goto oom;
	free(todo);
	return 0;
oom:
	free(todo);
	return -1;
}

/* Which of snap's lists list[0..n) is: 0 the nodes, 1 have_affinity, 2 have_required_anti_affinity,
 * -1 none of them. */
static int list_kind(const struct sk_snapshot *snap, struct sk_node_info *const *list, int n)
{
	if (!snap)
		return -1;
	if (list == snap->nodes && n == snap->nnodes)
		return 0;
	if (list == snap->have_affinity && n == snap->nhave_affinity)
		return 1;
	if (list == snap->have_required_anti_affinity && n == snap->nhave_required_anti_affinity)
		return 2;
	return -1;
}

/* Whether ni is in the snapshot list of that kind (cache.c builds the lists from these tests). */
static bool in_list(int kind, const struct sk_node_info *ni)
{
	if (!ni->node)
		return false;
	return kind == 0 || (kind == 1 ? ni->npods_with_affinity > 0 : ni->npods_with_required_anti_affinity > 0);
}

/* Takes out the entries marked dropped (ni NULL) and indexes the rest again. */
static int compact(struct sk_node_memo *m)
{
	int k = 0;
	for (int i = 0; i < m->n; i++) {
		if (m->nodes[i].ni)
			m->nodes[k++] = m->nodes[i];
		else
			free(m->nodes[i].c.c);
	}
	m->n = k;
	return reindex(m);
}

/* Brings the sums up to date from the snapshot's change log when it covers every update since the
 * memo's last one: each node info the log names is recounted when its generation moved, added when
 * it joined the list, dropped when it left; no other node is read. 1 when done, 0 when the log does
 * not cover it (or the result does not match the list's length: the caller walks), -1 on OOM. */
static int follow(struct sk_node_memo *m, struct sk_handle *h, const struct sk_snapshot *snap, int kind, int n,
		  sk_node_contrib_fn fn, void *ctx)
{
	uint64_t serial, prev;
	struct sk_node_info *const *changed;
	int nchanged = sk_snapshot_changes(snap, &serial, &prev, &changed);
	if (serial == 0)
		return 0;
	if (serial == m->serial)
		nchanged = 0; /* no update since the last one */
	else if (nchanged < 0 || prev != m->serial)
		return 0;
	m->last_recounted = m->last_dropped = 0;
	int *todo = nchanged ? malloc((size_t)nchanged * sizeof(*todo)) : NULL;
	if (nchanged && !todo)
		return -1;
	int ntodo = 0, ndropped = 0;
	if (nchanged && sk_node_sums_own(&m->agg) < 0) /* the last cycle's state may still hold the sums */
		goto oom;
	for (int i = 0; i < nchanged; i++) {
		const struct sk_node_info *ni = changed[i];
		int pos = find(m, ni);
		if (!in_list(kind, ni)) {
			if (pos >= 0) {
				if (apply(m->agg, &m->nodes[pos].c, -1) < 0)
					goto oom;
				m->nodes[pos].ni = NULL; /* dropped below, after the recount's positions */
				ndropped++;
			}
			continue;
		}
		if (pos < 0 && (pos = append(m, ni)) < 0)
			goto oom;
		struct memo_node *e = &m->nodes[pos];
		if (e->gen == 0 || e->gen != ni->generation)
			todo[ntodo++] = pos;
	}
	if (recount(m, h, todo, ntodo, fn, ctx) < 0 || (ndropped && compact(m) < 0))
		goto oom;
	free(todo);
	m->last_dropped = ndropped;
	m->serial = serial;
	return m->n == n ? 1 : 0;
oom:
	free(todo);
	return -1;
}

struct sk_node_sums *sk_node_memo_update_in(struct sk_node_memo *m, struct sk_handle *h, const struct sk_snapshot *snap,
					    struct sk_node_info *const *list, int n, sk_node_contrib_fn fn, void *ctx)
{
	int kind = list_kind(snap, list, n);
	m->last_followed = false;
	if (kind >= 0 && m->agg && m->snap == snap && m->kind == kind && !m->untrusted) {
		int rc = follow(m, h, snap, kind, n, fn, ctx);
		if (rc < 0)
			goto oom;
		if (rc == 1) {
			m->last_followed = true;
			return sk_node_sums_ref(m->agg);
		}
	}
	if (walk(m, h, list, n, fn, ctx) < 0)
		goto oom;
	m->snap = NULL;
	if (kind >= 0) {
		uint64_t serial, prev;
		struct sk_node_info *const *changed;
		(void)sk_snapshot_changes(snap, &serial, &prev, &changed);
		if (serial != 0) { /* a snapshot updated from a cache: the next update may follow its log */
			m->snap = snap;
			m->kind = kind;
			m->serial = serial;
		}
	}
	return sk_node_sums_ref(m->agg);
oom:
	sk_node_memo_reset(m, NULL, NULL);
	return NULL;
}

struct sk_node_sums *sk_node_memo_update(struct sk_node_memo *m, struct sk_handle *h, struct sk_node_info *const *list, int n,
				sk_node_contrib_fn fn, void *ctx)
{
	return sk_node_memo_update_in(m, h, h ? sk_handle_snapshot(h) : NULL, list, n, fn, ctx);
}

bool sk_node_memo_last_followed(const struct sk_node_memo *m) { return m->last_followed; }

struct sk_node_sums *sk_node_sums_count(struct sk_handle *h, struct sk_node_info *const *list, int n, sk_node_contrib_fn fn,
				void *ctx)
{
	struct sk_node_memo m;
	memo_init(&m);
	struct sk_node_sums *a = sk_node_memo_update(&m, h, list, n, fn, ctx);
	memo_destroy(&m);
	return a;
}
