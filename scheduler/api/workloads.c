/* What upstream computes from its Service, controller and Namespace listers (workloads.h):
 * helper.DefaultSelector for PodTopologySpread's default constraints, and namespace labels for
 * InterPodAffinity's namespaceSelector. Reads objects as served (cJSON) through struct sk_listers. */
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/selector.h"
#include "schedkit/plugin.h"
#include "scheduler/api/workloads.h"

static const struct sk_lister_resource resources[SK_LISTER_NKINDS] = {
	[SK_LISTER_SERVICES] = { "", "v1", "services", "v1", "Service", true },
	[SK_LISTER_REPLICATION_CONTROLLERS] = { "", "v1", "replicationcontrollers", "v1", "ReplicationController", true },
	[SK_LISTER_REPLICA_SETS] = { "apps", "v1", "replicasets", "apps/v1", "ReplicaSet", true },
	[SK_LISTER_STATEFUL_SETS] = { "apps", "v1", "statefulsets", "apps/v1", "StatefulSet", true },
	[SK_LISTER_NAMESPACES] = { "", "v1", "namespaces", "v1", "Namespace", false },
};

const struct sk_lister_resource *sk_lister_resource(enum sk_lister_kind k)
{
	return (unsigned)k < SK_LISTER_NKINDS ? &resources[k] : NULL;
}

int sk_lister_kind_of(const char *api_version, const char *kind)
{
	if (!api_version || !kind)
		return -1;
	for (int k = 0; k < SK_LISTER_NKINDS; k++)
		if (!strcmp(resources[k].api_version, api_version) && !strcmp(resources[k].kind, kind))
			return k;
	return -1;
}

int sk_lister_kind_named(const char *kind)
{
	for (int k = 0; kind && k < SK_LISTER_NKINDS; k++)
		if (!strcmp(resources[k].kind, kind))
			return k;
	return -1;
}

/* ---------- a source over fixed objects ---------- */

static bool object_is(const cJSON *o, enum sk_lister_kind kind, const char *ns)
{
	if (sk_lister_kind_of(kube_obj_get_string(o, "apiVersion"), kube_obj_get_string(o, "kind")) != (int)kind)
		return false;
	if (!resources[kind].namespaced || !ns)
		return true;
	const char *ons = kube_meta_namespace(o);
	return !strcmp(ons && *ons ? ons : "default", ns);
}

static void objects_list(void *ctx, enum sk_lister_kind kind, const char *ns, sk_lister_fn fn, void *u)
{
	const struct sk_object_listers *ol = ctx;
	for (int i = 0; i < ol->n; i++)
		if (object_is(ol->objs[i], kind, ns))
			fn(ol->objs[i], u);
}

static void objects_get(void *ctx, enum sk_lister_kind kind, const char *ns, const char *name, sk_lister_fn fn, void *u)
{
	const struct sk_object_listers *ol = ctx;
	for (int i = 0; i < ol->n; i++) {
		const char *n = kube_meta_name(ol->objs[i]);
		if (n && !strcmp(n, name) && object_is(ol->objs[i], kind, resources[kind].namespaced ? (ns ? ns : "default") : NULL)) {
			fn(ol->objs[i], u);
			return;
		}
	}
}

void sk_object_listers_init(struct sk_object_listers *ol, const cJSON *const *objs, int n)
{
	ol->listers = (struct sk_listers){ .ctx = ol, .list = objects_list, .get = objects_get };
	ol->n = n;
	ol->objs = objs;
}

/* ---------- helper.DefaultSelector ---------- */

struct selector_acc {
	const struct sk_pod *pod;
	cJSON *set;        /* the merged label set (labels.Set) */
	cJSON *rs_selector; /* a ReplicaSet's or StatefulSet's spec.selector (copy), or NULL */
	bool oom;
};

/* labels.Merge(set, m): m's values win. Non-string values are skipped (the API server rejects them). */
static void merge_into(struct selector_acc *a, const cJSON *m)
{
	const cJSON *kv;
	cJSON_ArrayForEach(kv, m)
	{
		if (!cJSON_IsString(kv) || !kv->string)
			continue;
		cJSON *v = cJSON_CreateString(kv->valuestring);
		if (!v) {
			a->oom = true;
			return;
		}
		if (cJSON_GetObjectItemCaseSensitive(a->set, kv->string))
			cJSON_ReplaceItemInObjectCaseSensitive(a->set, kv->string, v);
		else
			cJSON_AddItemToObject(a->set, kv->string, v);
	}
}

/* GetPodServices: a Service selects the pod when every pair of its spec.selector is one of the
 * pod's labels; a nil selector selects nothing, an empty one everything. */
static void service_each(const cJSON *svc, void *u)
{
	struct selector_acc *a = u;
	const cJSON *sel = kube_obj_get(svc, "spec.selector");
	if (!cJSON_IsObject(sel))
		return;
	const cJSON *kv;
	cJSON_ArrayForEach(kv, sel)
	{
		if (!cJSON_IsString(kv) || !kv->string)
			return;
		const char *have = sk_labels_get(&a->pod->labels, kv->string);
		if (!have || strcmp(have, kv->valuestring))
			return;
	}
	merge_into(a, sel);
}

static void rc_each(const cJSON *rc, void *u)
{
	const cJSON *sel = kube_obj_get(rc, "spec.selector");
	if (cJSON_IsObject(sel))
		merge_into(u, sel);
}

static void set_selector_each(const cJSON *obj, void *u)
{
	struct selector_acc *a = u;
	const cJSON *sel = kube_obj_get(obj, "spec.selector");
	if (!cJSON_IsObject(sel))
		return; /* nil: LabelSelectorAsSelector gives Nothing, which has no requirements to add */
	struct kube_label_selector *s = NULL;
	if (kube_label_selector_from_json(sel, &s, NULL) != 0)
		return; /* invalid: upstream skips it */
	kube_label_selector_free(s);
	if (!(a->rs_selector = cJSON_Duplicate(sel, 1)))
		a->oom = true;
}

/* {"matchLabels": set, "matchExpressions": the controller's requirements}: set AND controller. */
static cJSON *combined_selector(const struct selector_acc *a)
{
	cJSON *out = cJSON_CreateObject(), *exprs = cJSON_CreateArray();
	bool ok = out && exprs && cJSON_AddItemToObject(out, "matchExpressions", exprs);
	if (!ok)
		cJSON_Delete(exprs);
	if (ok && !cJSON_AddItemToObject(out, "matchLabels", cJSON_Duplicate(a->set, 1)))
		ok = false;
	const cJSON *ml = a->rs_selector ? cJSON_GetObjectItemCaseSensitive(a->rs_selector, "matchLabels") : NULL;
	const cJSON *kv;
	cJSON_ArrayForEach(kv, ml)
	{
		if (!ok || !cJSON_IsString(kv))
			continue;
		cJSON *e = cJSON_CreateObject(), *vals = cJSON_CreateArray();
		ok = e && vals && cJSON_AddItemToArray(exprs, e) && cJSON_AddStringToObject(e, "key", kv->string) &&
		     cJSON_AddStringToObject(e, "operator", "In") && cJSON_AddItemToObject(e, "values", vals) &&
		     cJSON_AddItemToArray(vals, cJSON_CreateString(kv->valuestring));
	}
	const cJSON *me = a->rs_selector ? cJSON_GetObjectItemCaseSensitive(a->rs_selector, "matchExpressions") : NULL;
	cJSON_ArrayForEach(kv, me)
	{
		if (ok && !cJSON_AddItemToArray(exprs, cJSON_Duplicate(kv, 1)))
			ok = false;
	}
	if (!ok) {
		cJSON_Delete(out);
		return NULL;
	}
	return out;
}

int sk_default_selector(const struct sk_listers *l, const struct sk_pod *pod, struct kube_label_selector **out)
{
	*out = NULL;
	struct selector_acc a = { .pod = pod, .set = cJSON_CreateObject() };
	if (!a.set)
		return -1;
	if (l && l->list)
		l->list(l->ctx, SK_LISTER_SERVICES, pod->ns, service_each, &a);
	int kind = l && l->get && pod->owner_name ? sk_lister_kind_of(pod->owner_api_version, pod->owner_kind) : -1;
	if (kind == SK_LISTER_REPLICATION_CONTROLLERS)
		l->get(l->ctx, SK_LISTER_REPLICATION_CONTROLLERS, pod->ns, pod->owner_name, rc_each, &a);
	else if (kind == SK_LISTER_REPLICA_SETS || kind == SK_LISTER_STATEFUL_SETS)
		l->get(l->ctx, (enum sk_lister_kind)kind, pod->ns, pod->owner_name, set_selector_each, &a);
	int rc = 0;
	cJSON *json = a.oom ? NULL : combined_selector(&a);
	struct kube_label_selector *s = NULL;
	if (!json) {
		rc = -1;
	} else if (kube_label_selector_from_json(json, &s, NULL) != 0) {
		/* a Service's selector value that is no label value: match the set as upstream
		 * (AsSelectorPreValidated), without the controller's requirements */
		if (kube_label_selector_from_map(a.set, &s, NULL) != 0)
			s = NULL;
	}
	if (s && kube_label_selector_is_empty(s)) {
		kube_label_selector_free(s);
		s = NULL;
	}
	*out = s;
	cJSON_Delete(json);
	cJSON_Delete(a.set);
	cJSON_Delete(a.rs_selector);
	return rc;
}

/* ---------- namespaces ---------- */

static int cmp_label(const void *x, const void *y)
{
	return strcmp(((const struct sk_label *)x)->key, ((const struct sk_label *)y)->key);
}

struct labels_acc {
	struct sk_labels *labels;
	bool oom;
};

static void namespace_labels_each(const cJSON *ns, void *u)
{
	struct labels_acc *a = u;
	const cJSON *labels = kube_meta_labels(ns);
	int n = cJSON_GetArraySize(labels);
	if (n <= 0)
		return;
	struct sk_label *items = calloc((size_t)n, sizeof *items);
	if (!items) {
		a->oom = true;
		return;
	}
	int k = 0;
	const cJSON *kv;
	cJSON_ArrayForEach(kv, labels)
	{
		if (!cJSON_IsString(kv) || !kv->string)
			continue;
		items[k].key = sk_intern(kv->string);
		items[k].value = sk_intern(kv->valuestring);
		if (!items[k].key || !items[k].value) {
			free(items);
			a->oom = true;
			return;
		}
		k++;
	}
	qsort(items, (size_t)k, sizeof *items, cmp_label);
	free(a->labels->items);
	a->labels->items = items;
	a->labels->n = k;
}

struct sk_labels *sk_namespace_labels(const struct sk_listers *l, const char *ns)
{
	struct labels_acc a = { .labels = calloc(1, sizeof(struct sk_labels)) };
	if (!a.labels)
		return NULL;
	if (l && l->get && ns)
		l->get(l->ctx, SK_LISTER_NAMESPACES, NULL, ns, namespace_labels_each, &a);
	if (a.oom) {
		sk_labels_free(a.labels);
		return NULL;
	}
	return a.labels;
}

void sk_labels_free(struct sk_labels *l)
{
	if (!l)
		return;
	free(l->items);
	free(l);
}

struct ns_match_acc {
	const struct kube_label_selector *sel;
	const char **names;
	int n, cap;
	bool oom;
};

static void namespace_match_each(const cJSON *ns, void *u)
{
	struct ns_match_acc *a = u;
	const char *name = kube_meta_name(ns);
	if (!name || a->oom || !kube_label_selector_matches_json(a->sel, kube_meta_labels(ns)))
		return;
	if (a->n == a->cap) {
		int nc = a->cap ? 2 * a->cap : 8;
		const char **nn = realloc(a->names, (size_t)nc * sizeof *nn);
		if (!nn) {
			a->oom = true;
			return;
		}
		a->names = nn;
		a->cap = nc;
	}
	if (!(a->names[a->n] = sk_intern(name))) {
		a->oom = true;
		return;
	}
	a->n++;
}

int sk_namespaces_matching(const struct sk_listers *l, const struct kube_label_selector *sel, const char ***out)
{
	*out = NULL;
	struct ns_match_acc a = { .sel = sel };
	if (l && l->list && sel)
		l->list(l->ctx, SK_LISTER_NAMESPACES, NULL, namespace_match_each, &a);
	if (a.oom) {
		free(a.names);
		return -1;
	}
	*out = a.names;
	return a.n;
}
