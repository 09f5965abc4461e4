/* Nominated pods by node (see nominator.h). Entries live in one array in nomination order; a
 * hash of node name -> number of nominations on it answers the per-node question of the
 * nominated-pods Filter pass without scanning (docs/benchmarks.md, "Preemption": the scan with
 * strcmp was half of a preemption workload's instructions), and the scan that collects a
 * node's pods compares interned pointers. Two lock-free reads keep the per-node Filter call cheap:
 * the count (nobody nominated), and a bit filter over the node names nominated to (set on add,
 * cleared when the last nomination goes), which answers "nobody on this node" for most nodes
 * without the lock or the hash. */
#include "scheduler/backend/nominator.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BITS 65536

struct nomination {
	struct sk_pod *pod; /* one reference */
	const char *node;   /* interned */
};

/* One slot of the node hash (open addressing, linear probing). A slot keeps its node once used
 * (count may drop to 0): the set of node names is bounded by the cluster's nodes. */
struct node_slot {
	const char *node; /* interned; NULL = empty */
	int count;
};

struct sk_nominator {
	pthread_mutex_t mu;
	atomic_int count; /* == n, readable without mu */
	int n, cap;
	struct nomination *items;
	struct node_slot *slots;
	int nslots, nused; /* nslots: a power of two (or 0) */
	_Atomic uint64_t bits[BITS / 64]; /* quick_hash of the node names nominated to */
};

/* A cheap hash of a node name: its length and its first and last 8 bytes (fixed-size copies the
 * compiler turns into two loads; a variable-size one was a memcpy call each, most of the cost of
 * the nominated-pods check on every node a Filter pass visits). */
static uint32_t quick_hash(const char *s)
{
	size_t n = strlen(s);
	uint64_t a = 0, b = 0;
	if (n >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
	} else {
		for (size_t i = 0; i < n; i++)
			a = a << 8 | (unsigned char)s[i];
		b = a;
	}
	uint64_t h = a ^ (b * 0x9e3779b97f4a7c15ULL) ^ n;
	h ^= h >> 33; /* murmur3's finalizer: every input bit reaches the low bits */
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (uint32_t)(h % BITS);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The slot of node, or NULL when it was never nominated to. */
static struct node_slot *slot_find(struct sk_nominator *n, const char *node)
{
	if (!n->nslots)
		return NULL;
	size_t mask = (size_t)n->nslots - 1;
	for (size_t i = name_hash(node) & mask;; i = (i + 1) & mask) {
		struct node_slot *sl = &n->slots[i];
		if (!sl->node)
			return NULL;
		if (sl->node == node || strcmp(sl->node, node) == 0)
			return sl;
	}
}

static int slots_grow(struct sk_nominator *n)
{
	int ns = n->nslots ? n->nslots * 2 : 64;
	struct node_slot *slots = calloc((size_t)ns, sizeof(*slots));
	if (!slots)
		return -1;
	size_t mask = (size_t)ns - 1;
	for (int i = 0; i < n->nslots; i++) {
		if (!n->slots[i].node)
			continue;
		size_t j = name_hash(n->slots[i].node) & mask;
		while (slots[j].node)
			j = (j + 1) & mask;
		slots[j] = n->slots[i];
	}
	free(n->slots);
	n->slots = slots;
	n->nslots = ns;
	return 0;
}

/* The slot of an interned node name, created when absent; NULL on ENOMEM. */
static struct node_slot *slot_get(struct sk_nominator *n, const char *node)
{
	struct node_slot *sl = slot_find(n, node);
	if (sl)
		return sl;
	if ((n->nused + 1) * 2 > n->nslots && slots_grow(n) != 0)
		return NULL;
	size_t mask = (size_t)n->nslots - 1;
	size_t i = name_hash(node) & mask;
	while (n->slots[i].node)
		i = (i + 1) & mask;
	n->slots[i].node = node;
	n->slots[i].count = 0;
	n->nused++;
	return &n->slots[i];
}

struct sk_nominator *sk_nominator_new(void)
{
	struct sk_nominator *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	pthread_mutex_init(&n->mu, NULL);
	atomic_init(&n->count, 0);
	return n;
}

void sk_nominator_free(struct sk_nominator *n)
{
	if (!n)
		return;
	for (int i = 0; i < n->n; i++)
		sk_pod_unref(n->items[i].pod);
	free(n->items);
	free(n->slots);
	pthread_mutex_destroy(&n->mu);
	free(n);
}

static int find_locked(struct sk_nominator *n, const char *uid)
{
	for (int i = 0; i < n->n; i++)
		if (strcmp(n->items[i].pod->uid, uid) == 0)
			return i;
	return -1;
}

static void remove_at_locked(struct sk_nominator *n, int i)
{
	struct node_slot *sl = slot_find(n, n->items[i].node);
	if (sl)
		sl->count--;
	sk_pod_unref(n->items[i].pod);
	memmove(&n->items[i], &n->items[i + 1], (size_t)(n->n - i - 1) * sizeof(n->items[0]));
	n->n--;
	atomic_store(&n->count, n->n);
	if (n->n == 0)
		for (int w = 0; w < BITS / 64; w++)
			atomic_store_explicit(&n->bits[w], 0, memory_order_relaxed);
}

static void add_locked(struct sk_nominator *n, struct sk_pod *pod, const char *override)
{
	int i = find_locked(n, pod->uid);
	if (i >= 0)
		remove_at_locked(n, i);
	const char *node = override ? override : pod->nominated_node_name;
	if (!node || !*node || pod->node_name)
		return;
	const char *interned = sk_intern(node);
	struct node_slot *sl = interned ? slot_get(n, interned) : NULL;
	if (!sl)
		return; /* ENOMEM: losing a nomination only weakens the nominated-pods Filter pass */
	if (n->n == n->cap) {
		int cap = n->cap ? n->cap * 2 : 16;
		struct nomination *items = realloc(n->items, (size_t)cap * sizeof(*items));
		if (!items)
			return;
		n->items = items;
		n->cap = cap;
	}
	n->items[n->n].pod = sk_pod_ref(pod);
	n->items[n->n].node = interned;
	n->n++;
	sl->count++;
	uint32_t h = quick_hash(interned);
	atomic_fetch_or(&n->bits[h / 64], 1ULL << (h % 64));
	atomic_store(&n->count, n->n);
}

void sk_nominator_add(struct sk_nominator *n, struct sk_pod *pod, const char *override)
{
	pthread_mutex_lock(&n->mu);
	add_locked(n, pod, override);
	pthread_mutex_unlock(&n->mu);
}

void sk_nominator_delete(struct sk_nominator *n, const char *uid)
{
	pthread_mutex_lock(&n->mu);
	int i = find_locked(n, uid);
	if (i >= 0)
		remove_at_locked(n, i);
	pthread_mutex_unlock(&n->mu);
}

void sk_nominator_update(struct sk_nominator *n, const struct sk_pod *old_pod, struct sk_pod *new_pod)
{
	pthread_mutex_lock(&n->mu);
	const char *keep = NULL;
	bool old_empty = !old_pod || !old_pod->nominated_node_name || !*old_pod->nominated_node_name;
	bool new_empty = !new_pod->nominated_node_name || !*new_pod->nominated_node_name;
	if (old_empty && new_empty) {
		int i = find_locked(n, old_pod ? old_pod->uid : new_pod->uid);
		if (i >= 0)
			keep = n->items[i].node;
	}
	add_locked(n, new_pod, keep);
	pthread_mutex_unlock(&n->mu);
}

bool sk_nominator_maybe_on(struct sk_nominator *n, const char *node)
{
	if (atomic_load_explicit(&n->count, memory_order_relaxed) == 0)
		return false;
	uint32_t h = quick_hash(node);
	return (atomic_load_explicit(&n->bits[h / 64], memory_order_relaxed) & (1ULL << (h % 64))) != 0;
}

int sk_nominator_pods_for_node(struct sk_nominator *n, const char *node, struct sk_pod ***out)
{
	*out = NULL;
	if (!sk_nominator_maybe_on(n, node))
		return 0;
	pthread_mutex_lock(&n->mu);
	const struct node_slot *sl = slot_find(n, node);
	int cnt = sl ? sl->count : 0;
	if (cnt) {
		node = sl->node; /* interned: the scan compares pointers */
		*out = malloc((size_t)cnt * sizeof(**out));
		if (!*out) {
			pthread_mutex_unlock(&n->mu);
			return -1;
		}
		int k = 0;
		for (int i = 0; i < n->n && k < cnt; i++)
			if (n->items[i].node == node)
				(*out)[k++] = sk_pod_ref(n->items[i].pod);
	}
	pthread_mutex_unlock(&n->mu);
	return cnt;
}

const char *sk_nominator_node_of(struct sk_nominator *n, const char *uid)
{
	pthread_mutex_lock(&n->mu);
	int i = find_locked(n, uid);
	const char *node = i >= 0 ? n->items[i].node : NULL;
	pthread_mutex_unlock(&n->mu);
	return node;
}

int sk_nominator_count(struct sk_nominator *n) { return atomic_load_explicit(&n->count, memory_order_relaxed); }
