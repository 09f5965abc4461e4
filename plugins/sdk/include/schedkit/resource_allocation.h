/* Shared by NodeResourcesFit and NodeResourcesBalancedAllocation (upstream
 * noderesources/resource_allocation.go): the pod's request and the node's allocatable/requested
 * value of one scored resource, and the PreScore request list both keep. Static inline: the
 * Score loops call these once per node and resource. */
#ifndef SK_SCHEDKIT_RESOURCE_ALLOCATION_H
#define SK_SCHEDKIT_RESOURCE_ALLOCATION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/args.h"
#include "schedkit/plugin.h"

/* v1helper.IsExtendedResourceName: a name with a '/' that is not kubernetes.io/-prefixed (and not
 * "requests."-prefixed). Names are assumed valid (the API server validated them). */
static inline bool sk_is_extended_resource_name(const char *name)
{
	if (!strchr(name, '/') || strstr(name, "kubernetes.io/"))
		return false; /* native: unprefixed, or kubernetes.io/-prefixed */
	return strncmp(name, "requests.", 9) != 0;
}

/* v1helper.IsScalarResourceName: extended, hugepages-*, kubernetes.io/-prefixed native, attachable-volumes-*. */
static inline bool sk_is_scalar_resource_name(const char *name)
{
	return sk_is_extended_resource_name(name) || !strncmp(name, "hugepages-", 10) ||
	       strstr(name, "kubernetes.io/") != NULL || !strncmp(name, "attachable-volumes-", 19);
}

/* What a scored resource name refers to, resolved once when args are decoded. */
enum sk_res_kind { SK_RES_CPU = 0, SK_RES_MEMORY, SK_RES_EPHEMERAL, SK_RES_SCALAR, SK_RES_OTHER };
struct sk_scored_resource {
	enum sk_res_kind kind;
	const char *name; /* interned (pointer-equal to the decoded resource names) */
	int64_t weight;
};

static inline enum sk_res_kind sk_resource_kind(const char *name)
{
	if (!strcmp(name, SK_RESOURCE_CPU))
		return SK_RES_CPU;
	if (!strcmp(name, SK_RESOURCE_MEMORY))
		return SK_RES_MEMORY;
	if (!strcmp(name, SK_RESOURCE_EPHEMERAL_STORAGE))
		return SK_RES_EPHEMERAL;
	return sk_is_scalar_resource_name(name) ? SK_RES_SCALAR : SK_RES_OTHER;
}

/* calculatePodResourceRequest: non_zero selects the 100m/200Mi defaults for cpu and memory
 * (useRequested=false); other resources always use the real request. */
static inline int64_t sk_pod_resource_request(const struct sk_pod *pod, const struct sk_scored_resource *r, bool non_zero)
{
	switch (r->kind) {
	case SK_RES_CPU: return non_zero ? pod->non_zero_milli_cpu : pod->requests.milli_cpu;
	case SK_RES_MEMORY: return non_zero ? pod->non_zero_memory : pod->requests.memory;
	case SK_RES_EPHEMERAL: return pod->requests.ephemeral_storage;
	case SK_RES_SCALAR: return sk_resource_scalar(&pod->requests, r->name);
	case SK_RES_OTHER: break;
	}
	return 0;
}

/* calculateResourceAllocatableRequest: (allocatable, node requested + pod request). (0, 0) for a
 * scalar resource the pod does not request and for names that are not resources. */
static inline void sk_resource_alloc_request(const struct sk_node_info *ni, const struct sk_scored_resource *r,
					     int64_t pod_request, bool use_requested, int64_t *alloc, int64_t *req)
{
	const struct sk_resource *a = &ni->node->allocatable;
	switch (r->kind) {
	case SK_RES_CPU:
		*alloc = a->milli_cpu;
		*req = (use_requested ? ni->requested.milli_cpu : ni->non_zero_milli_cpu) + pod_request;
		return;
	case SK_RES_MEMORY:
		*alloc = a->memory;
		*req = (use_requested ? ni->requested.memory : ni->non_zero_memory) + pod_request;
		return;
	case SK_RES_EPHEMERAL:
		*alloc = a->ephemeral_storage;
		*req = ni->requested.ephemeral_storage + pod_request;
		return;
	case SK_RES_SCALAR:
		if (pod_request != 0) {
			*alloc = sk_resource_scalar(a, r->name);
			*req = sk_resource_scalar(&ni->requested, r->name) + pod_request;
			return;
		}
		break;
	case SK_RES_OTHER:
		break;
	}
	*alloc = 0;
	*req = 0;
}

/* Resolves decoded specs into scored resources; NULL on OOM. Caller frees. */
static inline struct sk_scored_resource *sk_scored_resources_new(const struct sk_resource_spec *specs, int n)
{
	struct sk_scored_resource *r = calloc((size_t)n + 1, sizeof(*r));
	for (int i = 0; r && i < n; i++) {
		r[i].kind = sk_resource_kind(specs[i].name);
		r[i].name = sk_intern(specs[i].name);
		r[i].weight = specs[i].weight;
		if (!r[i].name) {
			free(r);
			return NULL;
		}
	}
	return r;
}

/* PreScore state of both plugins: the pod's request per scored resource, computed once per cycle
 * (non_zero: the 100m/200Mi scoring defaults for cpu and memory, as NodeResourcesFit scores). */
struct sk_pod_request_list {
	int n;
	int64_t requests[];
};
static inline void sk_pod_request_list_free(void *p) { free(p); }
static const struct sk_state_ops sk_pod_request_list_ops = { .free = sk_pod_request_list_free, .clone = NULL };

static inline struct sk_pod_request_list *sk_pod_request_list_new(const struct sk_scored_resource *scored, int n,
								  const struct sk_pod *pod, bool non_zero)
{
	struct sk_pod_request_list *st = malloc(sizeof(*st) + (size_t)n * sizeof(int64_t));
	if (!st)
		return NULL;
	st->n = n;
	for (int i = 0; i < n; i++)
		st->requests[i] = sk_pod_resource_request(pod, &scored[i], non_zero);
	return st;
}

#endif
