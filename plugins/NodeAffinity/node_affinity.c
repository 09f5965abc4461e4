/* NodeAffinity (PreFilter, Filter, PreScore, Score, NormalizeScore) and NodeAffinityArgs
 * (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go, pkg/scheduler/apis/config/validation/validation_pluginargs.go): spec.nodeSelector and required node affinity filter nodes, the
 * scheduler-enforced addedAffinity filters every pod, preferred terms score.
 * Instances borrow their compiled args (the config outlives the framework). */
#include <stdlib.h>
#include <string.h>

#include "schedkit/args.h"
#include "schedkit/plugin.h"
#include "schedkit/selector.h"
#include "na_memo.h"

#define ERR_REASON_POD "node(s) didn't match Pod's node affinity/selector"
#define ERR_REASON_ENFORCED "node(s) didn't match scheduler-enforced node affinity"
#define ERR_REASON_CONFLICT "pod affinity terms conflict"

struct node_affinity_args {
	cJSON *added_affinity;                       /* as given (for /configz), or NULL */
	struct kube_node_selector *added_required;   /* NULL when absent */
	struct kube_preferred_terms *added_preferred; /* NULL when absent or empty */
};

/* ---------- args ---------- */

static void args_free(void *p)
{
	struct node_affinity_args *a = p;
	if (!a)
		return;
	cJSON_Delete(a->added_affinity);
	kube_node_selector_free(a->added_required);
	kube_preferred_terms_free(a->added_preferred);
	free(a);
}

/* Strict shape check of a v1.NodeSelectorTerm list (keys only; values are checked by the compiler). */
static int check_terms(const cJSON *terms, const char *path, bool preferred, struct sk_errors *e)
{
	static const char *const pref_fields[] = { "weight", "preference", NULL };
	static const char *const term_fields[] = { "matchExpressions", "matchFields", NULL };
	static const char *const req_fields[] = { "key", "operator", "values", NULL };
	if (!terms || !cJSON_IsArray(terms))
		return 0; /* the compiler reports the type */
	int rc = 0, i = 0;
	for (const cJSON *t = terms->child; t; t = t->next, i++) {
		char *p = sk_path_index(path, i);
		if (!p)
			return -1;
		const cJSON *term = t;
		char *tp = p;
		if (preferred) {
			rc |= sk_json_check_object(t, p, pref_fields, false, e);
			term = cJSON_IsObject(t) ? cJSON_GetObjectItemCaseSensitive(t, "preference") : NULL;
			tp = sk_path_child(p, "preference");
			if (!tp) {
				free(p);
				return -1;
			}
		}
		rc |= sk_json_check_object(term, tp, term_fields, false, e);
		const char *lists[] = { "matchExpressions", "matchFields" };
		for (int l = 0; l < 2 && term && cJSON_IsObject(term); l++) {
			const cJSON *reqs = cJSON_GetObjectItemCaseSensitive(term, lists[l]);
			if (!reqs || !cJSON_IsArray(reqs))
				continue;
			char *lp = sk_path_child(tp, lists[l]);
			int j = 0;
			for (const cJSON *r = reqs->child; r && lp; r = r->next, j++) {
				char *rp = sk_path_index(lp, j);
				if (rp)
					rc |= sk_json_check_object(r, rp, req_fields, false, e);
				free(rp);
			}
			free(lp);
		}
		if (tp != p)
			free(tp);
		free(p);
	}
	return rc ? -1 : 0;
}

static int args_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "addedAffinity", NULL };
	static const char *const aff_fields[] = { "requiredDuringSchedulingIgnoredDuringExecution",
						  "preferredDuringSchedulingIgnoredDuringExecution", NULL };
	static const char *const ns_fields[] = { "nodeSelectorTerms", NULL };
	struct node_affinity_args *a = calloc(1, sizeof(*a));
	if (!a) {
		sk_errors_addf(e, "%s: out of memory", path);
		return -1;
	}
	int rc = 0;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "NodeAffinityArgs", path, e) < 0)
		rc = -1;
	const cJSON *added = json ? cJSON_GetObjectItemCaseSensitive(json, "addedAffinity") : NULL;
	if (rc == 0 && added && !cJSON_IsNull(added)) {
		char *ap = sk_path_child(path, "addedAffinity");
		char *rp = sk_path_child(ap, "requiredDuringSchedulingIgnoredDuringExecution");
		char *pp = sk_path_child(ap, "preferredDuringSchedulingIgnoredDuringExecution");
		char *tp = sk_path_child(rp, "nodeSelectorTerms");
		if (!ap || !rp || !pp || !tp) {
			rc = -1;
		} else if (sk_json_check_object(added, ap, aff_fields, false, e) < 0) {
			rc = -1;
		} else {
			const cJSON *req = cJSON_GetObjectItemCaseSensitive(added, "requiredDuringSchedulingIgnoredDuringExecution");
			const cJSON *pref = cJSON_GetObjectItemCaseSensitive(added, "preferredDuringSchedulingIgnoredDuringExecution");
			char *err = NULL;
			if (req && !cJSON_IsNull(req)) {
				if (sk_json_check_object(req, rp, ns_fields, false, e) < 0 ||
				    check_terms(cJSON_GetObjectItemCaseSensitive(req, "nodeSelectorTerms"), tp, false, e) < 0) {
					rc = -1;
				} else if (kube_node_selector_compile_object(req, rp, 0, &a->added_required, &err) < 0) {
					sk_errors_addf(e, "%s", err ? err : "invalid node selector");
					rc = -1;
				}
				free(err);
				err = NULL;
			}
			if (pref && !cJSON_IsNull(pref) && (!cJSON_IsArray(pref) || cJSON_GetArraySize(pref) > 0)) {
				if (check_terms(pref, pp, true, e) < 0) {
					rc = -1;
				} else if (kube_preferred_terms_compile(pref, pp, 0, &a->added_preferred, &err) < 0) {
					sk_errors_addf(e, "%s", err ? err : "invalid preferred scheduling terms");
					rc = -1;
				}
				free(err);
			}
			if (rc == 0 && !(a->added_affinity = cJSON_Duplicate(added, 1)))
				rc = -1;
		}
		free(ap);
		free(rp);
		free(pp);
		free(tp);
	}
	if (rc < 0) {
		args_free(a);
		return -1;
	}
	*out = a;
	return 0;
}

static cJSON *args_encode(const void *p)
{
	const struct node_affinity_args *a = p;
	cJSON *o = sk_args_json_new("NodeAffinityArgs");
	if (o && a && a->added_affinity) {
		cJSON *d = cJSON_Duplicate(a->added_affinity, 1);
		if (!d || !cJSON_AddItemToObject(o, "addedAffinity", d)) {
			cJSON_Delete(d);
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

/* ---------- instance ---------- */

/* The instance: its args and the Filter outcomes of the shapes it saw last (na_memo.h). */
struct na {
	const struct node_affinity_args *args; /* NULL: no added affinity */
	struct na_memos memos;
};

static int na_init(struct sk_plugin *self, const void *args, char **err)
{
	struct na *na = calloc(1, sizeof(*na));
	if (!na) {
		*err = strdup("NodeAffinity: out of memory");
		return -1;
	}
	na->args = args;
	na_memos_init(&na->memos);
	self->priv = na;
	return 0;
}

static void na_fini(struct sk_plugin *self)
{
	struct na *na = self->priv;
	if (!na)
		return;
	na_memos_fini(&na->memos);
	free(na);
	self->priv = NULL;
}

static const struct node_affinity_args *na_args(const struct sk_plugin *self)
{
	const struct na *na = self->priv;
	return na ? na->args : NULL;
}

static bool node_selector_matches(const struct sk_pod *pod, const struct sk_node *node)
{
	for (int i = 0; i < pod->node_selector.n; i++) {
		const char *v = sk_labels_get(&node->labels, pod->node_selector.items[i].key);
		if (!v || strcmp(v, pod->node_selector.items[i].value) != 0)
			return false;
	}
	return true;
}

/* upstream nodeaffinity.GetRequiredNodeAffinity(pod).Match(node) */
static bool required_matches(const struct sk_pod *pod, const struct sk_node *node)
{
	if (!node_selector_matches(pod, node))
		return false;
	return !pod->required_affinity ||
	       kube_node_selector_matches(pod->required_affinity, node->name, sk_labels_get, &node->labels);
}

static bool added_matches(const struct node_affinity_args *a, const struct sk_node *node)
{
	return !a || !a->added_required ||
	       kube_node_selector_matches(a->added_required, node->name, sk_labels_get, &node->labels);
}

static void memo_state_free(void *data) { na_memo_unref(data); }
static void *memo_state_clone(const void *data) { return na_memo_ref((struct na_memo *)data); }
static const struct sk_state_ops memo_state_ops = { memo_state_free, memo_state_clone };

static struct sk_status na_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_prefilter_result *result)
{
	const struct node_affinity_args *a = na_args(self);
	if (!pod->required_affinity && (!a || !a->added_required) && pod->node_selector.n == 0)
		return sk_status(SK_SKIP, NULL);
	/* Narrow to the nodes named by matchFields "metadata.name In" (upstream PreFilterResult). */
	const char **names;
	size_t n;
	int r = kube_node_selector_node_names(pod->required_affinity, &names, &n);
	if (r < 0)
		return sk_status(SK_ERROR, "out of memory");
	if (r == 0) {
		/* Filter visits many nodes: the outcomes of this shape from earlier cycles (na_memo.h) */
		struct na *na = self->priv;
		const struct sk_snapshot *snap = sk_handle_snapshot(self->handle);
		struct na_memo *m = snap ? na_memo_get(&na->memos, pod, snap->index_end) : NULL;
		if (m)
			sk_cycle_state_put(cs, self->slot, m, &memo_state_ops);
		return sk_ok();
	}
	struct sk_status st = sk_ok();
	if (n == 0)
		st = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT);
	for (size_t i = 0; i < n && st.code == SK_SUCCESS; i++)
		if (sk_prefilter_result_add(result, sk_intern(names[i])) != 0)
			st = sk_status(SK_ERROR, "out of memory");
	free(names);
	return st;
}

static enum na_outcome outcome_of(const struct sk_plugin *self, const struct sk_pod *pod, const struct sk_node *node)
{
	if (!added_matches(na_args(self), node))
		return NA_ENFORCED;
	if (!required_matches(pod, node))
		return NA_POD;
	return NA_FITS;
}

static struct sk_status outcome_status(enum na_outcome o)
{
	switch (o) {
	case NA_ENFORCED:
		return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED);
	case NA_POD:
		return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD);
	default:
		return sk_ok();
	}
}

/* ni's outcome: the memo's when it has one for ni's node object, else computed (and kept). */
static enum na_outcome node_outcome(const struct sk_plugin *self, struct na_memo *m, const struct sk_pod *pod,
				    const struct sk_node_info *ni)
{
	enum na_outcome o = m ? na_memo_lookup(m, ni) : NA_NONE;
	if (o == NA_NONE) {
		o = outcome_of(self, pod, ni->node);
		if (m)
			na_memo_record(m, ni, o);
	}
	return o;
}

static struct sk_status na_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni)
{
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	return outcome_status(node_outcome(self, cs ? sk_cycle_state_get(cs, self->slot) : NULL, pod, ni));
}

/* na_filter over a run of nodes (filter_batch, docs/plugins.md "Batch filtering"): the cycle
 * state read once per run, a memo word per node. */
static void na_filter_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			    const struct sk_node_info *const *nodes, int n, uint8_t *ok, struct sk_status *st)
{
	struct na_memo *m = cs ? sk_cycle_state_get(cs, self->slot) : NULL;
	for (int i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		if (!nodes[i]->node) {
			ok[i] = 0;
			st[i] = sk_status(SK_ERROR, "node not found");
			continue;
		}
		enum na_outcome o = node_outcome(self, m, pod, nodes[i]);
		if (o != NA_FITS) {
			ok[i] = 0;
			st[i] = outcome_status(o);
		}
	}
}

static struct sk_status na_pre_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     const struct sk_node_info *const *nodes, int nnodes)
{
	(void)cs;
	(void)nodes;
	(void)nnodes;
	const struct node_affinity_args *a = na_args(self);
	if (!pod->preferred_affinity && (!a || !a->added_preferred))
		return sk_status(SK_SKIP, NULL);
	return sk_ok();
}

static struct sk_status na_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				 const struct sk_node_info *ni, int64_t *score)
{
	(void)cs;
	const struct node_affinity_args *a = na_args(self);
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	const struct sk_node *node = ni->node;
	int64_t count = 0;
	if (a && a->added_preferred)
		count += kube_preferred_terms_score(a->added_preferred, node->name, sk_labels_get, &node->labels);
	if (pod->preferred_affinity)
		count += kube_preferred_terms_score(pod->preferred_affinity, node->name, sk_labels_get, &node->labels);
	*score = count;
	return sk_ok();
}

/* DefaultNormalizeScore(MaxNodeScore, reverse=false) (pkg/scheduler/framework/plugins/helper/normalize_score.go). */
static struct sk_status na_normalize(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     struct sk_node_score *scores, int n)
{
	(void)self;
	(void)cs;
	(void)pod;
	int64_t max = 0;
	for (int i = 0; i < n; i++)
		if (scores[i].score > max)
			max = scores[i].score;
	if (max == 0)
		return sk_ok();
	for (int i = 0; i < n; i++)
		scores[i].score = SK_MAX_NODE_SCORE * scores[i].score / max;
	return sk_ok();
}

/* Queue when an added node matches, or an updated node changed from not matching to matching. */
static enum sk_hint na_hint_node(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				 const void *new_obj)
{
	const struct sk_node *old_node = old_obj, *node = new_obj;
	if (!node)
		return SK_QUEUE;
	if (!added_matches(na_args(self), node))
		return SK_QUEUE_SKIP;
	if (!required_matches(pod, node))
		return SK_QUEUE_SKIP;
	if (!old_node)
		return SK_QUEUE;
	return required_matches(pod, old_node) ? SK_QUEUE_SKIP : SK_QUEUE;
}

static int na_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	if (max < 1)
		return 0;
	out[0] = (struct sk_event_registration){
		.event = { SK_EV_NODE, SK_ACT_ADD | SK_ACT_UPDATE_NODE_LABEL, "NodeAdd|UpdateNodeLabel" },
		.hint = na_hint_node,
	};
	return 1;
}

const struct sk_plugin_desc sk_plugin_node_affinity = {
	SK_PLUGIN_HEADER,
	.name = "NodeAffinity",
	.args_kind = "NodeAffinityArgs",
	.args_decode = args_decode,
	.args_encode = args_encode,
	.args_free = args_free,
	.init = na_init,
	.fini = na_fini,
	.pre_filter = na_pre_filter,
	.filter = na_filter,
	.filter_batch = na_filter_batch,
	.pre_score = na_pre_score,
	.score = na_score,
	.normalize_score = na_normalize,
	.events_to_register = na_events,
};
