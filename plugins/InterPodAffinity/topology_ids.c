/* Topology pair ids and the count mirrors by pair id (topology_ids.h). */
#include "topology_ids.h"

#include <stdlib.h>
#include <string.h>

int topo_ids_init(struct topo_ids *ids)
{
	memset(ids, 0, sizeof(*ids));
	return pthread_mutex_init(&ids->mu, NULL) == 0 ? 0 : -1;
}

void topo_ids_destroy(struct topo_ids *ids)
{
	topo_nodes_unref(ids->nodes);
	sk_tpmap_free(&ids->pairs);
	free(ids->pair_key);
	free(ids->pair_value);
	pthread_mutex_destroy(&ids->mu);
	memset(ids, 0, sizeof(*ids));
}

static bool same_key(const char *a, const char *b)
{
	return a == b || strcmp(a, b) == 0;
}

int topo_key_id(struct topo_ids *ids, const char *key)
{
	for (int i = 0; i < ids->nkeys; i++)
		if (same_key(ids->keys[i], key))
			return i;
	if (ids->nkeys == TOPO_MAX_KEYS)
		return -1;
	ids->keys[ids->nkeys] = key;
	return ids->nkeys++;
}

int topo_nodes_key(const struct topo_nodes *t, const char *key)
{
	for (int i = 0; t && i < t->nkeys; i++)
		if (same_key(t->keys[i], key))
			return i;
	return -1;
}

/* The id of (key, value), interned when new; -1 on OOM. */
static int pair_id(struct topo_ids *ids, const char *key, const char *value)
{
	int64_t *slot = sk_tpmap_slot(&ids->pairs, key, value);
	if (!slot)
		return -1;
	if (*slot)
		return (int)(*slot - 1);
	if (ids->npairs == ids->cappairs) {
		int cap = ids->cappairs ? ids->cappairs * 2 : 256;
		const char **k = realloc(ids->pair_key, (size_t)cap * sizeof(*k));
		if (!k)
			return -1;
		ids->pair_key = k;
		const char **v = realloc(ids->pair_value, (size_t)cap * sizeof(*v));
		if (!v)
			return -1;
		ids->pair_value = v;
		ids->cappairs = cap;
	}
	ids->pair_key[ids->npairs] = key;
	ids->pair_value[ids->npairs] = value;
	*slot = ++ids->npairs;
	return ids->npairs - 1;
}

struct topo_nodes *topo_nodes_ref(struct topo_nodes *t)
{
	if (t)
		atomic_fetch_add(&t->refs, 1);
	return t;
}

void topo_nodes_unref(struct topo_nodes *t)
{
	if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
		return;
	for (int32_t i = 0; i < t->n; i++)
		sk_node_unref(t->node[i]);
	free(t->node);
	free(t->at);
	free(t);
}

/* A new table for snap: rows of nodes unchanged since old (same serial, same node object, kept
 * alive by old's reference) are copied, the others read from the node's labels. */
static struct topo_nodes *nodes_build(struct topo_ids *ids, const struct topo_nodes *old, const struct sk_snapshot *snap)
{
	struct topo_nodes *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	atomic_init(&t->refs, 1);
	t->nkeys = ids->nkeys;
	t->stride = 1 + ids->nkeys;
	memcpy(t->keys, ids->keys, sizeof(t->keys));
	t->n = snap->index_end;
	t->nodes_version = snap->nodes_version;
	t->at = calloc((size_t)t->n * (size_t)t->stride + 1, sizeof(*t->at));
	t->node = calloc((size_t)t->n + 1, sizeof(*t->node));
	if (!t->at || !t->node)
		goto oom;
	for (int k = 0; k < snap->nnodes; k++) {
		const struct sk_node_info *ni = snap->nodes[k];
		int32_t i = ni->index;
		if (!ni->node || i <= 0 || i >= t->n || !ni->index_serial)
			continue;
		uint32_t *row = &t->at[(size_t)i * (size_t)t->stride];
		int from = 0;
		if (old && i < old->n && old->node[i] == ni->node && old->at[(size_t)i * (size_t)old->stride] == ni->index_serial) {
			memcpy(row + 1, &old->at[(size_t)i * (size_t)old->stride + 1], (size_t)old->nkeys * sizeof(*row));
			from = old->nkeys;
		}
		for (int kid = from; kid < t->nkeys; kid++) {
			const char *v = sk_labels_get(&ni->node->labels, t->keys[kid]);
			int pid = v ? pair_id(ids, t->keys[kid], v) : -1;
			if (v && pid < 0)
				goto oom;
			row[1 + kid] = (uint32_t)pid;
		}
		row[0] = ni->index_serial;
		t->node[i] = sk_node_ref(ni->node);
	}
	return t;
oom:
	topo_nodes_unref(t);
	return NULL;
}

struct topo_nodes *topo_nodes_get(struct topo_ids *ids, const struct sk_snapshot *snap)
{
	if (!snap || snap->index_end <= 0)
		return NULL;
	struct topo_nodes *t = ids->nodes;
	if (!t || t->nodes_version != snap->nodes_version || t->nkeys != ids->nkeys || t->n != snap->index_end) {
		struct topo_nodes *nt = nodes_build(ids, t, snap);
		if (!nt)
			return NULL;
		topo_nodes_unref(t);
		ids->nodes = t = nt;
		ids->epoch++;
	}
	return topo_nodes_ref(t);
}

/* ---------- mirrors ---------- */

struct topo_dense *topo_dense_ref(struct topo_dense *d)
{
	if (d)
		atomic_fetch_add(&d->refs, 1);
	return d;
}

void topo_dense_unref(struct topo_dense *d)
{
	if (!d || atomic_fetch_sub(&d->refs, 1) != 1)
		return;
	for (int m = 0; m < SK_NODE_SUMS_MAPS; m++)
		free(d->count[m]);
	free(d);
}

void topo_mirror_clear(struct topo_mirror *m)
{
	topo_dense_unref(m->d);
	m->d = NULL;
	m->valid = false;
}

/* A dense of npairs zero counts, with the first `copy` of src's counts when src is given. */
static struct topo_dense *dense_new(int npairs, const struct topo_dense *src)
{
	struct topo_dense *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	atomic_init(&d->refs, 1);
	d->npairs = npairs;
	for (int m = 0; m < SK_NODE_SUMS_MAPS; m++) {
		if (!(d->count[m] = calloc((size_t)npairs + 1, sizeof(int64_t)))) {
			topo_dense_unref(d);
			return NULL;
		}
		if (src)
			memcpy(d->count[m], src->count[m], (size_t)src->npairs * sizeof(int64_t));
	}
	return d;
}

/* Every entry of sums into d (zeroed); false when an entry's key has no id in t. */
static bool dense_fill(const struct topo_ids *ids, struct topo_dense *d, const struct topo_nodes *t,
		       const struct sk_node_sums *sums)
{
	for (int m = 0; m < SK_NODE_SUMS_MAPS; m++) {
		const struct sk_tpmap *map = &sums->maps[m];
		for (int k = 0; k < map->cap; k++) {
			const struct sk_tpmap_entry *e = &map->e[k];
			if (!e->key)
				continue;
			if (topo_nodes_key(t, e->key) < 0)
				return false;
			/* a pair no node of the table has is never looked up by id */
			const int64_t *pid = sk_tpmap_find(&ids->pairs, e->key, e->value);
			if (pid && *pid - 1 < d->npairs)
				d->count[m][*pid - 1] = e->count;
		}
	}
	return true;
}

/* The counts at the touched nodes' pairs read again from sums. */
static void dense_touch(const struct topo_ids *ids, struct topo_dense *d, const struct topo_nodes *t,
			const struct sk_node_sums *sums, const struct sk_node_info *const *touched, int ntouched)
{
	for (int i = 0; i < ntouched; i++) {
		const uint32_t *row = topo_row(t, touched[i]);
		for (int kid = 0; row && kid < t->nkeys; kid++) {
			int32_t pid = (int32_t)row[kid];
			if (pid < 0 || pid >= d->npairs)
				continue;
			for (int m = 0; m < SK_NODE_SUMS_MAPS; m++) {
				const int64_t *c = sk_tpmap_find(&sums->maps[m], ids->pair_key[pid], ids->pair_value[pid]);
				d->count[m][pid] = c ? *c : 0;
			}
		}
	}
}

struct topo_dense *topo_mirror_update(struct topo_ids *ids, struct topo_mirror *m, const struct topo_nodes *t,
				      const struct sk_node_sums *sums, const struct sk_node_info *const *touched,
				      int ntouched, bool full)
{
	/* Touched nodes must all be numbered by t, else their pairs are unknown. */
	for (int i = 0; !full && i < ntouched; i++)
		full = !topo_row(t, touched[i]);
	full = full || !m->valid || !m->d || m->epoch != ids->epoch || m->d->npairs != ids->npairs;
	struct topo_dense *d = m->d;
	if (full || atomic_load(&d->refs) > 1) {
		/* a cycle still reads the old one: a copy (or a new one to fill) */
		d = dense_new(ids->npairs, full ? NULL : m->d);
		if (!d)
			goto fail;
	}
	if (full) {
		if (!dense_fill(ids, d, t, sums)) {
			topo_dense_unref(d);
			goto fail;
		}
	} else {
		dense_touch(ids, d, t, sums, touched, ntouched);
	}
	if (d != m->d) {
		topo_dense_unref(m->d);
		m->d = d;
	}
	m->epoch = ids->epoch;
	m->valid = true;
	return topo_dense_ref(d);
fail:
	topo_mirror_clear(m);
	return NULL;
}
