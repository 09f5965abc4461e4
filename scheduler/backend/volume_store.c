/* The volume store (volume_store.h): one chained hash map per kind, keyed "ns/name" (namespaced
 * kinds) or "name", under one rwlock. Values are reference-counted views; a get hands out a new
 * reference, so readers never hold the lock while they use an object. VolumeAttachments are also
 * indexed by spec.nodeName (upstream NodeVolumeLimits' va.spec.nodename indexer), so a Filter call
 * reads one node's attachments without scanning all of them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"
#include "scheduler/backend/volume_store.h"

#define NKINDS 8 /* enum sk_vobj_kind is 1..7 */

struct entry {
	struct entry *next;
	char *key;
	struct sk_vobj *obj;
};

struct map {
	size_t nbuckets, n;
	struct entry **buckets;
};

/* One node's VolumeAttachments (references), unordered. */
struct node_vas {
	struct node_vas *next;
	const char *node; /* interned (the view's node_name) */
	int n, cap;
	struct sk_vobj **vas;
};

struct node_index {
	size_t nbuckets;
	struct node_vas **buckets;
};

struct sk_volume_store {
	pthread_rwlock_t lock;
	struct map maps[NKINDS];
	struct node_index va_by_node;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static bool namespaced(enum sk_vobj_kind k)
{
	return k == SK_VOBJ_PVC || k == SK_VOBJ_CSI_STORAGE_CAPACITY;
}

static char *make_key(enum sk_vobj_kind k, const char *ns, const char *name)
{
	char *key = NULL;
	if (namespaced(k)) {
		if (asprintf(&key, "%s/%s", ns ? ns : "", name ? name : "") < 0)
			return NULL;
		return key;
	}
	return strdup(name ? name : "");
}

struct sk_volume_store *sk_volume_store_new(void)
{
	struct sk_volume_store *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	if (pthread_rwlock_init(&s->lock, NULL) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

void sk_volume_store_free(struct sk_volume_store *s)
{
	if (!s)
		return;
	for (int k = 0; k < NKINDS; k++) {
		struct map *m = &s->maps[k];
		for (size_t b = 0; b < m->nbuckets; b++)
			for (struct entry *e = m->buckets[b], *next; e; e = next) {
				next = e->next;
				sk_vobj_unref(e->obj);
				free(e->key);
				free(e);
			}
		free(m->buckets);
	}
	for (size_t b = 0; b < s->va_by_node.nbuckets; b++)
		for (struct node_vas *nv = s->va_by_node.buckets[b], *next; nv; nv = next) {
			next = nv->next;
			for (int i = 0; i < nv->n; i++)
				sk_vobj_unref(nv->vas[i]);
			free(nv->vas);
			free(nv);
		}
	free(s->va_by_node.buckets);
	pthread_rwlock_destroy(&s->lock);
	free(s);
}

static bool valid_kind(enum sk_vobj_kind k)
{
	return k >= SK_VOBJ_PVC && k <= SK_VOBJ_VOLUME_ATTACHMENT;
}

/* ---------- the VolumeAttachment node index (lock held for writing) ---------- */

#define NODE_BUCKETS 256

static struct node_vas **node_slot(struct node_index *x, const char *node)
{
	struct node_vas **pp = &x->buckets[hash(node) % x->nbuckets];
	while (*pp && strcmp((*pp)->node, node) != 0)
		pp = &(*pp)->next;
	return pp;
}

static int index_add(struct sk_volume_store *s, struct sk_vobj *obj)
{
	const char *node = ((struct sk_volume_attachment *)obj)->node_name;
	struct node_index *x = &s->va_by_node;
	if (!x->nbuckets) {
		if (!(x->buckets = calloc(NODE_BUCKETS, sizeof *x->buckets)))
			return -1;
		x->nbuckets = NODE_BUCKETS;
	}
	struct node_vas **pp = node_slot(x, node);
	if (!*pp && !(*pp = calloc(1, sizeof **pp)))
		return -1;
	struct node_vas *nv = *pp;
	nv->node = node;
	if (nv->n == nv->cap) {
		int nc = nv->cap ? nv->cap * 2 : 4;
		struct sk_vobj **na = realloc(nv->vas, sizeof *na * (size_t)nc);
		if (!na)
			return -1;
		nv->vas = na;
		nv->cap = nc;
	}
	nv->vas[nv->n++] = sk_vobj_ref(obj);
	return 0;
}

static void index_remove(struct sk_volume_store *s, const struct sk_vobj *obj)
{
	const char *node = ((const struct sk_volume_attachment *)obj)->node_name;
	struct node_index *x = &s->va_by_node;
	if (!x->nbuckets)
		return;
	struct node_vas **pp = node_slot(x, node), *nv = *pp;
	for (int i = 0; nv && i < nv->n; i++)
		if (nv->vas[i] == obj) {
			sk_vobj_unref(nv->vas[i]);
			nv->vas[i] = nv->vas[--nv->n];
			break;
		}
	if (nv && nv->n == 0) {
		*pp = nv->next;
		free(nv->vas);
		free(nv);
	}
}

static struct entry **find(struct map *m, const char *key)
{
	if (m->nbuckets == 0)
		return NULL;
	struct entry **pp = &m->buckets[hash(key) % m->nbuckets];
	while (*pp && strcmp((*pp)->key, key) != 0)
		pp = &(*pp)->next;
	return pp;
}

static int grow(struct map *m)
{
	if (m->n < m->nbuckets)
		return 0;
	size_t nb = m->nbuckets ? m->nbuckets * 2 : 64;
	struct entry **nbk = calloc(nb, sizeof *nbk);
	if (!nbk)
		return m->nbuckets ? 0 : -1; /* a full map still works, only slower */
	for (size_t b = 0; b < m->nbuckets; b++)
		for (struct entry *e = m->buckets[b], *next; e; e = next) {
			next = e->next;
			size_t h = hash(e->key) % nb;
			e->next = nbk[h];
			nbk[h] = e;
		}
	free(m->buckets);
	m->buckets = nbk;
	m->nbuckets = nb;
	return 0;
}

/* Puts obj; *old receives the replaced view (or NULL). Lock held for writing. */
static int put_locked(struct sk_volume_store *s, struct sk_vobj *obj, char *key, struct sk_vobj **old)
{
	struct map *m = &s->maps[obj->kind];
	bool indexed = obj->kind == SK_VOBJ_VOLUME_ATTACHMENT;
	struct entry **pp = find(m, key);
	if (pp && *pp) {
		if (indexed && index_add(s, obj) != 0)
			return -1;
		*old = (*pp)->obj;
		(*pp)->obj = obj;
		if (indexed)
			index_remove(s, *old);
		free(key);
		return 0;
	}
	*old = NULL;
	if (grow(m) != 0)
		return -1;
	struct entry *e = calloc(1, sizeof *e);
	if (!e)
		return -1;
	if (indexed && index_add(s, obj) != 0) {
		free(e);
		return -1;
	}
	size_t h = hash(key) % m->nbuckets;
	e->key = key;
	e->obj = obj;
	e->next = m->buckets[h];
	m->buckets[h] = e;
	m->n++;
	return 0;
}

static int put(struct sk_volume_store *s, struct sk_vobj *obj, struct sk_vobj **old)
{
	*old = NULL;
	char *key = make_key(obj->kind, obj->ns, obj->name);
	if (!key)
		return -1;
	pthread_rwlock_wrlock(&s->lock);
	int rc = put_locked(s, obj, key, old);
	pthread_rwlock_unlock(&s->lock);
	if (rc != 0)
		free(key);
	return rc;
}

int sk_volume_store_put(struct sk_volume_store *s, struct sk_vobj *obj)
{
	if (!obj || !valid_kind(obj->kind))
		return -1;
	struct sk_vobj *old = NULL;
	if (put(s, obj, &old) != 0) {
		sk_vobj_unref(obj);
		return -1;
	}
	sk_vobj_unref(old);
	return 0;
}

int sk_volume_store_put_json(struct sk_volume_store *s, enum sk_vobj_kind kind, const cJSON *obj,
			     struct sk_vobj **out, struct sk_vobj **old, char **err)
{
	if (out)
		*out = NULL;
	if (old)
		*old = NULL;
	struct sk_vobj *v = NULL;
	switch (kind) {
	case SK_VOBJ_PVC: v = (struct sk_vobj *)sk_pvc_decode(obj, err); break;
	case SK_VOBJ_PV: v = (struct sk_vobj *)sk_pv_decode(obj, err); break;
	case SK_VOBJ_STORAGE_CLASS: v = (struct sk_vobj *)sk_storage_class_decode(obj, err); break;
	case SK_VOBJ_CSI_NODE: v = (struct sk_vobj *)sk_csi_node_decode(obj, err); break;
	case SK_VOBJ_CSI_DRIVER: v = (struct sk_vobj *)sk_csi_driver_decode(obj, err); break;
	case SK_VOBJ_CSI_STORAGE_CAPACITY: v = (struct sk_vobj *)sk_csi_storage_capacity_decode(obj, err); break;
	case SK_VOBJ_VOLUME_ATTACHMENT: v = (struct sk_vobj *)sk_volume_attachment_decode(obj, err); break;
	default: v = sk_vobj_decode(obj, err); break;
	}
	if (!v)
		return -1;
	struct sk_vobj *prev = NULL;
	if (put(s, v, &prev) != 0) {
		sk_vobj_unref(v);
		return kube_errf(err, "volume store: out of memory");
	}
	if (out)
		*out = sk_vobj_ref(v);
	if (old)
		*old = prev;
	else
		sk_vobj_unref(prev);
	return 0;
}

struct sk_vobj *sk_volume_store_delete(struct sk_volume_store *s, enum sk_vobj_kind kind, const char *ns,
				       const char *name)
{
	if (!s || !valid_kind(kind))
		return NULL;
	char *key = make_key(kind, ns, name);
	if (!key)
		return NULL;
	struct sk_vobj *removed = NULL;
	pthread_rwlock_wrlock(&s->lock);
	struct map *m = &s->maps[kind];
	struct entry **pp = find(m, key);
	if (pp && *pp) {
		struct entry *e = *pp;
		*pp = e->next;
		removed = e->obj;
		if (kind == SK_VOBJ_VOLUME_ATTACHMENT)
			index_remove(s, removed);
		free(e->key);
		free(e);
		m->n--;
	}
	pthread_rwlock_unlock(&s->lock);
	free(key);
	return removed;
}

struct sk_vobj *sk_volume_store_get(struct sk_volume_store *s, enum sk_vobj_kind kind, const char *ns,
				    const char *name)
{
	if (!s || !valid_kind(kind) || !name)
		return NULL;
	char buf[512];
	if (namespaced(kind))
		snprintf(buf, sizeof buf, "%s/%s", ns ? ns : "", name);
	else
		snprintf(buf, sizeof buf, "%s", name);
	struct sk_vobj *r = NULL;
	pthread_rwlock_rdlock(&s->lock);
	struct entry **pp = find(&s->maps[kind], buf);
	if (pp && *pp)
		r = sk_vobj_ref((*pp)->obj);
	pthread_rwlock_unlock(&s->lock);
	return r;
}

static int by_key(const void *a, const void *b)
{
	const struct sk_vobj *x = *(const struct sk_vobj *const *)a, *y = *(const struct sk_vobj *const *)b;
	int c = strcmp(x->ns, y->ns);
	return c ? c : strcmp(x->name, y->name);
}

int sk_volume_store_list(struct sk_volume_store *s, enum sk_vobj_kind kind, struct sk_vobj ***out)
{
	*out = NULL;
	if (!s || !valid_kind(kind))
		return 0;
	pthread_rwlock_rdlock(&s->lock);
	struct map *m = &s->maps[kind];
	struct sk_vobj **list = m->n ? calloc(m->n, sizeof *list) : NULL;
	int n = 0;
	if (m->n && !list) {
		pthread_rwlock_unlock(&s->lock);
		return -1;
	}
	for (size_t b = 0; b < m->nbuckets; b++)
		for (struct entry *e = m->buckets[b]; e; e = e->next)
			list[n++] = sk_vobj_ref(e->obj);
	pthread_rwlock_unlock(&s->lock);
	if (n > 1)
		qsort(list, (size_t)n, sizeof *list, by_key);
	*out = list;
	return n;
}

int sk_volume_store_list_volume_attachments(struct sk_volume_store *s, const char *node,
					    struct sk_vobj ***out)
{
	*out = NULL;
	if (!s || !node)
		return 0;
	pthread_rwlock_rdlock(&s->lock);
	struct node_vas *nv = s->va_by_node.nbuckets ? *node_slot(&s->va_by_node, node) : NULL;
	int n = 0;
	struct sk_vobj **list = nv && nv->n ? calloc((size_t)nv->n, sizeof *list) : NULL;
	if (nv && nv->n && !list) {
		pthread_rwlock_unlock(&s->lock);
		return -1;
	}
	for (int i = 0; nv && i < nv->n; i++)
		list[n++] = sk_vobj_ref(nv->vas[i]);
	pthread_rwlock_unlock(&s->lock);
	if (n > 1)
		qsort(list, (size_t)n, sizeof *list, by_key);
	*out = list;
	return n;
}

int sk_volume_store_count(struct sk_volume_store *s, enum sk_vobj_kind kind)
{
	if (!s || !valid_kind(kind))
		return 0;
	pthread_rwlock_rdlock(&s->lock);
	int n = (int)s->maps[kind].n;
	pthread_rwlock_unlock(&s->lock);
	return n;
}
