/* sk_node_info: the per-node aggregate (upstream framework.NodeInfo): the pods placed on a node
 * and their summed requests, non-zero requests, host ports and (anti-)affinity counters.
 * Every mutation takes a fresh generation from one process-wide counter, which is what the
 * cache's incremental snapshot compares. Not thread-safe by itself: the cache's lock (or the
 * single owner of a clone) guards a node info. Also the label and taint equality of
 * schedkit/types.h, which event classification and queueing hints compare updates with. */
#include <malloc.h>
#include <pthread.h>
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
 * at least that size for the current count, so no capacity field is needed. An array that exists
 * holds at least 4, so an emptied one (a dry run removes every lower-priority pod, then re-adds
 * them) is appended to without a realloc. */
static int grow_for_append(void **arr, int n, size_t elem)
{
	if (n == 0 ? *arr != NULL : (n < 4 || (n & (n - 1)) != 0))
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

/* Inlined at each call, where sign is a constant: the sums take the add or the subtract alone
 * (preemption's dry run adds and removes ~11 pods per candidate node). */
static inline __attribute__((always_inline)) int add_requests(struct sk_node_info *ni, const struct sk_pod *pod,
							      int sign)
{
	const struct sk_resource *b = &pod->requests;
	if (b->nscalar == 0) { /* sk_resource_add's sums, inline: a pod without extended resources */
		struct sk_resource *a = &ni->requested;
		a->milli_cpu = sat_addsign(a->milli_cpu, b->milli_cpu, sign);
		a->memory = sat_addsign(a->memory, b->memory, sign);
		a->ephemeral_storage = sat_addsign(a->ephemeral_storage, b->ephemeral_storage, sign);
		a->allowed_pod_number = sat_addsign(a->allowed_pod_number, b->allowed_pod_number, sign);
	} else if (sk_resource_add(&ni->requested, b, sign) != 0) {
		return -1;
	}
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

/* Upstream's RemovePod takes the first pod with the same key (uid). The same object always has
 * it; the first bytes settle most other comparisons without a strcmp call. */
static bool same_uid(const struct sk_pod *p, const struct sk_pod *pod)
{
	return p == pod || (p->uid[0] == pod->uid[0] && strcmp(p->uid, pod->uid) == 0);
}

/* The slot of the pod with pod's uid, or -1. A node holds a uid once, so the slot found from
 * either end is the one upstream's forward scan finds. Slots come from both ends in turn: the
 * pod removed most often on a large node is the one added last (the bound pod replacing its
 * assumed copy, 30,000 times on DaemonSet's one node) or one of the oldest (deletions). */
static int find_uid(const struct sk_node_info *ni, const struct sk_pod *pod)
{
	/* A small node is first searched for the object itself (preemption's dry run removes the very
	 * pods it read from the node): pointer compares, none of the uid compares of the slots passed.
	 * The slot is the same: no other slot holds the uid. */
	if (ni->npods <= 16)
		for (int i = ni->npods - 1; i >= 0; i--)
			if (ni->pods[i].pod == pod)
				return i;
	for (int lo = 0, hi = ni->npods - 1; lo <= hi; lo++, hi--) {
		if (same_uid(ni->pods[hi].pod, pod))
			return hi;
		if (same_uid(ni->pods[lo].pod, pod))
			return lo;
	}
	return -1;
}

int sk_node_info_remove_pod(struct sk_node_info *ni, const struct sk_pod *pod)
{
	int i = find_uid(ni, pod);
	if (i >= 0) {
		struct sk_pod *p = ni->pods[i].pod;
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

/* The allocation size copy_into gives an array of n elements: the next power of two above n, at
 * least 4 (grow_for_append's invariant holds for it). */
static size_t copy_cap(int n)
{
	size_t cap = 4;
	while (cap <= (size_t)n)
		cap *= 2;
	return cap;
}

/* A lower bound of an array's allocation (in elements) for its count n, from grow_for_append's
 * and copy_cap's sizes: 0 when NULL, else at least 4 and at least n rounded up to a power of two. */
static size_t held_cap(const void *arr, int n)
{
	if (!arr)
		return 0;
	size_t cap = 4;
	while (cap < (size_t)n)
		cap *= 2;
	return cap;
}

/* The counters and numbers a copy takes over as they are (the index: a copy is the same node of
 * the same snapshot). */
static void copy_scalars(struct sk_node_info *dst, const struct sk_node_info *src)
{
	dst->npods_with_affinity = src->npods_with_affinity;
	dst->npods_with_required_anti_affinity = src->npods_with_required_anti_affinity;
	dst->non_zero_milli_cpu = src->non_zero_milli_cpu;
	dst->non_zero_memory = src->non_zero_memory;
	dst->generation = src->generation;
	dst->index = src->index;
	dst->index_serial = src->index_serial;
}

/* Fills tmp (zero) with a copy of src, using the arrays pods[pods_cap] / ports[ports_cap] when they
 * are large enough (NULL, 0: none). On failure every array given or made is freed. */
static int copy_with(struct sk_node_info *tmp, const struct sk_node_info *src, struct sk_pod_info *pods,
		     size_t pods_cap, struct sk_used_port *ports, size_t ports_cap)
{
	if (src->npods > 0 && pods_cap < copy_cap(src->npods)) {
		free(pods);
		pods = malloc(copy_cap(src->npods) * sizeof(*pods));
	}
	if (src->nused_ports > 0 && ports_cap < copy_cap(src->nused_ports)) {
		free(ports);
		ports = malloc(copy_cap(src->nused_ports) * sizeof(*ports));
	}
	if ((src->npods > 0 && !pods) || (src->nused_ports > 0 && !ports) ||
	    sk_resource_copy(&tmp->requested, &src->requested) != 0) {
		free(pods);
		free(ports);
		return -1;
	}
	tmp->pods = pods;
	tmp->used_ports = ports;
	if (src->nused_ports > 0)
		memcpy(tmp->used_ports, src->used_ports, sizeof(*tmp->used_ports) * (size_t)src->nused_ports);
	for (int i = 0; i < src->npods; i++)
		tmp->pods[i].pod = sk_pod_ref(src->pods[i].pod);
	tmp->npods = src->npods;
	tmp->nused_ports = src->nused_ports;
	tmp->node = sk_node_ref(src->node);
	copy_scalars(tmp, src);
	return 0;
}

/* Grows *arr (n elements held) to copy_cap(want) elements, keeping its contents; 0 when it holds
 * want already. */
static int reserve(void **arr, int n, int want, size_t elem)
{
	if (want == 0 || held_cap(*arr, n) >= (size_t)want)
		return 0;
	void *na = realloc(*arr, copy_cap(want) * elem);
	if (!na)
		return -1;
	*arr = na;
	return 0;
}

/* The snapshot's update (sk_cache_update_snapshot) copies each changed node's info over its copy
 * of the previous cycle, where almost every slot holds the same pod as the source's (a pod
 * appended, or one removed by swapping in the last): references move only for the slots that
 * differ. A node of 30,000 pods costs a pass of pointer compares, not 30,000 references taken and
 * 30,000 dropped on as many pods' memory. An array four times too large for the source (pods
 * gone) is copied afresh, so it does not stay at its largest. On failure dst is unchanged. */
int sk_node_info_copy_into(struct sk_node_info *dst, const struct sk_node_info *src)
{
	if (held_cap(dst->pods, dst->npods) / 4 > copy_cap(src->npods) ||
	    held_cap(dst->used_ports, dst->nused_ports) / 4 > copy_cap(src->nused_ports)) {
		struct sk_node_info tmp;
		memset(&tmp, 0, sizeof(tmp));
		if (copy_with(&tmp, src, NULL, 0, NULL, 0) != 0)
			return -1;
		sk_node_info_clear(dst);
		*dst = tmp;
		return 0;
	}
	struct sk_resource req;
	if (reserve((void **)&dst->pods, dst->npods, src->npods, sizeof(*dst->pods)) != 0 ||
	    reserve((void **)&dst->used_ports, dst->nused_ports, src->nused_ports, sizeof(*dst->used_ports)) != 0 ||
	    sk_resource_copy(&req, &src->requested) != 0)
		return -1;
	int common = dst->npods < src->npods ? dst->npods : src->npods;
	for (int i = 0; i < common; i++)
		if (dst->pods[i].pod != src->pods[i].pod) {
			struct sk_pod *old = dst->pods[i].pod;
			dst->pods[i].pod = sk_pod_ref(src->pods[i].pod);
			sk_pod_unref(old);
		}
	for (int i = common; i < dst->npods; i++)
		sk_pod_unref(dst->pods[i].pod);
	for (int i = common; i < src->npods; i++)
		dst->pods[i].pod = sk_pod_ref(src->pods[i].pod);
	dst->npods = src->npods;
	if (src->nused_ports > 0)
		memcpy(dst->used_ports, src->used_ports, sizeof(*dst->used_ports) * (size_t)src->nused_ports);
	dst->nused_ports = src->nused_ports;
	sk_resource_clear(&dst->requested);
	dst->requested = req;
	if (dst->node != src->node) {
		struct sk_node *old = dst->node;
		dst->node = sk_node_ref(src->node);
		sk_node_unref(old);
	}
	copy_scalars(dst, src);
	return 0;
}

/* A per-thread free list of freed node infos with their pods and ports arrays: preemption's dry
 * run clones a node info per candidate node (~500 per preemptor at 5,000 nodes) and frees it at
 * once. A shell is all zero (no pod, node or request of its previous life); only the arrays'
 * memory is kept, and a clone overwrites every element it counts. */
#define SHELL_CACHE 8
struct ni_shell {
	struct sk_node_info *ni;
	struct sk_pod_info *pods;
	size_t pods_cap;
	struct sk_used_port *ports;
	size_t ports_cap;
};
struct ni_shells {
	int n;
	struct ni_shell shell[SHELL_CACHE];
};
static _Thread_local struct ni_shells tls_shells;
static pthread_key_t shells_key;
static pthread_once_t shells_once = PTHREAD_ONCE_INIT;

/* Thread exit: the exiting thread's shells go (the key's value is only a marker). */
static void shells_drain(void *marker)
{
	(void)marker;
	while (tls_shells.n > 0) {
		struct ni_shell *sh = &tls_shells.shell[--tls_shells.n];
		free(sh->pods);
		free(sh->ports);
		free(sh->ni);
	}
}

static void shells_key_create(void) { (void)pthread_key_create(&shells_key, shells_drain); }

struct sk_node_info *sk_node_info_clone(const struct sk_node_info *ni)
{
	struct ni_shell sh = { 0 };
	if (tls_shells.n > 0)
		sh = tls_shells.shell[--tls_shells.n];
	else if (!(sh.ni = calloc(1, sizeof(*sh.ni))))
		return NULL;
	if (copy_with(sh.ni, ni, sh.pods, sh.pods_cap, sh.ports, sh.ports_cap) != 0) {
		free(sh.ni);
		return NULL;
	}
	return sh.ni;
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
	struct ni_shells *c = &tls_shells;
	if (c->n < SHELL_CACHE && (c->n > 0 || (pthread_once(&shells_once, shells_key_create) == 0 &&
						 pthread_setspecific(shells_key, (void *)1) == 0))) {
		struct ni_shell *sh = &c->shell[c->n++];
		/* the arrays' real sizes: held_cap's lower bound for the count left (a dry run ends with
		 * fewer pods than it was cloned with) made the next clone reallocate every time */
		sh->pods = ni->pods;
		sh->pods_cap = ni->pods ? malloc_usable_size(ni->pods) / sizeof(*ni->pods) : 0;
		sh->ports = ni->used_ports;
		sh->ports_cap = ni->used_ports ? malloc_usable_size(ni->used_ports) / sizeof(*ni->used_ports) : 0;
		for (int i = 0; i < ni->npods; i++)
			sk_pod_unref(ni->pods[i].pod);
		sk_resource_clear(&ni->requested);
		sk_node_unref(ni->node);
		memset(ni, 0, sizeof(*ni));
		sh->ni = ni;
		return;
	}
	sk_node_info_clear(ni);
	free(ni);
}
