/* Tests for the shared raw JSON of decoded objects (scheduler/api/raw.c, sk_obj_raw_offer): a
 * decode of the offered object keeps a reference to the offered text instead of printing a copy;
 * any other decode prints its own, with the same bytes when the text is the stripped print.
 * And the binding's echo (sk_pod_decode_echo, scheduler/api/decode.c): taken from the assumed
 * pod and the new text only when that gives exactly what decoding the text gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/informer.h"
#include "kube/selector.h"
#include "scheduler/api/raw.h"

#define POD_JSON \
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\"," \
	"\"managedFields\":[{\"manager\":\"kubectl\"}]},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"," \
	"\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]}}"
#define NODE_JSON \
	"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"managedFields\":[{\"manager\":\"k\"}]}," \
	"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}"

enum offer { OFFER_THIS, OFFER_OTHER, OFFER_NONE };

/* The informer's text of obj: its print with managedFields stripped (the scheduler's transform). */
static struct kube_text *stored_text(const char *json)
{
	cJSON *o = cJSON_Parse(json);
	kube_transform_strip_managed_fields(o, NULL);
	struct kube_text *t = kube_text_adopt(cJSON_PrintUnformatted(o));
	cJSON_Delete(o);
	return t;
}

static void test_decode_shares_offered_text(void **state)
{
	(void)state;
	static const struct { const char *name, *json; bool pod; enum offer offer; bool shared; } cases[] = {
		{ "pod, offered", POD_JSON, true, OFFER_THIS, true },
		{ "pod, another object offered", POD_JSON, true, OFFER_OTHER, false },
		{ "pod, nothing offered", POD_JSON, true, OFFER_NONE, false },
		{ "node, offered", NODE_JSON, false, OFFER_THIS, true },
		{ "node, nothing offered", NODE_JSON, false, OFFER_NONE, false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *obj = cJSON_Parse(cases[i].json), *other = cJSON_Parse(cases[i].json);
		struct kube_text *t = stored_text(cases[i].json);
		if (cases[i].offer != OFFER_NONE)
			sk_obj_raw_offer(cases[i].offer == OFFER_THIS ? obj : other, t);
		char *err = NULL;
		struct sk_pod *p = cases[i].pod ? sk_pod_decode(obj, &err) : NULL;
		struct sk_node *n = cases[i].pod ? NULL : sk_node_decode(obj, &err);
		sk_obj_raw_offer(NULL, NULL);
		if (!p && !n)
			fail_msg("case %s: %s", cases[i].name, err ? err : "decode failed");
		const struct sk_obj_raw *r = p ? sk_pod_raw(p) : sk_node_raw(n);
		if ((r->shared != NULL) != cases[i].shared)
			fail_msg("case %s: shared %d, want %d", cases[i].name, r->shared != NULL, cases[i].shared);
		/* the same bytes either way: the extender wire cannot tell */
		assert_string_equal(r->json, t->s);
		assert_int_equal(r->len, t->len);
		assert_null(strstr(r->json, "managedFields"));
		assert_int_equal(atomic_load(&t->refs), cases[i].shared ? 2 : 1);
		if (cases[i].shared)
			assert_ptr_equal(r->json, t->s);
		if (p) {
			assert_true(sk_pod_limits_name(p, "cpu"));
			char *wire = sk_pod_raw_json(p);
			assert_string_equal(wire, t->s);
			free(wire);
		}
		sk_pod_unref(p);
		sk_node_unref(n);
		assert_int_equal(atomic_load(&t->refs), 1); /* the decoded view's reference is gone */
		kube_text_unref(t);
		cJSON_Delete(obj);
		cJSON_Delete(other);
		free(err);
	}
}

/* sk_obj_raw_offer_none: the decode of that object (only) keeps no JSON, everything else as a
 * decode that prints; the next offer replaces it, and once withdrawn the same object prints
 * again (no state left on the thread). */
static void test_decode_offer_none(void **state)
{
	(void)state;
	enum step { NONE_THIS, NONE_OTHER, NONE_THEN_TEXT, NONE_WITHDRAWN, NONE_NULL };
	static const struct { const char *name; enum step step; bool kept, shared; } cases[] = {
		{ "none for this object", NONE_THIS, false, false },
		{ "none for another object", NONE_OTHER, true, false },
		{ "none, then the text offered", NONE_THEN_TEXT, true, true },
		{ "none, withdrawn", NONE_WITHDRAWN, true, false },
		{ "none for NULL", NONE_NULL, true, false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *obj = cJSON_Parse(POD_JSON), *other = cJSON_Parse(POD_JSON);
		struct kube_text *t = stored_text(POD_JSON);
		char *err = NULL;
		struct sk_pod *want = sk_pod_decode(obj, &err); /* nothing offered: prints */
		assert_non_null(want);
		sk_obj_raw_offer_none(cases[i].step == NONE_OTHER ? other : cases[i].step == NONE_NULL ? NULL : obj);
		if (cases[i].step == NONE_THEN_TEXT)
			sk_obj_raw_offer(obj, t);
		else if (cases[i].step == NONE_WITHDRAWN)
			sk_obj_raw_offer(NULL, NULL);
		struct sk_pod *p = sk_pod_decode(obj, &err);
		sk_obj_raw_offer(NULL, NULL);
		if (!p)
			fail_msg("case %s: %s", cases[i].name, err ? err : "decode failed");
		const struct sk_obj_raw *r = sk_pod_raw(p);
		if ((r->json != NULL) != cases[i].kept || (r->shared != NULL) != cases[i].shared)
			fail_msg("case %s: kept %d shared %d, want %d %d", cases[i].name, r->json != NULL, r->shared != NULL,
				 cases[i].kept, cases[i].shared);
		if (cases[i].kept)
			assert_string_equal(r->json, t->s);
		else
			assert_int_equal(r->len, 0);
		char *wire = sk_pod_raw_json(p);
		if (cases[i].kept)
			assert_string_equal(wire, t->s);
		else
			assert_null(wire);
		free(wire);
		/* the view itself is the same either way */
		assert_string_equal(p->uid, want->uid);
		assert_string_equal(p->name, want->name);
		assert_ptr_equal(p->node_name, want->node_name);
		assert_ptr_equal(r->node_name, sk_pod_raw(want)->node_name);
		assert_true(sk_pod_limits_name(p, "cpu"));
		assert_false(sk_pod_limits_name(p, "memory"));
		/* a copy of a view without JSON has none either, and keeps the node name it is given */
		struct sk_pod *copy = sk_pod_with_node(p, "n2");
		assert_non_null(copy);
		wire = sk_pod_raw_json(copy);
		if (cases[i].kept)
			assert_non_null(strstr(wire, "\"nodeName\":\"n2\""));
		else
			assert_null(wire);
		free(wire);
		sk_pod_unref(copy);
		sk_pod_unref(p);
		/* nothing left on the thread: the same object decodes with its own print again */
		p = sk_pod_decode(obj, &err);
		assert_non_null(p);
		assert_non_null(sk_pod_raw(p)->json);
		assert_null(sk_pod_raw(p)->shared);
		assert_string_equal(sk_pod_raw(p)->json, t->s);
		sk_pod_unref(p);
		sk_pod_unref(want);
		assert_int_equal(atomic_load(&t->refs), 1);
		kube_text_unref(t);
		cJSON_Delete(obj);
		cJSON_Delete(other);
		free(err);
	}
}


/* ---------- the binding's echo ---------- */

/* The decoded view of text, sharing it (as the daemon's handlers decode informer objects). */
static struct sk_pod *decode_text(struct kube_text *t)
{
	cJSON *o = cJSON_ParseWithLength(t->s, t->len);
	if (!o)
		return NULL;
	sk_obj_raw_offer(o, t);
	char *err = NULL;
	struct sk_pod *p = sk_pod_decode(o, &err);
	sk_obj_raw_offer(NULL, NULL);
	free(err);
	cJSON_Delete(o);
	return p;
}

static bool str_eq(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static bool selectors_eq(const struct kube_label_selector *a, const struct kube_label_selector *b)
{
	if (!a || !b)
		return a == b;
	char *sa = kube_label_selector_string(a), *sb = kube_label_selector_string(b);
	bool eq = str_eq(sa, sb) && kube_label_selector_equal(a, b);
	free(sa);
	free(sb);
	return eq;
}

static bool terms_eq(const struct sk_affinity_term *a, const struct sk_affinity_term *b, int n)
{
	for (int i = 0; i < n; i++) {
		if (!selectors_eq(a[i].selector, b[i].selector) || !selectors_eq(a[i].ns_selector, b[i].ns_selector) ||
		    a[i].nnamespaces != b[i].nnamespaces || a[i].topology_key != b[i].topology_key || a[i].weight != b[i].weight)
			return false;
		for (int k = 0; k < a[i].nnamespaces; k++)
			if (a[i].namespaces[k] != b[i].namespaces[k])
				return false;
	}
	return true;
}

static bool resources_eq(const struct sk_resource *a, const struct sk_resource *b)
{
	if (a->milli_cpu != b->milli_cpu || a->memory != b->memory || a->ephemeral_storage != b->ephemeral_storage ||
	    a->allowed_pod_number != b->allowed_pod_number || a->nscalar != b->nscalar)
		return false;
	for (int i = 0; i < a->nscalar; i++)
		if (strcmp(a->scalar[i].name, b->scalar[i].name) != 0 || a->scalar[i].value != b->scalar[i].value)
			return false;
	return true;
}

/* Every field sk_pod carries, and the kept object: the first that differs, or NULL. Interned
 * strings compare by pointer. */
static const char *pod_diff(const struct sk_pod *a, const struct sk_pod *b)
{
#define SAME(cond, what) \
	if (!(cond))     \
		return what
	SAME(str_eq(a->ns, b->ns) && str_eq(a->name, b->name) && str_eq(a->uid, b->uid), "identity");
	SAME(str_eq(a->resource_version, b->resource_version), "resource_version");
	SAME(a->scheduler_name == b->scheduler_name, "scheduler_name");
	SAME(a->node_name == b->node_name, "node_name");
	SAME(a->nominated_node_name == b->nominated_node_name, "nominated_node_name");
	SAME(a->phase == b->phase, "phase");
	SAME(a->priority == b->priority && a->preempt_never == b->preempt_never, "priority");
	SAME(a->terminating == b->terminating && a->creation_time == b->creation_time, "times");
	SAME(sk_labels_equal(&a->labels, &b->labels), "labels");
	SAME(a->owner_kind == b->owner_kind && a->owner_uid == b->owner_uid && a->owner_name == b->owner_name &&
		     a->owner_api_version == b->owner_api_version,
	     "owner");
	SAME(resources_eq(&a->requests, &b->requests), "requests");
	SAME(a->non_zero_milli_cpu == b->non_zero_milli_cpu && a->non_zero_memory == b->non_zero_memory &&
		     a->requests_nothing == b->requests_nothing,
	     "non-zero requests");
	SAME(sk_labels_equal(&a->node_selector, &b->node_selector), "node_selector");
	SAME((a->required_affinity != NULL) == (b->required_affinity != NULL) &&
		     (a->preferred_affinity != NULL) == (b->preferred_affinity != NULL),
	     "node affinity");
	SAME(sk_tolerations_equal(a, b), "tolerations");
	SAME(a->nhost_ports == b->nhost_ports, "host ports");
	for (int i = 0; i < a->nhost_ports; i++)
		SAME(a->host_ports[i].host_ip == b->host_ports[i].host_ip && a->host_ports[i].protocol == b->host_ports[i].protocol &&
			     a->host_ports[i].port == b->host_ports[i].port,
		     "host port");
	SAME(a->naffinity == b->naffinity && a->nanti_affinity == b->nanti_affinity &&
		     a->npreferred_affinity == b->npreferred_affinity && a->npreferred_anti_affinity == b->npreferred_anti_affinity,
	     "pod affinity counts");
	SAME(terms_eq(a->affinity, b->affinity, a->naffinity) && terms_eq(a->anti_affinity, b->anti_affinity, a->nanti_affinity) &&
		     terms_eq(a->preferred_affinity_terms, b->preferred_affinity_terms, a->npreferred_affinity) &&
		     terms_eq(a->preferred_anti_affinity_terms, b->preferred_anti_affinity_terms, a->npreferred_anti_affinity),
	     "pod affinity terms");
	SAME(a->nspread == b->nspread, "spread count");
	for (int i = 0; i < a->nspread; i++)
		SAME(a->spread[i].max_skew == b->spread[i].max_skew && a->spread[i].topology_key == b->spread[i].topology_key &&
			     a->spread[i].when_unsatisfiable == b->spread[i].when_unsatisfiable &&
			     selectors_eq(a->spread[i].selector, b->spread[i].selector) &&
			     a->spread[i].min_domains == b->spread[i].min_domains &&
			     a->spread[i].node_affinity_policy_ignore == b->spread[i].node_affinity_policy_ignore &&
			     a->spread[i].node_taints_policy_honor == b->spread[i].node_taints_policy_honor,
		     "spread");
	SAME(a->nimages == b->nimages && a->ncontainers == b->ncontainers, "images");
	for (int i = 0; i < a->nimages; i++)
		SAME(a->images[i] == b->images[i], "image");
	SAME(a->nscheduling_gates == b->nscheduling_gates, "gates");
	for (int i = 0; i < a->nscheduling_gates; i++)
		SAME(a->scheduling_gates[i] == b->scheduling_gates[i], "gate");
	SAME(a->npvcs == b->npvcs, "pvcs");
	for (int i = 0; i < a->npvcs; i++)
		SAME(a->pvc_names[i] == b->pvc_names[i], "pvc");
	SAME(a->host_network == b->host_network, "host_network");
	SAME(a->nvolumes == b->nvolumes, "volumes");
	for (int i = 0; i < a->nvolumes; i++)
		SAME(a->volumes[i].name == b->volumes[i].name && a->volumes[i].source == b->volumes[i].source &&
			     a->volumes[i].claim == b->volumes[i].claim && a->volumes[i].id == b->volumes[i].id &&
			     a->volumes[i].read_only == b->volumes[i].read_only,
		     "volume");
	const struct sk_obj_raw *ra = sk_pod_raw(a), *rb = sk_pod_raw(b);
	SAME(ra->len == rb->len && memcmp(ra->json, rb->json, ra->len) == 0, "kept object");
	SAME(ra->node_name == rb->node_name && ra->nlimit_names == rb->nlimit_names, "kept object's node and limits");
	for (int i = 0; i < ra->nlimit_names; i++)
		SAME(ra->limit_names[i] == rb->limit_names[i], "limit name");
	char *wa = sk_pod_raw_json(a), *wb = sk_pod_raw_json(b);
	bool wire = str_eq(wa, wb);
	free(wa);
	free(wb);
	SAME(wire, "extender wire JSON");
	return NULL;
#undef SAME
}

#define ECHO_POD_MIN                                                                                                   \
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"uid\":\"u-a\","        \
	"\"resourceVersion\":\"10\",\"creationTimestamp\":\"2026-12-02T06:00:00Z\"},\"spec\":{\"containers\":[{\"name\":"  \
	"\"c\",\"image\":\"img\"}],\"schedulerName\":\"default-scheduler\"},\"status\":{\"phase\":\"Pending\"}}"
#define ECHO_POD_RICH                                                                                                  \
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-1\",\"namespace\":\"prod\",\"uid\":\"u-w\","   \
	"\"resourceVersion\":\"41\",\"labels\":{\"app\":\"web\",\"tier\":\"fe\"},\"annotations\":{\"note\":\"a \\u0026 b\"}," \
	"\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web\",\"uid\":\"rs-1\","       \
	"\"controller\":true}]},\"spec\":{\"priority\":7,\"preemptionPolicy\":\"Never\",\"schedulerName\":\"default-sch"   \
	"eduler\",\"nodeSelector\":{\"disk\":\"ssd\"},\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredD"   \
	"uringExecution\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":"  \
	"[\"a\",\"b\"]}]}]}},\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":"  \
	"{\"matchLabels\":{\"app\":\"web\"}},\"topologyKey\":\"kubernetes.io/hostname\"}]}},\"tolerations\":[{\"key\":"   \
	"\"k\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}],\"topologySpreadConstraints\":[{\"maxSkew\":1,"         \
	"\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{\"app\":"     \
	"\"web\"}}}],\"initContainers\":[{\"name\":\"init\",\"image\":\"busybox\",\"resources\":{\"requests\":{\"cpu\":"   \
	"\"2\"}}}],\"containers\":[{\"name\":\"web\",\"image\":\"nginx:1.27\",\"ports\":[{\"containerPort\":80,"            \
	"\"hostPort\":8080}],\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"64Mi\",\"example.com/gpu\":\"1\"},"  \
	"\"limits\":{\"example.com/gpu\":\"1\"}}}],\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":" \
	"\"data-web-1\"}}]},\"status\":{\"phase\":\"Pending\",\"nominatedNodeName\":\"n0\",\"conditions\":[{\"type\":"      \
	"\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}]}}"
#define ECHO_POD_NO_STATUS                                                                                             \
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\",\"uid\":\"u-b\","        \
	"\"resourceVersion\":\"3\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"img\"}]}}"

/* What the local API server's binding does to a pod (e2e/apiserver/handlers.c, do_bind, as
 * upstream's pods/binding): spec.nodeName, a new resourceVersion, PodScheduled=True. */
static cJSON *bind_tree(const char *json, const char *node, const char *rv)
{
	cJSON *o = cJSON_Parse(json);
	cJSON *meta = cJSON_GetObjectItem(o, "metadata"), *spec = cJSON_GetObjectItem(o, "spec");
	cJSON_ReplaceItemInObject(meta, "resourceVersion", cJSON_CreateString(rv)); /* present in every base */
	if (cJSON_GetObjectItem(spec, "nodeName"))
		cJSON_ReplaceItemInObject(spec, "nodeName", cJSON_CreateString(node));
	else
		cJSON_AddStringToObject(spec, "nodeName", node);
	cJSON *status = cJSON_GetObjectItem(o, "status");
	if (!status)
		status = cJSON_AddObjectToObject(o, "status");
	cJSON *conds = cJSON_GetObjectItem(status, "conditions");
	if (!conds)
		conds = cJSON_AddArrayToObject(status, "conditions");
	cJSON *c = NULL, *it;
	cJSON_ArrayForEach(it, conds) if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(it, "type")), "PodScheduled")) c = it;
	if (!c) {
		c = cJSON_CreateObject();
		cJSON_AddItemToArray(conds, c);
		cJSON_AddStringToObject(c, "type", "PodScheduled");
	}
	cJSON_DeleteItemFromObject(c, "status");
	cJSON_DeleteItemFromObject(c, "reason");
	cJSON_AddStringToObject(c, "status", "True");
	return o;
}

/* obj[key] = item: in place when present, else added (cJSON_ReplaceItemInObject alone would
 * leave item unowned when key is absent). */
static void set_member(cJSON *obj, const char *key, cJSON *item)
{
	if (cJSON_GetObjectItem(obj, key))
		cJSON_ReplaceItemInObject(obj, key, item);
	else
		cJSON_AddItemToObject(obj, key, item);
}

enum echo_mut {
	M_NONE, M_LABEL, M_REQUEST, M_SCHEDULER, M_PHASE, M_NOMINATED, M_DELETING, M_RESIZE_PENDING, M_ANNOTATION,
	M_NODE_EMPTY, M_NODE_NUMBER, M_RV_NUMBER, M_NO_NODE, M_CONDITIONS_ONLY, M_PRIORITY,
	/* on the text */
	M_DUP_NODE, M_ESCAPED_KEY, M_TRUNCATED, M_MEMBER_MOVED,
};

static void mutate_tree(cJSON *o, enum echo_mut m)
{
	cJSON *meta = cJSON_GetObjectItem(o, "metadata"), *spec = cJSON_GetObjectItem(o, "spec");
	cJSON *status = cJSON_GetObjectItem(o, "status");
	switch (m) {
	case M_LABEL: {
		cJSON *l = cJSON_GetObjectItem(meta, "labels");
		if (!l)
			l = cJSON_AddObjectToObject(meta, "labels");
		cJSON_AddStringToObject(l, "new", "x");
		break;
	}
	case M_REQUEST: {
		cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "containers"), 0);
		cJSON_DeleteItemFromObject(c, "resources");
		cJSON *res = cJSON_AddObjectToObject(c, "resources");
		cJSON_AddStringToObject(cJSON_AddObjectToObject(res, "requests"), "cpu", "3");
		break;
	}
	case M_SCHEDULER:
		cJSON_DeleteItemFromObject(spec, "schedulerName");
		cJSON_AddStringToObject(spec, "schedulerName", "other");
		break;
	case M_PHASE:
		set_member(status, "phase", cJSON_CreateString("Running"));
		break;
	case M_NOMINATED:
		cJSON_DeleteItemFromObject(status, "nominatedNodeName");
		cJSON_AddStringToObject(status, "nominatedNodeName", "n9");
		break;
	case M_DELETING:
		cJSON_AddStringToObject(meta, "deletionTimestamp", "2026-12-02T07:00:00Z");
		break;
	case M_RESIZE_PENDING: {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", "PodResizePending");
		cJSON_AddStringToObject(c, "reason", "Infeasible");
		cJSON_AddItemToArray(cJSON_GetObjectItem(status, "conditions"), c);
		break;
	}
	case M_ANNOTATION: {
		cJSON *a = cJSON_GetObjectItem(meta, "annotations");
		if (!a)
			a = cJSON_AddObjectToObject(meta, "annotations");
		cJSON_AddStringToObject(a, "k", "v");
		break;
	}
	case M_NODE_EMPTY:
		set_member(spec, "nodeName", cJSON_CreateString(""));
		break;
	case M_NODE_NUMBER:
		set_member(spec, "nodeName", cJSON_CreateNumber(5));
		break;
	case M_RV_NUMBER:
		set_member(meta, "resourceVersion", cJSON_CreateNumber(12));
		break;
	case M_NO_NODE:
		cJSON_DeleteItemFromObject(spec, "nodeName");
		break;
	case M_CONDITIONS_ONLY: {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", "Ready");
		cJSON_AddItemToArray(cJSON_GetObjectItem(status, "conditions"), c);
		break;
	}
	case M_PRIORITY:
		cJSON_DeleteItemFromObject(spec, "priority");
		cJSON_AddNumberToObject(spec, "priority", 8);
		break;
	default:
		break;
	}
}

/* A copy of s with the first `from` replaced by `to` (or s cut to half its length: to NULL). */
static char *edit_text(const char *s, const char *from, const char *to)
{
	size_t n = strlen(s);
	char *out = malloc(n + (to ? strlen(to) : 0) + 1);
	const char *at = from ? strstr(s, from) : NULL;
	if (!to) {
		memcpy(out, s, n / 2);
		out[n / 2] = 0;
	} else if (at) {
		sprintf(out, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
	} else {
		strcpy(out, s);
	}
	return out;
}

static void test_decode_echo(void **state)
{
	(void)state;
	static const struct { const char *name, *json; } pods[] = {
		{ "minimal", ECHO_POD_MIN },
		{ "rich", ECHO_POD_RICH },
		{ "no status", ECHO_POD_NO_STATUS },
	};
	/* echo: 1 must be taken, 0 must not, -1 either (then it equals the decode) */
	static const struct { enum echo_mut m; int echo[3]; } muts[] = {
		{ M_NONE, { 1, 1, 0 } }, /* "no status": the binding adds status {} around the conditions */
		{ M_CONDITIONS_ONLY, { 1, 1, 0 } },
		{ M_LABEL, { 0, 0, 0 } },
		{ M_REQUEST, { 0, 0, 0 } },
		{ M_SCHEDULER, { 0, 0, 0 } },
		{ M_PHASE, { 0, 0, 0 } },
		{ M_NOMINATED, { 0, 0, 0 } },
		{ M_DELETING, { 0, 0, 0 } },
		{ M_RESIZE_PENDING, { 0, 0, 0 } },
		{ M_ANNOTATION, { 0, 0, 0 } },
		{ M_PRIORITY, { 0, 0, 0 } },
		{ M_NODE_EMPTY, { 0, 0, 0 } },
		{ M_NODE_NUMBER, { 0, 0, 0 } },
		{ M_RV_NUMBER, { 0, 0, 0 } },
		{ M_NO_NODE, { 0, 0, 0 } },
		{ M_DUP_NODE, { 0, 0, 0 } },
		{ M_ESCAPED_KEY, { 0, 0, 0 } },
		{ M_TRUNCATED, { 0, 0, 0 } },
		{ M_MEMBER_MOVED, { 0, 0, 0 } },
	};
	for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++)
		for (size_t k = 0; k < sizeof(muts) / sizeof(muts[0]); k++) {
			/* the text the pod was decoded from, printed as the echo will be (a server prints
			 * both with one encoder) */
			cJSON *base = cJSON_Parse(pods[i].json);
			struct kube_text *was = kube_text_adopt(cJSON_PrintUnformatted(base));
			cJSON_Delete(base);
			struct sk_pod *root = decode_text(was);
			if (!root)
				fail_msg("%s: the base does not decode", pods[i].name);
			struct sk_pod *assumed = sk_pod_with_node(root, "n1");
			cJSON *o = bind_tree(pods[i].json, "n1", "977");
			mutate_tree(o, muts[k].m);
			char *printed = cJSON_PrintUnformatted(o), *json = printed;
			cJSON_Delete(o);
			if (muts[k].m == M_DUP_NODE)
				json = edit_text(printed, "\"nodeName\":\"n1\"", "\"nodeName\":\"n1\",\"nodeName\":\"n2\"");
			else if (muts[k].m == M_ESCAPED_KEY)
				json = edit_text(printed, "\"nodeName\":\"n1\"", "\"node\\u004eame\":\"n2\",\"nodeName\":\"n1\"");
			else if (muts[k].m == M_TRUNCATED)
				json = edit_text(printed, NULL, NULL);
			else if (muts[k].m == M_MEMBER_MOVED)
				json = edit_text(printed, "\"kind\":\"Pod\",\"apiVersion\":\"v1\"", "\"apiVersion\":\"v1\",\"kind\":\"Pod\"");
			if (json != printed)
				free(printed);
			struct kube_text *now = kube_text_adopt(json);
			struct sk_pod *echo = sk_pod_decode_echo(assumed, now, NULL);
			struct sk_pod *want = decode_text(now);
			int expect = muts[k].echo[i];
			if (expect >= 0 && (echo != NULL) != (expect == 1))
				fail_msg("%s, mutation %zu: echo %s, want %s", pods[i].name, k, echo ? "taken" : "refused",
					 expect ? "taken" : "refused");
			if (echo) {
				assert_non_null(want);
				const char *diff = pod_diff(echo, want);
				if (diff)
					fail_msg("%s, mutation %zu: the echo differs from the decode in %s", pods[i].name, k, diff);
				/* the echo keeps the new text, shared */
				assert_ptr_equal(sk_pod_raw(echo)->json, now->s);
				/* a copy of it (assume again, preemption) outlives it */
				struct sk_pod *copy = sk_pod_with_node(echo, "n2");
				sk_pod_unref(echo);
				echo = NULL;
				assert_string_equal(copy->resource_version, "977");
				assert_ptr_equal(sk_pod_raw(copy)->json, now->s);
				sk_pod_unref(copy);
			}
			sk_pod_unref(echo);
			sk_pod_unref(want);
			sk_pod_unref(assumed);
			sk_pod_unref(root);
			assert_int_equal(atomic_load(&now->refs), 1);
			assert_int_equal(atomic_load(&was->refs), 1);
			kube_text_unref(now);
			kube_text_unref(was);
		}
}

/* Nothing to compare with: no kept object, no text, no base. */
static void test_decode_echo_without_base(void **state)
{
	(void)state;
	struct kube_text *t = kube_text_new(ECHO_POD_MIN, strlen(ECHO_POD_MIN));
	assert_null(sk_pod_decode_echo(NULL, t, NULL));
	cJSON *o = cJSON_Parse(ECHO_POD_MIN);
	char *err = NULL;
	struct sk_pod *p = sk_pod_decode(o, &err); /* kept as a print: the same bytes here */
	assert_non_null(p);
	assert_null(sk_pod_decode_echo(p, NULL, NULL));
	struct sk_pod *same = sk_pod_decode_echo(p, t, NULL); /* no nodeName in t */
	assert_null(same);
	sk_pod_unref(p);
	cJSON_Delete(o);
	kube_text_unref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_shares_offered_text),
		cmocka_unit_test(test_decode_offer_none),
		cmocka_unit_test(test_decode_echo),
		cmocka_unit_test(test_decode_echo_without_base),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
