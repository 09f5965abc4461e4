/* The live web view's messages (dashboard.h): per-profile queue counts gathered pod by pod, and
 * the state and feed JSON the page reads (scheduler/decisions/web/app.js). */
#include "scheduler/decisions/dashboard.h"

#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/util.h"

struct sk_dash_queue *sk_dash_queues_profile(struct sk_dash_queues *q, const char *profile)
{
	if (!profile)
		profile = "";
	for (int i = 0; i < q->n; i++)
		if (!strcmp(q->v[i].profile, profile))
			return &q->v[i];
	if (q->n == q->cap) {
		int cap = q->cap ? q->cap * 2 : 8;
		struct sk_dash_queue *v = realloc(q->v, (size_t)cap * sizeof *v);
		if (!v)
			return NULL;
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n] = (struct sk_dash_queue){ .profile = profile };
	return &q->v[q->n++];
}

int sk_dash_queues_count(struct sk_dash_queues *q, const char *profile, enum sk_queue_where where)
{
	struct sk_dash_queue *e = sk_dash_queues_profile(q, profile);
	if (!e)
		return -1;
	switch (where) {
	case SK_Q_ACTIVE:
		e->active++;
		break;
	case SK_Q_BACKOFF:
	case SK_Q_ERROR_BACKOFF:
		e->backoff++;
		break;
	case SK_Q_UNSCHEDULABLE:
		e->unschedulable++;
		break;
	case SK_Q_GATED:
		e->gated++;
		break;
	case SK_Q_NONE:
	case SK_Q_IN_FLIGHT:
		break;
	}
	return 0;
}

void sk_dash_queues_free(struct sk_dash_queues *q)
{
	free(q->v);
	memset(q, 0, sizeof *q);
}

static int cmp_queue(const void *a, const void *b)
{
	return strcmp(((const struct sk_dash_queue *)a)->profile, ((const struct sk_dash_queue *)b)->profile);
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(((const struct sk_dash_node *)a)->name, ((const struct sk_dash_node *)b)->name);
}

/* A new object appended to array a; NULL on OOM. */
static cJSON *new_item(cJSON *a)
{
	cJSON *o = cJSON_CreateObject();
	if (o && !cJSON_AddItemToArray(a, o)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *pair(int64_t requested, int64_t allocatable)
{
	cJSON *o = cJSON_CreateObject();
	if (o && (!kube_json_add(o, "requested", kube_json_create_int64(requested)) ||
		  !kube_json_add(o, "allocatable", kube_json_create_int64(allocatable)))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *profiles_json(struct sk_dash_queues *q)
{
	if (q->n)
		qsort(q->v, (size_t)q->n, sizeof *q->v, cmp_queue);
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; a && i < q->n; i++) {
		const struct sk_dash_queue *e = &q->v[i];
		cJSON *o = new_item(a);
		if (!o || !kube_json_add(o, "name", cJSON_CreateString(e->profile)) ||
		    !kube_json_add(o, "active", cJSON_CreateNumber(e->active)) || !kube_json_add(o, "backoff", cJSON_CreateNumber(e->backoff)) ||
		    !kube_json_add(o, "unschedulable", cJSON_CreateNumber(e->unschedulable)) ||
		    !kube_json_add(o, "gated", cJSON_CreateNumber(e->gated)) || !kube_json_add(o, "records", cJSON_CreateBool(e->records))) {
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

static cJSON *nodes_json(struct sk_dash_node *nodes, int n, cJSON **totals)
{
	if (n)
		qsort(nodes, (size_t)n, sizeof *nodes, cmp_node);
	int64_t cr = 0, ca = 0, mr = 0, ma = 0;
	int pods = 0, max_pods = 0;
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; a && i < n; i++) {
		const struct sk_dash_node *x = &nodes[i];
		cr += x->cpu_requested;
		ca += x->cpu_allocatable;
		mr += x->mem_requested;
		ma += x->mem_allocatable;
		pods += x->pods;
		max_pods += x->max_pods;
		cJSON *o = new_item(a);
		if (!o || !kube_json_add(o, "name", cJSON_CreateString(x->name)) ||
		    !kube_json_add(o, "cpu", pair(x->cpu_requested, x->cpu_allocatable)) ||
		    !kube_json_add(o, "memory", pair(x->mem_requested, x->mem_allocatable)) ||
		    !kube_json_add(o, "pods", cJSON_CreateNumber(x->pods)) || !kube_json_add(o, "maxPods", cJSON_CreateNumber(x->max_pods)) ||
		    !kube_json_add(o, "unschedulable", cJSON_CreateBool(x->unschedulable))) {
			cJSON_Delete(a);
			return NULL;
		}
	}
	cJSON *t = a ? cJSON_CreateObject() : NULL;
	if (!t || !kube_json_add(t, "nodes", cJSON_CreateNumber(n)) || !kube_json_add(t, "cpu", pair(cr, ca)) ||
	    !kube_json_add(t, "memory", pair(mr, ma)) || !kube_json_add(t, "pods", cJSON_CreateNumber(pods)) ||
	    !kube_json_add(t, "maxPods", cJSON_CreateNumber(max_pods))) {
		cJSON_Delete(t);
		cJSON_Delete(a);
		return NULL;
	}
	*totals = t;
	return a;
}

cJSON *sk_dash_state_json(struct sk_dash_queues *q, struct sk_dash_node *nodes, int nnodes, cJSON *recent,
			  const struct sk_decisions_stats *st, bool leading, int64_t time_ns)
{
	cJSON *j = cJSON_CreateObject(), *totals = NULL;
	char when[40];
	kube_time_micro(when, (double)time_ns / 1e9);
	bool ok = j && kube_json_add(j, "type", cJSON_CreateString("state")) && kube_json_add(j, "time", cJSON_CreateString(when)) &&
		  kube_json_add(j, "leading", cJSON_CreateBool(leading)) && kube_json_add(j, "profiles", profiles_json(q)) &&
		  kube_json_add(j, "nodes", nodes_json(nodes, nnodes, &totals)) && kube_json_add(j, "totals", totals) &&
		  (!st || kube_json_add(j, "store", sk_decisions_stats_json(st)));
	if (ok) {
		ok = kube_json_add(j, "recent", recent ? recent : cJSON_CreateArray());
		recent = NULL;
	}
	cJSON_Delete(recent);
	if (!ok) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

cJSON *sk_dash_decisions_json(struct sk_decision *const *v, int n)
{
	cJSON *j = cJSON_CreateObject();
	cJSON *items = j ? cJSON_CreateArray() : NULL;
	if (!j || !kube_json_add(j, "type", cJSON_CreateString("decisions")) || !kube_json_add(j, "items", items)) {
		cJSON_Delete(j);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		cJSON *e = sk_decision_summary_json(v[i]);
		if (!e || !cJSON_AddItemToArray(items, e)) {
			cJSON_Delete(e);
			cJSON_Delete(j);
			return NULL;
		}
	}
	return j;
}
