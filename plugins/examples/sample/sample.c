/* Sample (PreFilter, Filter, PreBind) and SampleArgs: the out-of-tree plugin of docs/plugins.md,
 * built as a module (sample.so) against the installed SDK alone. PreFilter collects the nodes that
 * carry args.nodeLabel, Filter rejects the others, PreBind annotates the pod with its node. */
#define _POSIX_C_SOURCE 200809L /* strdup, strndup */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <schedkit/args.h>
#include <schedkit/log.h>
#include <schedkit/plugin.h>
#include <schedkit/module.h>

#define SAMPLE_ARGS_KIND "SampleArgs"
#define SAMPLE_DEFAULT_LABEL "schedkit.io/sample=true"
#define SAMPLE_ANNOTATION "schedkit.io/sample-prebind"

/* nodeLabel split once at decode time. The args live as long as the config that decoded them,
 * which outlives every framework built from it, so instances borrow them. */
struct sample_args {
	char *label; /* as configured: "key=value", or "key" for any value */
	char *key;
	char *value; /* NULL: the key with any value */
};

struct sample {
	const struct sample_args *args;
	const char *reason; /* interned: process lifetime, so statuses may carry it anywhere */
};

/* The PreFilter result in CycleState: names of the labelled nodes, sorted by strcmp. Written once
 * at PreFilter and only read afterwards (Filter runs on many threads), so clones share it. */
struct sample_nodes {
	int n;
	const char *names[]; /* interned node names, borrowed from the snapshot's nodes */
};

/* ---------- args ---------- */

static void sample_args_free(void *p)
{
	struct sample_args *a = p;
	if (!a)
		return;
	free(a->label);
	free(a->key);
	free(a->value);
	free(a);
}

/* A label value as metav1validation checks it: at most 63 characters of [A-Za-z0-9._-], starting
 * and ending with an alphanumeric one; empty is allowed. */
static bool label_value_ok(const char *v)
{
	size_t n = strlen(v);
	if (n == 0)
		return true;
	if (n > 63)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = v[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && ((i == 0 || i == n - 1) || (c != '-' && c != '_' && c != '.')))
			return false;
	}
	return true;
}

/* Splits and checks "key=value" / "key" into a; errors name path (…args.nodeLabel). */
static int sample_parse_label(struct sample_args *a, const char *path, struct sk_errors *e)
{
	const char *eq = strchr(a->label, '=');
	size_t klen = eq ? (size_t)(eq - a->label) : strlen(a->label);
	if (!(a->key = strndup(a->label, klen)) || (eq && !(a->value = strdup(eq + 1)))) {
		sk_errors_addf(e, "%s: out of memory", path);
		return -1;
	}
	if (klen == 0) {
		sk_err_invalid_str(e, path, a->label, "must be \"key=value\" or \"key\" with a non-empty label key");
		return -1;
	}
	int rc = sk_validate_label_name(e, path, a->key);
	if (a->value && !label_value_ok(a->value)) {
		sk_err_invalid_str(e, path, a->value,
				   "a label value must be empty or at most 63 characters of [A-Za-z0-9._-], "
				   "beginning and ending with an alphanumeric character");
		rc = -1;
	}
	return rc;
}

/* Strict SampleArgs: unknown fields and wrong types are errors with their field paths; an absent
 * object (json NULL) or an absent nodeLabel gives the default. */
static int sample_args_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "nodeLabel", NULL };
	struct sample_args *a = calloc(1, sizeof(*a));
	char *lpath = sk_path_child(path, "nodeLabel");
	int rc = 0;
	if (!a || !lpath) {
		sk_errors_addf(e, "%s: out of memory", path);
		rc = -1;
		goto out;
	}
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, SAMPLE_ARGS_KIND, path, e) < 0) {
		rc = -1;
		goto out;
	}
	bool present = false;
	if (json && sk_json_string(json, "nodeLabel", path, &a->label, &present, e) < 0) {
		rc = -1;
		goto out;
	}
	if (!present && !(a->label = strdup(SAMPLE_DEFAULT_LABEL))) {
		sk_errors_addf(e, "%s: out of memory", path);
		rc = -1;
		goto out;
	}
	rc = sample_parse_label(a, lpath, e);
out:
	free(lpath);
	if (rc < 0) {
		sample_args_free(a);
		return -1;
	}
	*out = a;
	return 0;
}

/* The defaulted args, as /configz shows them. */
static cJSON *sample_args_encode(const void *p)
{
	const struct sample_args *a = p;
	cJSON *o = sk_args_json_new(SAMPLE_ARGS_KIND);
	if (o && !cJSON_AddStringToObject(o, "nodeLabel", a ? a->label : SAMPLE_DEFAULT_LABEL)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---------- instance ---------- */

static int sample_init(struct sk_plugin *self, const void *args, char **err)
{
	const struct sample_args *a = args;
	struct sample *s = calloc(1, sizeof(*s));
	char reason[320];
	if (!s || !a) {
		free(s);
		*err = strdup(a ? "out of memory" : "Sample: no args (SampleArgs expected)");
		return -1;
	}
	s->args = a;
	/* The reason names the label as configured, e.g. "...the label schedkit.io/sample=true". */
	snprintf(reason, sizeof(reason), "node(s) did not have the label %s", a->label);
	s->reason = sk_intern(reason);
	self->priv = s;
	return 0;
}

static void sample_fini(struct sk_plugin *self)
{
	free(self->priv);
	self->priv = NULL;
}

static bool sample_node_matches(const struct sample *s, const struct sk_node *node)
{
	const char *v = sk_labels_get(&node->labels, s->args->key);
	return v && (!s->args->value || strcmp(v, s->args->value) == 0);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The set holds no reference: node names are interned, so they outlive the cycle. */
static const struct sk_state_ops sample_state_ops = { .free = free, .clone = NULL };

/* PreFilter reads the label once per pod rather than once per (pod, node) in Filter, as upstream
 * plugins do with their PreFilter state. It narrows nothing: every node still goes through Filter,
 * so each rejected node reports this plugin's reason (a PreFilterResult would hide it). */
static struct sk_status sample_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					  struct sk_prefilter_result *result)
{
	(void)pod;
	(void)result;
	const struct sample *s = self->priv;
	const struct sk_snapshot *snap = sk_handle_snapshot(self->handle);
	int nnodes = snap ? snap->nnodes : 0;
	struct sample_nodes *set = malloc(sizeof(*set) + (size_t)nnodes * sizeof(set->names[0]));
	if (!set)
		return sk_status(SK_ERROR, "out of memory");
	set->n = 0;
	for (int i = 0; i < nnodes; i++) {
		const struct sk_node *node = snap->nodes[i]->node;
		if (node && sample_node_matches(s, node))
			set->names[set->n++] = node->name;
	}
	qsort(set->names, (size_t)set->n, sizeof(set->names[0]), cmp_name);
	sk_cycle_state_put(cs, self->slot, set, &sample_state_ops);
	return sk_ok();
}

/* Runs on several threads at once: reads the PreFilter set and the node, writes nothing. */
static struct sk_status sample_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      const struct sk_node_info *ni)
{
	(void)pod;
	const struct sample *s = self->priv;
	const struct sample_nodes *set = sk_cycle_state_get(cs, self->slot);
	if (!set)
		return sk_status(SK_ERROR, "no PreFilter state in this cycle (Sample must be enabled at preFilter too)");
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	const char *name = ni->node->name;
	if (bsearch(&name, set->names, (size_t)set->n, sizeof(set->names[0]), cmp_name))
		return sk_ok();
	/* Only a label change on the node helps; preempting pods there would not. */
	return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, s->reason);
}

/* Before Bind: record the chosen node on the pod (a merge patch through the host). A failure is an
 * error, so the binding cycle unreserves and the pod is retried. */
static struct sk_status sample_pre_bind(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
					const char *node_name)
{
	(void)cs;
	char *err = NULL;
	if (sk_handle_patch_pod_annotation(self->handle, pod, SAMPLE_ANNOTATION, node_name, &err) < 0) {
		struct sk_status st = sk_statusf(SK_ERROR, "setting annotation %s: %s", SAMPLE_ANNOTATION,
						 err ? err : "unknown error");
		free(err);
		return st;
	}
	sk_log_info(4, "Annotated pod before binding", " pod=\"%s/%s\" node=\"%s\" annotation=%s", pod->ns, pod->name,
		    node_name, SAMPLE_ANNOTATION);
	return sk_ok();
}

/* A pod this plugin rejected can fit only once some node gains the label: a new node that has it,
 * or a label update that adds it. Other events (pods coming and going) cannot help. */
static enum sk_hint sample_hint_node(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				     const void *new_obj)
{
	(void)pod;
	const struct sample *s = self->priv;
	const struct sk_node *old_node = old_obj, *new_node = new_obj;
	if (!new_node)
		return SK_QUEUE_SKIP;
	bool had = old_node && sample_node_matches(s, old_node);
	return !had && sample_node_matches(s, new_node) ? SK_QUEUE : SK_QUEUE_SKIP;
}

static int sample_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	if (max < 1)
		return 0;
	out[0] = (struct sk_event_registration){
		.event = { SK_EV_NODE, SK_ACT_ADD | SK_ACT_UPDATE_NODE_LABEL, "NodeAdd|UpdateNodeLabel" },
		.hint = sample_hint_node,
	};
	return 1;
}

static const struct sk_plugin_desc sample_plugin = {
	SK_PLUGIN_HEADER,
	.name = "Sample",
	.args_kind = SAMPLE_ARGS_KIND,
	.args_decode = sample_args_decode,
	.args_encode = sample_args_encode,
	.args_free = sample_args_free,
	.init = sample_init,
	.fini = sample_fini,
	.pre_filter = sample_pre_filter,
	.filter = sample_filter,
	.pre_bind = sample_pre_bind,
	.events_to_register = sample_events,
};

SK_MODULE("sample", &sample_plugin);
