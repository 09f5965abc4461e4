/* NodeResourcesFit (PreFilter, Filter, PreScore, Score) and NodeResourcesFitArgs (pkg/scheduler/framework/plugins/noderesources/fit.go,
 * pkg/scheduler/apis/config/validation/validation_pluginargs.go): the node must have room for the pod's requests; nodes are scored by
 * LeastAllocated, MostAllocated or RequestedToCapacityRatio over the args' resources.
 * Instances borrow their args (the config outlives the framework). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/args.h"
#include "schedkit/plugin.h"
#include "schedkit/resource_allocation.h"

enum fit_strategy { FIT_LEAST_ALLOCATED = 0, FIT_MOST_ALLOCATED, FIT_REQUESTED_TO_CAPACITY_RATIO };
static const char *const strategy_names[] = { "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", NULL };

struct shape_point {
	int64_t utilization, score;
};

struct fit_args {
	int nignored, nignored_groups;
	char **ignored, **ignored_groups;
	enum fit_strategy strategy;
	int nresources;
	struct sk_resource_spec *resources;
	struct sk_scored_resource *scored; /* resources resolved for scoring */
	bool has_rtc;                 /* requestedToCapacityRatio given */
	int nshape;
	struct shape_point *shape;    /* as configured (scores 0..10) */
};

/* ---------- args ---------- */

static void free_strings(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static void fit_args_free(void *p)
{
	struct fit_args *a = p;
	if (!a)
		return;
	free_strings(a->ignored, a->nignored);
	free_strings(a->ignored_groups, a->nignored_groups);
	sk_resource_specs_free(a->resources, a->nresources);
	free(a->scored);
	free(a->shape);
	free(a);
}

static int decode_strings(const cJSON *obj, const char *field, const char *path, char ***out, int *n,
			  struct sk_errors *e)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, field);
	if (!arr || cJSON_IsNull(arr))
		return 0;
	char *fp = sk_path_child(path, field);
	if (!fp)
		return -1;
	if (!cJSON_IsArray(arr)) {
		sk_errors_addf(e, "%s: Invalid type: expected array of strings", fp);
		free(fp);
		return -1;
	}
	int cnt = cJSON_GetArraySize(arr), i = 0, rc = 0;
	char **v = calloc(cnt ? (size_t)cnt : 1, sizeof(*v));
	if (!v) {
		free(fp);
		return -1;
	}
	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		if (!cJSON_IsString(it)) {
			sk_errors_addf(e, "%s[%d]: Invalid type: expected string", fp, i);
			rc = -1;
			v[i] = NULL;
			continue;
		}
		if (!(v[i] = strdup(it->valuestring)))
			rc = -1;
	}
	free(fp);
	if (rc < 0) {
		free_strings(v, cnt);
		return -1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

static int decode_shape(const cJSON *arr, const char *path, struct shape_point **out, int *n, struct sk_errors *e)
{
	static const char *const fields[] = { "utilization", "score", NULL };
	*out = NULL;
	*n = 0;
	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr)) {
		sk_errors_addf(e, "%s: Invalid type: expected array", path);
		return -1;
	}
	int cnt = cJSON_GetArraySize(arr), i = 0, rc = 0;
	struct shape_point *pts = calloc(cnt ? (size_t)cnt : 1, sizeof(*pts));
	if (!pts)
		return -1;
	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char *p = sk_path_index(path, i);
		if (!p || sk_json_check_object(it, p, fields, false, e) < 0 ||
		    sk_json_int(it, "utilization", p, INT32_MIN, INT32_MAX, &pts[i].utilization, NULL, e) < 0 ||
		    sk_json_int(it, "score", p, INT32_MIN, INT32_MAX, &pts[i].score, NULL, e) < 0)
			rc = -1;
		free(p);
	}
	if (rc < 0) {
		free(pts);
		return -1;
	}
	*out = pts;
	*n = cnt;
	return 0;
}

/* validateFunctionShape (validation_pluginargs.go). */
static int validate_shape(const struct shape_point *pts, int n, const char *path, struct sk_errors *e)
{
	int rc = 0;
	char buf[64];
	if (n == 0) {
		sk_err_required(e, path, "at least one point must be specified");
		return -1;
	}
	for (int i = 1; i < n; i++) {
		if (pts[i - 1].utilization >= pts[i].utilization) {
			char *p = sk_path_index(path, i), *pu = sk_path_child(p, "utilization");
			sk_err_invalid_int(e, pu ? pu : path, pts[i].utilization, "values must be sorted in increasing order");
			free(p);
			free(pu);
			rc = -1;
			break;
		}
	}
	for (int i = 0; i < n; i++) {
		char *p = sk_path_index(path, i);
		if (pts[i].utilization < 0 || pts[i].utilization > 100) {
			char *pu = sk_path_child(p, "utilization");
			snprintf(buf, sizeof(buf), "not in valid range [%d, %d]", 0, 100);
			sk_err_invalid_int(e, pu ? pu : path, pts[i].utilization, buf);
			free(pu);
			rc = -1;
		}
		if (pts[i].score < 0 || pts[i].score > 10) {
			char *ps = sk_path_child(p, "score");
			snprintf(buf, sizeof(buf), "not in valid range [%d, %d]", 0, 10);
			sk_err_invalid_int(e, ps ? ps : path, pts[i].score, buf);
			free(ps);
			rc = -1;
		}
		free(p);
	}
	return rc;
}

static int set_default_resources(struct fit_args *a)
{
	a->resources = calloc(2, sizeof(*a->resources));
	if (!a->resources)
		return -1;
	a->nresources = 2;
	a->resources[0] = (struct sk_resource_spec){ strdup(SK_RESOURCE_CPU), 1 };
	a->resources[1] = (struct sk_resource_spec){ strdup(SK_RESOURCE_MEMORY), 1 };
	return (a->resources[0].name && a->resources[1].name) ? 0 : -1;
}

static int fit_args_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "ignoredResources", "ignoredResourceGroups", "scoringStrategy", NULL };
	static const char *const strategy_fields[] = { "type", "resources", "requestedToCapacityRatio", NULL };
	static const char *const rtc_fields[] = { "shape", NULL };
	struct fit_args *a = calloc(1, sizeof(*a));
	char *sp = sk_path_child(path, "scoringStrategy");
	char *rtcp = sk_path_child(sp, "requestedToCapacityRatio");
	char *shp = sk_path_child(sp, "shape"); /* validation path (validateFunctionShape) */
	char *dshp = sk_path_child(rtcp, "shape"); /* decoding path */
	char *resp = sk_path_child(sp, "resources");
	char *typep = sk_path_child(sp, "type");
	char *type = NULL;
	int rc = 0;
	if (!a || !sp || !rtcp || !shp || !dshp || !resp || !typep) {
		sk_errors_addf(e, "%s: out of memory", path);
		rc = -1;
		goto out;
	}
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "NodeResourcesFitArgs", path, e) < 0) {
		rc = -1;
		goto out;
	}
	if (json && (decode_strings(json, "ignoredResources", path, &a->ignored, &a->nignored, e) < 0 ||
		     decode_strings(json, "ignoredResourceGroups", path, &a->ignored_groups, &a->nignored_groups, e) < 0))
		rc = -1;
	const cJSON *st = json ? cJSON_GetObjectItemCaseSensitive(json, "scoringStrategy") : NULL;
	if (st && cJSON_IsNull(st))
		st = NULL;
	if (st) {
		if (sk_json_check_object(st, sp, strategy_fields, false, e) < 0 ||
		    sk_json_string(st, "type", sp, &type, NULL, e) < 0 ||
		    sk_resource_specs_decode(cJSON_GetObjectItemCaseSensitive(st, "resources"), resp, &a->resources,
					     &a->nresources, e) < 0) {
			rc = -1;
			goto out;
		}
		const cJSON *rtc = cJSON_GetObjectItemCaseSensitive(st, "requestedToCapacityRatio");
		if (rtc && !cJSON_IsNull(rtc)) {
			a->has_rtc = true;
			if (sk_json_check_object(rtc, rtcp, rtc_fields, false, e) < 0 ||
			    decode_shape(cJSON_GetObjectItemCaseSensitive(rtc, "shape"), dshp, &a->shape, &a->nshape, e) < 0) {
				rc = -1;
				goto out;
			}
		}
	}
	if (rc < 0)
		goto out;

	/* SetDefaults_NodeResourcesFitArgs */
	if (!type && !(type = strdup(st ? "" : "LeastAllocated"))) {
		rc = -1;
		goto out;
	}
	if (a->nresources == 0 && set_default_resources(a) < 0) {
		rc = -1;
		goto out;
	}
	for (int i = 0; i < a->nresources; i++)
		if (a->resources[i].weight == 0)
			a->resources[i].weight = 1;

	/* ValidateNodeResourcesFitArgs */
	for (int i = 0; i < a->nignored; i++) {
		char *p = sk_path_child(path, "ignoredResources"), *pi = sk_path_index(p, i);
		if (sk_validate_label_name(e, pi ? pi : path, a->ignored[i]) < 0)
			rc = -1;
		free(p);
		free(pi);
	}
	for (int i = 0; i < a->nignored_groups; i++) {
		char *p = sk_path_child(path, "ignoredResourceGroups"), *pi = sk_path_index(p, i);
		if (strchr(a->ignored_groups[i], '/')) {
			sk_err_invalid_str(e, pi ? pi : path, a->ignored_groups[i], "resource group name can't contain '/'");
			rc = -1;
		}
		if (sk_validate_label_name(e, pi ? pi : path, a->ignored_groups[i]) < 0)
			rc = -1;
		free(p);
		free(pi);
	}
	int found = -1;
	for (int i = 0; strategy_names[i]; i++)
		if (!strcmp(type, strategy_names[i]))
			found = i;
	if (found < 0) {
		static const char *const sorted[] = { "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", NULL };
		sk_err_unsupported(e, typep, type, sorted);
		rc = -1;
	} else {
		a->strategy = (enum fit_strategy)found;
	}
	for (int i = 0; i < a->nresources; i++) {
		if (a->resources[i].weight <= 0 || a->resources[i].weight > 100) {
			char *pi = sk_path_index(resp, i), *pw = sk_path_child(pi, "weight"), *msg = NULL;
			if (asprintf(&msg, "resource weight of %s not in valid range (0, 100]", a->resources[i].name) < 0)
				msg = NULL;
			sk_err_invalid_int(e, pw ? pw : resp, a->resources[i].weight, msg ? msg : "not in valid range (0, 100]");
			free(msg);
			free(pi);
			free(pw);
			rc = -1;
		}
	}
	/* Upstream validates the shape whenever requestedToCapacityRatio is given, whatever the type
	 * (it is then unused), and reports it under scoringStrategy.shape, not under
	 * scoringStrategy.requestedToCapacityRatio.shape. */
	if (a->has_rtc && validate_shape(a->shape, a->nshape, shp, e) < 0)
		rc = -1;
	/* Upstream accepts type RequestedToCapacityRatio without requestedToCapacityRatio and then
	 * dereferences nil in NewFit; reject it here with a field error instead. */
	if (found == FIT_REQUESTED_TO_CAPACITY_RATIO && !a->has_rtc) {
		sk_err_required(e, rtcp, "must be specified when type is RequestedToCapacityRatio");
		rc = -1;
	}
	if (rc == 0 && !(a->scored = sk_scored_resources_new(a->resources, a->nresources))) {
		sk_errors_addf(e, "%s: out of memory", path);
		rc = -1;
	}
out:
	free(sp);
	free(rtcp);
	free(shp);
	free(dshp);
	free(resp);
	free(typep);
	free(type);
	if (rc < 0) {
		fit_args_free(a);
		return -1;
	}
	*out = a;
	return 0;
}

static cJSON *strings_json(char **v, int n)
{
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; arr && i < n; i++) {
		cJSON *s = cJSON_CreateString(v[i]);
		if (!s) {
			cJSON_Delete(arr);
			return NULL;
		}
		cJSON_AddItemToArray(arr, s);
	}
	return arr;
}

static cJSON *fit_args_encode(const void *p)
{
	const struct fit_args *a = p;
	cJSON *o = sk_args_json_new("NodeResourcesFitArgs");
	if (!o || !a)
		return o;
	bool ok = true;
	if (a->nignored)
		ok &= cJSON_AddItemToObject(o, "ignoredResources", strings_json(a->ignored, a->nignored));
	if (a->nignored_groups)
		ok &= cJSON_AddItemToObject(o, "ignoredResourceGroups", strings_json(a->ignored_groups, a->nignored_groups));
	cJSON *st = cJSON_CreateObject();
	ok &= st != NULL && cJSON_AddItemToObject(o, "scoringStrategy", st);
	if (ok) {
		ok &= cJSON_AddStringToObject(st, "type", strategy_names[a->strategy]) != NULL;
		ok &= cJSON_AddItemToObject(st, "resources", sk_resource_specs_encode(a->resources, a->nresources));
		if (a->has_rtc) {
			cJSON *rtc = cJSON_CreateObject(), *shape = cJSON_CreateArray();
			ok &= rtc && shape && cJSON_AddItemToObject(st, "requestedToCapacityRatio", rtc) &&
			      cJSON_AddItemToObject(rtc, "shape", shape);
			for (int i = 0; ok && i < a->nshape; i++) {
				cJSON *pt = cJSON_CreateObject();
				ok &= pt && cJSON_AddItemToArray(shape, pt) &&
				      cJSON_AddItemToObject(pt, "utilization", sk_json_create_int64(a->shape[i].utilization)) &&
				      cJSON_AddItemToObject(pt, "score", sk_json_create_int64(a->shape[i].score));
			}
		}
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---------- instance ---------- */

static const struct sk_resource_spec default_resources[] = { { (char *)SK_RESOURCE_CPU, 1 },
							      { (char *)SK_RESOURCE_MEMORY, 1 } };
static const struct sk_scored_resource default_scored[] = { { SK_RES_CPU, SK_RESOURCE_CPU, 1 },
							     { SK_RES_MEMORY, SK_RESOURCE_MEMORY, 1 } };
static const struct fit_args default_args = {
	.strategy = FIT_LEAST_ALLOCATED,
	.nresources = 2,
	.resources = (struct sk_resource_spec *)default_resources,
	.scored = (struct sk_scored_resource *)default_scored,
};

static int fit_init(struct sk_plugin *self, const void *args, char **err)
{
	(void)err;
	/* No args (framework built without config defaults): upstream defaults. */
	self->priv = (void *)(args ? args : &default_args);
	return 0;
}

static void no_free(void *p) { (void)p; }
static const struct sk_state_ops borrowed_ops = { .free = no_free, .clone = NULL };

static struct sk_status fit_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       struct sk_prefilter_result *result)
{
	(void)result;
	/* The state is the pod's computed requests (staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests)), borrowed from the pod. */
	sk_cycle_state_put(cs, self->slot, (void *)pod, &borrowed_ops);
	return sk_ok();
}

static bool ignored_scalar(const struct fit_args *a, const char *name)
{
	if (!sk_is_extended_resource_name(name))
		return false;
	for (int i = 0; i < a->nignored; i++)
		if (!strcmp(a->ignored[i], name))
			return true;
	if (a->nignored_groups) {
		const char *slash = strchr(name, '/');
		size_t plen = slash ? (size_t)(slash - name) : strlen(name);
		for (int i = 0; i < a->nignored_groups; i++)
			if (strlen(a->ignored_groups[i]) == plen && !strncmp(a->ignored_groups[i], name, plen))
				return true;
	}
	return false;
}

/* "Insufficient <name>" of an extended resource, interned: a failing node's status then owns no
 * memory (one string per resource name for the process's life, as the name itself is). Formatted
 * and owned when the name is too long or interning fails. */
static void add_insufficient_scalar(struct sk_status *s, const char *name)
{
	char buf[400];
	int l = snprintf(buf, sizeof buf, "Insufficient %s", name);
	const char *reason = l > 0 && (size_t)l < sizeof buf ? sk_intern_n(buf, (size_t)l) : NULL;
	if (reason)
		sk_status_add(s, reason);
	else
		sk_status_addf(s, "Insufficient %s", name);
}

/* fitsRequest: every failing reason, in upstream order. The status is Unschedulable, or
 * UnschedulableAndUnresolvable when some request exceeds the node's whole allocatable, since
 * preemption cannot free enough then (upstream PR 131345, v1.34). "Too many pods" alone stays
 * Unschedulable. True with the status in *out when the pod does not fit; false when it fits (*out
 * then untouched, or Success). */
static bool fits_request_scalars(const struct fit_args *a, const struct sk_pod *pod, const struct sk_node_info *ni,
				 struct sk_status *out)
{
	const struct sk_resource *alloc = &ni->node->allocatable, *used = &ni->requested;
	const struct sk_resource *req = &pod->requests;
	struct sk_status s = sk_ok();
	bool unresolvable = false;
	if ((int64_t)ni->npods + 1 > alloc->allowed_pod_number)
		sk_status_add(&s, "Too many pods");
	if (req->milli_cpu > 0 && req->milli_cpu > alloc->milli_cpu - used->milli_cpu) {
		sk_status_add(&s, "Insufficient cpu");
		unresolvable |= req->milli_cpu > alloc->milli_cpu;
	}
	if (req->memory > 0 && req->memory > alloc->memory - used->memory) {
		sk_status_add(&s, "Insufficient memory");
		unresolvable |= req->memory > alloc->memory;
	}
	if (req->ephemeral_storage > 0 && req->ephemeral_storage > alloc->ephemeral_storage - used->ephemeral_storage) {
		sk_status_add(&s, "Insufficient ephemeral-storage");
		unresolvable |= req->ephemeral_storage > alloc->ephemeral_storage;
	}
	for (int i = 0; i < req->nscalar; i++) {
		const struct sk_scalar *r = &req->scalar[i];
		if (r->value == 0 || (a && ignored_scalar(a, r->name)))
			continue;
		int64_t cap = sk_resource_scalar(alloc, r->name);
		if (r->value > cap - sk_resource_scalar(used, r->name)) {
			add_insufficient_scalar(&s, r->name);
			unresolvable |= r->value > cap;
		}
	}
	if (!s.nreasons)
		return false;
	s.code = unresolvable ? SK_UNSCHEDULABLE_AND_UNRESOLVABLE : SK_UNSCHEDULABLE;
	*out = s;
	return true;
}

/* The same without extended resources, the status built in *out: the native reasons (at most four,
 * within the inline slots) stored as sk_status_add would, without its call per reason or a status
 * returned by value on every failing node. */
static __attribute__((noinline)) bool fits_request_reasons(const struct fit_args *a, const struct sk_pod *pod,
							    const struct sk_node_info *ni, struct sk_status *out)
{
	const struct sk_resource *req = &pod->requests;
	if (req->nscalar > 0)
		return fits_request_scalars(a, pod, ni, out);
	const struct sk_resource *alloc = &ni->node->allocatable, *used = &ni->requested;
	_Static_assert(SK_STATUS_MAX_REASONS >= 4, "the native reasons fit inline");
	*out = sk_ok();
	const char **r = out->reasons;
	int nr = 0;
	bool unresolvable = false;
	if ((int64_t)ni->npods + 1 > alloc->allowed_pod_number)
		r[nr++] = "Too many pods";
	if (req->milli_cpu > 0 && req->milli_cpu > alloc->milli_cpu - used->milli_cpu) {
		r[nr++] = "Insufficient cpu";
		unresolvable |= req->milli_cpu > alloc->milli_cpu;
	}
	if (req->memory > 0 && req->memory > alloc->memory - used->memory) {
		r[nr++] = "Insufficient memory";
		unresolvable |= req->memory > alloc->memory;
	}
	if (req->ephemeral_storage > 0 && req->ephemeral_storage > alloc->ephemeral_storage - used->ephemeral_storage) {
		r[nr++] = "Insufficient ephemeral-storage";
		unresolvable |= req->ephemeral_storage > alloc->ephemeral_storage;
	}
	if (!nr)
		return false;
	out->nreasons = (uint8_t)nr;
	out->code = unresolvable ? SK_UNSCHEDULABLE_AND_UNRESOLVABLE : SK_UNSCHEDULABLE;
	return true;
}

/* The common case of fits_request: room for one more pod and for every native request, no scalar
 * request, which are exactly the conditions under which fits_request_reasons adds no reason. */
static inline bool fits_plainly(const struct sk_pod *pod, const struct sk_node_info *ni)
{
	const struct sk_resource *alloc = &ni->node->allocatable, *used = &ni->requested;
	const struct sk_resource *req = &pod->requests;
	return (int64_t)ni->npods + 1 <= alloc->allowed_pod_number && req->nscalar == 0 &&
	       (req->milli_cpu <= 0 || req->milli_cpu <= alloc->milli_cpu - used->milli_cpu) &&
	       (req->memory <= 0 || req->memory <= alloc->memory - used->memory) &&
	       (req->ephemeral_storage <= 0 || req->ephemeral_storage <= alloc->ephemeral_storage - used->ephemeral_storage);
}

/* fits_request_reasons, after the common case (kept apart so the common case saves no registers
 * for the other). */
static inline struct sk_status fits_request(const struct fit_args *a, const struct sk_pod *pod,
					    const struct sk_node_info *ni)
{
	struct sk_status s;
	if (fits_plainly(pod, ni) || !fits_request_reasons(a, pod, ni, &s))
		return sk_ok();
	return s;
}

static struct sk_status fit_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const struct sk_node_info *ni)
{
	(void)pod;
	const struct sk_pod *state = sk_cycle_state_get(cs, self->slot);
	if (!state)
		return sk_status(SK_ERROR, "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	return fits_request(self->priv, state, ni);
}

/* fit_filter over a run of nodes (filter_batch, docs/plugins.md "Batch filtering"): the
 * PreFilter state is read once for the run. */
static void fit_filter_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			     const struct sk_node_info *const *nodes, int n, uint8_t *ok, struct sk_status *st)
{
	(void)pod;
	const struct sk_pod *state = sk_cycle_state_get(cs, self->slot);
	const struct fit_args *a = self->priv;
	for (int i = 0; i < n; i++) {
		if (!ok[i] || (state && nodes[i]->node && fits_plainly(state, nodes[i])))
			continue;
		if (state && nodes[i]->node) {
			if (fits_request_reasons(a, state, nodes[i], &st[i])) /* writes st[i] only then */
				ok[i] = 0;
			continue;
		}
		ok[i] = 0;
		st[i] = !state ? sk_status(SK_ERROR, "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found")
			       : sk_status(SK_ERROR, "node not found");
	}
}

/* PreScore: the pod's request per scored resource (non-zero variant for cpu and memory), once per cycle. */
static struct sk_status fit_pre_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      const struct sk_node_info *const *nodes, int nnodes)
{
	(void)nodes;
	(void)nnodes;
	const struct fit_args *a = self->priv;
	struct sk_pod_request_list *st = sk_pod_request_list_new(a->scored, a->nresources, pod, true);
	if (!st)
		return sk_status(SK_ERROR, "out of memory");
	sk_cycle_state_put(cs, self->slot, st, &sk_pod_request_list_ops);
	return sk_ok();
}

/* helper.BuildBrokenLinearFunction over the shape scaled to MaxNodeScore. */
static int64_t broken_linear(const struct shape_point *pts, int n, int64_t p)
{
	const int64_t scale = SK_MAX_NODE_SCORE / 10;
	for (int i = 0; i < n; i++) {
		if (p <= pts[i].utilization) {
			if (i == 0)
				return pts[0].score * scale;
			int64_t s0 = pts[i - 1].score * scale, s1 = pts[i].score * scale;
			return s0 + (s1 - s0) * (p - pts[i - 1].utilization) / (pts[i].utilization - pts[i - 1].utilization);
		}
	}
	return pts[n - 1].score * scale;
}

/* score_node for the default args (LeastAllocated over cpu and memory, weight 1 each), the
 * arithmetic of the general loop below without its per-resource dispatch. */
static int64_t least_allocated_cpu_memory(const struct sk_node_info *ni, const int64_t *pod_requests)
{
	int64_t alloc_cpu = ni->node->allocatable.milli_cpu, req_cpu = ni->non_zero_milli_cpu + pod_requests[0];
	int64_t alloc_mem = ni->node->allocatable.memory, req_mem = ni->non_zero_memory + pod_requests[1];
	if (alloc_cpu == 0 || alloc_mem == 0) { /* one resource left in the mean, or none */
		if (alloc_cpu != 0)
			return req_cpu > alloc_cpu ? 0 : (alloc_cpu - req_cpu) * SK_MAX_NODE_SCORE / alloc_cpu;
		if (alloc_mem != 0)
			return req_mem > alloc_mem ? 0 : (alloc_mem - req_mem) * SK_MAX_NODE_SCORE / alloc_mem;
		return 0;
	}
	int64_t cpu = req_cpu > alloc_cpu ? 0 : (alloc_cpu - req_cpu) * SK_MAX_NODE_SCORE / alloc_cpu;
	int64_t mem = req_mem > alloc_mem ? 0 : (alloc_mem - req_mem) * SK_MAX_NODE_SCORE / alloc_mem;
	return (cpu + mem) / 2; /* the weight sum, a constant divisor here */
}

/* True when score_node(a, ...) == least_allocated_cpu_memory(...). */
static bool is_least_allocated_cpu_memory(const struct fit_args *a)
{
	return a->strategy == FIT_LEAST_ALLOCATED && a->nresources == 2 && a->scored[0].kind == SK_RES_CPU &&
	       a->scored[0].weight == 1 && a->scored[1].kind == SK_RES_MEMORY && a->scored[1].weight == 1;
}

static int64_t score_node(const struct fit_args *a, const struct sk_node_info *ni, const int64_t *pod_requests)
{
	int64_t node_score = 0, weight_sum = 0;
	for (int i = 0; i < a->nresources; i++) {
		int64_t alloc, req, w = a->scored[i].weight, s;
		sk_resource_alloc_request(ni, &a->scored[i], pod_requests[i], false, &alloc, &req);
		if (alloc == 0)
			continue;
		switch (a->strategy) {
		case FIT_LEAST_ALLOCATED:
			s = req > alloc ? 0 : (alloc - req) * SK_MAX_NODE_SCORE / alloc;
			break;
		case FIT_MOST_ALLOCATED:
			s = (req > alloc ? alloc : req) * SK_MAX_NODE_SCORE / alloc;
			break;
		default:
			s = broken_linear(a->shape, a->nshape, req > alloc ? 100 : req * 100 / alloc);
			if (s <= 0)
				continue;
			break;
		}
		node_score += s * w;
		weight_sum += w;
	}
	if (weight_sum == 0)
		return 0;
	if (a->strategy == FIT_REQUESTED_TO_CAPACITY_RATIO)
		return (int64_t)llround((double)node_score / (double)weight_sum);
	return node_score / weight_sum;
}

static struct sk_status fit_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni, int64_t *score)
{
	const struct fit_args *a = self->priv;
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	/* The slot holds PreScore's request list, or, when PreScore is disabled, PreFilter's
	 * borrowed pod (one slot per plugin): only the former is a request list. */
	const void *data = sk_cycle_state_get(cs, self->slot);
	const struct sk_pod_request_list *st = data != (const void *)pod ? data : NULL;
	if (st) {
		*score = score_node(a, ni, st->requests);
		return sk_ok();
	}
	/* PreScore disabled: compute here, as upstream does. */
	struct sk_pod_request_list *tmp = sk_pod_request_list_new(a->scored, a->nresources, pod, true);
	if (!tmp)
		return sk_status(SK_ERROR, "out of memory");
	*score = score_node(a, ni, tmp->requests);
	free(tmp);
	return sk_ok();
}

/* score over a run of nodes (score_batch, docs/plugins.md "Batch scoring"): the same score per
 * node as fit_score, with the CycleState read once per run instead of once per node. */
static struct sk_status fit_score_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					const struct sk_node_info *const *nodes, int n, int64_t *scores, int *failed)
{
	const struct fit_args *a = self->priv;
	const void *data = sk_cycle_state_get(cs, self->slot);
	const struct sk_pod_request_list *st = data != (const void *)pod ? data : NULL;
	struct sk_pod_request_list *tmp = NULL;
	if (!st) { /* PreScore disabled, as in fit_score */
		if (!(tmp = sk_pod_request_list_new(a->scored, a->nresources, pod, true))) {
			*failed = 0;
			return sk_status(SK_ERROR, "out of memory");
		}
		st = tmp;
	}
	const bool least_cpu_memory = is_least_allocated_cpu_memory(a);
	for (int i = 0; i < n; i++) {
		if (!nodes[i]->node) {
			free(tmp);
			*failed = i;
			return sk_status(SK_ERROR, "node not found");
		}
		scores[i] = least_cpu_memory ? least_allocated_cpu_memory(nodes[i], st->requests)
					     : score_node(a, nodes[i], st->requests);
	}
	free(tmp);
	return sk_ok();
}

/* ---------- queueing hints ---------- */

/* isFit against an empty node: room for one pod and for every request (no ignored resources). */
static bool fits_empty_node(const struct sk_pod *pod, const struct sk_node *node)
{
	struct sk_node_info ni = { .node = (struct sk_node *)node };
	struct sk_status s = fits_request(NULL, pod, &ni);
	bool ok = sk_is_success(&s);
	sk_status_reset(&s);
	return ok;
}

static bool requested_resources_increased(const struct sk_pod *pod, const struct sk_node *o, const struct sk_node *n)
{
	const struct sk_resource *r = &pod->requests, *ao = &o->allocatable, *an = &n->allocatable;
	if (an->allowed_pod_number > ao->allowed_pod_number)
		return true;
	if ((r->milli_cpu > 0 && an->milli_cpu > ao->milli_cpu) || (r->memory > 0 && an->memory > ao->memory) ||
	    (r->ephemeral_storage > 0 && an->ephemeral_storage > ao->ephemeral_storage))
		return true;
	for (int i = 0; i < r->nscalar; i++)
		if (r->scalar[i].value && sk_resource_scalar(an, r->scalar[i].name) > sk_resource_scalar(ao, r->scalar[i].name))
			return true;
	return false;
}

static enum sk_hint fit_hint_node(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				  const void *new_obj)
{
	(void)self;
	const struct sk_node *old_node = old_obj, *node = new_obj;
	if (!node)
		return SK_QUEUE;
	if (!fits_empty_node(pod, node))
		return SK_QUEUE_SKIP;
	if (!old_node)
		return SK_QUEUE;
	return requested_resources_increased(pod, old_node, node) ? SK_QUEUE : SK_QUEUE_SKIP;
}

static enum sk_hint fit_hint_pod(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				 const void *new_obj)
{
	(void)self;
	const struct sk_pod *orig = old_obj, *mod = new_obj;
	if (!orig && !mod)
		return SK_QUEUE;
	if (!mod) /* deleted: only a placed or nominated pod frees (or reserves) resources */
		return (orig->node_name || orig->nominated_node_name) ? SK_QUEUE : SK_QUEUE_SKIP;
	if (pod->uid && mod->uid && !strcmp(pod->uid, mod->uid))
		return SK_QUEUE;
	if (!mod->node_name || !orig)
		return SK_QUEUE_SKIP;
	const struct sk_resource *r = &pod->requests, *ro = &orig->requests, *rn = &mod->requests;
	if ((r->milli_cpu && ro->milli_cpu > rn->milli_cpu) || (r->memory && ro->memory > rn->memory) ||
	    (r->ephemeral_storage && ro->ephemeral_storage > rn->ephemeral_storage))
		return SK_QUEUE;
	for (int i = 0; i < r->nscalar; i++)
		if (r->scalar[i].value && sk_resource_scalar(ro, r->scalar[i].name) > sk_resource_scalar(rn, r->scalar[i].name))
			return SK_QUEUE;
	return SK_QUEUE_SKIP;
}

static int fit_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	int n = 0;
	if (n < max)
		out[n++] = (struct sk_event_registration){
			.event = { SK_EV_POD, SK_ACT_DELETE | SK_ACT_UPDATE_POD_SCALE_DOWN, "PodDelete|UpdatePodScaleDown" },
			.hint = fit_hint_pod,
		};
	if (n < max)
		out[n++] = (struct sk_event_registration){
			.event = { SK_EV_NODE, SK_ACT_ADD | SK_ACT_UPDATE_NODE_ALLOCATABLE, "NodeAdd|UpdateNodeAllocatable" },
			.hint = fit_hint_node,
		};
	return n;
}

const struct sk_plugin_desc sk_plugin_node_resources_fit = {
	SK_PLUGIN_HEADER,
	.name = "NodeResourcesFit",
	.args_kind = "NodeResourcesFitArgs",
	.args_decode = fit_args_decode,
	.args_encode = fit_args_encode,
	.args_free = fit_args_free,
	.init = fit_init,
	.pre_filter = fit_pre_filter,
	.filter = fit_filter,
	.filter_batch = fit_filter_batch,
	.pre_score = fit_pre_score,
	.score = fit_score,
	.events_to_register = fit_events,
	.score_batch = fit_score_batch,
};
