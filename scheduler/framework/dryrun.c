/* See dryrun.h. The node info's arrays follow nodeinfo.c's growth rule (an array holding n
 * elements has room for at least max(4, the power of two >= n)), so the add and remove of the dry
 * run may grow them as usual; a reset only reallocates when the new node needs more than that
 * rule promises for what the scratch holds now. */
#include "scheduler/framework/dryrun.h"

#include <stdlib.h>
#include <string.h>

#include "scheduler/framework/fw_internal.h"
#include "scheduler/framework/record.h"

struct sk_dryrun_scratch {
	struct sk_node_info ni;
	struct sk_cycle_state cs; /* filters borrowed from the attempt's state: never freed here */
	bool have_state;
};

struct sk_dryrun_scratch *sk_dryrun_scratch_new(void)
{
	return calloc(1, sizeof(struct sk_dryrun_scratch));
}

/* The room nodeinfo.c's growth rule promises an array holding n elements (0 when it is NULL). */
static size_t promised(const void *arr, int n)
{
	if (!arr)
		return 0;
	size_t cap = 4;
	while (cap < (size_t)n)
		cap *= 2;
	return cap;
}

/* *arr (holding n) gets room for want elements of elem bytes under the growth rule. */
static int ensure(void **arr, int n, int want, size_t elem)
{
	if (want == 0 || promised(*arr, n) >= (size_t)want)
		return 0;
	size_t cap = 4;
	while (cap < (size_t)want)
		cap *= 2;
	void *na = realloc(*arr, cap * elem);
	if (!na)
		return -1;
	*arr = na;
	return 0;
}

static void state_release(struct sk_cycle_state *cs)
{
	for (int i = 0; i < cs->nslots; i++) {
		struct cs_slot *sl = &cs->slots[i];
		if (sl->data && !sl->borrowed && sl->ops && sl->ops->free)
			sl->ops->free(sl->data);
		sl->data = NULL;
		sl->ops = NULL;
		sl->borrowed = false;
	}
	for (int i = 0; i < cs->nactivate; i++)
		free(cs->activate[i]);
	cs->nactivate = 0;
}

static int state_reset(struct sk_dryrun_scratch *s, const struct sk_cycle_state *src)
{
	struct sk_cycle_state *cs = &s->cs;
	if (s->have_state)
		state_release(cs);
	if (!s->have_state || cs->nslots < src->nslots) {
		size_t n = (size_t)(src->nslots ? src->nslots : 1);
		struct cs_slot *slots = realloc(s->have_state ? cs->slots : NULL, n * sizeof(*slots));
		if (slots)
			cs->slots = slots;
		uint8_t *skip = slots ? realloc(s->have_state ? cs->skip : NULL, n) : NULL;
		if (skip)
			cs->skip = skip;
		if (!slots || !skip) {
			if (!s->have_state) {
				free(slots);
				cs->slots = NULL;
			}
			return -1;
		}
		if (!s->have_state)
			pthread_mutex_init(&cs->mu, NULL);
		s->have_state = true;
	}
	cs->nslots = src->nslots;
	memset(cs->slots, 0, (size_t)cs->nslots * sizeof(*cs->slots));
	memcpy(cs->skip, src->skip, (size_t)src->nslots);
	cs->record_plugin_metrics = src->record_plugin_metrics;
	cs->nfilters = src->nfilters;
	cs->filters = src->filters;
	for (int i = 0; i < src->nslots; i++) { /* as sk_cycle_state_clone */
		const struct cs_slot *from = &src->slots[i];
		if (!from->data)
			continue;
		cs->slots[i].ops = from->ops;
		if (from->ops && from->ops->clone) {
			if (!(cs->slots[i].data = from->ops->clone(from->data))) {
				cs->slots[i].ops = NULL;
				state_release(cs);
				return -1;
			}
		} else {
			cs->slots[i].data = from->data;
			cs->slots[i].borrowed = true;
		}
	}
	return 0;
}

static void node_drop(struct sk_node_info *ni)
{
	for (int i = 0; i < ni->npods; i++)
		sk_pod_unref(ni->pods[i].pod);
	ni->npods = 0;
	ni->nused_ports = 0;
	sk_node_unref(ni->node);
	ni->node = NULL;
}

static int node_reset(struct sk_node_info *ni, const struct sk_node_info *src)
{
	int had_pods = ni->npods, had_ports = ni->nused_ports; /* what the growth rule vouches for */
	node_drop(ni);
	if (ensure((void **)&ni->pods, had_pods, src->npods, sizeof(*ni->pods)) != 0 ||
	    ensure((void **)&ni->used_ports, had_ports, src->nused_ports, sizeof(*ni->used_ports)) != 0)
		return -1;
	struct sk_resource req;
	if (sk_resource_copy(&req, &src->requested) != 0)
		return -1;
	sk_resource_clear(&ni->requested);
	ni->requested = req;
	for (int i = 0; i < src->npods; i++) {
		ni->pods[i] = src->pods[i];
		ni->pods[i].pod = sk_pod_ref(src->pods[i].pod);
	}
	ni->npods = src->npods;
	if (src->nused_ports)
		memcpy(ni->used_ports, src->used_ports, (size_t)src->nused_ports * sizeof(*ni->used_ports));
	ni->nused_ports = src->nused_ports;
	ni->node = sk_node_ref(src->node);
	ni->npods_with_affinity = src->npods_with_affinity;
	ni->npods_with_required_anti_affinity = src->npods_with_required_anti_affinity;
	ni->non_zero_milli_cpu = src->non_zero_milli_cpu;
	ni->non_zero_memory = src->non_zero_memory;
	ni->generation = src->generation;
	ni->index = src->index;
	ni->index_serial = src->index_serial;
	return 0;
}

int sk_dryrun_reset(struct sk_dryrun_scratch *s, const struct sk_node_info *ni, const struct sk_cycle_state *cs)
{
	if (node_reset(&s->ni, ni) != 0) {
		node_drop(&s->ni);
		return -1;
	}
	if (state_reset(s, cs) != 0) {
		node_drop(&s->ni);
		return -1;
	}
	return 0;
}

struct sk_node_info *sk_dryrun_node(struct sk_dryrun_scratch *s) { return &s->ni; }
struct sk_cycle_state *sk_dryrun_state(struct sk_dryrun_scratch *s) { return &s->cs; }

void sk_dryrun_scratch_free(struct sk_dryrun_scratch *s)
{
	if (!s)
		return;
	node_drop(&s->ni);
	free(s->ni.pods);
	free(s->ni.used_ports);
	sk_resource_clear(&s->ni.requested);
	if (s->have_state) {
		state_release(&s->cs);
		free(s->cs.activate);
		free(s->cs.slots);
		free(s->cs.skip);
		pthread_mutex_destroy(&s->cs.mu);
	}
	free(s);
}

bool sk_dryrun_candidates_observed(struct sk_handle *h)
{
	return h->fw->nextenders > 0 || sk_rec_active();
}
