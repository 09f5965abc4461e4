/* sk_node_info: the per-node aggregate (upstream framework.NodeInfo): the pods placed on a node
 * and their summed requests, non-zero requests, host ports and (anti-)affinity counters.
 * Every mutation takes a fresh generation from one process-wide counter, which is what the
 * cache's incremental snapshot compares. Not thread-safe by itself: the cache's lock (or the
 * single owner of a clone) guards a node info. Also the label and taint equality of
 * schedkit/types.h, which event classification and queueing hints compare updates with. */
#include <stdlib.h>
#include <string.h>

#include "scheduler/backend/cache.h"
#include "schedkit/types.h"

static int64_t generation_counter;

bool sk_labels_equal(const struct sk_labels *a, const struct sk_labels *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->items[i].key, b->items[i].key) || strcmp(a->items[i].value, b->items[i].value))
			return false;
	return true;
}

bool sk_taints_equal(const struct sk_taint *a, int na, const struct sk_taint *b, int nb)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (strcmp(a[i].key, b[i].key) || strcmp(a[i].value, b[i].value) || a[i].effect != b[i].effect)
			return false;
	return true;
}

bool sk_tolerations_equal(const struct sk_pod *a, const struct sk_pod *b)
{
	if (a->ntolerations != b->ntolerations)
		return false;
	for (int i = 0; i < a->ntolerations; i++) {
		const struct sk_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
		if (strcmp(x->key, y->key) || strcmp(x->value, y->value) || x->op != y->op || x->effect != y->effect)
			return false;
	}
	return true;
}

static int64_t sat_addsign(int64_t a, int64_t b, int sign)
{
	int64_t r;
	if (sign < 0 ? __builtin_sub_overflow(a, b, &r) : __builtin_add_overflow(a, b, &r))
		return (sign < 0) == (b < 0) ? INT64_MAX : INT64_MIN;
	return r;
}

int64_t sk_next_generation(void)
{
	return __atomic_add_fetch(&generation_counter, 1, __ATOMIC_RELAXED);
}

/* Arrays grow to the next power of two (min 4) when n reaches one: the allocation is always
 * at least that size for the current count, so no capacity field is needed. */
static int grow_for_append(void **arr, int n, size_t elem)
{
	if (n != 0 && (n < 4 || (n & (n - 1)) != 0))
		return 0;
	size_t cap = n < 4 ? 4 : (size_t)n * 2;
	void *na = realloc(*arr, cap * elem);
	if (!na)
		return -1;
	*arr = na;
	return 0;
}

struct sk_node_info *sk_node_info_new(struct sk_node *node)
{
	struct sk_node_info *ni = calloc(1, sizeof(*ni));
	if (!ni)
		return NULL;
	ni->node = sk_node_ref(node);
	ni->generation = sk_next_generation();
	return ni;
}

void sk_node_info_set_node(struct sk_node_info *ni, struct sk_node *node)
{
	struct sk_node *old = ni->node;
	ni->node = sk_node_ref(node);
	sk_node_unref(old);
	ni->generation = sk_next_generation();
}

static bool pod_has_affinity(const struct sk_pod *p)
{
	return p->naffinity + p->nanti_affinity + p->npreferred_affinity + p->npreferred_anti_affinity > 0;
}

static int find_port(const struct sk_node_info *ni, const struct sk_host_port *hp)
{
	for (int j = 0; j < ni->nused_ports; j++) {
		const struct sk_used_port *u = &ni->used_ports[j];
		if (u->port == hp->port && u->protocol == hp->protocol &&
		    (u->host_ip == hp->host_ip || strcmp(u->host_ip, hp->host_ip) == 0))
			return j;
	}
	return -1;
}

/* used_ports is a set, as upstream's HostPortInfo (ip -> set of protocol/port): adding a port that
 * is already there changes nothing. */
static int add_ports(struct sk_node_info *ni, const struct sk_pod *pod)
{
	for (int i = 0; i < pod->nhost_ports; i++) {
		if (find_port(ni, &pod->host_ports[i]) >= 0)
			continue;
		if (grow_for_append((void **)&ni->used_ports, ni->nused_ports, sizeof(*ni->used_ports)) != 0)
			return -1;
		struct sk_used_port *u = &ni->used_ports[ni->nused_ports++];
		u->host_ip = pod->host_ports[i].host_ip;
		u->protocol = pod->host_ports[i].protocol;
		u->port = pod->host_ports[i].port;
	}
	return 0;
}

/* Upstream HostPortInfo.Remove deletes the entry from the set, even when another pod on the node
 * declared the same (ip, protocol, port): after removing one of two such pods, the port no longer
 * counts as used (NodePorts then admits a third pod). Matched on purpose. */
static void remove_ports(struct sk_node_info *ni, const struct sk_pod *pod)
{
	for (int i = 0; i < pod->nhost_ports; i++) {
		int j = find_port(ni, &pod->host_ports[i]);
		if (j >= 0)
			ni->used_ports[j] = ni->used_ports[--ni->nused_ports];
	}
}

static int add_requests(struct sk_node_info *ni, const struct sk_pod *pod, int sign)
{
	if (sk_resource_add(&ni->requested, &pod->requests, sign) != 0)
		return -1;
	/* decode clamps pod values to [0, INT64_MAX]; sums saturate rather than wrap */
	ni->non_zero_milli_cpu = sat_addsign(ni->non_zero_milli_cpu, pod->non_zero_milli_cpu, sign);
	ni->non_zero_memory = sat_addsign(ni->non_zero_memory, pod->non_zero_memory, sign);
	return 0;
}

int sk_node_info_add_pod(struct sk_node_info *ni, struct sk_pod *pod)
{
	if (grow_for_append((void **)&ni->pods, ni->npods, sizeof(*ni->pods)) != 0)
		return -1;
	int ports_before = ni->nused_ports;
	if (add_ports(ni, pod) != 0) {
		ni->nused_ports = ports_before;
		return -1;
	}
	if (add_requests(ni, pod, 1) != 0) {
		/* undo: scalar slots may have been created with the partial add; subtract back */
		(void)add_requests(ni, pod, -1);
		ni->nused_ports = ports_before;
		return -1;
	}
	ni->pods[ni->npods++].pod = sk_pod_ref(pod);
	if (pod_has_affinity(pod))
		ni->npods_with_affinity++;
	if (pod->nanti_affinity > 0)
		ni->npods_with_required_anti_affinity++;
	ni->generation = sk_next_generation();
	return 0;
}

int sk_node_info_remove_pod(struct sk_node_info *ni, const struct sk_pod *pod)
{
	for (int i = 0; i < ni->npods; i++) {
		struct sk_pod *p = ni->pods[i].pod;
		if (p != pod && strcmp(p->uid, pod->uid) != 0)
			continue;
		/* Swap with the last, as upstream does. */
		ni->pods[i] = ni->pods[--ni->npods];
		/* Subtract what the stored pod added, not the argument: they may differ. */
		(void)add_requests(ni, p, -1);
		remove_ports(ni, p);
		if (pod_has_affinity(p))
			ni->npods_with_affinity--;
		if (p->nanti_affinity > 0)
			ni->npods_with_required_anti_affinity--;
		ni->generation = sk_next_generation();
		sk_pod_unref(p);
		return 0;
	}
	return -1;
}

int sk_node_info_copy_into(struct sk_node_info *dst, const struct sk_node_info *src)
{
	struct sk_node_info tmp;
	memset(&tmp, 0, sizeof(tmp));
	if (src->npods > 0) {
		size_t cap = 4;
		while (cap <= (size_t)src->npods)
			cap *= 2;
		if (!(tmp.pods = malloc(cap * sizeof(*tmp.pods))))
			return -1;
	}
	if (src->nused_ports > 0) {
		size_t cap = 4;
		while (cap <= (size_t)src->nused_ports)
			cap *= 2;
		if (!(tmp.used_ports = malloc(cap * sizeof(*tmp.used_ports)))) {
			free(tmp.pods);
			return -1;
		}
		memcpy(tmp.used_ports, src->used_ports, sizeof(*tmp.used_ports) * (size_t)src->nused_ports);
	}
	if (sk_resource_copy(&tmp.requested, &src->requested) != 0) {
		free(tmp.pods);
		free(tmp.used_ports);
		return -1;
	}
	for (int i = 0; i < src->npods; i++)
		tmp.pods[i].pod = sk_pod_ref(src->pods[i].pod);
	tmp.npods = src->npods;
	tmp.nused_ports = src->nused_ports;
	tmp.node = sk_node_ref(src->node);
	tmp.npods_with_affinity = src->npods_with_affinity;
	tmp.npods_with_required_anti_affinity = src->npods_with_required_anti_affinity;
	tmp.non_zero_milli_cpu = src->non_zero_milli_cpu;
	tmp.non_zero_memory = src->non_zero_memory;
	tmp.generation = src->generation;
	tmp.index = src->index; /* a clone is the same node of the same snapshot */
	tmp.index_serial = src->index_serial;
	sk_node_info_clear(dst);
	*dst = tmp;
	return 0;
}

struct sk_node_info *sk_node_info_clone(const struct sk_node_info *ni)
{
	struct sk_node_info *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (sk_node_info_copy_into(c, ni) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

void sk_node_info_clear(struct sk_node_info *ni)
{
	for (int i = 0; i < ni->npods; i++)
		sk_pod_unref(ni->pods[i].pod);
	free(ni->pods);
	free(ni->used_ports);
	sk_resource_clear(&ni->requested);
	sk_node_unref(ni->node);
	memset(ni, 0, sizeof(*ni));
}

void sk_node_info_free(struct sk_node_info *ni)
{
	if (!ni)
		return;
	sk_node_info_clear(ni);
	free(ni);
}
