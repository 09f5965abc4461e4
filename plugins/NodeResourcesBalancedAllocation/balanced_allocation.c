/* NodeResourcesBalancedAllocation (PreScore, Score) and its args (pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go, pkg/scheduler/apis/config/validation/validation_pluginargs.go):
 * prefers nodes whose resource fractions, after placing the pod, are close to each other.
 * Uses real requests (no 100m/200Mi defaults); best-effort pods are skipped at PreScore (v1.33+).
 * Instances borrow their args (the config outlives the framework). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/args.h"
#include "schedkit/plugin.h"
#include "schedkit/resource_allocation.h"

struct balanced_args {
	int nresources;
	struct sk_resource_spec *resources;
	struct sk_scored_resource *scored; /* resources resolved for scoring */
};

static void ba_args_free(void *p)
{
	struct balanced_args *a = p;
	if (!a)
		return;
	sk_resource_specs_free(a->resources, a->nresources);
	free(a->scored);
	free(a);
}

static int ba_args_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "resources", NULL };
	struct balanced_args *a = calloc(1, sizeof(*a));
	char *rp = sk_path_child(path, "resources");
	int rc = 0;
	if (!a || !rp) {
		sk_errors_addf(e, "%s: out of memory", path);
		rc = -1;
		goto out;
	}
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "NodeResourcesBalancedAllocationArgs", path, e) < 0 ||
	    sk_resource_specs_decode(json ? cJSON_GetObjectItemCaseSensitive(json, "resources") : NULL, rp,
				     &a->resources, &a->nresources, e) < 0) {
		rc = -1;
		goto out;
	}
	/* SetDefaults_NodeResourcesBalancedAllocationArgs */
	if (a->nresources == 0) {
		free(a->resources);
		a->resources = calloc(2, sizeof(*a->resources));
		if (!a->resources) {
			rc = -1;
			goto out;
		}
		a->nresources = 2;
		a->resources[0] = (struct sk_resource_spec){ strdup(SK_RESOURCE_CPU), 1 };
		a->resources[1] = (struct sk_resource_spec){ strdup(SK_RESOURCE_MEMORY), 1 };
		if (!a->resources[0].name || !a->resources[1].name) {
			rc = -1;
			goto out;
		}
	}
	for (int i = 0; i < a->nresources; i++)
		if (a->resources[i].weight == 0)
			a->resources[i].weight = 1;
	/* ValidateNodeResourcesBalancedAllocationArgs */
	for (int i = 0; i < a->nresources; i++) {
		char *pi = sk_path_index(rp, i), *pn = sk_path_child(pi, "name"), *pw = sk_path_child(pi, "weight");
		for (int j = 0; j < i; j++) {
			if (!strcmp(a->resources[i].name, a->resources[j].name)) {
				sk_err_duplicate(e, pn ? pn : rp, a->resources[i].name);
				rc = -1;
				break;
			}
		}
		if (a->resources[i].weight != 1) {
			sk_err_invalid_int(e, pw ? pw : rp, a->resources[i].weight, "must be 1");
			rc = -1;
		}
		free(pi);
		free(pn);
		free(pw);
	}
	if (rc == 0 && !(a->scored = sk_scored_resources_new(a->resources, a->nresources))) {
		sk_errors_addf(e, "%s: out of memory", path);
		rc = -1;
	}
out:
	free(rp);
	if (rc < 0) {
		ba_args_free(a);
		return -1;
	}
	*out = a;
	return 0;
}

static cJSON *ba_args_encode(const void *p)
{
	const struct balanced_args *a = p;
	cJSON *o = sk_args_json_new("NodeResourcesBalancedAllocationArgs");
	if (o && a && !cJSON_AddItemToObject(o, "resources", sk_resource_specs_encode(a->resources, a->nresources))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static const struct sk_resource_spec default_resources[] = { { (char *)SK_RESOURCE_CPU, 1 },
							      { (char *)SK_RESOURCE_MEMORY, 1 } };
static const struct sk_scored_resource default_scored[] = { { SK_RES_CPU, SK_RESOURCE_CPU, 1 },
							     { SK_RES_MEMORY, SK_RESOURCE_MEMORY, 1 } };
static const struct balanced_args default_args = { 2, (struct sk_resource_spec *)default_resources,
						   (struct sk_scored_resource *)default_scored };

static int ba_init(struct sk_plugin *self, const void *args, char **err)
{
	(void)err;
	self->priv = (void *)(args ? args : &default_args);
	return 0;
}

static struct sk_status ba_pre_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     const struct sk_node_info *const *nodes, int nnodes)
{
	(void)nodes;
	(void)nnodes;
	const struct balanced_args *a = self->priv;
	struct sk_pod_request_list *st = sk_pod_request_list_new(a->scored, a->nresources, pod, false);
	if (!st)
		return sk_status(SK_ERROR, "out of memory");
	bool best_effort = true;
	for (int i = 0; i < st->n; i++)
		if (st->requests[i] != 0)
			best_effort = false;
	if (best_effort) {
		free(st);
		return sk_status(SK_SKIP, NULL);
	}
	sk_cycle_state_put(cs, self->slot, st, &sk_pod_request_list_ops);
	return sk_ok();
}

/* balancedResourceScorer */
static int64_t balanced_score(const struct balanced_args *a, const struct sk_node_info *ni, const int64_t *pod_requests)
{
	double fractions[64], total = 0;
	int n = 0;
	for (int i = 0; i < a->nresources && n < 64; i++) {
		int64_t alloc, req;
		sk_resource_alloc_request(ni, &a->scored[i], pod_requests[i], true, &alloc, &req);
		if (alloc == 0)
			continue;
		double f = (double)req / (double)alloc;
		if (f > 1)
			f = 1;
		total += f;
		fractions[n++] = f;
	}
	double std = 0;
	if (n == 2) {
		std = fabs((fractions[0] - fractions[1]) / 2);
	} else if (n > 2) {
		double mean = total / n, sum = 0;
		for (int i = 0; i < n; i++)
			sum += (fractions[i] - mean) * (fractions[i] - mean);
		std = sqrt(sum / n);
	}
	return (int64_t)((1 - std) * (double)SK_MAX_NODE_SCORE);
}

/* balanced_score for the default resources (cpu, then memory): the same arithmetic, in the same
 * order, without the per-resource dispatch. */
static int64_t balanced_cpu_memory(const struct sk_node_info *ni, const int64_t *pod_requests)
{
	/* the two fractions in registers (an array indexed by a count kept them in memory); the
	 * standard deviation of fewer than two is 0, as in balanced_score */
	int64_t alloc_cpu = ni->node->allocatable.milli_cpu, alloc_mem = ni->node->allocatable.memory;
	if (alloc_cpu == 0 || alloc_mem == 0)
		return SK_MAX_NODE_SCORE;
	double f_cpu = (double)(ni->requested.milli_cpu + pod_requests[0]) / (double)alloc_cpu;
	double f_mem = (double)(ni->requested.memory + pod_requests[1]) / (double)alloc_mem;
	f_cpu = f_cpu > 1 ? 1 : f_cpu;
	f_mem = f_mem > 1 ? 1 : f_mem;
	double std = fabs((f_cpu - f_mem) / 2);
	return (int64_t)((1 - std) * (double)SK_MAX_NODE_SCORE);
}

static bool is_cpu_memory(const struct balanced_args *a)
{
	return a->nresources == 2 && a->scored[0].kind == SK_RES_CPU && a->scored[1].kind == SK_RES_MEMORY;
}

static struct sk_status ba_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				 const struct sk_node_info *ni, int64_t *score)
{
	const struct balanced_args *a = self->priv;
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	const struct sk_pod_request_list *st = sk_cycle_state_get(cs, self->slot);
	if (st) {
		*score = balanced_score(a, ni, st->requests);
		return sk_ok();
	}
	/* PreScore disabled: compute here; a best-effort pod scores 0, as PreScore would skip it. */
	struct sk_pod_request_list *tmp = sk_pod_request_list_new(a->scored, a->nresources, pod, false);
	if (!tmp)
		return sk_status(SK_ERROR, "out of memory");
	bool best_effort = true;
	for (int i = 0; i < tmp->n; i++)
		if (tmp->requests[i] != 0)
			best_effort = false;
	*score = best_effort ? 0 : balanced_score(a, ni, tmp->requests);
	free(tmp);
	return sk_ok();
}

/* score over a run of nodes (score_batch, docs/plugins.md "Batch scoring"): ba_score per node,
 * with the CycleState read once per run. */
static struct sk_status ba_score_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       const struct sk_node_info *const *nodes, int n, int64_t *scores, int *failed)
{
	const struct balanced_args *a = self->priv;
	const struct sk_pod_request_list *st = sk_cycle_state_get(cs, self->slot);
	const bool cpu_memory = is_cpu_memory(a);
	for (int i = 0; i < n; i++) {
		if (!st || !nodes[i]->node) { /* PreScore disabled or no node: ba_score's own path */
			struct sk_status s = ba_score(self, cs, pod, nodes[i], &scores[i]);
			if (s.code != SK_SUCCESS) {
				*failed = i;
				return s;
			}
			continue;
		}
		scores[i] = cpu_memory ? balanced_cpu_memory(nodes[i], st->requests)
				       : balanced_score(a, nodes[i], st->requests);
	}
	return sk_ok();
}

const struct sk_plugin_desc sk_plugin_node_resources_balanced_allocation = {
	SK_PLUGIN_HEADER,
	.name = "NodeResourcesBalancedAllocation",
	.args_kind = "NodeResourcesBalancedAllocationArgs",
	.args_decode = ba_args_decode,
	.args_encode = ba_args_encode,
	.args_free = ba_args_free,
	.init = ba_init,
	.pre_score = ba_pre_score,
	.score = ba_score,
	.score_batch = ba_score_batch,
};
