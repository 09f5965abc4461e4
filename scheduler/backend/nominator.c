/* Nominated pods by node (see nominator.h). Entries live in one array in nomination order;
 * lookups scan it. Nominations are rare (preemption, pods created with nominatedNodeName), and
 * the count read without the lock keeps the per-node Filter call free when there are none. */
#include "scheduler/backend/nominator.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct nomination {
	struct sk_pod *pod; /* one reference */
	const char *node;   /* interned */
};

struct sk_nominator {
	pthread_mutex_t mu;
	atomic_int count; /* == n, readable without mu */
	int n, cap;
	struct nomination *items;
};

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
	sk_pod_unref(n->items[i].pod);
	memmove(&n->items[i], &n->items[i + 1], (size_t)(n->n - i - 1) * sizeof(n->items[0]));
	n->n--;
	atomic_store(&n->count, n->n);
}

static void add_locked(struct sk_nominator *n, struct sk_pod *pod, const char *override)
{
	int i = find_locked(n, pod->uid);
	if (i >= 0)
		remove_at_locked(n, i);
	const char *node = override ? override : pod->nominated_node_name;
	if (!node || !*node || pod->node_name)
		return;
	if (n->n == n->cap) {
		int cap = n->cap ? n->cap * 2 : 16;
		struct nomination *items = realloc(n->items, (size_t)cap * sizeof(*items));
		if (!items)
			return; /* losing a nomination only weakens the nominated-pods Filter pass */
		n->items = items;
		n->cap = cap;
	}
	n->items[n->n].pod = sk_pod_ref(pod);
	n->items[n->n].node = sk_intern(node);
	n->n++;
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

int sk_nominator_pods_for_node(struct sk_nominator *n, const char *node, struct sk_pod ***out)
{
	*out = NULL;
	if (atomic_load_explicit(&n->count, memory_order_relaxed) == 0)
		return 0;
	pthread_mutex_lock(&n->mu);
	int cnt = 0;
	for (int i = 0; i < n->n; i++)
		if (n->items[i].node == node || strcmp(n->items[i].node, node) == 0)
			cnt++;
	if (cnt) {
		*out = malloc((size_t)cnt * sizeof(**out));
		if (!*out) {
			pthread_mutex_unlock(&n->mu);
			return -1;
		}
		int k = 0;
		for (int i = 0; i < n->n; i++)
			if (n->items[i].node == node || strcmp(n->items[i].node, node) == 0)
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
