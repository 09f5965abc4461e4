/* Nominated pods by node (see nominator.h). Entries live in one array in nomination order; a
 * hash of node name -> number of nominations on it answers the per-node question of the
 * nominated-pods Filter pass without scanning (docs/benchmarks.md, "Preemption": the scan with
 * strcmp was half of a preemption workload's instructions), and the scan that collects a
 * node's pods compares interned pointers. Two lock-free reads keep the per-node Filter call cheap:
 * the count (nobody nominated), and a bit filter over the node names nominated to (set on add,
 * cleared when the last nomination goes), which answers "nobody on this node" for most nodes
 * without the lock or the hash. The bit of an interned name is found by its pointer (name_bit), and
 * the scan for a node's pods starts at its first nomination (node_slot.first) until a removal. */
#include "scheduler/backend/nominator.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BITS 65536
/* The name-pointer cache (see name_bit): slots, a power of two, and the probe window. */
#define PCACHE 32768
#define PROBES 8

struct nomination {
	struct sk_pod *pod; /* one reference */
	const char *node;   /* interned */
};

/* One slot of the node hash (open addressing, linear probing). A slot keeps its node once used
 * (count may drop to 0): the set of node names is bounded by the cluster's nodes. */
struct node_slot {
	const char *node; /* interned; NULL = empty */
	int count;
	/* items[first] is the node's first nomination while epoch == sk_nominator.removals: items are
	 * only appended between removals, never moved (sk_nominator_pods_for_node's scan starts there) */
	int first;
	uint64_t epoch;
};

struct sk_nominator {
	pthread_mutex_t mu;
	atomic_int count; /* == n, readable without mu */
	int n, cap;
	struct nomination *items;
	struct node_slot *slots;
	int nslots, nused; /* nslots: a power of two (or 0) */
	uint64_t removals; /* bumped when items move (a removal): node_slot.first goes stale */
	_Atomic uint64_t bits[BITS / 64]; /* quick_hash of the node names nominated to */
	/* Interned name pointer -> its quick_hash (name_bit): (pointer << 16) | hash, 0 = empty.
	 * Written once per slot (a compare-and-swap from 0), never cleared. */
	_Atomic uint64_t *pcache;
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

/* The slot of a name pointer in the pointer cache. */
static size_t ptr_slot(uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 40) & (PCACHE - 1);
}

/* quick_hash(node), found by the pointer when node is an interned name met before: the per-node
 * check of every Filter call (the failing pass's 5,000 nodes, each dry-run Filter of preemption)
 * was a strlen and a hash of the name each time (docs/benchmarks.md, "Preemption"). An interned
 * string lives for the process and never changes, so its pointer keys its hash for good; any other
 * pointer (a name the caller built, which may be freed and its address reused) is hashed every
 * time. A pointer is cached when sk_intern returns it (it is the interned copy), in the first free
 * slot of its probe window; a full window only means hashing, as before. name_bit below is the
 * entry. */
static __attribute__((noinline)) uint32_t name_bit_probe(struct sk_nominator *n, const char *node)
{
	uint64_t key = (uint64_t)(uintptr_t)node;
	if (!n->pcache || key >> 48)
		return quick_hash(node);
	size_t i = ptr_slot(key);
	_Atomic uint64_t *free_slot = NULL;
	for (int k = 0; k < PROBES; k++, i = (i + 1) & (PCACHE - 1)) {
		uint64_t e = atomic_load_explicit(&n->pcache[i], memory_order_relaxed);
		if (e >> 16 == key)
			return (uint32_t)(e & 0xffff);
		if (!e) {
			free_slot = &n->pcache[i];
			break;
		}
	}
	uint32_t h = quick_hash(node);
	if (free_slot && sk_intern(node) == node) {
		uint64_t zero = 0; /* lost to another thread: that slot holds some pointer's own hash */
		atomic_compare_exchange_strong_explicit(free_slot, &zero, key << 16 | h, memory_order_relaxed,
							memory_order_relaxed);
	}
	return h;
}

/* name_bit_probe with its common case inline: the pointer in its home slot. */
static inline uint32_t name_bit(struct sk_nominator *n, const char *node)
{
	uint64_t key = (uint64_t)(uintptr_t)node;
	if (n->pcache) {
		uint64_t e = atomic_load_explicit(&n->pcache[ptr_slot(key)], memory_order_relaxed);
		if (e >> 16 == key && key)
			return (uint32_t)(e & 0xffff);
	}
	return name_bit_probe(n, node);
}

uint32_t sk_nominator_name_bit_slow(const char *node) { return quick_hash(node); }

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
	n->slots[i].first = 0;
	n->slots[i].epoch = n->removals - 1; /* unknown */
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
	n->pcache = calloc(PCACHE, sizeof(*n->pcache)); /* NULL (ENOMEM): names are hashed each time */
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
	free((void *)n->pcache);
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
	n->removals++;
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
	if (sl->count == 0) { /* the node's only nomination: its first */
		sl->first = n->n;
		sl->epoch = n->removals;
	}
	n->n++;
	sl->count++;
	uint32_t h = name_bit(n, interned);
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
	uint32_t h = name_bit(n, node);
	return (atomic_load_explicit(&n->bits[h / 64], memory_order_relaxed) & (1ULL << (h % 64))) != 0;
}

int sk_nominator_pods_for_node(struct sk_nominator *n, const char *node, struct sk_pod ***out)
{
	*out = NULL;
	if (!sk_nominator_maybe_on(n, node))
		return 0;
	pthread_mutex_lock(&n->mu);
	struct node_slot *sl = slot_find(n, node);
	int cnt = sl ? sl->count : 0;
	if (cnt) {
		node = sl->node; /* interned: the scan compares pointers */
		*out = malloc((size_t)cnt * sizeof(**out));
		if (!*out) {
			pthread_mutex_unlock(&n->mu);
			return -1;
		}
		int k = 0, i = sl->epoch == n->removals ? sl->first : 0;
		for (; i < n->n && k < cnt; i++)
			if (n->items[i].node == node) {
				if (k == 0) {
					sl->first = i;
					sl->epoch = n->removals;
				}
				(*out)[k++] = sk_pod_ref(n->items[i].pod);
			}
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
