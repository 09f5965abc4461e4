/* PodTopologySpread (PreFilter + AddPod/RemovePod, Filter, PreScore, Score, NormalizeScore,
 * EnqueueExtensions) and PodTopologySpreadArgs (pkg/scheduler/framework/plugins/podtopologyspread/, pkg/scheduler/apis/config/validation/validation_pluginargs.go).
 *
 * Hard constraints (DoNotSchedule) are counted once per cycle in PreFilter over the whole snapshot
 * (per-node counting runs on the framework's worker pool), so Filter is O(constraints) per node.
 * Soft constraints (ScheduleAnyway) are counted in PreScore; Score is O(constraints) per node
 * (plus the node's own pods for the hostname key). Pods without constraints cost one Skip each.
 *
 * Default constraints (pods without their own, buildDefaultConstraints): the selector is upstream
 * helper.DefaultSelector, from the Services that select the pod and its ReplicationController,
 * ReplicaSet or StatefulSet (sk_handle_default_selector reads the scheduler's listers); a pod
 * for which that selector is empty gets no default constraints. Pods are counted as upstream's
 * countPodsMatchSelector: every pod of the namespace the selector matches, whoever owns it.
 *
 * Instances borrow their args (the config outlives the framework). Cycle state: the PreFilter
 * state is cloneable (AddPod/RemovePod modify the clone; the constraint list is shared through a
 * reference count); the PreScore state is read-only and shared by clones. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/args.h"
#include "schedkit/node_memo.h"
#include "schedkit/plugin.h"
#include "schedkit/selector.h"
#include "schedkit/tpmap.h"

#define ERR_REASON_CONSTRAINTS_NOT_MATCH "node(s) didn't match pod topology spread constraints"
#define ERR_REASON_NODE_LABEL_NOT_MATCH ERR_REASON_CONSTRAINTS_NOT_MATCH " (missing required label)"
#define LABEL_HOSTNAME "kubernetes.io/hostname"
#define LABEL_ZONE "topology.kubernetes.io/zone"

/* ---------- args ---------- */

struct pts_default {
	int32_t max_skew, min_domains;
	const char *key; /* interned */
	enum sk_unsatisfiable when;
	bool affinity_ignore, taints_honor;
};

struct pts_args {
	bool system;                   /* defaultingType System */
	int ndefaults;
	struct pts_default *defaults;  /* owned; List only */
	cJSON *constraints_json;       /* defaultConstraints as given (for /configz), or NULL */
};

static void args_free(void *p)
{
	struct pts_args *a = p;
	if (!a)
		return;
	free(a->defaults);
	cJSON_Delete(a->constraints_json);
	free(a);
}

/* ValidatePodTopologySpreadArgs for one defaultConstraints entry (p is its path), and decode it into d. */
static int decode_default(const cJSON *c, const char *p, const cJSON *arr, int idx, struct pts_default *d,
			  struct sk_errors *e)
{
	static const char *const fields[] = { "maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector",
					      "minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys",
					      NULL };
	int64_t skew = 0, min_domains = 1;
	char *key = NULL, *when = NULL, *nap = NULL, *ntp = NULL;
	int rc = 0;
	if (sk_json_check_object(c, p, fields, false, e) < 0 || !cJSON_IsObject(c) ||
	    sk_json_int(c, "maxSkew", p, INT32_MIN, INT32_MAX, &skew, NULL, e) < 0 ||
	    sk_json_int(c, "minDomains", p, INT32_MIN, INT32_MAX, &min_domains, NULL, e) < 0 ||
	    sk_json_string(c, "topologyKey", p, &key, NULL, e) < 0 ||
	    sk_json_string(c, "whenUnsatisfiable", p, &when, NULL, e) < 0 ||
	    sk_json_string(c, "nodeAffinityPolicy", p, &nap, NULL, e) < 0 ||
	    sk_json_string(c, "nodeTaintsPolicy", p, &ntp, NULL, e) < 0) {
		if (cJSON_IsNull(c))
			sk_errors_addf(e, "%s: Invalid type: expected object, got null", p);
		rc = -1;
		goto out;
	}
	char *f;
	if (skew <= 0) {
		f = sk_path_child(p, "maxSkew");
		sk_err_invalid_int(e, f, skew, "not in valid range (0, inf)");
		free(f);
		rc = -1;
	}
	f = sk_path_child(p, "topologyKey");
	if (!key || !*key) {
		sk_err_required(e, f, "can not be empty");
		rc = -1;
	} else if (sk_validate_label_name(e, f, key) < 0) {
		rc = -1;
	}
	free(f);
	f = sk_path_child(p, "whenUnsatisfiable");
	if (!when || !*when) {
		sk_err_required(e, f, "can not be empty");
		rc = -1;
	} else if (strcmp(when, "DoNotSchedule") && strcmp(when, "ScheduleAnyway")) {
		static const char *const sup[] = { "DoNotSchedule", "ScheduleAnyway", NULL };
		sk_err_unsupported(e, f, when, sup);
		rc = -1;
	}
	free(f);
	const cJSON *sel = cJSON_GetObjectItemCaseSensitive(c, "labelSelector");
	if (sel && !cJSON_IsNull(sel)) {
		f = sk_path_child(p, "labelSelector");
		sk_err_forbidden(e, f, "constraint must not define a selector, as they deduced for each pod");
		free(f);
		rc = -1;
	}
	/* validateConstraintNotRepeat: same (topologyKey, whenUnsatisfiable) as an earlier entry */
	int i = 0;
	for (const cJSON *o = arr->child; o && i < idx; o = o->next, i++) {
		const cJSON *ok = cJSON_GetObjectItemCaseSensitive(o, "topologyKey");
		const cJSON *ow = cJSON_GetObjectItemCaseSensitive(o, "whenUnsatisfiable");
		const char *oks = cJSON_IsString(ok) ? ok->valuestring : "", *ows = cJSON_IsString(ow) ? ow->valuestring : "";
		if (!strcmp(oks, key ? key : "") && !strcmp(ows, when ? when : "")) {
			char *v = NULL;
			if (asprintf(&v, "{%s, %s}", key ? key : "", when ? when : "") >= 0) {
				sk_err_duplicate(e, p, v);
				free(v);
			}
			rc = -1;
			break;
		}
	}
	if (rc == 0) {
		d->max_skew = (int32_t)skew;
		d->min_domains = (int32_t)min_domains;
		d->key = sk_intern(key);
		d->when = strcmp(when, "ScheduleAnyway") == 0 ? SK_SCHEDULE_ANYWAY : SK_DO_NOT_SCHEDULE;
		/* upstream checks "== Honor" for the affinity policy and "== Honor" for taints */
		d->affinity_ignore = nap && strcmp(nap, "Honor") != 0;
		d->taints_honor = ntp && strcmp(ntp, "Honor") == 0;
		if (!d->key)
			rc = -1;
	}
out:
	free(key);
	free(when);
	free(nap);
	free(ntp);
	return rc;
}

static int args_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "defaultConstraints", "defaultingType", NULL };
	char *dtype = NULL;
	int rc = 0;
	struct pts_args *a = calloc(1, sizeof(*a));
	if (!a) {
		sk_errors_addf(e, "%s: out of memory", path);
		return -1;
	}
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "PodTopologySpreadArgs", path, e) < 0 ||
	    sk_json_string(json, "defaultingType", path, &dtype, NULL, e) < 0) {
		free(dtype);
		args_free(a);
		return -1;
	}
	const char *dt = dtype && *dtype ? dtype : "System";
	const cJSON *dc = json ? cJSON_GetObjectItemCaseSensitive(json, "defaultConstraints") : NULL;
	if (dc && cJSON_IsNull(dc))
		dc = NULL;
	char *dcp = sk_path_child(path, "defaultConstraints"), *dtp = sk_path_child(path, "defaultingType");
	if (!dcp || !dtp) {
		rc = -1;
		goto out;
	}
	if (dc && !cJSON_IsArray(dc)) {
		sk_errors_addf(e, "%s: Invalid type: expected array", dcp);
		rc = -1;
	}
	int nconstraints = dc && cJSON_IsArray(dc) ? cJSON_GetArraySize(dc) : 0;
	if (strcmp(dt, "System") && strcmp(dt, "List")) {
		static const char *const sup[] = { "System", "List", NULL };
		sk_err_unsupported(e, dtp, dt, sup);
		rc = -1;
	} else if (!strcmp(dt, "System") && nconstraints > 0) {
		sk_err_invalid_str(e, dtp, dt, "when .defaultConstraints are not empty");
		rc = -1;
	}
	a->system = strcmp(dt, "System") == 0;
	if (nconstraints > 0 && !(a->defaults = calloc((size_t)nconstraints, sizeof(*a->defaults)))) {
		rc = -1;
		goto out;
	}
	int i = 0;
	for (const cJSON *c = (dc && cJSON_IsArray(dc)) ? dc->child : NULL; c; c = c->next, i++) {
		char *p = sk_path_index(dcp, i);
		if (!p || decode_default(c, p, dc, i, &a->defaults[i], e) < 0)
			rc = -1;
		free(p);
	}
	a->ndefaults = nconstraints;
	if (rc == 0 && nconstraints > 0 && !(a->constraints_json = cJSON_Duplicate(dc, 1)))
		rc = -1;
out:
	free(dcp);
	free(dtp);
	free(dtype);
	if (rc < 0) {
		args_free(a);
		return -1;
	}
	*out = a;
	return 0;
}

static cJSON *args_encode(const void *p)
{
	const struct pts_args *a = p;
	cJSON *o = sk_args_json_new("PodTopologySpreadArgs");
	if (!o)
		return NULL;
	if (a && a->constraints_json) {
		cJSON *d = cJSON_Duplicate(a->constraints_json, 1);
		if (!d || !cJSON_AddItemToObject(o, "defaultConstraints", d)) {
			cJSON_Delete(d);
			cJSON_Delete(o);
			return NULL;
		}
	}
	if (!cJSON_AddStringToObject(o, "defaultingType", !a || a->system ? "System" : "List")) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---------- instance ---------- */

struct pts {
	bool system;
	int ndefaults;
	const struct pts_default *defaults; /* borrowed from args, or the system table */
	struct sk_node_memo *memo;          /* PreFilter's counts across cycles */
};

/* pkg/scheduler/framework/plugins/podtopologyspread/plugin.go (systemDefaultConstraints): used when defaultingType is System. Keys are compared with strcmp only. */
static const struct pts_default system_defaults[2] = {
	{ .max_skew = 3, .min_domains = 1, .key = LABEL_HOSTNAME, .when = SK_SCHEDULE_ANYWAY },
	{ .max_skew = 5, .min_domains = 1, .key = LABEL_ZONE, .when = SK_SCHEDULE_ANYWAY },
};

static int pts_init(struct sk_plugin *self, const void *args, char **err)
{
	const struct pts_args *a = args;
	struct pts *pl = calloc(1, sizeof(*pl));
	if (!pl) {
		if (err)
			*err = strdup("PodTopologySpread: out of memory");
		return -1;
	}
	if (!a || a->system) {
		pl->system = true;
		pl->ndefaults = 2;
		pl->defaults = system_defaults;
	} else {
		pl->ndefaults = a->ndefaults;
		pl->defaults = a->defaults;
	}
	if (!(pl->memo = sk_node_memo_new())) {
		free(pl);
		if (err)
			*err = strdup("PodTopologySpread: out of memory");
		return -1;
	}
	self->priv = pl;
	return 0;
}

static void pts_fini(struct sk_plugin *self)
{
	struct pts *pl = self->priv;
	if (pl)
		sk_node_memo_free(pl->memo);
	free(pl);
	self->priv = NULL;
}

/* ---------- constraints ---------- */

struct pts_constraint {
	int32_t max_skew, min_domains;
	const char *key;                            /* interned */
	bool hostname;
	bool affinity_honor, taints_honor;
	const struct kube_label_selector *selector; /* the pod's (own constraints) or the list's default selector */
};

/* A refcounted constraint list, shared by a PreFilter state and its clones. */
struct pts_constraints {
	atomic_int refs;
	int n;
	struct kube_label_selector *default_selector; /* owned: the default constraints' selector */
	struct pts_constraint c[];
};

static void constraints_unref(struct pts_constraints *cl)
{
	if (cl && atomic_fetch_sub(&cl->refs, 1) == 1) {
		kube_label_selector_free(cl->default_selector);
		free(cl);
	}
}

/* The pod's constraints for `when` (its own, else the defaults with helper.DefaultSelector); *out
 * NULL when there are none. Returns 0, or -1 on OOM. */
static int get_constraints(const struct pts *pl, struct sk_handle *h, const struct sk_pod *pod,
			   enum sk_unsatisfiable when, struct pts_constraints **out)
{
	*out = NULL;
	int n = 0;
	bool own = pod->nspread > 0;
	if (own) {
		for (int i = 0; i < pod->nspread; i++)
			n += pod->spread[i].when_unsatisfiable == when;
	} else {
		for (int i = 0; i < pl->ndefaults; i++)
			n += pl->defaults[i].when == when;
	}
	if (n == 0)
		return 0;
	struct kube_label_selector *dsel = NULL;
	if (!own && !(dsel = sk_handle_default_selector(h, pod)))
		return 0; /* selector.Empty(): no default constraints */
	struct pts_constraints *cl = malloc(sizeof(*cl) + (size_t)n * sizeof(cl->c[0]));
	if (!cl) {
		kube_label_selector_free(dsel);
		return -1;
	}
	atomic_init(&cl->refs, 1);
	cl->n = 0;
	cl->default_selector = dsel;
	if (own) {
		for (int i = 0; i < pod->nspread; i++) {
			const struct sk_spread_constraint *s = &pod->spread[i];
			if (s->when_unsatisfiable != when)
				continue;
			cl->c[cl->n++] = (struct pts_constraint){
				.max_skew = s->max_skew,
				.min_domains = s->min_domains,
				.key = s->topology_key,
				.hostname = strcmp(s->topology_key, LABEL_HOSTNAME) == 0,
				.affinity_honor = !s->node_affinity_policy_ignore,
				.taints_honor = s->node_taints_policy_honor,
				.selector = s->selector,
			};
		}
	} else {
		for (int i = 0; i < pl->ndefaults; i++) {
			const struct pts_default *d = &pl->defaults[i];
			if (d->when != when)
				continue;
			cl->c[cl->n++] = (struct pts_constraint){
				.max_skew = d->max_skew,
				.min_domains = d->min_domains,
				.key = d->key,
				.hostname = strcmp(d->key, LABEL_HOSTNAME) == 0,
				.affinity_honor = !d->affinity_ignore,
				.taints_honor = d->taints_honor,
				.selector = dsel,
			};
		}
	}
	*out = cl;
	return 0;
}

static bool constraint_matches(const struct pts_constraint *c, const struct sk_pod *p)
{
	return kube_label_selector_matches(c->selector, sk_labels_get, &p->labels);
}

/* upstream countPodsMatchSelector: an empty selector counts nothing; terminating pods and other
 * namespaces are skipped. */
static int64_t count_matching(const struct pts_constraint *c, const struct sk_node_info *ni, const char *ns)
{
	if (kube_label_selector_is_empty(c->selector) || kube_label_selector_is_nothing(c->selector))
		return 0;
	int64_t n = 0;
	for (int i = 0; i < ni->npods; i++) {
		const struct sk_pod *p = ni->pods[i].pod;
		if (p->terminating || (p->ns != ns && strcmp(p->ns, ns) != 0))
			continue;
		n += constraint_matches(c, p);
	}
	return n;
}

static bool node_has_all_keys(const struct sk_node *node, const struct pts_constraints *cl)
{
	for (int i = 0; i < cl->n; i++)
		if (!sk_labels_get(&node->labels, cl->c[i].key))
			return false;
	return true;
}

/* nodeaffinity.GetRequiredNodeAffinity(pod).Match(node) */
static bool required_affinity_matches(const struct sk_pod *pod, const struct sk_node *node)
{
	for (int i = 0; i < pod->node_selector.n; i++) {
		const char *v = sk_labels_get(&node->labels, pod->node_selector.items[i].key);
		if (!v || strcmp(v, pod->node_selector.items[i].value) != 0)
			return false;
	}
	return !pod->required_affinity ||
	       kube_node_selector_matches(pod->required_affinity, node->name, sk_labels_get, &node->labels);
}

/* FindMatchingUntoleratedTaint with the NoSchedule/NoExecute filter */
static bool has_untolerated_taint(const struct sk_pod *pod, const struct sk_node *node)
{
	for (int i = 0; i < node->ntaints; i++) {
		const struct sk_taint *t = &node->taints[i];
		if (t->effect != SK_EFFECT_NO_SCHEDULE && t->effect != SK_EFFECT_NO_EXECUTE)
			continue;
		bool ok = false;
		for (int j = 0; j < pod->ntolerations && !ok; j++)
			ok = sk_toleration_tolerates(&pod->tolerations[j], t);
		if (!ok)
			return true;
	}
	return false;
}

static bool node_included(const struct pts_constraint *c, const struct sk_pod *pod, const struct sk_node *node)
{
	if (c->affinity_honor && !required_affinity_matches(pod, node))
		return false;
	if (c->taints_honor && has_untolerated_taint(pod, node))
		return false;
	return true;
}

/* ---------- PreFilter / Filter ---------- */

struct critical_path {
	const char *value;
	int64_t num;
};

/* Filter reads a constraint's count of the node's domain from a short list when the constraint has
 * few domains (zone-like keys): the label values are interned, so a pointer compare per domain
 * replaces hashing the value and probing the map; hostname-like keys keep the map. */
#define FEW_DOMAINS 16

struct domain_count {
	const char *value;
	int64_t count;
};

/* What Filter needs of a constraint besides its counts: whether the incoming pod matches the
 * constraint's selector (the same for every node) and the short list of its domains. */
struct filter_constraint {
	bool self_match;
	int ndomains;                /* -1: none (many domains, or counts changed by AddPod/RemovePod) */
	struct domain_count domains[FEW_DOMAINS];
};

struct pts_filter_state {
	struct pts_constraints *cl;  /* one reference */
	struct sk_tpmap *counts;     /* per constraint: ("", topology value) -> matching pods */
	struct critical_path (*paths)[2];
	struct filter_constraint *fc; /* per constraint */
};

static void filter_state_free(void *p)
{
	struct pts_filter_state *s = p;
	if (!s)
		return;
	for (int i = 0; s->counts && i < s->cl->n; i++)
		sk_tpmap_free(&s->counts[i]);
	free(s->counts);
	free(s->paths);
	free(s->fc);
	constraints_unref(s->cl);
	free(s);
}

static struct pts_filter_state *filter_state_new(struct pts_constraints *cl)
{
	struct pts_filter_state *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cl = cl;
	s->counts = calloc((size_t)cl->n, sizeof(*s->counts));
	s->paths = calloc((size_t)cl->n, sizeof(*s->paths));
	s->fc = calloc((size_t)cl->n, sizeof(*s->fc));
	if (!s->counts || !s->paths || !s->fc) {
		s->cl = NULL;
		free(s->counts);
		free(s->paths);
		free(s->fc);
		free(s);
		return NULL;
	}
	return s;
}

static void *filter_state_clone(const void *p)
{
	const struct pts_filter_state *s = p;
	struct pts_filter_state *c = filter_state_new(s->cl);
	if (!c)
		return NULL;
	atomic_fetch_add(&s->cl->refs, 1);
	memcpy(c->paths, s->paths, (size_t)s->cl->n * sizeof(*s->paths));
	memcpy(c->fc, s->fc, (size_t)s->cl->n * sizeof(*s->fc));
	for (int i = 0; i < s->cl->n; i++) {
		if (sk_tpmap_copy(&c->counts[i], &s->counts[i]) < 0) {
			filter_state_free(c);
			return NULL;
		}
	}
	return c;
}

static const struct sk_state_ops filter_state_ops = { .free = filter_state_free, .clone = filter_state_clone };

static bool same_value(const char *a, const char *b)
{
	return a == b || strcmp(a, b) == 0;
}

/* upstream criticalPaths.update: keeps the minimum in [0]; [1] is some value >= it. */
static void paths_update(struct critical_path p[2], const char *value, int64_t num)
{
	int i = same_value(value, p[0].value) ? 0 : same_value(value, p[1].value) ? 1 : -1;
	if (i >= 0) {
		p[i].num = num;
		if (p[0].num > p[1].num) {
			struct critical_path t = p[0];
			p[0] = p[1];
			p[1] = t;
		}
	} else if (num < p[0].num) {
		p[1] = p[0];
		p[0].value = value;
		p[0].num = num;
	} else if (num < p[1].num) {
		p[1].value = value;
		p[1].num = num;
	}
}

struct count_job {
	const struct sk_snapshot *snap;
	const struct sk_pod *pod;
	const struct pts_constraints *cl;
	int64_t *counts;             /* [node * n + c]; -1 = not counted */
	bool require_all;
	const struct sk_tpmap *only; /* PreScore: count only values present here (per constraint) */
};

static void count_node(int i, void *ctx)
{
	struct count_job *j = ctx;
	const struct sk_node_info *ni = j->snap->nodes[i];
	const struct sk_node *node = ni->node;
	int64_t *row = &j->counts[(size_t)i * (size_t)j->cl->n];
	for (int c = 0; c < j->cl->n; c++)
		row[c] = -1;
	if (!node || (j->require_all && !node_has_all_keys(node, j->cl)))
		return;
	for (int c = 0; c < j->cl->n; c++) {
		const struct pts_constraint *pc = &j->cl->c[c];
		if (!node_included(pc, j->pod, node))
			continue;
		if (j->only) {
			const char *v = sk_labels_get(&node->labels, pc->key);
			if (pc->hostname || !sk_tpmap_find(&j->only[c], "", v ? v : ""))
				continue;
		}
		row[c] = count_matching(pc, ni, j->pod->ns);
	}
}

/* ---------- PreFilter counts across cycles (schedkit/node_memo.h) ---------- */

/* The counts of consecutive pods with the same constraints (a Deployment's pods) differ only on
 * the nodes that changed in between: each node's contribution is kept with its generation. In
 * the sums, constraint i is key constraint_tags[i]: maps[0][(tag, value)] the matching pods,
 * maps[1][(tag, value)] the nodes counted (a domain exists, possibly with 0 pods). */
#define MEMO_MAX_CONSTRAINTS 8
static const char *const constraint_tags[MEMO_MAX_CONSTRAINTS] = { "0", "1", "2", "3", "4", "5", "6", "7" };

/* What a contribution depends on: the pod's namespace, its constraints' keys, selectors and
 * policies, and with nodeAffinityPolicy Honor its nodeSelector and required node affinity (the
 * same object: kept alive by the reference), with nodeTaintsPolicy Honor its tolerations. */
struct pts_sig {
	struct sk_pod *pod;
	struct pts_constraints *cl;
};

static void pts_sig_free(void *p)
{
	struct pts_sig *g = p;
	sk_pod_unref(g->pod);
	constraints_unref(g->cl);
	free(g);
}

static bool tolerations_equal(const struct sk_pod *a, const struct sk_pod *b)
{
	if (a->ntolerations != b->ntolerations)
		return false;
	for (int i = 0; i < a->ntolerations; i++) {
		const struct sk_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
		if (x->op != y->op || x->effect != y->effect || strcmp(x->key, y->key) != 0 || strcmp(x->value, y->value) != 0)
			return false;
	}
	return true;
}

static bool pts_sig_equal(const struct pts_sig *g, const struct sk_pod *pod, const struct pts_constraints *cl)
{
	const struct pts_constraints *o = g->cl;
	if (o->n != cl->n || strcmp(g->pod->ns, pod->ns) != 0)
		return false;
	bool aff = false, taints = false;
	for (int i = 0; i < cl->n; i++) {
		const struct pts_constraint *a = &o->c[i], *b = &cl->c[i];
		if (strcmp(a->key, b->key) != 0 || a->affinity_honor != b->affinity_honor ||
		    a->taints_honor != b->taints_honor || !kube_label_selector_equal(a->selector, b->selector))
			return false;
		aff |= b->affinity_honor;
		taints |= b->taints_honor;
	}
	if (aff && (g->pod->required_affinity != pod->required_affinity ||
		    !sk_labels_equal(&g->pod->node_selector, &pod->node_selector)))
		return false;
	return !taints || tolerations_equal(g->pod, pod);
}

struct memo_job {
	const struct sk_pod *pod;
	const struct pts_constraints *cl;
};

/* One node's part of PreFilter's counts (count_node with require_all). */
static int node_contrib(const struct sk_node_info *ni, void *ctx, struct sk_node_contribs *out)
{
	const struct memo_job *j = ctx;
	if (!node_has_all_keys(ni->node, j->cl))
		return 0;
	for (int c = 0; c < j->cl->n; c++) {
		const struct pts_constraint *pc = &j->cl->c[c];
		if (!node_included(pc, j->pod, ni->node))
			continue;
		const char *v = sk_labels_get(&ni->node->labels, pc->key);
		int64_t n = count_matching(pc, ni, j->pod->ns);
		if (sk_node_contribs_add(out, 1, constraint_tags[c], v, 1) < 0 ||
		    (n && sk_node_contribs_add(out, 0, constraint_tags[c], v, n) < 0))
			return -1;
	}
	return 0;
}

/* PreFilter's counts into s->counts from the memo; 1 when done, 0 when the memo does not apply
 * (then count as upstream does), -1 on OOM. */
static int counts_from_memo(struct sk_plugin *self, struct pts_filter_state *s, const struct sk_pod *pod,
			    const struct sk_snapshot *snap)
{
	struct pts *pl = self->priv;
	struct pts_constraints *cl = s->cl;
	bool aff = false;
	for (int c = 0; c < cl->n; c++)
		aff |= cl->c[c].affinity_honor;
	/* a pod's own node affinity has no equality: such pods are counted afresh */
	if (!snap || !pl->memo || cl->n > MEMO_MAX_CONSTRAINTS || (aff && pod->required_affinity))
		return 0;
	if (!sk_node_memo_try_lock(pl->memo))
		return 0;
	struct memo_job j = { .pod = pod, .cl = cl };
	const struct pts_sig *old = sk_node_memo_sig(pl->memo);
	struct sk_node_sums *sums = NULL;
	if (!old || !pts_sig_equal(old, pod, cl)) {
		struct pts_sig *g = calloc(1, sizeof(*g));
		if (!g)
			goto out;
		g->pod = sk_pod_ref((struct sk_pod *)pod);
		g->cl = cl;
		atomic_fetch_add(&cl->refs, 1);
		sk_node_memo_reset(pl->memo, g, pts_sig_free);
	}
	sums = sk_node_memo_update(pl->memo, self->handle, snap->nodes, snap->nnodes, node_contrib, &j);
out:
	sk_node_memo_unlock(pl->memo);
	if (!sums)
		return -1;
	int rc = 1;
	const struct sk_tpmap *domains = &sums->maps[1];
	for (int k = 0; k < domains->cap && rc == 1; k++) {
		const struct sk_tpmap_entry *e = &domains->e[k];
		if (!e->key)
			continue;
		int c = e->key[0] - '0';
		const int64_t *n = sk_tpmap_find(&sums->maps[0], e->key, e->value);
		int64_t *slot = sk_tpmap_slot(&s->counts[c], "", e->value);
		if (!slot)
			rc = -1;
		else
			*slot = n ? *n : 0;
	}
	sk_node_sums_unref(sums);
	return rc;
}

static struct sk_status pts_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       struct sk_prefilter_result *result)
{
	(void)result;
	const struct pts *pl = self->priv;
	struct pts_constraints *cl = NULL;
	if (get_constraints(pl, self->handle, pod, SK_DO_NOT_SCHEDULE, &cl) < 0)
		return sk_status(SK_ERROR, "PodTopologySpread: out of memory");
	if (!cl)
		return sk_status(SK_SKIP, NULL);
	struct pts_filter_state *s = filter_state_new(cl);
	if (!s) {
		constraints_unref(cl);
		return sk_status(SK_ERROR, "PodTopologySpread: out of memory");
	}
	const struct sk_snapshot *snap = sk_handle_snapshot(self->handle);
	int memo = counts_from_memo(self, s, pod, snap);
	if (memo < 0) {
		filter_state_free(s);
		return sk_status(SK_ERROR, "PodTopologySpread: out of memory");
	}
	int nn = snap && !memo ? snap->nnodes : 0;
	int64_t *counts = NULL;
	if (nn > 0 && !(counts = malloc((size_t)nn * (size_t)cl->n * sizeof(*counts)))) {
		filter_state_free(s);
		return sk_status(SK_ERROR, "PodTopologySpread: out of memory");
	}
	struct count_job j = { .snap = snap, .pod = pod, .cl = cl, .counts = counts, .require_all = true };
	if (nn > 0)
		sk_handle_parallel_for(self->handle, nn, count_node, &j);
	for (int i = 0; i < nn; i++) {
		const struct sk_node *node = snap->nodes[i]->node;
		for (int c = 0; c < cl->n; c++) {
			int64_t v = counts[(size_t)i * (size_t)cl->n + (size_t)c];
			if (v < 0)
				continue;
			int64_t *slot = sk_tpmap_slot(&s->counts[c], "", sk_labels_get(&node->labels, cl->c[c].key));
			if (!slot) {
				free(counts);
				filter_state_free(s);
				return sk_status(SK_ERROR, "PodTopologySpread: out of memory");
			}
			*slot += v;
		}
	}
	free(counts);
	for (int c = 0; c < cl->n; c++) {
		s->paths[c][0] = s->paths[c][1] = (struct critical_path){ .value = "", .num = INT32_MAX };
		const struct sk_tpmap *m = &s->counts[c];
		struct filter_constraint *fc = &s->fc[c];
		fc->self_match = constraint_matches(&cl->c[c], pod);
		fc->ndomains = m->n <= FEW_DOMAINS ? 0 : -1;
		for (int k = 0; k < m->cap; k++) {
			if (!m->e[k].key)
				continue;
			paths_update(s->paths[c], m->e[k].value, m->e[k].count);
			if (fc->ndomains >= 0)
				fc->domains[fc->ndomains++] = (struct domain_count){ m->e[k].value, m->e[k].count };
		}
	}
	sk_cycle_state_put(cs, self->slot, s, &filter_state_ops);
	return sk_ok();
}

static void update_with_pod(struct pts_filter_state *s, const struct sk_pod *updated, const struct sk_pod *preemptor,
			    const struct sk_node *node, int delta, struct sk_status *st)
{
	if (!s || !node || strcmp(updated->ns, preemptor->ns) != 0)
		return;
	if (!node_has_all_keys(node, s->cl))
		return;
	for (int c = 0; c < s->cl->n; c++) {
		const struct pts_constraint *pc = &s->cl->c[c];
		if (!constraint_matches(pc, updated) || !node_included(pc, preemptor, node))
			continue;
		const char *v = sk_labels_get(&node->labels, pc->key);
		int64_t *slot = sk_tpmap_slot(&s->counts[c], "", v);
		if (!slot) {
			*st = sk_status(SK_ERROR, "PodTopologySpread: out of memory");
			return;
		}
		*slot += delta;
		s->fc[c].ndomains = -1; /* the list no longer matches counts[c] */
		paths_update(s->paths[c], v, *slot);
	}
}

static struct sk_status pts_add_pod(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const struct sk_pod *to_add, const struct sk_node_info *ni)
{
	struct pts_filter_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_status(SK_ERROR, "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
	struct sk_status st = sk_ok();
	update_with_pod(s, to_add, pod, ni->node, 1, &st);
	return st;
}

static struct sk_status pts_remove_pod(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       const struct sk_pod *to_remove, const struct sk_node_info *ni)
{
	struct pts_filter_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_status(SK_ERROR, "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
	struct sk_status st = sk_ok();
	update_with_pod(s, to_remove, pod, ni->node, -1, &st);
	return st;
}

/* The count of domain v: from the short list when there is one (every domain of counts is in it,
 * so a value in none of them counts 0), else from the map. */
static int64_t domain_count(const struct filter_constraint *fc, const struct sk_tpmap *counts, const char *v)
{
	if (fc->ndomains < 0) {
		const int64_t *m = sk_tpmap_find(counts, "", v);
		return m ? *m : 0;
	}
	for (int i = 0; i < fc->ndomains; i++)
		if (fc->domains[i].value == v)
			return fc->domains[i].count;
	for (int i = 0; i < fc->ndomains; i++) /* an equal value under another pointer */
		if (strcmp(fc->domains[i].value, v) == 0)
			return fc->domains[i].count;
	return 0;
}

static struct sk_status pts_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const struct sk_node_info *ni)
{
	(void)pod; /* its selector matches are in the state (fc[].self_match) */
	const struct pts_filter_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_status(SK_ERROR, "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	for (int c = 0; c < s->cl->n; c++) {
		const struct pts_constraint *pc = &s->cl->c[c];
		const char *v = sk_labels_get(&ni->node->labels, pc->key);
		if (!v)
			return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH);
		int64_t min = s->paths[c][0].num;
		if (s->counts[c].n < pc->min_domains)
			min = 0;
		int64_t self_match = s->fc[c].self_match ? 1 : 0;
		int64_t skew = domain_count(&s->fc[c], &s->counts[c], v) + self_match - min;
		if (skew > pc->max_skew)
			return sk_status(SK_UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH);
	}
	return sk_ok();
}

/* ---------- PreScore / Score / NormalizeScore ---------- */

struct pts_score_state {
	struct pts_constraints *cl;
	struct sk_tpmap *counts;  /* per constraint: ("", value) -> matching pods (not for hostname) */
	double *weight;           /* per constraint */
	struct sk_tpmap ignored;  /* (node name, "") of nodes missing a key */
};

static void score_state_free(void *p)
{
	struct pts_score_state *s = p;
	if (!s)
		return;
	for (int i = 0; s->counts && i < s->cl->n; i++)
		sk_tpmap_free(&s->counts[i]);
	free(s->counts);
	free(s->weight);
	sk_tpmap_free(&s->ignored);
	constraints_unref(s->cl);
	free(s);
}

static const struct sk_state_ops score_state_ops = { .free = score_state_free, .clone = NULL };

static struct sk_status pts_pre_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      const struct sk_node_info *const *nodes, int nnodes)
{
	const struct pts *pl = self->priv;
	const struct sk_snapshot *snap = sk_handle_snapshot(self->handle);
	if (!snap || snap->nnodes == 0)
		return sk_status(SK_SKIP, NULL);
	struct pts_constraints *cl = NULL;
	if (get_constraints(pl, self->handle, pod, SK_SCHEDULE_ANYWAY, &cl) < 0)
		return sk_status(SK_ERROR, "PodTopologySpread: out of memory");
	if (!cl)
		return sk_status(SK_SKIP, NULL);
	bool require_all = pod->nspread > 0 || !pl->system;
	struct pts_score_state *s = calloc(1, sizeof(*s));
	int *size = calloc((size_t)cl->n, sizeof(int));
	int64_t *counts = malloc((size_t)snap->nnodes * (size_t)cl->n * sizeof(*counts));
	if (s) {
		s->cl = cl;
		s->counts = calloc((size_t)cl->n, sizeof(*s->counts));
		s->weight = calloc((size_t)cl->n, sizeof(*s->weight));
	} else {
		constraints_unref(cl);
	}
	if (!s || !size || !counts || !s->counts || !s->weight)
		goto oom;
	int nignored = 0;
	for (int i = 0; i < nnodes; i++) {
		const struct sk_node *node = nodes[i]->node;
		if (!node)
			continue;
		if (require_all && !node_has_all_keys(node, cl)) {
			if (!sk_tpmap_slot(&s->ignored, node->name, ""))
				goto oom;
			nignored++;
			continue;
		}
		for (int c = 0; c < cl->n; c++) {
			if (cl->c[c].hostname)
				continue;
			int before = s->counts[c].n;
			if (!sk_tpmap_slot(&s->counts[c], "", sk_labels_get(&node->labels, cl->c[c].key)))
				goto oom;
			size[c] += s->counts[c].n != before;
		}
	}
	for (int c = 0; c < cl->n; c++) {
		int sz = cl->c[c].hostname ? nnodes - nignored : size[c];
		s->weight[c] = log((double)sz + 2.0);
	}
	struct count_job j = {
		.snap = snap, .pod = pod, .cl = cl, .counts = counts, .require_all = require_all, .only = s->counts,
	};
	sk_handle_parallel_for(self->handle, snap->nnodes, count_node, &j);
	for (int i = 0; i < snap->nnodes; i++) {
		const struct sk_node *node = snap->nodes[i]->node;
		for (int c = 0; c < cl->n; c++) {
			int64_t v = counts[(size_t)i * (size_t)cl->n + (size_t)c];
			if (v <= 0)
				continue;
			int64_t *slot = sk_tpmap_slot(&s->counts[c], "", sk_labels_get(&node->labels, cl->c[c].key));
			if (!slot)
				goto oom;
			*slot += v;
		}
	}
	free(counts);
	free(size);
	sk_cycle_state_put(cs, self->slot, s, &score_state_ops);
	return sk_ok();
oom:
	free(counts);
	free(size);
	score_state_free(s);
	return sk_status(SK_ERROR, "PodTopologySpread: out of memory");
}

static struct sk_status pts_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni, int64_t *score)
{
	const struct pts_score_state *s = sk_cycle_state_get(cs, self->slot);
	*score = 0;
	if (!s)
		return sk_status(SK_ERROR, "reading \"PreScorePodTopologySpread\" from cycleState: not found");
	const struct sk_node *node = ni->node;
	if (!node)
		return sk_status(SK_ERROR, "node not found");
	if (sk_tpmap_find(&s->ignored, node->name, ""))
		return sk_ok();
	double sum = 0;
	for (int c = 0; c < s->cl->n; c++) {
		const struct pts_constraint *pc = &s->cl->c[c];
		const char *v = sk_labels_get(&node->labels, pc->key);
		if (!v)
			continue;
		int64_t cnt;
		if (pc->hostname) {
			cnt = count_matching(pc, ni, pod->ns);
		} else {
			const int64_t *m = sk_tpmap_find(&s->counts[c], "", v);
			cnt = m ? *m : 0;
		}
		sum += (double)cnt * s->weight[c] + (double)(pc->max_skew - 1);
	}
	*score = (int64_t)round(sum);
	return sk_ok();
}

static struct sk_status pts_normalize(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_node_score *scores, int n)
{
	(void)pod;
	const struct pts_score_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_status(SK_ERROR, "reading \"PreScorePodTopologySpread\" from cycleState: not found");
	int64_t min = INT64_MAX, max = 0;
	bool *ign = calloc((size_t)(n ? n : 1), sizeof(bool));
	if (!ign)
		return sk_status(SK_ERROR, "PodTopologySpread: out of memory");
	for (int i = 0; i < n; i++) {
		if (s->ignored.n && sk_tpmap_find(&s->ignored, scores[i].name, "")) {
			ign[i] = true;
			continue;
		}
		if (scores[i].score < min)
			min = scores[i].score;
		if (scores[i].score > max)
			max = scores[i].score;
	}
	for (int i = 0; i < n; i++) {
		if (ign[i])
			scores[i].score = 0;
		else if (max == 0)
			scores[i].score = SK_MAX_NODE_SCORE;
		else
			scores[i].score = SK_MAX_NODE_SCORE * (max + min - scores[i].score) / max;
	}
	free(ign);
	return sk_ok();
}

/* ---------- EnqueueExtensions ---------- */

static bool involved(const struct sk_pod *other, const struct sk_pod *pod)
{
	return strcmp(other->uid, pod->uid) == 0 || (other->node_name && strcmp(other->ns, pod->ns) == 0);
}

static bool any_constraint_matches(const struct pts_constraints *cl, const struct sk_pod *p)
{
	for (int i = 0; cl && i < cl->n; i++)
		if (constraint_matches(&cl->c[i], p))
			return true;
	return false;
}

static enum sk_hint pts_hint_pod(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				 const void *new_obj)
{
	const struct sk_pod *oldp = old_obj, *newp = new_obj;
	if ((newp && !involved(newp, pod)) || (oldp && !involved(oldp, pod)))
		return SK_QUEUE_SKIP;
	struct pts_constraints *cl = NULL;
	if (get_constraints(self->priv, self->handle, pod, SK_DO_NOT_SCHEDULE, &cl) < 0)
		return SK_QUEUE;
	enum sk_hint h = SK_QUEUE_SKIP;
	if (oldp && newp) {
		bool honor = false;
		for (int i = 0; cl && i < cl->n; i++)
			honor |= cl->c[i].taints_honor;
		if (strcmp(pod->uid, newp->uid) == 0 && !sk_tolerations_equal(oldp, newp) && honor) {
			h = SK_QUEUE;
		} else if (!sk_labels_equal(&oldp->labels, &newp->labels)) {
			for (int i = 0; cl && i < cl->n && h == SK_QUEUE_SKIP; i++)
				if (constraint_matches(&cl->c[i], oldp) != constraint_matches(&cl->c[i], newp))
					h = SK_QUEUE;
		}
	} else if (newp) {
		h = any_constraint_matches(cl, newp) ? SK_QUEUE : SK_QUEUE_SKIP;
	} else if (oldp) {
		h = any_constraint_matches(cl, oldp) ? SK_QUEUE : SK_QUEUE_SKIP;
	} else {
		h = SK_QUEUE;
	}
	constraints_unref(cl);
	return h;
}

static bool node_matches_keys(const struct sk_node *node, const struct pts_constraints *cl)
{
	static const struct pts_constraints none = { .n = 0 };
	return node_has_all_keys(node, cl ? cl : &none);
}

static enum sk_hint pts_hint_node(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				  const void *new_obj)
{
	const struct sk_node *oldn = old_obj, *newn = new_obj;
	struct pts_constraints *cl = NULL;
	if (get_constraints(self->priv, self->handle, pod, SK_DO_NOT_SCHEDULE, &cl) < 0)
		return SK_QUEUE;
	bool om = oldn && node_matches_keys(oldn, cl), nm = newn && node_matches_keys(newn, cl);
	enum sk_hint h;
	if (oldn && newn) {
		bool changed = false;
		for (int i = 0; cl && i < cl->n && !changed; i++) {
			const char *a = sk_labels_get(&oldn->labels, cl->c[i].key);
			const char *b = sk_labels_get(&newn->labels, cl->c[i].key);
			changed = strcmp(a ? a : "", b ? b : "") != 0;
		}
		bool taints = !sk_taints_equal(oldn->taints, oldn->ntaints, newn->taints, newn->ntaints);
		h = (om != nm || (nm && (changed || taints))) ? SK_QUEUE : SK_QUEUE_SKIP;
	} else if (newn) {
		h = nm ? SK_QUEUE : SK_QUEUE_SKIP;
	} else {
		h = om ? SK_QUEUE : SK_QUEUE_SKIP;
	}
	constraints_unref(cl);
	return h;
}

static int pts_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	if (max < 2)
		return 0;
	out[0] = (struct sk_event_registration){
		.event = { SK_EV_POD, SK_ACT_ADD | SK_ACT_UPDATE_POD_LABEL | SK_ACT_UPDATE_POD_TOLERATIONS | SK_ACT_DELETE,
			   "PodAdd|UpdatePodLabel|UpdatePodToleration|PodDelete" },
		.hint = pts_hint_pod,
	};
	out[1] = (struct sk_event_registration){
		.event = { SK_EV_NODE, SK_ACT_ADD | SK_ACT_DELETE | SK_ACT_UPDATE_NODE_LABEL | SK_ACT_UPDATE_NODE_TAINT,
			   "NodeAdd|NodeDelete|UpdateNodeLabel|UpdateNodeTaint" },
		.hint = pts_hint_node,
	};
	return 2;
}

const struct sk_plugin_desc sk_plugin_pod_topology_spread = {
	SK_PLUGIN_HEADER,
	.name = "PodTopologySpread",
	.args_kind = "PodTopologySpreadArgs",
	.args_decode = args_decode,
	.args_encode = args_encode,
	.args_free = args_free,
	.init = pts_init,
	.fini = pts_fini,
	.pre_filter = pts_pre_filter,
	.pre_filter_add_pod = pts_add_pod,
	.pre_filter_remove_pod = pts_remove_pod,
	.filter = pts_filter,
	.pre_score = pts_pre_score,
	.score = pts_score,
	.normalize_score = pts_normalize,
	.events_to_register = pts_events,
};
