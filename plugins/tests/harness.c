/* See harness.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/tests/harness.h"
#include "kube/object.h"
#include "scheduler/backend/cache.h"
#include "scheduler/backend/volume_store.h"
#include "scheduler/framework/loader.h"
#include "scheduler/framework/registry.h"
#include "schedkit/module.h"
#include "scheduler/tests/fixtures.h"

void ph_use_module(const struct sk_module *(*init)(const struct sk_host_api *host, char *err, size_t errlen))
{
	char msg[512] = "";
	const struct sk_module *m = init(&sk_host_table, msg, sizeof(msg));
	if (!m)
		fail_msg("sk_module_init refused the core's host table: %s", msg);
	for (uint32_t i = 0; i < m->nplugins; i++) {
		if (sk_registry_lookup(m->plugins[i]->name) == m->plugins[i])
			continue;
		char *err = NULL;
		if (sk_registry_register(m->plugins[i], &err) != 0)
			fail_msg("registering %s: %s", m->plugins[i]->name, err ? err : "?");
	}
}

static const struct sk_snapshot *ph_snapshot(void *ctx)
{
	return ((struct ph *)ctx)->snap;
}

static int ph_bind(void *ctx, const struct sk_pod *pod, const char *node, char **err)
{
	struct ph *h = ctx;
	h->bind_calls++;
	snprintf(h->bound, sizeof(h->bound), "%s/%s -> %s", pod->ns, pod->name, node);
	if (h->bind_error) {
		*err = strdup(h->bind_error);
		return -1;
	}
	return 0;
}

static int ph_api_patch(void *ctx, const char *path, const cJSON *patch, cJSON **out, bool *conflict, char **err)
{
	struct ph *h = ctx;
	*conflict = false;
	if (h->npatches < 8)
		snprintf(h->patched[h->npatches], sizeof h->patched[0], "%s", path);
	h->npatches++;
	cJSON_AddItemToArray(h->patches, cJSON_Duplicate(patch, 1));
	if (h->patch_error) {
		*err = strdup(h->patch_error);
		return -1;
	}
	/* as the API server answers: the updated object, at a resourceVersion newer than the store's
	 * (tests put the controller's result at a higher one) */
	if (out)
		*out = cJSON_Parse("{\"metadata\":{\"resourceVersion\":\"1000\"}}");
	return 0;
}

struct ph *ph_new(const char *profile_yaml)
{
	struct ph *h = calloc(1, sizeof(*h));
	assert_non_null(h);
	char *text = NULL;
	assert_true(asprintf(&text, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n%s%s",
			     profile_yaml ? "profiles:\n" : "", profile_yaml ? profile_yaml : "") >= 0);
	struct sk_errors e = { 0 };
	h->cfg = sk_config_load(text, strlen(text), &e);
	if (!h->cfg) {
		char *all = sk_errors_join(&e, "\n");
		print_error("config errors:\n%s\n", all);
		free(all);
		sk_errors_free(&e);
		free(text);
		fail();
	}
	free(text);
	sk_errors_free(&e);
	h->volumes = sk_volume_store_new();
	h->patches = cJSON_CreateArray();
	assert_non_null(h->volumes);
	sk_object_listers_init(&h->listers, NULL, 0);
	struct sk_framework_env env = { .ctx = h, .snapshot = ph_snapshot, .bind = ph_bind,
					.volumes = h->volumes, .api_patch = ph_api_patch, .listers = &h->listers.listers };
	char *err = NULL;
	h->fw = sk_framework_new(h->cfg, &h->cfg->profiles[0], &env, &err);
	if (!h->fw) {
		print_error("framework: %s\n", err ? err : "?");
		free(err);
		fail();
	}
	h->cs = sk_cycle_state_new(h->fw, false);
	assert_non_null(h->cs);
	return h;
}

void ph_set_objects(struct ph *h, const char *json)
{
	cJSON_Delete(h->objects);
	free(h->objv);
	h->objects = NULL;
	h->objv = NULL;
	sk_object_listers_init(&h->listers, NULL, 0);
	if (!json)
		return;
	h->objects = cJSON_Parse(json);
	if (!cJSON_IsArray(h->objects))
		fail_msg("ph_set_objects: not a JSON array: %s", json);
	int n = cJSON_GetArraySize(h->objects), i = 0;
	h->objv = calloc((size_t)(n ? n : 1), sizeof *h->objv);
	assert_non_null(h->objv);
	const cJSON *o;
	cJSON_ArrayForEach(o, h->objects) h->objv[i++] = o;
	sk_object_listers_init(&h->listers, h->objv, n);
}

void ph_free(struct ph *h)
{
	if (!h)
		return;
	ph_set_objects(h, NULL);
	sk_cycle_state_free(h->cs);
	sk_framework_unref(h->fw);
	sk_config_free(h->cfg);
	sk_snapshot_free(h->snap);
	sk_volume_store_free(h->volumes);
	cJSON_Delete(h->patches);
	free(h);
}

void ph_put_storage(struct ph *h, const char *yaml)
{
	char *err = NULL;
	cJSON *docs = kube_yaml_parse(yaml, strlen(yaml), &err);
	if (!docs) {
		print_error("storage yaml: %s\n", err ? err : "?");
		free(err);
		fail();
	}
	const cJSON *d;
	cJSON_ArrayForEach(d, docs)
	{
		if (sk_volume_store_put_json(h->volumes, 0, d, NULL, NULL, &err) != 0) {
			print_error("storage object: %s\n", err ? err : "?");
			free(err);
			cJSON_Delete(docs);
			fail();
		}
	}
	cJSON_Delete(docs);
}

struct sk_plugin *ph_plugin(struct ph *h, const char *name)
{
	for (int i = 0; i < sk_framework_nplugins(h->fw); i++) {
		struct sk_plugin *pl = sk_framework_instance(h->fw, i);
		if (!strcmp(pl->desc->name, name))
			return pl;
	}
	print_error("plugin %s is not in the profile\n", name);
	fail();
	return NULL;
}

void ph_set_snapshot(struct ph *h, struct sk_snapshot *snap)
{
	sk_snapshot_free(h->snap);
	h->snap = snap;
}

void ph_set_cpu_mem_nodes(struct ph *h, const struct ph_cpu_mem *c, int n)
{
	struct sk_node_info *nis[10];
	assert_true(n > 0 && n <= 10);
	for (int i = 0; i < n; i++) {
		char buf[256];
		snprintf(buf, sizeof buf,
			 "{\"metadata\":{\"name\":\"n%d\"},\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"%s\","
			 "\"pods\":\"32\"}}}",
			 i, c[i].cpu, c[i].mem);
		nis[i] = fx_node_info(fx_node(buf), NULL);
	}
	ph_set_snapshot(h, fx_snapshot_of(nis, n));
}

void ph_reset_state(struct ph *h)
{
	sk_cycle_state_free(h->cs);
	h->cs = sk_cycle_state_new(h->fw, false);
	assert_non_null(h->cs);
}

static void fail_status(const char *what, struct sk_status *s)
{
	char *m = sk_status_message(s);
	print_error("%s: %s: %s\n", what, sk_code_string(s->code), m ? m : "");
	free(m);
	sk_status_reset(s);
	fail();
}

enum sk_code ph_scores(struct ph *h, struct sk_plugin *pl, const struct sk_pod *pod, int64_t *out)
{
	assert_non_null(h->snap);
	int n = h->snap->nnodes;
	ph_reset_state(h);
	if (pl->desc->pre_score) {
		struct sk_status s = pl->desc->pre_score(pl, h->cs, pod, (const struct sk_node_info *const *)h->snap->nodes, n);
		if (s.code == SK_SKIP) {
			for (int i = 0; i < n; i++)
				out[i] = 0;
			sk_status_reset(&s);
			return SK_SKIP;
		}
		if (!sk_is_success(&s))
			fail_status("PreScore", &s);
	}
	struct sk_node_score *scores = calloc((size_t)n + 1, sizeof(*scores));
	assert_non_null(scores);
	for (int i = 0; i < n; i++) {
		struct sk_status s = pl->desc->score(pl, h->cs, pod, h->snap->nodes[i], &scores[i].score);
		if (!sk_is_success(&s)) {
			free(scores);
			fail_status("Score", &s);
		}
		scores[i].name = h->snap->nodes[i]->node->name;
	}
	/* A plugin with score_batch (ABI 1.1) must give the per-node scores in batches of any size:
	 * each split of the nodes is checked against score. */
	if (pl->desc->score_batch && n > 0) {
		int64_t *batch = calloc((size_t)n, sizeof(*batch));
		assert_non_null(batch);
		for (int chunk = 1; chunk <= n; chunk++) {
			for (int b = 0; b < n; b += chunk) {
				int len = n - b < chunk ? n - b : chunk, failed = -1;
				struct sk_status s = pl->desc->score_batch(pl, h->cs, pod,
									   (const struct sk_node_info *const *)h->snap->nodes + b,
									   len, batch + b, &failed);
				if (!sk_is_success(&s)) {
					free(batch);
					free(scores);
					fail_status("Score (batch)", &s);
				}
			}
			for (int i = 0; i < n; i++)
				if (batch[i] != scores[i].score)
					fail_msg("score_batch in chunks of %d: node %d scored %lld, score gives %lld", chunk, i,
						 (long long)batch[i], (long long)scores[i].score);
		}
		free(batch);
	}
	if (pl->desc->normalize_score) {
		struct sk_status s = pl->desc->normalize_score(pl, h->cs, pod, scores, n);
		if (!sk_is_success(&s)) {
			free(scores);
			fail_status("NormalizeScore", &s);
		}
	}
	for (int i = 0; i < n; i++)
		out[i] = scores[i].score;
	free(scores);
	return SK_SUCCESS;
}

struct sk_status ph_filter(struct ph *h, struct sk_plugin *pl, const struct sk_pod *pod, const struct sk_node_info *ni)
{
	ph_reset_state(h);
	if (pl->desc->pre_filter) {
		struct sk_prefilter_result r = { .all = true };
		struct sk_status s = pl->desc->pre_filter(pl, h->cs, pod, &r);
		free(r.names);
		if (!sk_is_success(&s))
			return s;
	}
	return pl->desc->filter(pl, h->cs, pod, ni);
}

char *ph_message(struct sk_status *s)
{
	char *m = sk_status_message(s);
	sk_status_reset(s);
	return m;
}

sk_hint_fn ph_find_hint(struct sk_plugin *pl, uint32_t resource, uint32_t *actions)
{
	struct sk_event_registration regs[16];
	int n = pl->desc->events_to_register(pl, regs, 16);
	for (int i = 0; i < n; i++)
		if (regs[i].event.resource & resource) {
			if (actions)
				*actions = regs[i].event.action;
			return regs[i].hint;
		}
	fail_msg("plugin %s registers no event for resource 0x%x", pl->desc->name, resource);
	return NULL;
}
