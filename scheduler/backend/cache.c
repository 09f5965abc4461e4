/* The scheduler cache and its incremental snapshot (cache.h), after upstream
 * pkg/scheduler/backend/cache: node infos kept in a most-recently-updated list so a snapshot
 * update walks only what changed since its generation; pod states (assumed/bound) by uid; the
 * zone-round-robin node tree; image states (size, number of nodes) for ImageLocality.
 * c->mu guards every field of struct sk_cache. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"
#include "kube/util.h"
#include "scheduler/backend/cache.h"
#include "scheduler/backend/snapshot_index.h"

/* ---------- string-keyed hash map (chained) ---------- */

struct smap_ent {
	struct smap_ent *next;
	const char *key; /* borrowed: owned by the value */
	uint64_t h;
	void *val;
};
struct smap {
	struct smap_ent **b;
	size_t nb, n;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h ^ (h >> 29);
}

static void *smap_get(const struct smap *m, const char *key)
{
	if (!m->nb || !key)
		return NULL;
	uint64_t h = str_hash(key);
	for (struct smap_ent *e = m->b[h & (m->nb - 1)]; e; e = e->next)
		if (e->h == h && (e->key == key || strcmp(e->key, key) == 0))
			return e->val;
	return NULL;
}

/* Inserts or replaces; 0 or -1 (OOM). */
static int smap_put(struct smap *m, const char *key, void *val)
{
	uint64_t h = str_hash(key);
	if (m->nb) {
		for (struct smap_ent *e = m->b[h & (m->nb - 1)]; e; e = e->next)
			if (e->h == h && strcmp(e->key, key) == 0) {
				e->key = key;
				e->val = val;
				return 0;
			}
	}
	if (m->n + 1 > m->nb) {
		size_t nb = m->nb ? m->nb * 2 : 64;
		struct smap_ent **b = calloc(nb, sizeof(*b));
		if (!b)
			return -1;
		for (size_t i = 0; i < m->nb; i++)
			for (struct smap_ent *e = m->b[i], *next; e; e = next) {
				next = e->next;
				e->next = b[e->h & (nb - 1)];
				b[e->h & (nb - 1)] = e;
			}
		free(m->b);
		m->b = b;
		m->nb = nb;
	}
	struct smap_ent *e = malloc(sizeof(*e));
	if (!e)
		return -1;
	e->key = key;
	e->h = h;
	e->val = val;
	e->next = m->b[h & (m->nb - 1)];
	m->b[h & (m->nb - 1)] = e;
	m->n++;
	return 0;
}

static void *smap_del(struct smap *m, const char *key)
{
	if (!m->nb)
		return NULL;
	uint64_t h = str_hash(key);
	for (struct smap_ent **pp = &m->b[h & (m->nb - 1)]; *pp; pp = &(*pp)->next) {
		struct smap_ent *e = *pp;
		if (e->h == h && strcmp(e->key, key) == 0) {
			void *v = e->val;
			*pp = e->next;
			free(e);
			m->n--;
			return v;
		}
	}
	return NULL;
}

static void smap_free(struct smap *m, void (*free_val)(void *))
{
	for (size_t i = 0; i < m->nb; i++)
		for (struct smap_ent *e = m->b[i], *next; e; e = next) {
			next = e->next;
			if (free_val)
				free_val(e->val);
			free(e);
		}
	free(m->b);
	memset(m, 0, sizeof(*m));
}

#define SMAP_EACH(m, e)                                \
	for (size_t _i = 0; _i < (m)->nb; _i++)        \
		for (struct smap_ent *e = (m)->b[_i]; e; e = e->next)

/* ---------- cache structures ---------- */

struct node_item { /* upstream nodeInfoListItem */
	struct sk_node_info *info;
	struct node_item *prev, *next;
	const char *name; /* interned */
};

struct pod_state {
	struct sk_pod *pod; /* one reference */
	bool assumed, binding_finished;
	int64_t deadline_ms; /* 0 = none */
	char *key;           /* "ns/name" */
};

struct zone {
	const char *key; /* interned zone key */
	int n, cap;
	const char **names;
};

struct image_count {
	const char *name; /* interned */
	int64_t size_bytes;
	int num_nodes;
};

struct sk_cache {
	pthread_mutex_t mu;
	int64_t ttl_ms;
	int64_t (*now_ms)(void *);
	void *now_ctx;
	struct smap nodes;      /* name -> struct node_item */
	struct node_item *head; /* most recently updated first */
	struct smap pods;       /* uid -> struct pod_state */
	struct smap pods_by_key; /* "ns/name" -> struct pod_state */
	int nassumed;
	/* node tree */
	int nzones, cap_zones;
	struct zone *zones;
	int num_nodes;
	int64_t tree_version;   /* bumped on every node tree change (add, remove, zone move) */
	/* image states */
	struct smap images;     /* name -> struct image_count */
	int64_t images_version; /* bumped whenever image counts change */
};

/* Snapshot-private indexes (struct sk_snapshot.priv). */
struct snap_priv {
	struct smap by_name;    /* node name -> struct sk_node_info (owned) */
	struct smap images;     /* image name -> struct sk_image_state (owned) */
	int64_t images_version; /* cache images_version copied, -1 = never */
	int64_t tree_version;   /* cache tree_version the node list was built from */
	const struct sk_cache *cache; /* the cache this snapshot follows (consistency) */
	int cap_nodes, cap_aff, cap_anti;
	bool force_full;        /* an earlier update failed half-way: rebuild everything */
	struct sk_snap_index index; /* sk_node_info.index of the nodes (snapshot_index.h) */
	/* The change log of the last update (sk_snapshot_changes): the node infos it copied, valid
	 * when log_ok; serial and prev_serial: this update's and the previous one's numbers (process-
	 * wide generations, so a snapshot at a freed one's address never continues its log). */
	struct sk_node_info **changed;
	int nchanged, cap_changed;
	bool log_ok;
	uint64_t serial, prev_serial;
	/* Each node's position in s->nodes by its index (pos_ok: since the list was last built), so
	 * that a node of the change log whose have-affinity state flipped moves in or out of a list
	 * instead of both being rebuilt. */
	int32_t *pos;
	int cap_pos;
	bool pos_ok;
};

static int64_t monotonic_ms(void *ctx)
{
	(void)ctx;
	return kube_mono_ns() / 1000000;
}

struct sk_cache *sk_cache_new(int64_t assumed_ttl_ms)
{
	struct sk_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	c->ttl_ms = assumed_ttl_ms;
	c->now_ms = monotonic_ms;
	return c;
}

void sk_cache_set_clock(struct sk_cache *c, int64_t (*now_ms)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&c->mu);
	c->now_ms = now_ms ? now_ms : monotonic_ms;
	c->now_ctx = ctx;
	pthread_mutex_unlock(&c->mu);
}

static void free_node_item(void *v)
{
	struct node_item *it = v;
	sk_node_info_free(it->info);
	free(it);
}

static void free_pod_state(void *v)
{
	struct pod_state *ps = v;
	sk_pod_unref(ps->pod);
	free(ps->key);
	free(ps);
}

void sk_cache_free(struct sk_cache *c)
{
	if (!c)
		return;
	smap_free(&c->nodes, free_node_item);
	smap_free(&c->pods_by_key, NULL);
	smap_free(&c->pods, free_pod_state);
	smap_free(&c->images, free);
	for (int i = 0; i < c->nzones; i++)
		free(c->zones[i].names);
	free(c->zones);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* ---------- node list (most recently updated first) ---------- */

static void move_to_head(struct sk_cache *c, struct node_item *it)
{
	if (c->head == it)
		return;
	if (it->prev)
		it->prev->next = it->next;
	if (it->next)
		it->next->prev = it->prev;
	it->prev = NULL;
	it->next = c->head;
	if (c->head)
		c->head->prev = it;
	c->head = it;
}

static void unlink_item(struct sk_cache *c, struct node_item *it)
{
	if (it->prev)
		it->prev->next = it->next;
	if (it->next)
		it->next->prev = it->prev;
	if (c->head == it)
		c->head = it->next;
	it->prev = it->next = NULL;
}

/* The item for name, created (node-less, linked at the head) when absent; NULL on OOM. */
static struct node_item *get_or_create_item(struct sk_cache *c, const char *name)
{
	struct node_item *it = smap_get(&c->nodes, name);
	if (it)
		return it;
	it = calloc(1, sizeof(*it));
	if (!it)
		return NULL;
	it->name = name;
	it->info = sk_node_info_new(NULL);
	if (!it->info || smap_put(&c->nodes, name, it) != 0) {
		sk_node_info_free(it->info);
		free(it);
		return NULL;
	}
	it->next = c->head;
	if (c->head)
		c->head->prev = it;
	c->head = it;
	return it;
}

static void delete_item(struct sk_cache *c, struct node_item *it)
{
	unlink_item(c, it);
	smap_del(&c->nodes, it->name);
	free_node_item(it);
}

/* ---------- node tree (pkg/scheduler/backend/cache/node_tree.go) ---------- */

static struct zone *find_zone(struct sk_cache *c, const char *key, int *idx)
{
	for (int i = 0; i < c->nzones; i++)
		if (c->zones[i].key == key || strcmp(c->zones[i].key, key) == 0) {
			if (idx)
				*idx = i;
			return &c->zones[i];
		}
	return NULL;
}

/* Adds a node that is not in the tree yet. */
static int tree_add(struct sk_cache *c, const struct sk_node *node)
{
	struct zone *z = find_zone(c, node->zone_key, NULL);
	if (!z) {
		if (c->nzones == c->cap_zones) {
			int cap = c->cap_zones ? c->cap_zones * 2 : 4;
			struct zone *nz = realloc(c->zones, sizeof(*nz) * (size_t)cap);
			if (!nz)
				return -1;
			c->zones = nz;
			c->cap_zones = cap;
		}
		z = &c->zones[c->nzones++];
		memset(z, 0, sizeof(*z));
		z->key = node->zone_key;
	}
	/* No duplicate scan: the caller adds only nodes that are not in the tree (see set_node_locked). */
	if (z->n == z->cap) {
		int cap = z->cap ? z->cap * 2 : 8;
		const char **nn = realloc(z->names, sizeof(*nn) * (size_t)cap);
		if (!nn) {
			if (z->n == 0) { /* drop the zone just created */
				c->nzones--;
			}
			return -1;
		}
		z->names = nn;
		z->cap = cap;
	}
	z->names[z->n++] = node->name;
	c->num_nodes++;
	c->tree_version++;
	return 0;
}

static void tree_remove(struct sk_cache *c, const struct sk_node *node)
{
	int zi;
	struct zone *z = find_zone(c, node->zone_key, &zi);
	if (!z)
		return;
	for (int i = 0; i < z->n; i++) {
		if (z->names[i] != node->name && strcmp(z->names[i], node->name) != 0)
			continue;
		memmove(&z->names[i], &z->names[i + 1], sizeof(*z->names) * (size_t)(z->n - i - 1));
		z->n--;
		c->num_nodes--;
		c->tree_version++;
		if (z->n == 0) {
			free(z->names);
			memmove(&c->zones[zi], &c->zones[zi + 1], sizeof(*c->zones) * (size_t)(c->nzones - zi - 1));
			c->nzones--;
		}
		return;
	}
}

/* Round-robin over zones by position. names must hold c->num_nodes entries. Exhausted zones
 * drop out of the rotation, so the cost stays O(nodes + zones) however uneven the zones are. */
static int tree_list(const struct sk_cache *c, const char **names)
{
	int out = 0;
	int nactive = c->nzones;
	int *active = malloc(sizeof(*active) * (size_t)(nactive ? nactive : 1));
	if (!active) { /* fall back to the plain double loop */
		for (int idx = 0; out < c->num_nodes; idx++) {
			bool any = false;
			for (int z = 0; z < c->nzones; z++)
				if (idx < c->zones[z].n) {
					names[out++] = c->zones[z].names[idx];
					any = true;
				}
			if (!any)
				break;
		}
		return out;
	}
	for (int z = 0; z < nactive; z++)
		active[z] = z;
	for (int idx = 0; nactive > 0 && out < c->num_nodes; idx++) {
		int keep = 0;
		for (int k = 0; k < nactive; k++) {
			const struct zone *z = &c->zones[active[k]];
			if (idx < z->n) {
				names[out++] = z->names[idx];
				if (idx + 1 < z->n)
					active[keep++] = active[k];
			}
		}
		nactive = keep;
	}
	free(active);
	return out;
}

/* ---------- image states ---------- */

/* Each distinct image name of the node counts once. */
static bool image_seen_before(const struct sk_node *n, int i)
{
	for (int j = 0; j < i; j++)
		if (n->images[j].name == n->images[i].name)
			return true;
	return false;
}

static int add_node_images(struct sk_cache *c, const struct sk_node *n)
{
	for (int i = 0; i < n->nimages; i++) {
		if (image_seen_before(n, i))
			continue;
		struct image_count *ic = smap_get(&c->images, n->images[i].name);
		if (!ic) {
			ic = calloc(1, sizeof(*ic));
			if (!ic)
				return -1;
			ic->name = n->images[i].name;
			ic->size_bytes = n->images[i].size_bytes;
			if (smap_put(&c->images, ic->name, ic) != 0) {
				free(ic);
				return -1;
			}
		}
		ic->num_nodes++;
	}
	if (n->nimages)
		c->images_version++;
	return 0;
}

static void remove_node_images(struct sk_cache *c, const struct sk_node *n)
{
	if (!n)
		return;
	for (int i = 0; i < n->nimages; i++) {
		if (image_seen_before(n, i))
			continue;
		struct image_count *ic = smap_get(&c->images, n->images[i].name);
		if (ic && --ic->num_nodes <= 0)
			free(smap_del(&c->images, n->images[i].name));
	}
	if (n->nimages)
		c->images_version++;
}

static bool same_images(const struct sk_node *a, const struct sk_node *b)
{
	if (!a || a->nimages != b->nimages)
		return false;
	for (int i = 0; i < a->nimages; i++)
		if (a->images[i].name != b->images[i].name || a->images[i].size_bytes != b->images[i].size_bytes)
			return false;
	return true;
}

/* ---------- nodes ---------- */

static int set_node_locked(struct sk_cache *c, struct sk_node *node, char **err)
{
	struct node_item *it = get_or_create_item(c, node->name);
	if (!it)
		return kube_errf(err, "node %s: out of memory", node->name);
	struct sk_node *old = it->info->node;
	/* A node is in the tree exactly when its item has a node: an update in the same zone keeps
	 * its place, and tree_add only ever sees new nodes and zone moves (no duplicate scan, which
	 * made adding n nodes O(n^2) string compares). */
	bool in_tree = old && (old->zone_key == node->zone_key || strcmp(old->zone_key, node->zone_key) == 0);
	if (old && !in_tree)
		tree_remove(c, old);
	if (!in_tree && tree_add(c, node) != 0) {
		if (!old && it->info->npods == 0)
			delete_item(c, it);
		return kube_errf(err, "node %s: out of memory", node->name);
	}
	/* Status heartbeats rarely change the image list: skip the recount (and the snapshot's image
	 * table copy it would trigger) when it is the same. */
	if (!same_images(old, node)) {
		remove_node_images(c, old);
		if (add_node_images(c, node) != 0)
			klog_error("Out of memory counting node images", " node=%s", node->name);
	}
	sk_node_info_set_node(it->info, node);
	move_to_head(c, it);
	return 0;
}

int sk_cache_add_node(struct sk_cache *c, struct sk_node *node, char **err)
{
	pthread_mutex_lock(&c->mu);
	int rc = set_node_locked(c, node, err);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int sk_cache_update_node(struct sk_cache *c, struct sk_node *node, char **err)
{
	return sk_cache_add_node(c, node, err);
}

int sk_cache_remove_node(struct sk_cache *c, const char *name, char **err)
{
	pthread_mutex_lock(&c->mu);
	int rc = 0;
	struct node_item *it = smap_get(&c->nodes, name);
	if (!it || !it->info->node) {
		rc = kube_errf(err, "node %s is not found", name);
		goto out;
	}
	struct sk_node *old = sk_node_ref(it->info->node);
	tree_remove(c, old);
	remove_node_images(c, old);
	sk_node_unref(old);
	/* Pods still on the node keep a node-less info until they are removed (upstream). */
	if (it->info->npods == 0) {
		delete_item(c, it);
	} else {
		sk_node_info_set_node(it->info, NULL);
		move_to_head(c, it);
	}
out:
	pthread_mutex_unlock(&c->mu);
	return rc;
}

/* ---------- pods ---------- */

/* sk_pod_key ("<namespace>/<name>", cut to n - 1 bytes as snprintf cuts it) without snprintf's
 * format parsing: five keys per scheduled pod (assume, the bound pod's add). */
static const char *pod_key(const struct sk_pod *pod, char *buf, size_t n)
{
	const char *parts[3] = { pod->ns ? pod->ns : "(null)", "/", pod->name ? pod->name : "(null)" };
	size_t used = 0;
	for (int i = 0; i < 3 && used + 1 < n; i++) {
		size_t len = strlen(parts[i]);
		if (len > n - 1 - used)
			len = n - 1 - used;
		memcpy(buf + used, parts[i], len);
		used += len;
	}
	if (n)
		buf[used] = '\0';
	return buf;
}

static int place_pod(struct sk_cache *c, struct sk_pod *pod, bool assumed, char **err)
{
	char key[600];
	pod_key(pod, key, sizeof(key));
	struct node_item *it = get_or_create_item(c, pod->node_name);
	struct pod_state *ps = calloc(1, sizeof(*ps));
	if (!it || !ps || !(ps->key = strdup(key)) || sk_node_info_add_pod(it->info, pod) != 0) {
		if (ps)
			free(ps->key);
		free(ps);
		if (it && !it->info->node && it->info->npods == 0)
			delete_item(c, it);
		return kube_errf(err, "pod %s: out of memory", key);
	}
	move_to_head(c, it);
	ps->pod = sk_pod_ref(pod);
	ps->assumed = assumed;
	if (smap_put(&c->pods, pod->uid, ps) != 0 || smap_put(&c->pods_by_key, ps->key, ps) != 0) {
		smap_del(&c->pods, pod->uid);
		sk_node_info_remove_pod(it->info, pod);
		free_pod_state(ps);
		return kube_errf(err, "pod %s: out of memory", key);
	}
	if (assumed)
		c->nassumed++;
	return 0;
}

/* Takes the pod off its node and drops its state. */
static void unplace_pod(struct sk_cache *c, struct pod_state *ps)
{
	struct sk_pod *pod = ps->pod;
	struct node_item *it = smap_get(&c->nodes, pod->node_name);
	if (it) {
		if (sk_node_info_remove_pod(it->info, pod) != 0)
			klog_error("Pod not found on its node in the cache", " pod=%s node=%s", ps->key,
				   pod->node_name);
		if (!it->info->node && it->info->npods == 0)
			delete_item(c, it);
		else
			move_to_head(c, it);
	}
	smap_del(&c->pods, pod->uid);
	if (smap_get(&c->pods_by_key, ps->key) == ps)
		smap_del(&c->pods_by_key, ps->key);
	if (ps->assumed)
		c->nassumed--;
	free_pod_state(ps);
}

int sk_cache_assume_pod(struct sk_cache *c, struct sk_pod *pod, char **err)
{
	char key[600];
	pod_key(pod, key, sizeof(key));
	if (!pod->node_name)
		return kube_errf(err, "pod %s: cannot be assumed without a node name", key);
	pthread_mutex_lock(&c->mu);
	int rc;
	if (smap_get(&c->pods, pod->uid))
		rc = kube_errf(err, "pod %s(%s) is in the cache, so can't be assumed", key, pod->uid);
	else
		rc = place_pod(c, pod, true, err);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int sk_cache_finish_binding(struct sk_cache *c, const struct sk_pod *pod, char **err)
{
	(void)err;
	pthread_mutex_lock(&c->mu);
	struct pod_state *ps = smap_get(&c->pods, pod->uid);
	if (ps && ps->assumed) {
		ps->binding_finished = true;
		ps->deadline_ms = c->ttl_ms > 0 ? c->now_ms(c->now_ctx) + c->ttl_ms : 0;
	}
	pthread_mutex_unlock(&c->mu);
	return 0;
}

int sk_cache_forget_pod(struct sk_cache *c, const struct sk_pod *pod, char **err)
{
	char key[600];
	pod_key(pod, key, sizeof(key));
	pthread_mutex_lock(&c->mu);
	int rc = 0;
	struct pod_state *ps = smap_get(&c->pods, pod->uid);
	if (ps && pod->node_name && strcmp(ps->pod->node_name, pod->node_name) != 0)
		rc = kube_errf(err, "pod %s(%s) was assumed on %s but assigned to %s", key, pod->uid, pod->node_name,
			     ps->pod->node_name);
	else if (ps && ps->assumed)
		unplace_pod(c, ps);
	else
		rc = kube_errf(err, "pod %s(%s) wasn't assumed so cannot be forgotten", key, pod->uid);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int sk_cache_add_pod(struct sk_cache *c, struct sk_pod *pod, char **err)
{
	char key[600];
	pod_key(pod, key, sizeof(key));
	if (!pod->node_name)
		return kube_errf(err, "pod %s: not bound to a node", key);
	pthread_mutex_lock(&c->mu);
	int rc = 0;
	struct pod_state *ps = smap_get(&c->pods, pod->uid);
	if (ps && ps->assumed) {
		/* Confirmation of an assumed pod: take the informer's object (maybe another node). */
		if (strcmp(ps->pod->node_name, pod->node_name) != 0)
			klog_info(0, "Pod was added to a different node than it was assumed", " pod=%s assumedNode=%s currentNode=%s",
				  key, ps->pod->node_name, pod->node_name);
		unplace_pod(c, ps);
		rc = place_pod(c, pod, false, err);
	} else if (!ps) {
		/* Either a pod bound by someone else, or an assumed pod that already expired. */
		rc = place_pod(c, pod, false, err);
	} else {
		rc = kube_errf(err, "pod %s(%s) was already in added state", key, pod->uid);
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int sk_cache_update_pod(struct sk_cache *c, struct sk_pod *new_pod, char **err)
{
	char key[600];
	pod_key(new_pod, key, sizeof(key));
	if (!new_pod->node_name)
		return kube_errf(err, "pod %s: not bound to a node", key);
	pthread_mutex_lock(&c->mu);
	int rc = 0;
	struct pod_state *ps = smap_get(&c->pods, new_pod->uid);
	if (!ps)
		rc = kube_errf(err, "pod %s(%s) is not added to scheduler cache, so cannot be updated", key,
			     new_pod->uid);
	else if (ps->assumed)
		rc = kube_errf(err, "assumed pod %s(%s) should not be updated", key, new_pod->uid);
	else {
		if (strcmp(ps->pod->node_name, new_pod->node_name) != 0)
			klog_error("Pod updated on a different node than previously added to", " pod=%s", key);
		unplace_pod(c, ps);
		rc = place_pod(c, new_pod, false, err);
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int sk_cache_remove_pod(struct sk_cache *c, const struct sk_pod *pod, char **err)
{
	char key[600];
	pod_key(pod, key, sizeof(key));
	pthread_mutex_lock(&c->mu);
	int rc = 0;
	struct pod_state *ps = smap_get(&c->pods, pod->uid);
	if (!ps)
		rc = kube_errf(err, "pod %s(%s) is not found in scheduler cache, so cannot be removed from it", key,
			     pod->uid);
	else {
		if (pod->node_name && strcmp(ps->pod->node_name, pod->node_name) != 0)
			klog_error("Pod was added to a different node than it was assumed", " pod=%s assumedNode=%s currentNode=%s",
				   key, ps->pod->node_name, pod->node_name);
		unplace_pod(c, ps);
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int sk_cache_cleanup_expired(struct sk_cache *c)
{
	int n = 0;
	pthread_mutex_lock(&c->mu);
	if (c->ttl_ms > 0 && c->nassumed > 0) {
		int64_t now = c->now_ms(c->now_ctx);
		/* Collect first: unplace_pod changes the map. */
		struct pod_state **exp = malloc(sizeof(*exp) * (size_t)c->nassumed);
		if (exp) {
			SMAP_EACH(&c->pods, e) {
				struct pod_state *ps = e->val;
				if (ps->assumed && ps->binding_finished && ps->deadline_ms > 0 && now >= ps->deadline_ms &&
				    n < c->nassumed)
					exp[n++] = ps;
			}
			for (int i = 0; i < n; i++) {
				klog_info(0, "Pod expired", " pod=%s node=%s", exp[i]->key, exp[i]->pod->node_name);
				unplace_pod(c, exp[i]);
			}
			free(exp);
		}
	}
	pthread_mutex_unlock(&c->mu);
	return n;
}

enum sk_pod_cache_state sk_cache_pod_state(struct sk_cache *c, const char *uid)
{
	pthread_mutex_lock(&c->mu);
	struct pod_state *ps = smap_get(&c->pods, uid);
	enum sk_pod_cache_state st = !ps ? SK_POD_NOT_CACHED : ps->assumed ? SK_POD_ASSUMED : SK_POD_BOUND;
	pthread_mutex_unlock(&c->mu);
	return st;
}

bool sk_cache_is_assumed(struct sk_cache *c, const char *uid)
{
	return sk_cache_pod_state(c, uid) == SK_POD_ASSUMED;
}

struct sk_pod *sk_cache_get_pod(struct sk_cache *c, const char *uid)
{
	pthread_mutex_lock(&c->mu);
	struct pod_state *ps = smap_get(&c->pods, uid);
	struct sk_pod *p = ps ? sk_pod_ref(ps->pod) : NULL;
	pthread_mutex_unlock(&c->mu);
	return p;
}

struct sk_pod *sk_cache_get_pod_by_key(struct sk_cache *c, const char *ns, const char *name)
{
	char key[600];
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	pthread_mutex_lock(&c->mu);
	struct pod_state *ps = smap_get(&c->pods_by_key, key);
	struct sk_pod *p = ps ? sk_pod_ref(ps->pod) : NULL;
	pthread_mutex_unlock(&c->mu);
	return p;
}

int sk_cache_node_count(struct sk_cache *c)
{
	pthread_mutex_lock(&c->mu);
	int n = c->num_nodes;
	pthread_mutex_unlock(&c->mu);
	return n;
}

int sk_cache_pod_count(struct sk_cache *c)
{
	pthread_mutex_lock(&c->mu);
	int n = (int)c->pods.n;
	pthread_mutex_unlock(&c->mu);
	return n;
}

int sk_cache_assumed_count(struct sk_cache *c)
{
	pthread_mutex_lock(&c->mu);
	int n = c->nassumed;
	pthread_mutex_unlock(&c->mu);
	return n;
}

int sk_cache_node_tree_list(struct sk_cache *c, const char ***names)
{
	pthread_mutex_lock(&c->mu);
	int n = -1;
	*names = malloc(sizeof(**names) * (size_t)(c->num_nodes + 1));
	if (*names)
		n = tree_list(c, *names);
	pthread_mutex_unlock(&c->mu);
	return n;
}

void sk_cache_each_node(struct sk_cache *c, void (*fn)(void *ctx, const struct sk_node_info *ni), void *ctx)
{
	pthread_mutex_lock(&c->mu);
	for (struct node_item *it = c->head; it; it = it->next)
		if (it->info && it->info->node)
			fn(ctx, it->info);
	pthread_mutex_unlock(&c->mu);
}

struct sk_node_info *sk_cache_node_info(struct sk_cache *c, const char *name)
{
	pthread_mutex_lock(&c->mu);
	struct node_item *it = smap_get(&c->nodes, name);
	struct sk_node_info *ni = it ? sk_node_info_clone(it->info) : NULL;
	pthread_mutex_unlock(&c->mu);
	return ni;
}

/* ---------- snapshot ---------- */

static void free_node_info_val(void *v)
{
	sk_node_info_free(v);
}

struct sk_snapshot *sk_snapshot_new(void)
{
	struct sk_snapshot *s = calloc(1, sizeof(*s));
	struct snap_priv *p = calloc(1, sizeof(*p));
	if (!s || !p) {
		free(s);
		free(p);
		return NULL;
	}
	p->images_version = -1;
	s->priv = p;
	return s;
}

void sk_snapshot_free(struct sk_snapshot *s)
{
	if (!s)
		return;
	struct snap_priv *p = s->priv;
	smap_free(&p->by_name, free_node_info_val);
	smap_free(&p->images, free);
	sk_snap_index_free(&p->index);
	free(p->changed);
	free(p->pos);
	free(p);
	free(s->nodes);
	free(s->have_affinity);
	free(s->have_required_anti_affinity);
	free(s);
}

int sk_snapshot_changes(const struct sk_snapshot *s, uint64_t *serial, uint64_t *prev,
			struct sk_node_info *const **changed)
{
	const struct snap_priv *p = s->priv;
	*serial = p->serial;
	*prev = p->prev_serial;
	*changed = p->changed;
	return p->serial && p->log_ok ? p->nchanged : -1;
}

/* Notes ni in the update's change log; the log is given up (not the update) when it cannot grow. */
static void log_changed(struct snap_priv *p, struct sk_node_info *ni)
{
	if (!p->log_ok)
		return;
	if (p->nchanged == p->cap_changed) {
		int cap = p->cap_changed ? p->cap_changed * 2 : 64;
		struct sk_node_info **c = realloc(p->changed, (size_t)cap * sizeof(*c));
		if (!c) {
			p->log_ok = false;
			return;
		}
		p->changed = c;
		p->cap_changed = cap;
	}
	p->changed[p->nchanged++] = ni;
}

const struct sk_node_info *sk_snapshot_get(const struct sk_snapshot *s, const char *node_name)
{
	const struct snap_priv *p = s->priv;
	return smap_get(&p->by_name, node_name);
}

int sk_snapshot_image_num_nodes(const struct sk_snapshot *s, const char *image)
{
	const struct snap_priv *p = s->priv;
	const struct sk_image_state *st = smap_get(&p->images, image);
	return st ? st->num_nodes : 0;
}

const struct sk_image_state *sk_snapshot_image_state(const struct sk_snapshot *s, const struct sk_node_info *ni,
						     const char *image)
{
	if (!ni || !ni->node || !image)
		return NULL;
	const struct sk_node *n = ni->node;
	for (int i = 0; i < n->nimages; i++)
		if (n->images[i].name == image || strcmp(n->images[i].name, image) == 0) {
			const struct snap_priv *p = s->priv;
			return smap_get(&p->images, n->images[i].name);
		}
	return NULL;
}

static int ensure_cap(struct sk_node_info ***arr, int *cap, int need)
{
	if (need <= *cap)
		return 0;
	int nc = *cap ? *cap : 64;
	while (nc < need)
		nc *= 2;
	struct sk_node_info **na = realloc(*arr, sizeof(*na) * (size_t)nc);
	if (!na)
		return -1;
	*arr = na;
	*cap = nc;
	return 0;
}

/* The have-affinity lists from every node, in node-list order (upstream's Snapshot update in
 * pkg/scheduler/backend/cache/cache.go builds them the same way); also each node's position. */
static int rebuild_affinity_lists(struct sk_snapshot *s)
{
	struct snap_priv *p = s->priv;
	if (ensure_cap(&s->have_affinity, &p->cap_aff, s->nnodes) != 0 ||
	    ensure_cap(&s->have_required_anti_affinity, &p->cap_anti, s->nnodes) != 0)
		return -1;
	p->pos_ok = false;
	if (s->index_end > p->cap_pos) {
		int32_t *pos = realloc(p->pos, (size_t)s->index_end * sizeof(*pos));
		if (pos) {
			p->pos = pos;
			p->cap_pos = s->index_end;
		}
	}
	bool pos_ok = s->index_end <= p->cap_pos;
	s->nhave_affinity = s->nhave_required_anti_affinity = 0;
	for (int i = 0; i < s->nnodes; i++) {
		struct sk_node_info *ni = s->nodes[i];
		if (pos_ok && ni->index > 0 && ni->index < s->index_end)
			p->pos[ni->index] = i;
		else
			pos_ok = false;
		if (ni->npods_with_affinity > 0)
			s->have_affinity[s->nhave_affinity++] = ni;
		if (ni->npods_with_required_anti_affinity > 0)
			s->have_required_anti_affinity[s->nhave_required_anti_affinity++] = ni;
	}
	p->pos_ok = pos_ok;
	return 0;
}

/* Puts ni into list[0..*n) (in node-list order, by position) or takes it out. */
static void list_set(const struct snap_priv *p, struct sk_node_info **list, int *n, struct sk_node_info *ni, bool in)
{
	int32_t key = p->pos[ni->index];
	int lo = 0, hi = *n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (p->pos[list[mid]->index] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	bool present = lo < *n && list[lo] == ni;
	if (in == present)
		return;
	if (in) {
		memmove(list + lo + 1, list + lo, (size_t)(*n - lo) * sizeof(*list));
		list[lo] = ni;
		(*n)++;
	} else {
		memmove(list + lo, list + lo + 1, (size_t)(*n - lo - 1) * sizeof(*list));
		(*n)--;
	}
}

/* The have-affinity lists after an update that added and removed no node: the nodes of its change
 * log move in or out (list_set leaves the others where they are); the lists end up as a rebuild
 * makes them. Falls back to the rebuild when the positions or the log are not all known. */
static int update_affinity_lists(struct sk_snapshot *s)
{
	struct snap_priv *p = s->priv;
	if (!p->pos_ok || !p->log_ok || s->nhave_affinity + p->nchanged > p->cap_aff ||
	    s->nhave_required_anti_affinity + p->nchanged > p->cap_anti)
		return rebuild_affinity_lists(s);
	for (int i = 0; i < p->nchanged; i++) {
		struct sk_node_info *ni = p->changed[i];
		list_set(p, s->have_affinity, &s->nhave_affinity, ni, ni->npods_with_affinity > 0);
		list_set(p, s->have_required_anti_affinity, &s->nhave_required_anti_affinity, ni,
			 ni->npods_with_required_anti_affinity > 0);
	}
	return 0;
}

/* Image states of the snapshot from counts over its own nodes (standalone snapshots). */
static int count_snapshot_images(struct sk_snapshot *s)
{
	struct snap_priv *p = s->priv;
	smap_free(&p->images, free);
	for (int i = 0; i < s->nnodes; i++) {
		const struct sk_node *n = s->nodes[i]->node;
		for (int j = 0; n && j < n->nimages; j++) {
			if (image_seen_before(n, j))
				continue;
			struct sk_image_state *st = smap_get(&p->images, n->images[j].name);
			if (!st) {
				if (!(st = calloc(1, sizeof(*st))))
					return -1;
				st->size_bytes = n->images[j].size_bytes;
				if (smap_put(&p->images, n->images[j].name, st) != 0) {
					free(st);
					return -1;
				}
			}
			st->num_nodes++;
		}
	}
	return 0;
}

static int copy_cache_images(const struct sk_cache *c, struct sk_snapshot *s)
{
	struct snap_priv *p = s->priv;
	smap_free(&p->images, free);
	SMAP_EACH(&c->images, e) {
		const struct image_count *ic = e->val;
		struct sk_image_state *st = malloc(sizeof(*st));
		if (!st)
			return -1;
		st->size_bytes = ic->size_bytes;
		st->num_nodes = ic->num_nodes;
		if (smap_put(&p->images, ic->name, st) != 0) {
			free(st);
			return -1;
		}
	}
	p->images_version = c->images_version;
	return 0;
}

int sk_cache_update_snapshot(struct sk_cache *c, struct sk_snapshot *s, char **err)
{
	struct snap_priv *p = s->priv;
	pthread_mutex_lock(&c->mu);
	int rc = 0;
	/* The list follows the node tree: rebuilt when nodes were added, removed or moved zones
	 * (upstream misses a remove+add of the same name between two updates; this does not). */
	bool copy_all = p->force_full || p->cache != c;
	bool update_all = copy_all || p->tree_version != c->tree_version;
	bool update_affinity = false;
	int64_t since = copy_all ? -1 : s->generation;
	if (p->cache != c) { /* first update, or following another cache: start over */
		smap_free(&p->by_name, free_node_info_val);
		sk_snap_index_reset(&p->index, s);
		s->nnodes = s->nhave_affinity = s->nhave_required_anti_affinity = 0;
		p->images_version = -1;
	}
	p->cache = c;
	p->force_full = true; /* cleared on success */
	p->nchanged = 0;
	p->log_ok = !copy_all;

	for (struct node_item *it = c->head; it; it = it->next) {
		if (it->info->generation <= since)
			break;
		if (!it->info->node)
			continue;
		struct sk_node_info *existing = smap_get(&p->by_name, it->name);
		if (!existing) {
			update_all = true;
			if (!(existing = sk_snap_node_info_alloc()))
				goto oom;
			if (smap_put(&p->by_name, it->name, existing) != 0) {
				free(existing);
				goto oom;
			}
			sk_snap_index_assign(&p->index, s, existing);
		}
		bool had_aff = existing->npods_with_affinity > 0;
		bool had_anti = existing->npods_with_required_anti_affinity > 0;
		if (existing->node != it->info->node)
			sk_snap_node_replaced(s);
		int32_t index = existing->index; /* the snapshot's numbering, not the cache's (none) */
		uint32_t serial = existing->index_serial;
		if (sk_node_info_copy_into(existing, it->info) != 0)
			goto oom;
		existing->index = index;
		existing->index_serial = serial;
		log_changed(p, existing);
		if (had_aff != (existing->npods_with_affinity > 0) ||
		    had_anti != (existing->npods_with_required_anti_affinity > 0))
			update_affinity = true;
	}
	if (c->head)
		s->generation = c->head->info->generation;

	/* Removed nodes: the snapshot knows more nodes than the cache. */
	if ((int)p->by_name.n > c->num_nodes) {
		const char **gone = malloc(sizeof(*gone) * p->by_name.n);
		if (!gone)
			goto oom;
		int ngone = 0;
		SMAP_EACH(&p->by_name, e) {
			struct node_item *it = smap_get(&c->nodes, e->key);
			if (!it || !it->info->node)
				gone[ngone++] = e->key;
		}
		for (int i = 0; i < ngone; i++) {
			struct sk_node_info *ni = smap_del(&p->by_name, gone[i]);
			if (ni)
				sk_snap_index_release(&p->index, s, ni);
			sk_node_info_free(ni);
		}
		free(gone);
		update_all = true;
	}

	if (update_all) {
		if (ensure_cap(&s->nodes, &p->cap_nodes, c->num_nodes) != 0)
			goto oom;
		const char **names = malloc(sizeof(*names) * (size_t)(c->num_nodes + 1));
		if (!names)
			goto oom;
		int n = tree_list(c, names);
		s->nnodes = 0;
		for (int i = 0; i < n; i++) {
			struct sk_node_info *ni = smap_get(&p->by_name, names[i]);
			if (ni)
				s->nodes[s->nnodes++] = ni;
			else
				klog_error("Node exists in nodeTree but not in the snapshot", " node=%s", names[i]);
		}
		free(names);
		p->tree_version = c->tree_version;
		p->log_ok = false; /* the lists were rebuilt: only a walk tells what changed */
	}
	if (update_all ? rebuild_affinity_lists(s) != 0 : update_affinity && update_affinity_lists(s) != 0)
		goto oom;
	if (p->images_version != c->images_version) {
		if (copy_cache_images(c, s) != 0)
			goto oom;
	}
	if (s->nnodes != c->num_nodes || (int)p->by_name.n != c->num_nodes) {
		rc = kube_errf(err, "snapshot state is not consistent: %d nodes in the snapshot, %d in the node tree",
			     s->nnodes, c->num_nodes);
		goto out;
	}
	p->force_full = false;
	goto out;
oom:
	p->pos_ok = false;
	/* The lists may point at freed node infos now: leave an empty (safe) snapshot; the next
	 * update rebuilds everything. */
	s->nnodes = s->nhave_affinity = s->nhave_required_anti_affinity = 0;
	rc = kube_errf(err, "updating the snapshot: out of memory");
out:
	if (rc != 0)
		p->log_ok = false;
	p->prev_serial = p->serial;
	p->serial = (uint64_t)sk_next_generation();
	pthread_mutex_unlock(&c->mu);
	return rc;
}

struct sk_snapshot *sk_snapshot_from_node_infos(struct sk_node_info **nis, int n)
{
	struct sk_snapshot *s = sk_snapshot_new();
	if (!s)
		goto fail;
	struct snap_priv *p = s->priv;
	if (ensure_cap(&s->nodes, &p->cap_nodes, n) != 0)
		goto fail;
	for (int i = 0; i < n; i++) {
		const char *name = nis[i]->node ? nis[i]->node->name : NULL;
		if (!name || smap_get(&p->by_name, name)) { /* node-less or duplicate: not a snapshot node */
			sk_node_info_free(nis[i]);
			nis[i] = NULL;
			continue;
		}
		if (smap_put(&p->by_name, name, nis[i]) != 0)
			goto fail;
		sk_snap_index_assign(&p->index, s, nis[i]);
		s->nodes[s->nnodes++] = nis[i];
		if (s->generation < nis[i]->generation)
			s->generation = nis[i]->generation;
		nis[i] = NULL;
	}
	if (rebuild_affinity_lists(s) != 0 || count_snapshot_images(s) != 0)
		goto fail;
	p->force_full = true; /* never incrementally updated from a cache */
	return s;
fail:
	for (int i = 0; i < n; i++)
		sk_node_info_free(nis[i]);
	sk_snapshot_free(s);
	return NULL;
}
