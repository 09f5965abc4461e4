/* Long file: decoding, defaulting, validation and the framework-build checks share one pass. */
/* KubeSchedulerConfiguration v1 loader: strict decoding of YAML/JSON, upstream defaulting
 * (SetDefaults_KubeSchedulerConfiguration, mergePluginSet, default plugin args), upstream
 * validation (validation.go, component-base), and the framework-build checks of upstream
 * NewFramework (multiPoint expansion, duplicates, queue sort, bind, score weights) so that a
 * config that loads here builds. Facts: pkg/scheduler/apis/config/ (types, defaults, validation); docs/config.md. The result is immutable. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "kube/log.h"
#include "kube/object.h"
#include "kube/util.h"
#include "kube/selector.h"
#include "scheduler/config/config.h"
#include "scheduler/config/legacy.h"
#include "scheduler/framework/loader.h"

#define API_VERSION "kubescheduler.config.k8s.io/v1"
#define KIND "KubeSchedulerConfiguration"
#define DEFAULT_SCHEDULER_NAME "default-scheduler"
#define MIN_FEASIBLE_NODES_TO_FIND 100
#define MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND 5

/* ---------- extension points ---------- */

static const char *const ep_fields[SK_EP_COUNT + 2] = { /* NULL-terminated: also the allowed keys of "plugins" */
	"preEnqueue", "queueSort", "preFilter", "filter",  "postFilter", "preScore",  "score",
	"reserve",    "permit",    "preBind",   "bind",    "postBind",   "multiPoint", NULL,
};
/* Go interface names used in upstream framework-build errors. */
static const char *const ep_types[SK_EP_COUNT] = {
	"PreEnqueuePlugin", "QueueSortPlugin", "PreFilterPlugin", "FilterPlugin", "PostFilterPlugin", "PreScorePlugin",
	"ScorePlugin",      "ReservePlugin",   "PermitPlugin",    "PreBindPlugin", "BindPlugin",      "PostBindPlugin",
};

const char *sk_ext_point_field(enum sk_ext_point ep)
{
	return (ep >= 0 && ep <= SK_EP_COUNT) ? ep_fields[ep] : "unknown";
}

bool sk_desc_implements(const struct sk_plugin_desc *d, enum sk_ext_point ep)
{
	switch (ep) {
	case SK_EP_PRE_ENQUEUE: return d->pre_enqueue != NULL;
	case SK_EP_QUEUE_SORT: return d->less != NULL;
	case SK_EP_PRE_FILTER: return d->pre_filter != NULL;
	case SK_EP_FILTER: return d->filter != NULL;
	case SK_EP_POST_FILTER: return d->post_filter != NULL;
	case SK_EP_PRE_SCORE: return d->pre_score != NULL;
	case SK_EP_SCORE: return d->score != NULL;
	case SK_EP_RESERVE: return d->reserve != NULL || d->unreserve != NULL;
	case SK_EP_PERMIT: return d->permit != NULL;
	case SK_EP_PRE_BIND: return d->pre_bind != NULL;
	case SK_EP_BIND: return d->bind != NULL;
	case SK_EP_POST_BIND: return d->post_bind != NULL;
	case SK_EP_COUNT: break;
	}
	return false;
}

/* ---------- plugins beyond the in-tree ones ---------- */

/* The configuration being loaded on this thread. The lookups below are made deep inside the
 * merge and expansion helpers; a thread-local keeps their signatures those of the in-tree-only
 * loader while two loads on two threads (the watcher and a --validate) stay apart. */
static _Thread_local const struct sk_config *loading;

/* In-tree (and registered) plugins, then the config's modules, then its external names. */
static const struct sk_plugin_desc *plugin_lookup(const char *name)
{
	const struct sk_plugin_desc *d = sk_registry_lookup(name);
	if (d || !loading || !name)
		return d;
	if ((d = sk_module_set_lookup(loading->modules, name)))
		return d;
	for (int i = 0; i < loading->nexternal; i++)
		if (!strcmp(loading->external[i].name, name))
			return &loading->external[i];
	return NULL;
}

/* An external plugin is only a name here: every callback refuses, so a framework built from it by
 * mistake fails at init, and sk_desc_implements sees every extension point. */
static const char external_reason[] = "plugin is provided by a SchedulerPlugin and not loaded in this process";
static int ext_init(struct sk_plugin *self, const void *args, char **err)
{
	(void)args;
	return kube_errf(err, "plugin \"%s\": %s", self->desc->name, external_reason);
}
static struct sk_status ext_pod(struct sk_plugin *self, const struct sk_pod *pod)
{
	(void)self, (void)pod;
	return sk_status(SK_ERROR, external_reason);
}
static bool ext_less(struct sk_plugin *self, const struct sk_queued_pod *a, const struct sk_queued_pod *b)
{
	(void)self, (void)a, (void)b;
	return false;
}
static struct sk_status ext_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       struct sk_prefilter_result *r)
{
	(void)self, (void)cs, (void)pod, (void)r;
	return sk_status(SK_ERROR, external_reason);
}
static struct sk_status ext_node(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				 const struct sk_node_info *ni)
{
	(void)self, (void)cs, (void)pod, (void)ni;
	return sk_status(SK_ERROR, external_reason);
}
static struct sk_status ext_post_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					const struct sk_filter_diagnosis *diag, struct sk_postfilter_result *r)
{
	(void)self, (void)cs, (void)pod, (void)diag, (void)r;
	return sk_status(SK_ERROR, external_reason);
}
static struct sk_status ext_pre_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      const struct sk_node_info *const *nodes, int n)
{
	(void)self, (void)cs, (void)pod, (void)nodes, (void)n;
	return sk_status(SK_ERROR, external_reason);
}
static struct sk_status ext_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni, int64_t *score)
{
	(void)self, (void)cs, (void)pod, (void)ni, (void)score;
	return sk_status(SK_ERROR, external_reason);
}
static struct sk_status ext_at_node(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const char *node)
{
	(void)self, (void)cs, (void)pod, (void)node;
	return sk_status(SK_ERROR, external_reason);
}
static void ext_void_at_node(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			     const char *node)
{
	(void)self, (void)cs, (void)pod, (void)node;
}
static struct sk_status ext_permit(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const char *node, int64_t *timeout_ms)
{
	(void)self, (void)cs, (void)pod, (void)node, (void)timeout_ms;
	return sk_status(SK_ERROR, external_reason);
}

static const struct sk_plugin_desc external_template = {
	SK_PLUGIN_HEADER,
	.init = ext_init,
	.pre_enqueue = ext_pod,
	.less = ext_less,
	.pre_filter = ext_pre_filter,
	.filter = ext_node,
	.post_filter = ext_post_filter,
	.pre_score = ext_pre_score,
	.score = ext_score,
	.reserve = ext_at_node,
	.unreserve = ext_void_at_node,
	.permit = ext_permit,
	.pre_bind = ext_at_node,
	.bind = ext_at_node,
	.post_bind = ext_void_at_node,
};

static int set_opts(struct sk_config *cfg, const struct sk_config_opts *opts)
{
	if (!opts)
		return 0;
	cfg->modules = sk_module_set_ref(opts->modules);
	int n = 0;
	while (opts->external_plugins && opts->external_plugins[n])
		n++;
	if (!n)
		return 0;
	cfg->external = calloc((size_t)n, sizeof(*cfg->external));
	if (!cfg->external)
		return -1;
	for (int i = 0; i < n; i++) {
		cfg->external[i] = external_template;
		if (!(cfg->external[i].name = sk_intern(opts->external_plugins[i])))
			return -1;
		cfg->nexternal++;
	}
	return 0;
}

/* The v1.34 default plugin set, all through multiPoint, is sk_default_plugins
 * (scheduler/framework/registry.h), listed with the plugins in plugins/registry.c. */

/* ---------- small utilities ---------- */

/* A path built with printf; "" on OOM so callers never pass NULL to "%s". Freed with path_free. */
static char oom_path[] = "";
static char *pathf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *pathf(const char *fmt, ...)
{
	char *out = NULL;
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf(&out, fmt, ap);
	va_end(ap);
	return r < 0 ? oom_path : out;
}
static void path_free(char *p)
{
	if (p != oom_path)
		free(p);
}

static bool name_in(const char *name, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

static const char *unavailable_static_name(const char *name)
{
	for (int i = 0; sk_unavailable_default_plugins[i]; i++)
		if (!strcmp(sk_unavailable_default_plugins[i], name))
			return sk_unavailable_default_plugins[i];
	return NULL;
}

/* ---------- user input, before defaulting ---------- */

struct user_set {
	int nenabled, ndisabled;
	struct sk_plugin_set_entry *enabled; /* user_index = position */
	char **disabled;
};

struct user_plugin_config {
	char *name;
	cJSON *args; /* NULL when absent */
};

struct user_profile {
	char *scheduler_name;
	bool has_name;
	int64_t pct;
	bool has_pct;
	struct user_set sets[SK_EP_COUNT + 1];
	int npc;
	struct user_plugin_config *pc;
	cJSON *extenders;
	struct sk_records_config records;
};

static void plugin_set_free(struct sk_plugin_set_config *s)
{
	for (int i = 0; i < s->nenabled; i++)
		free(s->enabled[i].name);
	free(s->enabled);
	for (int i = 0; i < s->ndisabled; i++)
		free(s->disabled[i]);
	free(s->disabled);
	memset(s, 0, sizeof(*s));
}

static void user_profile_free(struct user_profile *u)
{
	free(u->scheduler_name);
	for (int i = 0; i <= SK_EP_COUNT; i++) {
		struct sk_plugin_set_config tmp = { u->sets[i].nenabled, u->sets[i].ndisabled, u->sets[i].enabled,
						    u->sets[i].disabled };
		plugin_set_free(&tmp);
	}
	for (int i = 0; i < u->npc; i++) {
		free(u->pc[i].name);
		cJSON_Delete(u->pc[i].args);
	}
	free(u->pc);
	cJSON_Delete(u->extenders);
}

static int decode_plugin_list(const cJSON *arr, const char *path, bool disabled, struct user_set *set,
			      struct sk_errors *e)
{
	static const char *const fields[] = { "name", "weight", NULL };
	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr)) {
		sk_errors_addf(e, "%s: Invalid type: expected array, got %s", path, cJSON_IsObject(arr) ? "object" : "scalar");
		return -1;
	}
	int n = cJSON_GetArraySize(arr), i = 0, rc = 0;
	struct sk_plugin_set_entry *en = NULL;
	char **dis = NULL;
	if (disabled)
		dis = calloc(n ? (size_t)n : 1, sizeof(*dis));
	else
		en = calloc(n ? (size_t)n : 1, sizeof(*en));
	if (!en && !dis)
		return -1;
	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char *p = pathf("%s[%d]", path, i);
		char *name = NULL;
		int64_t w = 0;
		bool has_w = false;
		if (!cJSON_IsObject(it)) {
			sk_errors_addf(e, "%s: Invalid type: expected object", p);
			rc = -1;
		} else if (sk_json_check_object(it, p, fields, false, e) < 0 ||
			   sk_json_string(it, "name", p, &name, NULL, e) < 0 ||
			   sk_json_int(it, "weight", p, INT32_MIN, INT32_MAX, &w, &has_w, e) < 0) {
			rc = -1;
		}
		if (!name)
			name = strdup("");
		if (!name)
			rc = -1;
		if (disabled) {
			dis[i] = name;
		} else {
			en[i] = (struct sk_plugin_set_entry){ name, (int32_t)w, has_w, i };
		}
		path_free(p);
	}
	if (disabled) {
		set->disabled = dis;
		set->ndisabled = n;
	} else {
		set->enabled = en;
		set->nenabled = n;
	}
	return rc;
}

static int decode_plugins(const cJSON *plugins, const char *path, struct user_profile *u, struct sk_errors *e)
{
	static const char *const set_fields[] = { "enabled", "disabled", NULL };
	if (!plugins || cJSON_IsNull(plugins))
		return 0;
	if (sk_json_check_object(plugins, path, ep_fields, false, e) < 0)
		return -1;
	int rc = 0;
	for (int ep = 0; ep <= SK_EP_COUNT; ep++) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(plugins, ep_fields[ep]);
		if (!s || cJSON_IsNull(s))
			continue;
		char *p = pathf("%s.%s", path, ep_fields[ep]);
		if (sk_json_check_object(s, p, set_fields, false, e) < 0) {
			rc = -1;
		} else {
			char *pe = pathf("%s.enabled", p), *pd = pathf("%s.disabled", p);
			if (decode_plugin_list(cJSON_GetObjectItemCaseSensitive(s, "enabled"), pe, false, &u->sets[ep], e) < 0)
				rc = -1;
			if (decode_plugin_list(cJSON_GetObjectItemCaseSensitive(s, "disabled"), pd, true, &u->sets[ep], e) < 0)
				rc = -1;
			path_free(pe);
			path_free(pd);
		}
		path_free(p);
	}
	return rc;
}

static int decode_plugin_config(const cJSON *arr, const char *path, struct user_profile *u, struct sk_errors *e)
{
	static const char *const fields[] = { "name", "args", NULL };
	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr)) {
		sk_errors_addf(e, "%s: Invalid type: expected array", path);
		return -1;
	}
	int n = cJSON_GetArraySize(arr), i = 0, rc = 0;
	u->pc = calloc(n ? (size_t)n : 1, sizeof(*u->pc));
	if (!u->pc)
		return -1;
	u->npc = n;
	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char *p = pathf("%s[%d]", path, i);
		if (!cJSON_IsObject(it)) {
			sk_errors_addf(e, "%s: Invalid type: expected object", p);
			rc = -1;
		} else if (sk_json_check_object(it, p, fields, false, e) < 0 ||
			   sk_json_string(it, "name", p, &u->pc[i].name, NULL, e) < 0) {
			rc = -1;
		} else {
			const cJSON *args = cJSON_GetObjectItemCaseSensitive(it, "args");
			if (args && !cJSON_IsNull(args) && !(u->pc[i].args = cJSON_Duplicate(args, 1)))
				rc = -1;
		}
		if (!u->pc[i].name && !(u->pc[i].name = strdup("")))
			rc = -1;
		path_free(p);
	}
	return rc;
}

/* ---------- extenders (pkg/scheduler/apis/config/types.go (Extender); validateExtenders) ---------- */

static int check_extenders_shape(const cJSON *arr, const char *path, struct sk_errors *e)
{
	static const char *const fields[] = { "urlPrefix",   "filterVerb",  "preemptVerb",      "prioritizeVerb",
					      "weight",      "bindVerb",    "enableHTTPS",      "tlsConfig",
					      "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable",
					      NULL };
	static const char *const tls_fields[] = { "insecure", "serverName", "certFile", "keyFile",
						  "caFile",   "certData",   "keyData",  "caData", NULL };
	static const char *const mr_fields[] = { "name", "ignoredByScheduler", NULL };
	static const char *const str_fields[] = { "urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb",
						  "httpTimeout", NULL };
	static const char *const bool_fields[] = { "enableHTTPS", "nodeCacheCapable", "ignorable", NULL };
	if (!cJSON_IsArray(arr)) {
		sk_errors_addf(e, "%s: Invalid type: expected array", path);
		return -1;
	}
	int rc = 0, i = 0;
	for (const cJSON *x = arr->child; x; x = x->next, i++) {
		char *p = pathf("%s[%d]", path, i);
		if (!cJSON_IsObject(x)) {
			sk_errors_addf(e, "%s: Invalid type: expected object", p);
			rc = -1;
			path_free(p);
			continue;
		}
		rc |= sk_json_check_object(x, p, fields, false, e);
		for (int f = 0; str_fields[f]; f++) {
			char *tmp = NULL;
			rc |= sk_json_string(x, str_fields[f], p, &tmp, NULL, e);
			if (tmp && !strcmp(str_fields[f], "httpTimeout")) {
				int64_t ms;
				if (kube_duration_parse_ms(tmp, &ms) < 0) {
					char *fp = pathf("%s.httpTimeout", p);
					sk_err_invalid_str(e, fp, tmp, "invalid duration");
					path_free(fp);
					rc = -1;
				}
			}
			free(tmp);
		}
		for (int f = 0; bool_fields[f]; f++) {
			bool b;
			rc |= sk_json_bool(x, bool_fields[f], p, &b, NULL, e);
		}
		int64_t w;
		rc |= sk_json_int(x, "weight", p, INT64_MIN, INT64_MAX, &w, NULL, e);
		const cJSON *tls = cJSON_GetObjectItemCaseSensitive(x, "tlsConfig");
		if (tls && !cJSON_IsNull(tls)) {
			char *tp = pathf("%s.tlsConfig", p);
			rc |= sk_json_check_object(tls, tp, tls_fields, false, e);
			path_free(tp);
		}
		const cJSON *mr = cJSON_GetObjectItemCaseSensitive(x, "managedResources");
		if (mr && !cJSON_IsNull(mr)) {
			char *mp = pathf("%s.managedResources", p);
			if (!cJSON_IsArray(mr)) {
				sk_errors_addf(e, "%s: Invalid type: expected array", mp);
				rc = -1;
			} else {
				int j = 0;
				for (const cJSON *r = mr->child; r; r = r->next, j++) {
					char *rp = pathf("%s[%d]", mp, j);
					rc |= sk_json_check_object(r, rp, mr_fields, false, e);
					path_free(rp);
				}
			}
			path_free(mp);
		}
		path_free(p);
	}
	return rc ? -1 : 0;
}

static const char *json_str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static void validate_extenders(const cJSON *arr, const char *path, struct sk_errors *e)
{
	int binders = 0, i = 0;
	int nnames = 0;
	const char *names[256];
	for (const cJSON *x = arr->child; x; x = x->next, i++) {
		int64_t weight = 0;
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(x, "weight");
		if (w)
			kube_json_get_int64(w, &weight);
		if (*json_str(x, "prioritizeVerb") && weight <= 0) {
			char *p = pathf("%s[%d].weight", path, i);
			sk_err_invalid_int(e, p, weight, "must have a positive weight applied to it");
			path_free(p);
		}
		if (*json_str(x, "bindVerb"))
			binders++;
		const cJSON *mr = cJSON_GetObjectItemCaseSensitive(x, "managedResources");
		int j = 0;
		for (const cJSON *r = cJSON_IsArray(mr) ? mr->child : NULL; r; r = r->next, j++) {
			const char *name = json_str(r, "name");
			char *p = pathf("%s[%d].managedResources[%d].name", path, i, j);
			char *err = NULL;
			if (kube_validate_qualified_name(name, &err) < 0) {
				char *msg = err;
				while (msg && *msg) {
					char *sep = strstr(msg, "; ");
					if (sep)
						*sep = '\0';
					sk_err_invalid_str(e, p, name, msg);
					msg = sep ? sep + 2 : NULL;
				}
			} else if (!strchr(name, '/') || strstr(name, "kubernetes.io/") || !strncmp(name, "requests.", 9)) {
				sk_err_invalid_str(e, p, name, "is an invalid extended resource name");
			}
			free(err);
			for (int k = 0; k < nnames; k++) {
				if (!strcmp(names[k], name)) {
					sk_err_invalid_str(e, p, name, "duplicate extender managed resource name");
					break;
				}
			}
			if (nnames < 256)
				names[nnames++] = name;
			path_free(p);
		}
	}
	if (binders > 1) {
		char printed[64];
		snprintf(printed, sizeof(printed), "\"found %d extenders implementing bind\"", binders);
		sk_err_invalid_raw(e, path, printed, "only one extender can implement bind");
	}
}

/* ---------- profiles: merge, names, args, expansion ---------- */

/* mergePluginSet (pkg/scheduler/apis/config/v1/default_plugins.go (mergePlugins)). The default set has only multiPoint entries. */
static int merge_set(const struct user_set *u, int ep, struct sk_plugin_set_config *out)
{
	bool all_disabled = false;
	out->ndisabled = u->ndisabled;
	out->disabled = calloc(u->ndisabled ? (size_t)u->ndisabled : 1, sizeof(char *));
	if (!out->disabled)
		return -1;
	for (int i = 0; i < u->ndisabled; i++) {
		if (!(out->disabled[i] = strdup(u->disabled[i])))
			return -1;
		if (!strcmp(u->disabled[i], "*"))
			all_disabled = true;
	}
	int ndef = ep == SK_EP_MULTI_POINT ? sk_ndefault_plugins : 0;
	out->enabled = calloc((size_t)(ndef + u->nenabled + 1), sizeof(*out->enabled));
	if (!out->enabled)
		return -1;
	bool *replaced = calloc((size_t)u->nenabled + 1, sizeof(bool));
	if (!replaced)
		return -1;
	int n = 0;
	for (int d = 0; d < ndef && !all_disabled; d++) {
		const char *name = sk_default_plugins[d].name;
		bool dis = false;
		for (int i = 0; i < u->ndisabled; i++)
			if (!strcmp(u->disabled[i], name))
				dis = true;
		if (dis)
			continue;
		int last = -1; /* the map keeps the last user entry of a name */
		for (int i = 0; i < u->nenabled; i++)
			if (!strcmp(u->enabled[i].name, name))
				last = i;
		struct sk_plugin_set_entry en;
		if (last >= 0) {
			en = u->enabled[last];
			replaced[last] = true;
		} else {
			en = (struct sk_plugin_set_entry){ (char *)name, sk_default_plugins[d].weight,
							   sk_default_plugins[d].weight != 0, -1 };
		}
		if (!(en.name = strdup(en.name))) {
			free(replaced);
			return -1;
		}
		out->enabled[n++] = en;
		out->nenabled = n;
	}
	for (int i = 0; i < u->nenabled; i++) {
		if (replaced[i])
			continue;
		struct sk_plugin_set_entry en = u->enabled[i];
		if (!(en.name = strdup(en.name))) {
			free(replaced);
			return -1;
		}
		out->enabled[n++] = en;
		out->nenabled = n;
	}
	free(replaced);
	return 0;
}

/* Reports removed and unknown plugin names in the user's enabled lists. Returns the set of fields
 * (1 << ep, SK_EP_MULTI_POINT included) that named one, so that the checks whose result such a
 * name decides (queue sort and bind counts, the common queue sort) do not add a second error. */
static unsigned check_enabled_names(const struct user_profile *u, int pi, struct sk_errors *e)
{
	unsigned bad = 0;
	for (int ep = 0; ep <= SK_EP_COUNT; ep++) {
		for (int i = 0; i < u->sets[ep].nenabled; i++) {
			const char *name = u->sets[ep].enabled[i].name;
			char *p = pathf("profiles[%d].plugins.%s.enabled[%d]", pi, ep_fields[ep], i);
			/* upstream checks removed names at the twelve points, not in multiPoint, where
			 * such a name is simply not a registered plugin */
			if (ep != SK_EP_MULTI_POINT && name_in(name, sk_removed_v1_plugins)) {
				char detail[200];
				snprintf(detail, sizeof(detail), "was invalid in version \"%s\" (KubeSchedulerConfiguration is version \"%s\")",
					 API_VERSION, API_VERSION);
				sk_err_invalid_str(e, p, name, detail);
				bad |= 1u << ep;
			} else if (!plugin_lookup(name) && !unavailable_static_name(name)) {
				bad |= 1u << ep;
				const char *s = sk_registry_suggest(name);
				if (s)
					sk_errors_addf(e, "%s: unknown plugin \"%s\"; did you mean \"%s\"?", p, name, s);
				else
					sk_errors_addf(e, "%s: unknown plugin \"%s\"", p, name);
			}
			path_free(p);
		}
	}
	return bad;
}

static int add_unavailable(struct sk_profile_config *p, const char *name)
{
	const char *s = unavailable_static_name(name);
	if (!s)
		return 0;
	for (int i = 0; i < p->nunavailable; i++)
		if (p->unavailable[i] == s)
			return 0;
	const char **n = realloc(p->unavailable, (size_t)(p->nunavailable + 1) * sizeof(*n));
	if (!n)
		return -1;
	p->unavailable = n;
	p->unavailable[p->nunavailable++] = s;
	return 0;
}

static bool set_has(const struct sk_plugin_set_config *s, const char *name, bool disabled)
{
	if (disabled) {
		for (int i = 0; i < s->ndisabled; i++)
			if (!strcmp(s->disabled[i], name))
				return true;
		return false;
	}
	for (int i = 0; i < s->nenabled; i++)
		if (!strcmp(s->enabled[i].name, name))
			return true;
	return false;
}

static char *entry_path(int pi, int ep, const struct sk_plugin_set_entry *en)
{
	if (en->user_index >= 0)
		return pathf("profiles[%d].plugins.%s.enabled[%d]", pi, ep_fields[ep], en->user_index);
	return pathf("profiles[%d].plugins.%s", pi, ep_fields[ep]);
}

/* updatePluginList + expandMultiPointPlugins for one extension point (pkg/scheduler/framework/runtime/framework.go (expandMultiPointPlugins)). */
static int expand_point(struct sk_profile_config *p, int pi, int ep, struct sk_errors *e, struct sk_errors *warn)
{
	const struct sk_plugin_set_config *spec = &p->merged[ep], *mp = &p->merged[SK_EP_MULTI_POINT];
	int cap = spec->nenabled + mp->nenabled + 1;
	const struct sk_plugin_desc **specific = calloc((size_t)cap, sizeof(*specific));
	const struct sk_plugin_desc **multi = calloc((size_t)cap, sizeof(*multi));
	bool *override = calloc((size_t)cap, sizeof(bool));
	int nspecific = 0, nmulti = 0, rc = 0;
	if (!specific || !multi || !override) {
		rc = -1;
		goto out;
	}
	for (int i = 0; i < spec->nenabled; i++) {
		const struct sk_plugin_set_entry *en = &spec->enabled[i];
		const struct sk_plugin_desc *d = plugin_lookup(en->name);
		if (!d) {
			if (unavailable_static_name(en->name)) {
				char *wp = entry_path(pi, ep, en);
				sk_errors_addf(warn, "%s: plugin \"%s\" is not available in this build; skipped", wp, en->name);
				path_free(wp);
				if (add_unavailable(p, en->name) < 0)
					rc = -1;
			}
			continue; /* unknown names were reported by check_enabled_names */
		}
		char *path = entry_path(pi, ep, en);
		if (!sk_desc_implements(d, ep)) {
			sk_errors_addf(e, "%s: plugin \"%s\" does not extend %s plugin", path, en->name, ep_types[ep]);
		} else {
			bool dup = false;
			for (int j = 0; j < nspecific; j++)
				if (specific[j] == d)
					dup = true;
			if (dup)
				sk_errors_addf(e, "%s: plugin \"%s\" already registered as \"%s\"", path, en->name, ep_types[ep]);
			else
				specific[nspecific++] = d;
		}
		path_free(path);
	}
	if (!set_has(spec, "*", true)) {
		for (int i = 0; i < mp->nenabled; i++) {
			const struct sk_plugin_set_entry *en = &mp->enabled[i];
			const struct sk_plugin_desc *d = plugin_lookup(en->name);
			if (!d) {
				if (unavailable_static_name(en->name) && add_unavailable(p, en->name) < 0)
					rc = -1;
				continue;
			}
			if (!sk_desc_implements(d, ep) || set_has(spec, en->name, true))
				continue;
			bool in_specific = false;
			for (int j = 0; j < nspecific; j++)
				if (specific[j] == d) {
					override[j] = true;
					in_specific = true;
				}
			if (in_specific)
				continue;
			bool dup = false;
			for (int j = 0; j < nmulti; j++)
				if (multi[j] == d)
					dup = true;
			if (dup) {
				char *path = entry_path(pi, SK_EP_MULTI_POINT, en);
				sk_errors_addf(e, "%s: plugin \"%s\" already registered as \"%s\"", path, en->name, ep_types[ep]);
				path_free(path);
				continue;
			}
			multi[nmulti++] = d;
		}
	}
	struct sk_plugin_list *list = &p->points[ep];
	list->items = calloc((size_t)(nspecific + nmulti + 1), sizeof(*list->items));
	if (!list->items) {
		rc = -1;
		goto out;
	}
	for (int j = 0; j < nspecific; j++)
		if (override[j])
			list->items[list->n++] = (struct sk_plugin_ref){ specific[j], 0 };
	for (int j = 0; j < nmulti; j++)
		list->items[list->n++] = (struct sk_plugin_ref){ multi[j], 0 };
	for (int j = 0; j < nspecific; j++)
		if (!override[j])
			list->items[list->n++] = (struct sk_plugin_ref){ specific[j], 0 };
out:
	free(specific);
	free(multi);
	free(override);
	return rc;
}

/* Go's int64 arithmetic wraps; so do these, without C's undefined signed overflow. */
static int64_t wrap_int64(uint64_t u)
{
	return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(UINT64_MAX - u) - 1;
}

bool sk_score_weight_overflows(int64_t total, int32_t weight)
{
	return (int64_t)weight * SK_MAX_NODE_SCORE > wrap_int64((uint64_t)INT64_MAX - (uint64_t)total);
}

int64_t sk_score_total_add(int64_t total, int32_t weight)
{
	return wrap_int64((uint64_t)total + (uint64_t)((int64_t)weight * SK_MAX_NODE_SCORE));
}

/* getScoreWeights: the specific score list first, then multiPoint; the first weight seen wins. */
static void score_weights(struct sk_profile_config *p, struct sk_errors *e, int pi)
{
	struct sk_plugin_list *score = &p->points[SK_EP_SCORE];
	const struct sk_plugin_set_config *sets[2] = { &p->merged[SK_EP_SCORE], &p->merged[SK_EP_MULTI_POINT] };
	int64_t total = 0;
	bool overflow = false;
	for (int s = 0; s < 2; s++) {
		for (int i = 0; i < sets[s]->nenabled; i++) {
			const struct sk_plugin_set_entry *en = &sets[s]->enabled[i];
			const struct sk_plugin_desc *d = plugin_lookup(en->name);
			if (!d || !sk_desc_implements(d, SK_EP_SCORE))
				continue;
			struct sk_plugin_ref *ref = NULL;
			for (int j = 0; j < score->n; j++)
				if (score->items[j].desc == d)
					ref = &score->items[j];
			bool seen = false;
			for (int s2 = 0; s2 <= s && !seen; s2++)
				for (int k = 0; k < (s2 == s ? i : sets[s2]->nenabled) && !seen; k++)
					seen = !strcmp(sets[s2]->enabled[k].name, en->name);
			if (seen)
				continue;
			int32_t w = en->weight == 0 ? 1 : en->weight;
			if (!overflow && sk_score_weight_overflows(total, w)) {
				sk_errors_addf(e, "profiles[%d].plugins.score: total score of Score plugins could overflow", pi);
				overflow = true;
			}
			total = sk_score_total_add(total, w);
			if (ref)
				ref->weight = w;
		}
	}
	for (int j = 0; j < score->n; j++)
		if (score->items[j].weight == 0)
			score->items[j].weight = 1;
}

static int pc_add(struct sk_profile_config *p, const char *name, const struct sk_plugin_desc *d, void *args, cJSON *raw)
{
	struct sk_plugin_config_entry *n = realloc(p->plugin_config, (size_t)(p->nplugin_config + 1) * sizeof(*n));
	if (!n)
		return -1;
	p->plugin_config = n;
	char *dup = strdup(name);
	if (!dup)
		return -1;
	p->plugin_config[p->nplugin_config++] = (struct sk_plugin_config_entry){ dup, d, args, raw };
	return 0;
}

static const struct sk_plugin_desc *any_desc(const char *name)
{
	const struct sk_plugin_desc *d = plugin_lookup(name);
	return d ? d : sk_unavailable_plugin_desc(name);
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool enabled_anywhere(const struct sk_profile_config *p, const char *name)
{
	for (int ep = 0; ep <= SK_EP_COUNT; ep++)
		if (set_has(&p->merged[ep], name, false))
			return true;
	return false;
}

/* A decoding (not validation) error: strict decoding, types, the args kind. */
static bool is_decoding_error(const char *msg)
{
	return !msg || !strncmp(msg, "unknown field ", 14) || strstr(msg, ": Invalid type: ") ||
	       strstr(msg, ": args were not of type ") || strstr(msg, ": out of range for ") ||
	       strstr(msg, ": out of memory") || strstr(msg, ".apiVersion: Unsupported value: ") != NULL;
}

/* pluginConfig as given (decoded by each plugin's args decoder), then default args for every
 * enabled plugin with an args type and no entry, by name (setDefaults_KubeSchedulerProfile). */
static int build_plugin_config(struct sk_profile_config *p, const struct user_profile *u, int pi, struct sk_errors *e,
			       struct sk_errors *warn)
{
	for (int i = 0; i < u->npc; i++) {
		const char *name = u->pc[i].name;
		char *path = pathf("profiles[%d].pluginConfig[%d]", pi, i);
		for (int j = 0; j < i; j++) {
			if (!strcmp(u->pc[j].name, name)) {
				sk_err_duplicate(e, path, name);
				break;
			}
		}
		const struct sk_plugin_desc *d = any_desc(name);
		if (name_in(name, sk_removed_v1_plugins)) {
			char detail[200];
			snprintf(detail, sizeof(detail), "was invalid in version \"%s\" (KubeSchedulerConfiguration is version \"%s\")",
				 API_VERSION, API_VERSION);
			sk_err_invalid_str(e, path, name, detail);
		} else if (d && d->args_kind && d->args_decode) {
			char *ap = pathf("%s.args", path);
			void *args = NULL;
			/* Upstream quirk (validation.go registers the NodeResourcesFit check under the key
			 * "NodeResourcesFitArgs"): its args are validated only when the plugin is built, so
			 * for a profile that does not enable it only decoding errors count. */
			bool fit_unused = !strcmp(name, "NodeResourcesFit") && !enabled_anywhere(p, name);
			struct sk_errors scratch = { 0 };
			int drc = d->args_decode(u->pc[i].args, &args, fit_unused ? &scratch : e, ap);
			for (int k = 0; k < scratch.n; k++)
				if (is_decoding_error(scratch.msgs[k]))
					sk_errors_addf(e, "%s", scratch.msgs[k] ? scratch.msgs[k] : "out of memory");
			if (drc != 0 && fit_unused && scratch.n == 0)
				sk_errors_addf(e, "%s: out of memory", ap);
			if (drc != 0 && fit_unused && scratch.n) {
				sk_errors_addf(warn, "%s: invalid args of plugin \"%s\", which the profile does not enable; ignored as upstream does",
					       ap, name);
				cJSON *raw = u->pc[i].args ? cJSON_Duplicate(u->pc[i].args, 1) : NULL;
				if ((u->pc[i].args && !raw) || pc_add(p, name, NULL, NULL, raw) < 0) {
					cJSON_Delete(raw);
					drc = -2;
				}
			}
			sk_errors_free(&scratch);
			if (drc == -2 || (drc == 0 && pc_add(p, name, d, args, NULL) < 0)) {
				if (drc == 0)
					d->args_free(args);
				path_free(ap);
				path_free(path);
				return -1;
			}
			path_free(ap);
		} else {
			if (!d)
				sk_errors_addf(warn, "%s: plugin \"%s\" is not registered; its args are kept as given", path, name);
			cJSON *raw = u->pc[i].args ? cJSON_Duplicate(u->pc[i].args, 1) : NULL;
			if ((u->pc[i].args && !raw) || pc_add(p, name, d, NULL, raw) < 0) {
				cJSON_Delete(raw);
				path_free(path);
				return -1;
			}
		}
		path_free(path);
	}
	/* names enabled anywhere, sorted and unique (upstream pluginsNames) */
	int total = 0;
	for (int ep = 0; ep <= SK_EP_COUNT; ep++)
		total += p->merged[ep].nenabled;
	const char **names = calloc((size_t)total + 1, sizeof(*names));
	if (!names)
		return -1;
	int n = 0;
	for (int ep = 0; ep <= SK_EP_COUNT; ep++)
		for (int i = 0; i < p->merged[ep].nenabled; i++)
			names[n++] = p->merged[ep].enabled[i].name;
	qsort(names, (size_t)n, sizeof(*names), cmp_cstr);
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		if (i > 0 && !strcmp(names[i], names[i - 1]))
			continue;
		bool given = false;
		for (int j = 0; j < u->npc; j++)
			if (!strcmp(u->pc[j].name, names[i]))
				given = true;
		const struct sk_plugin_desc *d = any_desc(names[i]);
		if (given || !d || !d->args_kind || !d->args_decode)
			continue;
		void *args = NULL;
		char *ap = pathf("profiles[%d].pluginConfig(%s).args", pi, names[i]);
		if (d->args_decode(NULL, &args, e, ap) == 0 && pc_add(p, names[i], d, args, NULL) < 0) {
			d->args_free(args);
			rc = -1;
		}
		path_free(ap);
	}
	free(names);
	if (rc < 0)
		return -1;
	/* the framework's view: decoded args of built plugins */
	p->args = calloc((size_t)p->nplugin_config + 1, sizeof(*p->args));
	if (!p->args)
		return -1;
	for (int i = 0; i < p->nplugin_config; i++) {
		const struct sk_plugin_config_entry *pc = &p->plugin_config[i];
		if (pc->desc && pc->args && plugin_lookup(pc->name) == pc->desc)
			p->args[p->nargs++] = (struct sk_plugin_args){ pc->desc, pc->args };
	}
	return 0;
}

const void *sk_profile_args(const struct sk_profile_config *p, const char *name)
{
	for (int i = 0; i < p->nargs; i++)
		if (!strcmp(p->args[i].desc->name, name))
			return p->args[i].args;
	return NULL;
}

static void profile_free(struct sk_profile_config *p)
{
	free(p->scheduler_name);
	for (int ep = 0; ep < SK_EP_COUNT; ep++)
		free(p->points[ep].items);
	for (int ep = 0; ep <= SK_EP_COUNT; ep++)
		plugin_set_free(&p->merged[ep]);
	for (int i = 0; i < p->nplugin_config; i++) {
		struct sk_plugin_config_entry *pc = &p->plugin_config[i];
		if (pc->args && pc->desc && pc->desc->args_free)
			pc->desc->args_free(pc->args);
		cJSON_Delete(pc->raw);
		free(pc->name);
	}
	free(p->plugin_config);
	free(p->args);
	free(p->unavailable);
	cJSON_Delete(p->extenders);
}

static cJSON *plugin_set_json(const struct sk_plugin_set_config *s);

/* A PluginSet as the user writes it, in JSON ({"enabled":[{"name":"X"}],"disabled":[{"name":"*"}]});
 * upstream prints Go's %#v of its internal struct here. Caller frees; NULL on OOM. */
static char *print_plugin_set(const struct sk_plugin_set_config *s)
{
	cJSON *j = plugin_set_json(s);
	char *out = j ? kube_json_print(j) : NULL;
	cJSON_Delete(j);
	return out;
}

static bool plugin_sets_equal(const struct sk_plugin_set_config *a, const struct sk_plugin_set_config *b)
{
	if (a->nenabled != b->nenabled || a->ndisabled != b->ndisabled)
		return false;
	for (int i = 0; i < a->nenabled; i++)
		if (strcmp(a->enabled[i].name, b->enabled[i].name) || a->enabled[i].weight != b->enabled[i].weight)
			return false;
	for (int i = 0; i < a->ndisabled; i++)
		if (strcmp(a->disabled[i], b->disabled[i]))
			return false;
	return true;
}

static cJSON *pc_args_json(const struct sk_plugin_config_entry *pc)
{
	if (pc->args && pc->desc && pc->desc->args_encode)
		return pc->desc->args_encode(pc->args);
	return pc->raw ? cJSON_Duplicate(pc->raw, 1) : NULL;
}

/* validateCommonQueueSort. A profile whose queueSort (or multiPoint) names an unknown plugin was
 * reported already: comparing its set would only repeat that error. */
static void validate_common_queue_sort(const struct sk_config *cfg, const unsigned *bad_names, struct sk_errors *e)
{
	const unsigned qs_bad = 1u << SK_EP_QUEUE_SORT | 1u << SK_EP_MULTI_POINT;
	const struct sk_plugin_set_config *canon = &cfg->profiles[0].merged[SK_EP_QUEUE_SORT];
	const char *qs_name = canon->nenabled ? canon->enabled[0].name : NULL;
	if (canon->nenabled > 1)
		sk_errors_addf(e, "profiles[0].plugins.queueSort.Enabled: Invalid value: %d: only one queue sort plugin can be enabled",
			       canon->nenabled);
	cJSON *canon_args = NULL;
	for (int i = 0; qs_name && i < cfg->profiles[0].nplugin_config; i++)
		if (!strcmp(cfg->profiles[0].plugin_config[i].name, qs_name))
			canon_args = pc_args_json(&cfg->profiles[0].plugin_config[i]);
	for (int p = 1; p < cfg->nprofiles; p++) {
		const struct sk_plugin_set_config *cur = &cfg->profiles[p].merged[SK_EP_QUEUE_SORT];
		if (!plugin_sets_equal(canon, cur) && !((bad_names[0] | bad_names[p]) & qs_bad)) {
			char *printed = print_plugin_set(cur);
			sk_errors_addf(e, "profiles[%d].plugins.queueSort: Invalid value: %s: queueSort must be the same for all profiles", p,
				       printed ? printed : "{}");
			free(printed);
		}
		for (int i = 0; qs_name && i < cfg->profiles[p].nplugin_config; i++) {
			const struct sk_plugin_config_entry *pc = &cfg->profiles[p].plugin_config[i];
			if (strcmp(pc->name, qs_name))
				continue;
			cJSON *args = pc_args_json(pc);
			bool same = (!args && !canon_args) || (args && canon_args && cJSON_Compare(args, canon_args, 1));
			if (!same) {
				char *printed = args ? kube_json_print(args) : NULL;
				sk_errors_addf(e, "profiles[%d].pluginConfig.args: Invalid value: %s: queueSort must be the same for all profiles",
					       p, printed ? printed : "null");
				free(printed);
			}
			cJSON_Delete(args);
		}
	}
	cJSON_Delete(canon_args);
}

/* ---------- top level ---------- */

static int decode_profile(const cJSON *obj, int pi, struct user_profile *u, struct sk_errors *e)
{
	static const char *const fields[] = { "schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig",
					      "extenders", "decisionRecords", NULL };
	char *path = pathf("profiles[%d]", pi);
	int rc = 0;
	if (!cJSON_IsObject(obj)) {
		sk_errors_addf(e, "%s: Invalid type: expected object", path);
		path_free(path);
		return -1;
	}
	rc |= sk_json_check_object(obj, path, fields, false, e);
	rc |= sk_json_string(obj, "schedulerName", path, &u->scheduler_name, &u->has_name, e);
	rc |= sk_json_int(obj, "percentageOfNodesToScore", path, INT32_MIN, INT32_MAX, &u->pct, &u->has_pct, e);
	char *pp = pathf("%s.plugins", path), *pcp = pathf("%s.pluginConfig", path), *ep = pathf("%s.extenders", path);
	rc |= decode_plugins(cJSON_GetObjectItemCaseSensitive(obj, "plugins"), pp, u, e);
	rc |= decode_plugin_config(cJSON_GetObjectItemCaseSensitive(obj, "pluginConfig"), pcp, u, e);
	const cJSON *ext = cJSON_GetObjectItemCaseSensitive(obj, "extenders");
	if (ext && !cJSON_IsNull(ext)) {
		if (check_extenders_shape(ext, ep, e) < 0)
			rc = -1;
		else if (!(u->extenders = cJSON_Duplicate(ext, 1)))
			rc = -1;
	}
	char *rp = pathf("%s.decisionRecords", path);
	rc |= sk_records_config_decode(cJSON_GetObjectItemCaseSensitive(obj, "decisionRecords"), rp, &u->records, e);
	path_free(rp);
	path_free(pp);
	path_free(pcp);
	path_free(ep);
	path_free(path);
	return rc ? -1 : 0;
}

static int duration_field(const cJSON *obj, const char *field, const char *path, int64_t *ms, struct sk_errors *e)
{
	char *s = NULL;
	bool present = false;
	if (sk_json_string(obj, field, path, &s, &present, e) < 0)
		return -1;
	if (!present)
		return 0;
	int rc = 0;
	if (kube_duration_parse_ms(s, ms) < 0) {
		char *p = pathf("%s.%s", path, field);
		sk_err_invalid_str(e, p, s, "invalid duration");
		path_free(p);
		rc = -1;
	}
	free(s);
	return rc;
}

static void validate_leader_election(const struct sk_leader_election_config *le, struct sk_errors *e)
{
	char buf[48], buf2[48];
	if (!le->leader_elect)
		return;
	if (le->lease_duration_ms <= 0) {
		kube_duration_format_ms(le->lease_duration_ms, buf, sizeof buf);
		sk_err_invalid_raw(e, "leaderElection.leaseDuration", buf, "must be greater than zero");
	}
	if (le->renew_deadline_ms <= 0) {
		kube_duration_format_ms(le->renew_deadline_ms, buf, sizeof buf);
		sk_err_invalid_raw(e, "leaderElection.renewDeadline", buf, "must be greater than zero");
	}
	if (le->retry_period_ms <= 0) {
		kube_duration_format_ms(le->retry_period_ms, buf, sizeof buf);
		sk_err_invalid_raw(e, "leaderElection.retryPeriod", buf, "must be greater than zero");
	}
	if (le->lease_duration_ms <= le->renew_deadline_ms) {
		kube_duration_format_ms(le->renew_deadline_ms, buf2, sizeof buf2);
		sk_err_invalid_raw(e, "leaderElection.leaseDuration", buf2, "LeaseDuration must be greater than RenewDeadline");
	}
	if (!le->resource_lock || !*le->resource_lock)
		sk_err_invalid_str(e, "leaderElection.resourceLock", "", "resourceLock is required");
	if (!le->resource_namespace || !*le->resource_namespace)
		sk_err_invalid_str(e, "leaderElection.resourceNamespace", "", "resourceNamespace is required");
	if (!le->resource_name || !*le->resource_name)
		sk_err_invalid_str(e, "leaderElection.resourceName", "", "resourceName is required");
	if (strcmp(le->resource_lock ? le->resource_lock : "", "leases"))
		sk_err_invalid_str(e, "leaderElection.resourceLock", le->resource_lock ? le->resource_lock : "",
				   "resourceLock value must be \"leases\"");
}

/* The release that stopped serving an old kubescheduler.config.k8s.io version (KEP-785, the
 * upstream changelogs), or NULL for a name that never was one. */
static const char *removed_api_version(const char *av)
{
	static const struct {
		const char *version, *removed_in;
	} removed[] = {
		{ "kubescheduler.config.k8s.io/v1alpha1", "v1.19" },
		{ "kubescheduler.config.k8s.io/v1beta1", "v1.23" },
		{ "kubescheduler.config.k8s.io/v1beta2", "v1.28" },
		{ "kubescheduler.config.k8s.io/v1beta3", "v1.29" },
	};
	for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++)
		if (!strcmp(av, removed[i].version))
			return removed[i].removed_in;
	return NULL;
}

static int decode_top(const cJSON *root, struct sk_config *cfg, struct user_profile **uprofs, int *nuprofs,
		      bool *has_pct, bool *has_ia, bool *has_max, bool *has_par, struct sk_errors *e)
{
	static const char *const fields[] = { "apiVersion",
					      "kind",
					      "parallelism",
					      "leaderElection",
					      "clientConnection",
					      "enableProfiling",
					      "enableContentionProfiling",
					      "percentageOfNodesToScore",
					      "podInitialBackoffSeconds",
					      "podMaxBackoffSeconds",
					      "profiles",
					      "extenders",
					      "delayCacheUntilActive",
					      NULL };
	static const char *const le_fields[] = { "leaderElect",   "leaseDuration", "renewDeadline",     "retryPeriod",
						 "resourceLock",  "resourceName",  "resourceNamespace", NULL };
	static const char *const cc_fields[] = { "kubeconfig", "acceptContentTypes", "contentType", "qps", "burst", NULL };
	int rc = 0;
	if (!cJSON_IsObject(root)) {
		sk_errors_addf(e, "config: Invalid type: expected a KubeSchedulerConfiguration object");
		return -1;
	}
	rc |= sk_json_check_object(root, "", fields, false, e);

	char *av = NULL, *kind = NULL;
	bool has_av = false, has_kind = false;
	rc |= sk_json_string(root, "apiVersion", "", &av, &has_av, e);
	rc |= sk_json_string(root, "kind", "", &kind, &has_kind, e);
	if (!has_av || !*av) {
		sk_err_required(e, "apiVersion", "");
		rc = -1;
	} else if (strcmp(av, API_VERSION)) {
		const char *removed_in = removed_api_version(av);
		if (removed_in)
			sk_errors_addf(e, "apiVersion: Unsupported value: \"%s\": supported values: \"%s\" (%s was removed in "
					  "Kubernetes %s; convert the file with \"schedkit-scheduler convert\")",
				       av, API_VERSION, av, removed_in);
		else
			sk_err_unsupported(e, "apiVersion", av, (const char *const[]){ API_VERSION, NULL });
		rc = -1;
	}
	if (!has_kind || !*kind) {
		sk_err_required(e, "kind", "");
		rc = -1;
	} else if (strcmp(kind, KIND)) {
		const char *const sup[] = { KIND, NULL };
		sk_err_unsupported(e, "kind", kind, sup);
		rc = -1;
	}
	free(av);
	free(kind);

	int64_t v;
	bool present;
	if (sk_json_int(root, "parallelism", "", INT32_MIN, INT32_MAX, &v, &present, e) < 0)
		rc = -1;
	else if ((*has_par = present))
		cfg->parallelism = (int32_t)v;
	if (sk_json_int(root, "percentageOfNodesToScore", "", INT32_MIN, INT32_MAX, &v, &present, e) < 0)
		rc = -1;
	else if ((*has_pct = present))
		cfg->percentage_of_nodes_to_score = (int32_t)v;
	rc |= sk_json_int(root, "podInitialBackoffSeconds", "", INT64_MIN, INT64_MAX, &cfg->pod_initial_backoff_seconds,
			  has_ia, e);
	rc |= sk_json_int(root, "podMaxBackoffSeconds", "", INT64_MIN, INT64_MAX, &cfg->pod_max_backoff_seconds, has_max, e);
	rc |= sk_json_bool(root, "enableProfiling", "", &cfg->enable_profiling, &present, e);
	if (!present)
		cfg->enable_profiling = true;
	rc |= sk_json_bool(root, "enableContentionProfiling", "", &cfg->enable_contention_profiling,
			   &cfg->enable_contention_profiling_set, e);
	rc |= sk_json_bool(root, "delayCacheUntilActive", "", &cfg->delay_cache_until_active, NULL, e);

	const cJSON *le = cJSON_GetObjectItemCaseSensitive(root, "leaderElection");
	struct sk_leader_election_config *l = &cfg->leader_election;
	l->leader_elect = true;
	if (le && !cJSON_IsNull(le)) {
		rc |= sk_json_check_object(le, "leaderElection", le_fields, false, e);
		rc |= sk_json_bool(le, "leaderElect", "leaderElection", &l->leader_elect, &present, e);
		if (!present)
			l->leader_elect = true;
		rc |= duration_field(le, "leaseDuration", "leaderElection", &l->lease_duration_ms, e);
		rc |= duration_field(le, "renewDeadline", "leaderElection", &l->renew_deadline_ms, e);
		rc |= duration_field(le, "retryPeriod", "leaderElection", &l->retry_period_ms, e);
		rc |= sk_json_string(le, "resourceLock", "leaderElection", &l->resource_lock, NULL, e);
		rc |= sk_json_string(le, "resourceName", "leaderElection", &l->resource_name, NULL, e);
		rc |= sk_json_string(le, "resourceNamespace", "leaderElection", &l->resource_namespace, NULL, e);
	}
	const cJSON *cc = cJSON_GetObjectItemCaseSensitive(root, "clientConnection");
	if (cc && !cJSON_IsNull(cc)) {
		rc |= sk_json_check_object(cc, "clientConnection", cc_fields, false, e);
		rc |= sk_json_string(cc, "kubeconfig", "clientConnection", &cfg->client_kubeconfig, NULL, e);
		rc |= sk_json_string(cc, "acceptContentTypes", "clientConnection", &cfg->client_accept_content_types, NULL, e);
		rc |= sk_json_string(cc, "contentType", "clientConnection", &cfg->client_content_type, NULL, e);
		const cJSON *qps = cJSON_GetObjectItemCaseSensitive(cc, "qps");
		if (qps && !cJSON_IsNull(qps)) {
			if (!cJSON_IsNumber(qps)) {
				sk_errors_addf(e, "clientConnection.qps: Invalid type: expected number");
				rc = -1;
			} else {
				cfg->client_qps = qps->valuedouble;
			}
		}
		if (sk_json_int(cc, "burst", "clientConnection", INT32_MIN, INT32_MAX, &v, &present, e) < 0)
			rc = -1;
		else if (present)
			cfg->client_burst = (int32_t)v;
	}

	const cJSON *ext = cJSON_GetObjectItemCaseSensitive(root, "extenders");
	if (ext && !cJSON_IsNull(ext)) {
		if (check_extenders_shape(ext, "extenders", e) < 0)
			rc = -1;
		else if (!(cfg->extenders = cJSON_Duplicate(ext, 1)))
			rc = -1;
	}

	const cJSON *profs = cJSON_GetObjectItemCaseSensitive(root, "profiles");
	if (profs && !cJSON_IsNull(profs) && !cJSON_IsArray(profs)) {
		sk_errors_addf(e, "profiles: Invalid type: expected array");
		return -1;
	}
	int n = profs && cJSON_IsArray(profs) ? cJSON_GetArraySize(profs) : 0;
	*uprofs = calloc((size_t)n + 1, sizeof(**uprofs));
	if (!*uprofs)
		return -1;
	*nuprofs = n;
	int i = 0;
	for (const cJSON *p = n ? profs->child : NULL; p; p = p->next, i++)
		rc |= decode_profile(p, i, &(*uprofs)[i], e);
	return rc ? -1 : 0;
}

static int apply_defaults_top(struct sk_config *cfg, bool has_par, bool has_pct, bool has_ia, bool has_max)
{
	if (!has_par)
		cfg->parallelism = 16;
	if (!has_pct)
		cfg->percentage_of_nodes_to_score = 0;
	struct sk_leader_election_config *l = &cfg->leader_election;
	if ((!l->resource_lock || !*l->resource_lock) && (free(l->resource_lock), !(l->resource_lock = strdup("leases"))))
		return -1;
	if ((!l->resource_namespace || !*l->resource_namespace) &&
	    (free(l->resource_namespace), !(l->resource_namespace = strdup("kube-system"))))
		return -1;
	if ((!l->resource_name || !*l->resource_name) &&
	    (free(l->resource_name), !(l->resource_name = strdup("kube-scheduler"))))
		return -1;
	if ((!cfg->client_content_type || !*cfg->client_content_type) &&
	    (free(cfg->client_content_type), !(cfg->client_content_type = strdup("application/vnd.kubernetes.protobuf"))))
		return -1;
	if (!cfg->client_kubeconfig && !(cfg->client_kubeconfig = strdup("")))
		return -1;
	if (!cfg->client_accept_content_types && !(cfg->client_accept_content_types = strdup("")))
		return -1;
	if (cfg->client_qps == 0)
		cfg->client_qps = 50;
	if (cfg->client_burst == 0)
		cfg->client_burst = 100;
	if (l->lease_duration_ms == 0)
		l->lease_duration_ms = 15000;
	if (l->renew_deadline_ms == 0)
		l->renew_deadline_ms = 10000;
	if (l->retry_period_ms == 0)
		l->retry_period_ms = 2000;
	if (!has_ia)
		cfg->pod_initial_backoff_seconds = 1;
	if (!has_max)
		cfg->pod_max_backoff_seconds = 10;
	if (cfg->enable_profiling && !cfg->enable_contention_profiling_set) {
		cfg->enable_contention_profiling = true;
		cfg->enable_contention_profiling_set = true;
	}
	return 0;
}

static void sha256_hex(const char *text, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	out[0] = '\0';
	if (EVP_Digest(text, len, md, &mdlen, EVP_sha256(), NULL) != 1)
		return;
	for (unsigned int i = 0; i < mdlen && i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

/* Builds profile pi from the user's input: defaults, merge, names, args, expansion, weights. */
/* Extended resources that extenders manage with ignoredByScheduler, unique, in order. */
static int collect_ignored_resources(const cJSON *extenders, cJSON *names)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, extenders) {
		const cJSON *r;
		cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(x, "managedResources")) {
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(r, "name");
			if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "ignoredByScheduler")) || !cJSON_IsString(name))
				continue;
			bool seen = false;
			const cJSON *have;
			cJSON_ArrayForEach(have, names)
				seen = seen || !strcmp(have->valuestring, name->valuestring);
			if (!seen && !cJSON_AddItemToArray(names, cJSON_CreateString(name->valuestring)))
				return -1;
		}
	}
	return 0;
}

/* Upstream scheduler.New: resources extenders manage with ignoredByScheduler become
 * NodeResourcesFit's ignoredResources, replacing the configured list (the extenders take
 * precedence); a profile without NodeResourcesFit args is an error. schedkit counts a profile's
 * own extenders too, for that profile. */
static int apply_extender_ignored_resources(const struct sk_config *cfg, struct sk_profile_config *p, int pi,
					    struct sk_errors *e)
{
	cJSON *names = cJSON_CreateArray();
	if (!names || collect_ignored_resources(cfg->extenders, names) < 0 ||
	    collect_ignored_resources(p->extenders, names) < 0) {
		cJSON_Delete(names);
		return -1;
	}
	int rc = 0;
	bool found = cJSON_GetArraySize(names) == 0;
	for (int i = 0; i < p->nplugin_config && !found; i++) {
		struct sk_plugin_config_entry *pc = &p->plugin_config[i];
		if (strcmp(pc->name, "NodeResourcesFit") || !pc->desc || !pc->args || !pc->desc->args_encode)
			continue;
		found = true;
		cJSON *json = pc->desc->args_encode(pc->args);
		cJSON *copy = cJSON_Duplicate(names, 1);
		void *args = NULL;
		if (!json || !copy) {
			cJSON_Delete(copy);
			rc = -1;
		} else {
			cJSON_DeleteItemFromObjectCaseSensitive(json, "ignoredResources");
			cJSON_AddItemToObject(json, "ignoredResources", copy);
			char *ap = pathf("profiles[%d].pluginConfig(NodeResourcesFit).args.ignoredResources", pi);
			if (pc->desc->args_decode(json, &args, e, ap) == 0) {
				for (int k = 0; k < p->nargs; k++)
					if (p->args[k].args == pc->args)
						p->args[k].args = args;
				pc->desc->args_free(pc->args);
				pc->args = args;
			}
			path_free(ap);
		}
		cJSON_Delete(json);
	}
	if (!found) {
		char *path = pathf("profiles[%d]", pi);
		sk_errors_addf(e, "%s: can't find NodeResourcesFitArgs in plugin config (extenders manage resources with ignoredByScheduler)", path);
		path_free(path);
	}
	cJSON_Delete(names);
	return rc;
}

static int build_profile(struct sk_config *cfg, int pi, struct user_profile *u, unsigned *bad_names, struct sk_errors *e)
{
	struct sk_profile_config *p = &cfg->profiles[pi];
	p->percentage_of_nodes_to_score = u->has_pct ? (int32_t)u->pct : -1;
	if (u->has_name) {
		p->scheduler_name = u->scheduler_name;
		u->scheduler_name = NULL;
	} else if (cfg->nprofiles == 1) {
		if (!(p->scheduler_name = strdup(DEFAULT_SCHEDULER_NAME)))
			return -1;
	}
	p->extenders = u->extenders;
	u->extenders = NULL;
	p->records = u->records;
	for (int ep = 0; ep <= SK_EP_COUNT; ep++)
		if (merge_set(&u->sets[ep], ep, &p->merged[ep]) < 0)
			return -1;
	unsigned bad = *bad_names = check_enabled_names(u, pi, e);
	if (build_plugin_config(p, u, pi, e, &cfg->warnings) < 0 || apply_extender_ignored_resources(cfg, p, pi, e) < 0)
		return -1;

	/* validateKubeSchedulerProfile */
	if (!p->scheduler_name || !*p->scheduler_name) {
		char *path = pathf("profiles[%d].schedulerName", pi);
		sk_err_required(e, path, "");
		path_free(path);
	}
	if (u->has_pct && (u->pct < 0 || u->pct > 100)) {
		char *path = pathf("profiles[%d].percentageOfNodesToScore", pi);
		sk_err_invalid_int(e, path, u->pct, "not in valid range [0-100]");
		path_free(path);
	}
	if (p->extenders) {
		char *path = pathf("profiles[%d].extenders", pi);
		validate_extenders(p->extenders, path, e);
		path_free(path);
	}

	/* NewFramework */
	for (int ep = 0; ep < SK_EP_COUNT; ep++)
		if (expand_point(p, pi, ep, e, &cfg->warnings) < 0)
			return -1;
	const char *sn = p->scheduler_name ? p->scheduler_name : "";
	const unsigned mp = 1u << SK_EP_MULTI_POINT;
	if (p->points[SK_EP_QUEUE_SORT].n != 1 && !(bad & (mp | 1u << SK_EP_QUEUE_SORT)))
		sk_errors_addf(e, "profiles[%d].plugins.queueSort: only one queue sort plugin required for profile with scheduler name \"%s\", but got %d",
			       pi, sn, p->points[SK_EP_QUEUE_SORT].n);
	if (p->points[SK_EP_BIND].n == 0 && !(bad & (mp | 1u << SK_EP_BIND)))
		sk_errors_addf(e, "profiles[%d].plugins.bind: at least one bind plugin is needed for profile with scheduler name \"%s\"",
			       pi, sn);
	score_weights(p, e, pi);
	return 0;
}

void sk_config_free(struct sk_config *cfg)
{
	if (!cfg)
		return;
	for (int i = 0; i < cfg->nprofiles; i++)
		profile_free(&cfg->profiles[i]);
	free(cfg->profiles);
	free(cfg->leader_election.resource_lock);
	free(cfg->leader_election.resource_namespace);
	free(cfg->leader_election.resource_name);
	free(cfg->client_content_type);
	free(cfg->client_kubeconfig);
	free(cfg->client_accept_content_types);
	cJSON_Delete(cfg->extenders);
	sk_errors_free(&cfg->warnings);
	free(cfg->external);
	sk_errors_free(&cfg->notes);
	/* last: the profiles' args were freed by the modules' own args_free */
	sk_module_set_unref(cfg->modules);
	free(cfg);
}

struct sk_config *sk_config_load(const char *text, size_t len, struct sk_errors *errs)
{
	return sk_config_load_opts(text, len, NULL, errs);
}

struct sk_config *sk_config_load_opts(const char *text, size_t len, const struct sk_config_opts *opts,
				      struct sk_errors *errs)
{
	char *perr = NULL;
	/* strict decoding, as upstream's scheme codecs (serializer.EnableStrict): a duplicate key is an error */
	cJSON *root = kube_yaml_parse_one_strict(text, len, &perr);
	if (!root) {
		sk_errors_addf(errs, "failed to parse config: %s", perr ? perr : "invalid YAML");
		free(perr);
		return NULL;
	}
	int before = errs->n;
	struct sk_config *cfg = calloc(1, sizeof(*cfg));
	struct user_profile *uprofs = NULL;
	int nuprofs = 0;
	bool has_pct = false, has_ia = false, has_max = false, has_par = false;
	bool oom = !cfg || set_opts(cfg, opts) < 0;
	const struct sk_config *outer = loading;
	loading = cfg;
	if (!oom && opts &&
	    ((opts->policy_text && sk_policy_merge_text(root, opts->policy_text, opts->policy_len,
							 opts->policy_where ? opts->policy_where : "policy", &cfg->notes, errs) < 0) ||
	     (!opts->policy_text && opts->policy_path && sk_policy_merge_file(root, opts->policy_path, &cfg->notes, errs) < 0))) {
		cJSON_Delete(root);
		loading = outer;
		sk_config_free(cfg);
		return NULL;
	}
	if (!oom) {
		sha256_hex(text, len, cfg->sha256);
		decode_top(root, cfg, &uprofs, &nuprofs, &has_pct, &has_ia, &has_max, &has_par, errs);
	}
	cJSON_Delete(root);
	if (!oom && !uprofs)
		oom = true;
	if (!oom && errs->n == before) {
		/* SetDefaults_KubeSchedulerConfiguration: one empty profile when none is given */
		int n = nuprofs ? nuprofs : 1;
		cfg->profiles = calloc((size_t)n, sizeof(*cfg->profiles));
		if (!cfg->profiles)
			oom = true;
		else
			cfg->nprofiles = n;
		/* Profile errors are collected apart so the messages come in upstream's order;
		 * pend[i] is where profile i's errors end in perrs. */
		struct sk_errors perrs = { 0 };
		struct user_profile empty = { 0 };
		int *pend = calloc((size_t)n, sizeof(int));
		unsigned *bad_names = calloc((size_t)n, sizeof(unsigned));
		if (!pend || !bad_names)
			oom = true;
		for (int i = 0; !oom && i < n; i++) {
			if (build_profile(cfg, i, nuprofs ? &uprofs[i] : &empty, &bad_names[i], &perrs) < 0)
				oom = true;
			pend[i] = perrs.n;
		}
		if (!oom && apply_defaults_top(cfg, has_par, has_pct, has_ia, has_max) < 0)
			oom = true;
		if (!oom) {
			/* ValidateKubeSchedulerConfiguration */
			if (cfg->client_burst < 0)
				sk_err_invalid_int(errs, "clientConnection.burst", cfg->client_burst, "must be non-negative");
			validate_leader_election(&cfg->leader_election, errs);
			if (cfg->parallelism <= 0)
				sk_err_invalid_int(errs, "parallelism", cfg->parallelism, "should be an integer value greater than zero");
		}
		/* Each profile's errors, then its duplicate-name error against the latest earlier profile
		 * with that name (upstream keeps the last index per name). */
		for (int i = 0; !oom && i < cfg->nprofiles; i++) {
			for (int k = i ? pend[i - 1] : 0; k < pend[i]; k++)
				sk_errors_addf(errs, "%s", perrs.msgs[k] ? perrs.msgs[k] : "out of memory");
			for (int j = i - 1; j >= 0; j--) {
				const char *a = cfg->profiles[i].scheduler_name, *b = cfg->profiles[j].scheduler_name;
				if (strcmp(a ? a : "", b ? b : "") == 0) {
					sk_errors_addf(errs, "profiles[%d].schedulerName: Duplicate value: \"profiles[%d].schedulerName\"",
						       i, j);
					break;
				}
			}
		}
		if (oom)
			for (int i = 0; i < perrs.n; i++)
				sk_errors_addf(errs, "%s", perrs.msgs[i] ? perrs.msgs[i] : "out of memory");
		sk_errors_free(&perrs);
		free(pend);
		if (!oom) {
			validate_common_queue_sort(cfg, bad_names, errs);
			if (cfg->percentage_of_nodes_to_score < 0 || cfg->percentage_of_nodes_to_score > 100)
				sk_err_invalid_int(errs, "percentageOfNodesToScore", cfg->percentage_of_nodes_to_score,
						   "not in valid range [0-100]");
			if (cfg->pod_initial_backoff_seconds <= 0)
				sk_err_invalid_int(errs, "podInitialBackoffSeconds", cfg->pod_initial_backoff_seconds,
						   "must be greater than 0");
			if (cfg->pod_max_backoff_seconds < cfg->pod_initial_backoff_seconds)
				sk_err_invalid_int(errs, "podMaxBackoffSeconds", cfg->pod_max_backoff_seconds,
						   "must be greater than or equal to PodInitialBackoffSeconds");
			if (cfg->extenders)
				validate_extenders(cfg->extenders, "extenders", errs);
		}
		free(bad_names);
	}
	for (int i = 0; i < nuprofs; i++)
		user_profile_free(&uprofs[i]);
	free(uprofs);
	loading = outer;
	if (oom && errs->n == before)
		sk_errors_addf(errs, "config: out of memory");
	if (errs->n != before) {
		sk_config_free(cfg);
		return NULL;
	}
	return cfg;
}

struct sk_config *sk_config_load_file(const char *path, struct sk_errors *errs)
{
	return sk_config_load_file_opts(path, NULL, errs);
}

struct sk_config *sk_config_load_file_opts(const char *path, const struct sk_config_opts *opts, struct sk_errors *errs)
{
	size_t len;
	int e;
	char *buf = kube_read_file(path, 0, &len, &e);
	if (!buf) {
		sk_errors_addf(errs, "failed to read config file \"%s\": %s", path, strerror(e));
		return NULL;
	}
	struct sk_config *cfg = sk_config_load_opts(buf, len, opts, errs);
	free(buf);
	return cfg;
}

int sk_config_validate_file(const char *path, FILE *out)
{
	return sk_config_validate_file_opts(path, NULL, out);
}

int sk_config_validate_file_opts(const char *path, const struct sk_config_opts *opts, FILE *out)
{
	struct sk_errors errs = { 0 };
	static const char def[] = "apiVersion: " API_VERSION "\nkind: " KIND "\n";
	struct sk_config *cfg = path ? sk_config_load_file_opts(path, opts, &errs) : sk_config_load_opts(def, sizeof def - 1, opts, &errs);
	if (!cfg) {
		for (int i = 0; i < errs.n; i++)
			fprintf(out, "error: %s\n", errs.msgs[i] ? errs.msgs[i] : "out of memory");
		sk_errors_free(&errs);
		return 1;
	}
	for (int i = 0; i < cfg->notes.n; i++)
		fprintf(out, "warning: %s\n", cfg->notes.msgs[i] ? cfg->notes.msgs[i] : "");
	for (int i = 0; i < cfg->warnings.n; i++)
		fprintf(out, "warning: %s\n", cfg->warnings.msgs[i] ? cfg->warnings.msgs[i] : "out of memory");
	for (int p = 0; p < cfg->nprofiles; p++) {
		const struct sk_profile_config *pr = &cfg->profiles[p];
		if (!pr->nunavailable)
			continue;
		fprintf(out, "warning: profile \"%s\": upstream plugins not available in this build are skipped:",
			pr->scheduler_name);
		for (int i = 0; i < pr->nunavailable; i++)
			fprintf(out, "%s %s", i ? "," : "", pr->unavailable[i]);
		fputc('\n', out);
	}
	sk_config_note_extensions(cfg, out);
	sk_config_free(cfg);
	sk_errors_free(&errs);
	return 0;
}

/* ---------- encoding (sk_config_to_json) ---------- */

static cJSON *duration_json(int64_t ms)
{
	char buf[48];
	kube_duration_format_ms(ms, buf, sizeof buf);
	return cJSON_CreateString(buf);
}

static cJSON *plugin_set_json(const struct sk_plugin_set_config *s)
{
	cJSON *o = cJSON_CreateObject();
	bool ok = o != NULL;
	if (ok && s->nenabled) {
		cJSON *arr = cJSON_CreateArray();
		ok = kube_json_add(o, "enabled", arr);
		for (int i = 0; ok && i < s->nenabled; i++) {
			cJSON *p = cJSON_CreateObject();
			ok = p && cJSON_AddItemToArray(arr, p) && kube_json_add(p, "name", cJSON_CreateString(s->enabled[i].name));
			if (ok && s->enabled[i].has_weight)
				ok = kube_json_add(p, "weight", kube_json_create_int64(s->enabled[i].weight));
		}
	}
	if (ok && s->ndisabled) {
		cJSON *arr = cJSON_CreateArray();
		ok = kube_json_add(o, "disabled", arr);
		for (int i = 0; ok && i < s->ndisabled; i++) {
			cJSON *p = cJSON_CreateObject();
			ok = p && cJSON_AddItemToArray(arr, p) && kube_json_add(p, "name", cJSON_CreateString(s->disabled[i]));
		}
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *profile_json(const struct sk_profile_config *p)
{
	cJSON *o = cJSON_CreateObject();
	bool ok = o && kube_json_add(o, "schedulerName", cJSON_CreateString(p->scheduler_name ? p->scheduler_name : ""));
	if (ok && p->percentage_of_nodes_to_score >= 0)
		ok = kube_json_add(o, "percentageOfNodesToScore", kube_json_create_int64(p->percentage_of_nodes_to_score));
	cJSON *plugins = ok ? cJSON_CreateObject() : NULL;
	ok = ok && kube_json_add(o, "plugins", plugins);
	for (int ep = 0; ok && ep <= SK_EP_COUNT; ep++)
		ok = kube_json_add(plugins, ep_fields[ep], plugin_set_json(&p->merged[ep]));
	if (ok && p->nplugin_config) {
		cJSON *arr = cJSON_CreateArray();
		ok = kube_json_add(o, "pluginConfig", arr);
		for (int i = 0; ok && i < p->nplugin_config; i++) {
			const struct sk_plugin_config_entry *pc = &p->plugin_config[i];
			cJSON *e = cJSON_CreateObject();
			ok = e && cJSON_AddItemToArray(arr, e) && kube_json_add(e, "name", cJSON_CreateString(pc->name));
			if (ok && (pc->args || pc->raw))
				ok = kube_json_add(e, "args", pc_args_json(pc));
		}
	}
	if (ok && p->extenders)
		ok = kube_json_add(o, "extenders", cJSON_Duplicate(p->extenders, 1));
	if (ok && p->records.given)
		ok = kube_json_add(o, "decisionRecords", sk_records_config_json(&p->records));
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *sk_config_to_json(const struct sk_config *cfg)
{
	cJSON *o = cJSON_CreateObject();
	bool ok = o && kube_json_add(o, "kind", cJSON_CreateString(KIND)) && kube_json_add(o, "apiVersion", cJSON_CreateString(API_VERSION)) &&
		  kube_json_add(o, "parallelism", kube_json_create_int64(cfg->parallelism));
	const struct sk_leader_election_config *l = &cfg->leader_election;
	cJSON *le = ok ? cJSON_CreateObject() : NULL;
	ok = ok && kube_json_add(o, "leaderElection", le) && kube_json_add(le, "leaderElect", cJSON_CreateBool(l->leader_elect)) &&
	     kube_json_add(le, "leaseDuration", duration_json(l->lease_duration_ms)) &&
	     kube_json_add(le, "renewDeadline", duration_json(l->renew_deadline_ms)) &&
	     kube_json_add(le, "retryPeriod", duration_json(l->retry_period_ms)) &&
	     kube_json_add(le, "resourceLock", cJSON_CreateString(l->resource_lock)) &&
	     kube_json_add(le, "resourceName", cJSON_CreateString(l->resource_name)) &&
	     kube_json_add(le, "resourceNamespace", cJSON_CreateString(l->resource_namespace));
	cJSON *cc = ok ? cJSON_CreateObject() : NULL;
	ok = ok && kube_json_add(o, "clientConnection", cc) && kube_json_add(cc, "kubeconfig", cJSON_CreateString(cfg->client_kubeconfig)) &&
	     kube_json_add(cc, "acceptContentTypes", cJSON_CreateString(cfg->client_accept_content_types)) &&
	     kube_json_add(cc, "contentType", cJSON_CreateString(cfg->client_content_type)) &&
	     kube_json_add(cc, "qps", cJSON_CreateNumber(cfg->client_qps)) &&
	     kube_json_add(cc, "burst", kube_json_create_int64(cfg->client_burst)) &&
	     kube_json_add(o, "enableProfiling", cJSON_CreateBool(cfg->enable_profiling));
	if (ok && cfg->enable_contention_profiling_set)
		ok = kube_json_add(o, "enableContentionProfiling", cJSON_CreateBool(cfg->enable_contention_profiling));
	ok = ok && kube_json_add(o, "percentageOfNodesToScore", kube_json_create_int64(cfg->percentage_of_nodes_to_score)) &&
	     kube_json_add(o, "podInitialBackoffSeconds", kube_json_create_int64(cfg->pod_initial_backoff_seconds)) &&
	     kube_json_add(o, "podMaxBackoffSeconds", kube_json_create_int64(cfg->pod_max_backoff_seconds));
	cJSON *profs = ok ? cJSON_CreateArray() : NULL;
	ok = ok && kube_json_add(o, "profiles", profs);
	for (int i = 0; ok && i < cfg->nprofiles; i++) {
		cJSON *p = profile_json(&cfg->profiles[i]);
		ok = p && cJSON_AddItemToArray(profs, p);
		if (!ok)
			cJSON_Delete(p);
	}
	if (ok && cfg->extenders)
		ok = kube_json_add(o, "extenders", cJSON_Duplicate(cfg->extenders, 1));
	if (ok && cfg->delay_cache_until_active)
		ok = kube_json_add(o, "delayCacheUntilActive", cJSON_CreateBool(true));
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *sk_config_unavailable_json(const struct sk_config *cfg)
{
	cJSON *o = cJSON_CreateObject();
	for (int i = 0; o && i < cfg->nprofiles; i++) {
		const struct sk_profile_config *p = &cfg->profiles[i];
		if (!p->nunavailable)
			continue;
		cJSON *arr = cJSON_CreateArray();
		if (!kube_json_add(o, p->scheduler_name ? p->scheduler_name : "", arr)) {
			cJSON_Delete(o);
			return NULL;
		}
		for (int j = 0; j < p->nunavailable; j++) {
			cJSON *s = cJSON_CreateString(p->unavailable[j]);
			if (!s || !cJSON_AddItemToArray(arr, s)) {
				cJSON_Delete(s);
				cJSON_Delete(o);
				return NULL;
			}
		}
	}
	return o;
}

void sk_config_log_notes(const struct sk_config *cfg)
{
	for (int i = 0; i < cfg->notes.n; i++)
		klog_warning("Legacy Policy translation: not carried over exactly", " note=\"%s\"",
			     cfg->notes.msgs[i] ? cfg->notes.msgs[i] : "");
}

void sk_config_log_warnings(const struct sk_config *cfg)
{
	for (int i = 0; i < cfg->warnings.n; i++)
		klog_warning("Configuration warning", " msg=\"%s\"", cfg->warnings.msgs[i] ? cfg->warnings.msgs[i] : "out of memory");
}

void sk_config_log_unavailable(const struct sk_config *cfg)
{
	for (int i = 0; i < cfg->nprofiles; i++) {
		const struct sk_profile_config *p = &cfg->profiles[i];
		if (!p->nunavailable)
			continue;
		char list[512];
		size_t off = 0;
		list[0] = '\0';
		for (int j = 0; j < p->nunavailable && off < sizeof(list); j++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", j ? "," : "", p->unavailable[j]);
		klog_warning("Upstream default plugins are not available in this build; the profile runs without them",
			     " profile=%s plugins=%s", p->scheduler_name ? p->scheduler_name : "", list);
	}
}

int32_t sk_num_feasible_nodes_to_find(const struct sk_config *cfg, const struct sk_profile_config *p, int32_t num_nodes)
{
	if (num_nodes < MIN_FEASIBLE_NODES_TO_FIND)
		return num_nodes;
	int32_t pct = (p && p->percentage_of_nodes_to_score >= 0) ? p->percentage_of_nodes_to_score
								  : cfg->percentage_of_nodes_to_score;
	if (pct == 0) {
		pct = 50 - num_nodes / 125;
		if (pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
			pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
	}
	int64_t num = (int64_t)num_nodes * pct / 100;
	if (num < MIN_FEASIBLE_NODES_TO_FIND)
		return MIN_FEASIBLE_NODES_TO_FIND;
	return (int32_t)num;
}
