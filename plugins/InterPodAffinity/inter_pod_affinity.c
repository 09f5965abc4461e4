/* InterPodAffinity (PreFilter + AddPod/RemovePod, Filter, PreScore, Score, NormalizeScore,
 * EnqueueExtensions) and InterPodAffinityArgs (pkg/scheduler/framework/plugins/interpodaffinity/, pkg/scheduler/apis/config/validation/validation_pluginargs.go).
 *
 * PreFilter counts, per (topology key, value), the existing pods matching the incoming pod's
 * required (anti-)affinity terms and the existing pods whose required anti-affinity matches the
 * incoming pod (only nodes in sk_snapshot.have_required_anti_affinity are visited for the latter),
 * so Filter is O(terms + counted topology keys) per node. PreScore builds the (key, value) -> weight
 * map from every pod when the incoming pod has preferred terms, else only from the nodes in
 * sk_snapshot.have_affinity; Score is O(distinct topology keys) per node. The counts are kept
 * across cycles (schedkit/node_memo.h) and mirrored into flat arrays by topology pair id
 * (topology_ids.h), so Filter and Score read an array element per key and node instead of
 * hashing the node's label value.
 *
 * Namespace selectors, as upstream: the incoming pod's terms with a non-empty namespaceSelector get
 * the namespaces the Namespace lister's labels match added to their list, once per cycle
 * (mergeAffinityTermNamespacesIfNotEmpty: struct ns_view); existing pods' terms are matched against
 * the labels of the incoming pod's namespace (GetNamespaceLabelsSnapshot); `{}` selects every
 * namespace. Queueing hints match selectors against no labels, as upstream's do.
 *
 * Instances borrow their args. Cycle state: the PreFilter state is cloneable (AddPod/RemovePod
 * update the clone's maps); the PreScore state is read-only and shared by clones. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/args.h"
#include "schedkit/plugin.h"
#include "schedkit/selector.h"
#include "schedkit/node_memo.h"
#include "schedkit/tpmap.h"

#include "topology_ids.h"

#define ERR_REASON_EXISTING_ANTI_AFFINITY "node(s) didn't satisfy existing pods anti-affinity rules"
#define ERR_REASON_AFFINITY "node(s) didn't match pod affinity rules"
#define ERR_REASON_ANTI_AFFINITY "node(s) didn't match pod anti-affinity rules"

/* ---------- args ---------- */

struct ipa_args {
	int32_t hard_pod_affinity_weight;
	bool ignore_preferred_terms_of_existing_pods;
};

static void args_free(void *p) { free(p); }

static int args_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", NULL };
	int64_t w = 1;
	bool ignore = false;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "InterPodAffinityArgs", path, e) < 0 ||
	    sk_json_int(json, "hardPodAffinityWeight", path, INT32_MIN, INT32_MAX, &w, NULL, e) < 0 ||
	    sk_json_bool(json, "ignorePreferredTermsOfExistingPods", path, &ignore, NULL, e) < 0)
		return -1;
	if (w < 0 || w > 100) {
		char *p = sk_path_child(path, "hardPodAffinityWeight");
		sk_err_invalid_int(e, p ? p : path, w, "not in valid range [0, 100]");
		free(p);
		return -1;
	}
	struct ipa_args *a = calloc(1, sizeof(*a));
	if (!a) {
		sk_errors_addf(e, "%s: out of memory", path);
		return -1;
	}
	a->hard_pod_affinity_weight = (int32_t)w;
	a->ignore_preferred_terms_of_existing_pods = ignore;
	*out = a;
	return 0;
}

static cJSON *args_encode(const void *p)
{
	const struct ipa_args *a = p;
	cJSON *o = sk_args_json_new("InterPodAffinityArgs");
	if (!o || !cJSON_AddNumberToObject(o, "hardPodAffinityWeight", a ? a->hard_pod_affinity_weight : 1) ||
	    !cJSON_AddBoolToObject(o, "ignorePreferredTermsOfExistingPods",
				   a ? a->ignore_preferred_terms_of_existing_pods : false)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---------- instance ---------- */

static const struct ipa_args default_args = { .hard_pod_affinity_weight = 1 };

/* One count kept across cycles: the memo, the mirror of its sums by pair id (topology_ids.h,
 * guarded by the memo's lock) and the nodes its last update recounted. */
struct ipa_memo {
	struct sk_node_memo *memo;
	struct topo_mirror mirror;
	int captouched;
	const struct sk_node_info **touched;
	atomic_int ntouched;
};

/* An instance: its args (borrowed), the PreFilter counts kept across cycles (existing pods'
 * anti-affinity against the incoming pod, the incoming pod's terms against existing pods), the
 * PreScore sums, and the topology pair ids they are mirrored by. */
struct ipa {
	const struct ipa_args *args;
	struct ipa_memo existing, incoming;             /* PreFilter */
	struct ipa_memo score_existing, score_preferred; /* PreScore */
	bool ids_ok;
	struct topo_ids ids;
};

static void ipa_fini(struct sk_plugin *self);

static void memo_fini(struct ipa_memo *m)
{
	sk_node_memo_free(m->memo);
	topo_mirror_clear(&m->mirror);
	free(m->touched);
}

static int ipa_init(struct sk_plugin *self, const void *args, char **err)
{
	struct ipa *pl = calloc(1, sizeof(*pl));
	if (!pl) {
		*err = strdup("InterPodAffinity: out of memory");
		return -1;
	}
	pl->args = args ? args : &default_args;
	self->priv = pl;
	if (!(pl->existing.memo = sk_node_memo_new()) || !(pl->incoming.memo = sk_node_memo_new()) ||
	    !(pl->score_existing.memo = sk_node_memo_new()) || !(pl->score_preferred.memo = sk_node_memo_new()) ||
	    topo_ids_init(&pl->ids) < 0) {
		ipa_fini(self);
		*err = strdup("InterPodAffinity: out of memory");
		return -1;
	}
	pl->ids_ok = true;
	return 0;
}

static void ipa_fini(struct sk_plugin *self)
{
	struct ipa *pl = self->priv;
	if (!pl)
		return;
	memo_fini(&pl->existing);
	memo_fini(&pl->incoming);
	memo_fini(&pl->score_existing);
	memo_fini(&pl->score_preferred);
	if (pl->ids_ok)
		topo_ids_destroy(&pl->ids);
	free(pl);
	self->priv = NULL;
}

/* ---------- namespaces of one cycle ---------- */

/* The namespaces one of the incoming pod's terms selects through its namespaceSelector. */
struct ns_resolved {
	const struct sk_affinity_term *term;
	int n;
	const char **names; /* interned */
};

/* What a cycle knows of namespaces, shared (refcounted) by a PreFilter state and its clones. */
struct ns_view {
	atomic_int refs;
	const struct sk_pod *pod;        /* the incoming pod (lives for the cycle) */
	struct sk_labels *pod_ns_labels; /* its namespace's labels, for existing pods' terms */
	int nres;
	struct ns_resolved *res;         /* its terms with a non-empty, non-nothing namespaceSelector */
};

static void ns_view_unref(struct ns_view *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	for (int i = 0; i < v->nres; i++)
		free(v->res[i].names);
	free(v->res);
	sk_labels_free(v->pod_ns_labels);
	free(v);
}

static struct ns_view *ns_view_ref(struct ns_view *v)
{
	if (v)
		atomic_fetch_add(&v->refs, 1);
	return v;
}

static bool needs_listing(const struct sk_affinity_term *t)
{
	return t->ns_selector && !kube_label_selector_is_empty(t->ns_selector) &&
	       !kube_label_selector_is_nothing(t->ns_selector);
}

static int resolve_terms(struct ns_view *v, struct sk_handle *h, const struct sk_affinity_term *terms, int n)
{
	for (int i = 0; i < n; i++) {
		if (!needs_listing(&terms[i]))
			continue;
		struct ns_resolved *r = &v->res[v->nres];
		r->term = &terms[i];
		if ((r->n = sk_handle_namespaces_matching(h, terms[i].ns_selector, &r->names)) < 0)
			return -1;
		v->nres++;
	}
	return 0;
}

/* The view for pod: its required terms (PreFilter) or its preferred terms (PreScore) resolved. */
static struct ns_view *ns_view_new(struct sk_handle *h, const struct sk_pod *pod, bool preferred)
{
	struct ns_view *v = calloc(1, sizeof *v);
	if (!v)
		return NULL;
	atomic_init(&v->refs, 1);
	v->pod = pod;
	int n = preferred ? pod->npreferred_affinity + pod->npreferred_anti_affinity : pod->naffinity + pod->nanti_affinity;
	if (!(v->pod_ns_labels = sk_handle_namespace_labels(h, pod->ns)) ||
	    (n && !(v->res = calloc((size_t)n, sizeof *v->res))))
		goto oom;
	if (preferred ? resolve_terms(v, h, pod->preferred_affinity_terms, pod->npreferred_affinity) < 0 ||
				resolve_terms(v, h, pod->preferred_anti_affinity_terms, pod->npreferred_anti_affinity) < 0
		      : resolve_terms(v, h, pod->affinity, pod->naffinity) < 0 ||
				resolve_terms(v, h, pod->anti_affinity, pod->nanti_affinity) < 0)
		goto oom;
	return v;
oom:
	ns_view_unref(v);
	return NULL;
}

/* ---------- term matching (upstream AffinityTerm.Matches) ---------- */

/* term was declared by `owner`; does it select namespace ns? The incoming pod's terms use the
 * namespaces resolved for the cycle; an existing pod's terms (the target is the incoming pod) match
 * the incoming pod's namespace labels; without a view (queueing hints) a selector sees no labels. */
static bool term_selects_namespace(const struct ns_view *v, const struct sk_affinity_term *t,
				   const struct sk_pod *owner, const char *ns)
{
	if (t->nnamespaces == 0 && !t->ns_selector)
		return owner->ns == ns || strcmp(owner->ns, ns) == 0;
	for (int i = 0; i < t->nnamespaces; i++)
		if (t->namespaces[i] == ns || strcmp(t->namespaces[i], ns) == 0)
			return true;
	if (!t->ns_selector || kube_label_selector_is_nothing(t->ns_selector))
		return false;
	if (kube_label_selector_is_empty(t->ns_selector))
		return true;
	if (v && owner == v->pod) {
		for (int i = 0; i < v->nres; i++) {
			if (v->res[i].term != t)
				continue;
			for (int k = 0; k < v->res[i].n; k++)
				if (v->res[i].names[k] == ns || strcmp(v->res[i].names[k], ns) == 0)
					return true;
			return false;
		}
		return false;
	}
	static const struct sk_labels none = { 0 };
	return kube_label_selector_matches(t->ns_selector, sk_labels_get, v && v->pod_ns_labels ? v->pod_ns_labels : &none);
}

static bool term_matches(const struct ns_view *v, const struct sk_affinity_term *t, const struct sk_pod *owner,
			 const struct sk_pod *pod)
{
	return term_selects_namespace(v, t, owner, pod->ns) &&
	       kube_label_selector_matches(t->selector, sk_labels_get, &pod->labels);
}

/* podMatchesAllAffinityTerms: false for no terms. */
static bool matches_all(const struct ns_view *v, const struct sk_affinity_term *terms, int n, const struct sk_pod *owner,
			const struct sk_pod *pod)
{
	if (n == 0)
		return false;
	for (int i = 0; i < n; i++)
		if (!term_matches(v, &terms[i], owner, pod))
			return false;
	return true;
}

/* ---------- PreFilter / Filter ---------- */

/* The counts are aggregates (schedkit/node_memo.h), shared with the memo and with clones until changed:
 * existing->maps[0] holds existing pods' required anti-affinity matching the pod (existing->keys:
 * its topology keys); incoming->maps[0] the existing pods matching all the pod's required
 * affinity terms, incoming->maps[1] those matching the pod's required anti-affinity terms. */
struct ipa_filter_state {
	const struct sk_pod *pod;        /* the incoming pod (lives for the cycle) */
	struct ns_view *view;            /* one reference */
	struct sk_node_sums *existing;        /* one reference each */
	struct sk_node_sums *incoming;
	bool self_affinity;              /* the pod matches all its own affinity terms */
	/* The counts by pair id (topology_ids.h), one reference each; where NULL (a dense NULL, or
	 * nodes NULL) Filter hashes. Clones carry none: AddPod/RemovePod change only the sums. */
	struct topo_nodes *nodes;
	struct topo_dense *dx, *di;      /* existing, incoming */
	int *kid;                        /* key ids in nodes: the affinity terms', the anti-affinity
					  * terms', then existing->keys' */
};

#define EXISTING_ANTI(s) (&(s)->existing->maps[0])
#define AFFINITY(s) (&(s)->incoming->maps[0])
#define ANTI(s) (&(s)->incoming->maps[1])

static void filter_state_drop_dense(struct ipa_filter_state *s)
{
	topo_nodes_unref(s->nodes);
	topo_dense_unref(s->dx);
	topo_dense_unref(s->di);
	free(s->kid);
	s->nodes = NULL;
	s->dx = s->di = NULL;
	s->kid = NULL;
}

static void filter_state_free(void *p)
{
	struct ipa_filter_state *s = p;
	if (!s)
		return;
	sk_node_sums_unref(s->existing);
	sk_node_sums_unref(s->incoming);
	ns_view_unref(s->view);
	filter_state_drop_dense(s);
	free(s);
}

static void *filter_state_clone(const void *p)
{
	const struct ipa_filter_state *s = p;
	struct ipa_filter_state *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pod = s->pod;
	c->view = ns_view_ref(s->view);
	c->existing = sk_node_sums_ref(s->existing); /* copied by the first AddPod/RemovePod */
	c->incoming = sk_node_sums_ref(s->incoming);
	c->self_affinity = s->self_affinity;
	return c;
}

/* The key ids of the state's terms and existing keys in its table; false when one has none. */
static bool filter_state_kids(struct ipa_filter_state *s)
{
	const struct sk_pod *pod = s->pod;
	int n = pod->naffinity + pod->nanti_affinity + s->existing->nkeys;
	if (!(s->kid = malloc((size_t)(n ? n : 1) * sizeof(*s->kid))))
		return false;
	int k = 0;
	for (int t = 0; t < pod->naffinity; t++)
		s->kid[k++] = topo_nodes_key(s->nodes, pod->affinity[t].topology_key);
	for (int t = 0; t < pod->nanti_affinity; t++)
		s->kid[k++] = topo_nodes_key(s->nodes, pod->anti_affinity[t].topology_key);
	for (int i = 0; i < s->existing->nkeys; i++)
		s->kid[k++] = topo_nodes_key(s->nodes, s->existing->keys[i]);
	for (int i = 0; i < n; i++)
		if (s->kid[i] < 0)
			return false;
	return true;
}

static const struct sk_state_ops filter_state_ops = { .free = filter_state_free, .clone = filter_state_clone };

/* a->maps[map][(key, node's value)] += delta when the node has the key; 0 or -1 (OOM). */
static int bump(struct sk_node_sums *a, int map, const struct sk_node *node, const char *key, int64_t delta)
{
	const char *v = sk_labels_get(&node->labels, key);
	if (!v)
		return 0;
	return sk_node_sums_add(a, map, key, v, delta);
}

/* Counts one existing pod `other` on `node` into the incoming pod's affinity/anti maps. */
static int count_incoming_terms(struct ipa_filter_state *s, const struct sk_pod *other, const struct sk_node *node,
				int64_t delta)
{
	const struct sk_pod *pod = s->pod;
	if (matches_all(s->view, pod->affinity, pod->naffinity, pod, other))
		for (int t = 0; t < pod->naffinity; t++)
			if (bump(s->incoming, 0, node, pod->affinity[t].topology_key, delta) < 0)
				return -1;
	for (int t = 0; t < pod->nanti_affinity; t++)
		if (term_matches(s->view, &pod->anti_affinity[t], pod, other) &&
		    bump(s->incoming, 1, node, pod->anti_affinity[t].topology_key, delta) < 0)
			return -1;
	return 0;
}

/* Counts `other`'s required anti-affinity terms that match the incoming pod. */
static int count_existing_anti(struct ipa_filter_state *s, const struct sk_pod *other, const struct sk_node *node,
			       int64_t delta)
{
	for (int t = 0; t < other->nanti_affinity; t++)
		if (term_matches(s->view, &other->anti_affinity[t], other, s->pod) &&
		    bump(s->existing, 0, node, other->anti_affinity[t].topology_key, delta) < 0)
			return -1;
	return 0;
}

/* One node's contribution to existing->maps[0]: its pods' required anti-affinity terms that match
 * the incoming pod (upstream getExistingAntiAffinityCounts, per node). */
static int existing_contrib(const struct sk_node_info *ni, void *ctx, struct sk_node_contribs *out)
{
	const struct ipa_filter_state *s = ctx;
	for (int k = 0; k < ni->npods; k++) {
		const struct sk_pod *other = ni->pods[k].pod;
		for (int t = 0; t < other->nanti_affinity; t++) {
			const struct sk_affinity_term *term = &other->anti_affinity[t];
			if (!term_matches(s->view, term, other, s->pod))
				continue;
			const char *v = sk_labels_get(&ni->node->labels, term->topology_key);
			if (v && sk_node_contribs_add(out, 0, term->topology_key, v, 1) < 0)
				return -1;
		}
	}
	return 0;
}

/* One node's contribution to incoming->maps: existing pods matching all the incoming pod's
 * affinity terms (counted once per term) and each of its anti-affinity terms (upstream
 * getIncomingAffinityAntiAffinityCounts, per node). */
static int incoming_contrib(const struct sk_node_info *ni, void *ctx, struct sk_node_contribs *out)
{
	const struct ipa_filter_state *s = ctx;
	const struct sk_pod *pod = s->pod;
	const struct sk_labels *labels = &ni->node->labels;
	if (pod->naffinity > 0) {
		int64_t n = 0;
		for (int k = 0; k < ni->npods; k++)
			n += matches_all(s->view, pod->affinity, pod->naffinity, pod, ni->pods[k].pod);
		for (int t = 0; n && t < pod->naffinity; t++) {
			const char *v = sk_labels_get(labels, pod->affinity[t].topology_key);
			if (v && sk_node_contribs_add(out, 0, pod->affinity[t].topology_key, v, n) < 0)
				return -1;
		}
	}
	for (int t = 0; t < pod->nanti_affinity; t++) {
		const struct sk_affinity_term *term = &pod->anti_affinity[t];
		const char *v = sk_labels_get(labels, term->topology_key);
		if (!v)
			continue;
		int64_t n = 0;
		for (int k = 0; k < ni->npods; k++)
			n += term_matches(s->view, term, pod, ni->pods[k].pod);
		if (n && sk_node_contribs_add(out, 1, term->topology_key, v, n) < 0)
			return -1;
	}
	return 0;
}

/* ---------- signatures: what a memo's counts depend on ---------- */

/* The incoming pod of the cycle the memo's counts were made for (a reference) and that cycle's
 * namespace view (its pod_ns_labels and resolved namespaceSelectors). */
struct ipa_sig {
	struct sk_pod *pod;
	struct ns_view *view;
};

static void sig_free(void *p)
{
	struct ipa_sig *g = p;
	sk_pod_unref(g->pod);
	ns_view_unref(g->view);
	free(g);
}

static struct ipa_sig *sig_new(const struct sk_pod *pod, struct ns_view *view)
{
	struct ipa_sig *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->pod = sk_pod_ref((struct sk_pod *)pod);
	g->view = ns_view_ref(view);
	return g;
}

static bool labels_ptr_equal(const struct sk_labels *a, const struct sk_labels *b)
{
	if (!a || !b)
		return a == b;
	return sk_labels_equal(a, b);
}

/* Existing pods' terms match the incoming pod through its namespace, its labels and its
 * namespace's labels. */
static bool existing_sig_equal(const struct ipa_sig *g, const struct sk_pod *pod, const struct ns_view *view)
{
	return strcmp(g->pod->ns, pod->ns) == 0 && sk_labels_equal(&g->pod->labels, &pod->labels) &&
	       labels_ptr_equal(g->view->pod_ns_labels, view->pod_ns_labels);
}

static const struct ns_resolved *resolved_of(const struct ns_view *v, const struct sk_affinity_term *t)
{
	for (int i = 0; i < v->nres; i++)
		if (v->res[i].term == t)
			return &v->res[i];
	return NULL;
}

static bool names_equal(const char *const *a, int na, const char *const *b, int nb)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (a[i] != b[i] && strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

/* Two of the incoming pods' terms select the same pods into the same topology key. */
static bool term_equal(const struct ns_view *va, const struct sk_affinity_term *a, const struct ns_view *vb,
		       const struct sk_affinity_term *b)
{
	if (strcmp(a->topology_key, b->topology_key) != 0 || !kube_label_selector_equal(a->selector, b->selector) ||
	    !names_equal(a->namespaces, a->nnamespaces, b->namespaces, b->nnamespaces) ||
	    !kube_label_selector_equal(a->ns_selector, b->ns_selector))
		return false;
	if (!needs_listing(a))
		return true;
	const struct ns_resolved *ra = resolved_of(va, a), *rb = resolved_of(vb, b);
	return ra && rb && names_equal(ra->names, ra->n, rb->names, rb->n);
}

static bool terms_equal(const struct ns_view *va, const struct sk_affinity_term *a, int na, const struct ns_view *vb,
			const struct sk_affinity_term *b, int nb, bool weights)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if ((weights && a[i].weight != b[i].weight) || !term_equal(va, &a[i], vb, &b[i]))
			return false;
	return true;
}

/* The incoming pod's required terms, and its namespace (a term's default). */
static bool incoming_sig_equal(const struct ipa_sig *g, const struct sk_pod *pod, const struct ns_view *view)
{
	const struct sk_pod *a = g->pod;
	return strcmp(a->ns, pod->ns) == 0 &&
	       terms_equal(g->view, a->affinity, a->naffinity, view, pod->affinity, pod->naffinity, false) &&
	       terms_equal(g->view, a->anti_affinity, a->nanti_affinity, view, pod->anti_affinity, pod->nanti_affinity,
			   false);
}

/* The incoming pod's preferred terms with their weights, and its namespace. */
static bool preferred_sig_equal(const struct ipa_sig *g, const struct sk_pod *pod, const struct ns_view *view)
{
	const struct sk_pod *a = g->pod;
	return strcmp(a->ns, pod->ns) == 0 &&
	       terms_equal(g->view, a->preferred_affinity_terms, a->npreferred_affinity, view,
			   pod->preferred_affinity_terms, pod->npreferred_affinity, true) &&
	       terms_equal(g->view, a->preferred_anti_affinity_terms, a->npreferred_anti_affinity, view,
			   pod->preferred_anti_affinity_terms, pod->npreferred_anti_affinity, true);
}

typedef bool (*sig_equal_fn)(const struct ipa_sig *g, const struct sk_pod *pod, const struct ns_view *view);

/* What a count hands its cycle besides the sums: the pair-id table and the sums mirrored by pair
 * id (topology_ids.h); both NULL when the cycle hashes instead. */
struct ipa_dense_out {
	struct topo_nodes *nodes;
	struct topo_dense *d;
};

/* The incoming pod's terms whose topology keys a cycle looks up (beyond the keys of the sums). */
struct ipa_key_terms {
	const struct sk_affinity_term *a, *b;
	int na, nb;
};

struct touch_ctx {
	struct ipa_memo *im;
	sk_node_contrib_fn fn;
	void *ctx;
};

/* The plugin's contribution function, noting the node recounted (called from pool threads). */
static int touch_contrib(const struct sk_node_info *ni, void *p, struct sk_node_contribs *out)
{
	struct touch_ctx *t = p;
	int i = atomic_fetch_add(&t->im->ntouched, 1);
	if (i < t->im->captouched)
		t->im->touched[i] = ni;
	return t->fn(ni, t->ctx, out);
}

static bool register_terms(struct topo_ids *ids, const struct sk_affinity_term *t, int n)
{
	for (int i = 0; i < n; i++)
		if (topo_key_id(ids, t[i].topology_key) < 0)
			return false;
	return true;
}

/* Brings im's mirror up to date with the sums a its memo just returned (memo locked); on success
 * *out holds the table and the mirror. Any failure leaves the mirror invalid (rebuilt in full by
 * a later cycle) and out empty: the cycle hashes. */
static void mirror_sums(struct ipa *pl, struct ipa_memo *im, const struct sk_node_sums *a, const struct sk_snapshot *snap,
			bool full, const struct ipa_key_terms *kt, struct ipa_dense_out *out)
{
	/* Empty sums: Filter and Score look nothing up (nothing to mirror: pods without affinity) */
	if (!out || !pl->ids_ok || !snap || a->maps[0].n + a->maps[1].n == 0 || pthread_mutex_trylock(&pl->ids.mu) != 0) {
		topo_mirror_clear(&im->mirror);
		return;
	}
	bool ok = true;
	for (int i = 0; ok && i < a->nkeys; i++)
		ok = topo_key_id(&pl->ids, a->keys[i]) >= 0;
	if (ok && kt)
		ok = register_terms(&pl->ids, kt->a, kt->na) && register_terms(&pl->ids, kt->b, kt->nb);
	struct topo_nodes *t = ok ? topo_nodes_get(&pl->ids, snap) : NULL;
	int ntouched = atomic_load(&im->ntouched);
	full = full || ntouched > im->captouched;
	struct topo_dense *d = t ? topo_mirror_update(&pl->ids, &im->mirror, t, a, im->touched, full ? 0 : ntouched, full)
				 : NULL;
	if (d) {
		out->nodes = t;
		out->d = d;
	} else {
		topo_mirror_clear(&im->mirror);
		topo_nodes_unref(t);
	}
	pthread_mutex_unlock(&pl->ids.mu);
}

/* The aggregate over list: from the memo when this thread has it (recounting only what changed
 * since a cycle of the same signature, and mirroring the sums by pair id into *out when out is
 * given), else from scratch. NULL on OOM. */
static struct sk_node_sums *count_over(struct sk_handle *h, struct ipa *pl, struct ipa_memo *im, sig_equal_fn eq,
				       const struct sk_pod *pod, struct ns_view *view, struct sk_node_info *const *list,
				       int n, sk_node_contrib_fn fn, void *ctx, const struct ipa_key_terms *kt,
				       struct ipa_dense_out *out)
{
	struct sk_node_memo *m = im->memo;
	if (!m || !sk_node_memo_try_lock(m))
		return sk_node_sums_count(h, list, n, fn, ctx);
	struct sk_node_sums *a = NULL;
	const struct ipa_sig *old = sk_node_memo_sig(m);
	bool full = false;
	if (!old || !eq(old, pod, view)) {
		struct ipa_sig *g = sig_new(pod, view);
		if (!g)
			goto out;
		sk_node_memo_reset(m, g, sig_free);
		full = true;
	}
	if (n > im->captouched) {
		const struct sk_node_info **t = realloc(im->touched, (size_t)n * sizeof(*t));
		if (t) {
			im->touched = t;
			im->captouched = n;
		}
	}
	atomic_store(&im->ntouched, 0);
	struct touch_ctx tc = { .im = im, .fn = fn, .ctx = ctx };
	a = sk_node_memo_update(m, h, list, n, touch_contrib, &tc);
	if (a) {
		int recounted, dropped;
		sk_node_memo_last(m, &recounted, &dropped);
		/* a node that left the list took its pairs' old counts along: read every pair again */
		full = full || dropped > 0 || recounted > 64 + n / 16;
		mirror_sums(pl, im, a, sk_handle_snapshot(h), full, kt, out);
	} else {
		topo_mirror_clear(&im->mirror);
	}
out:
	sk_node_memo_unlock(m);
	return a;
}

/* The state's table: the newer of two (ids are stable: a newer table has every key and pair id of
 * an older one at the same place). */
static struct topo_nodes *newer_table(struct topo_nodes *x, struct topo_nodes *y)
{
	if (!x || !y)
		return x ? x : y;
	if (x->nkeys >= y->nkeys && x->nodes_version == y->nodes_version) {
		topo_nodes_unref(y);
		return x;
	}
	topo_nodes_unref(x);
	return y;
}

static struct sk_status ipa_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       struct sk_prefilter_result *result)
{
	(void)result;
	struct ipa *pl = self->priv;
	const struct sk_snapshot *snap = sk_handle_snapshot(self->handle);
	struct ipa_filter_state *s = calloc(1, sizeof(*s));
	if (!s)
		return sk_status(SK_ERROR, "InterPodAffinity: out of memory");
	s->pod = pod;
	if (!(s->view = ns_view_new(self->handle, pod, false)))
		goto oom;
	static struct sk_node_info *const none[1];
	struct sk_node_info *const *anti_list = snap ? snap->have_required_anti_affinity : none;
	struct sk_node_info *const *all = snap ? snap->nodes : none;
	int nanti_list = snap ? snap->nhave_required_anti_affinity : 0, nall = snap ? snap->nnodes : 0;
	struct ipa_dense_out ox = { 0 }, oi = { 0 };
	if (!(s->existing = count_over(self->handle, pl, &pl->existing, existing_sig_equal, pod, s->view, anti_list,
				       nanti_list, existing_contrib, s, NULL, &ox)))
		goto oom;
	if (pod->naffinity + pod->nanti_affinity == 0) {
		s->incoming = sk_node_sums_new();
	} else {
		struct ipa_key_terms kt = { pod->affinity, pod->anti_affinity, pod->naffinity, pod->nanti_affinity };
		s->incoming = count_over(self->handle, pl, &pl->incoming, incoming_sig_equal, pod, s->view, all, nall,
					 incoming_contrib, s, &kt, &oi);
	}
	s->nodes = newer_table(ox.nodes, oi.nodes);
	s->dx = ox.d;
	s->di = oi.d;
	if (!s->incoming)
		goto oom;
	if (s->nodes && !filter_state_kids(s))
		filter_state_drop_dense(s);
	s->self_affinity = matches_all(s->view, pod->affinity, pod->naffinity, pod, pod);
	if (EXISTING_ANTI(s)->n == 0 && pod->naffinity == 0 && pod->nanti_affinity == 0) {
		filter_state_free(s);
		return sk_status(SK_SKIP, NULL);
	}
	sk_cycle_state_put(cs, self->slot, s, &filter_state_ops);
	return sk_ok();
oom:
	filter_state_free(s);
	return sk_status(SK_ERROR, "InterPodAffinity: out of memory");
}

static struct sk_status add_remove(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *other,
				   const struct sk_node_info *ni, int64_t delta)
{
	struct ipa_filter_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_status(SK_ERROR, "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
	if (!ni->node)
		return sk_ok();
	filter_state_drop_dense(s); /* the mirrors are of the unchanged sums */
	if (sk_node_sums_own(&s->existing) < 0 || sk_node_sums_own(&s->incoming) < 0 ||
	    count_existing_anti(s, other, ni->node, delta) < 0 || count_incoming_terms(s, other, ni->node, delta) < 0)
		return sk_status(SK_ERROR, "InterPodAffinity: out of memory");
	return sk_ok();
}

static struct sk_status ipa_add_pod(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const struct sk_pod *to_add, const struct sk_node_info *ni)
{
	(void)pod;
	return add_remove(self, cs, to_add, ni, 1);
}

static struct sk_status ipa_remove_pod(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       const struct sk_pod *to_remove, const struct sk_node_info *ni)
{
	(void)pod;
	return add_remove(self, cs, to_remove, ni, -1);
}

/* The count of (key, node's value) in map, read from d->count[m] by the node's pair id when the
 * state has a mirror (row, d and the key's id kid), else hashed; *has: the node has the key. An
 * absent pair counts 0. */
static inline int64_t pair_count(const struct sk_tpmap *map, const struct topo_dense *d, int m, const uint32_t *row, int kid,
			  const struct sk_node *node, const char *key, bool *has)
{
	if (row && d) {
		uint32_t pid = row[kid];
		if (pid == UINT32_MAX) {
			*has = false;
			return 0;
		}
		if (pid < (uint32_t)d->npairs) {
			*has = true;
			return d->count[m][pid];
		}
	}
	const char *v = sk_labels_get(&node->labels, key);
	const int64_t *c = v ? sk_tpmap_find(map, key, v) : NULL;
	*has = v != NULL;
	return c ? *c : 0;
}

static bool satisfy_pod_affinity(const struct ipa_filter_state *s, const struct sk_node *node, const uint32_t *row)
{
	const struct sk_pod *pod = s->pod;
	bool pods_exist = true, has;
	for (int t = 0; t < pod->naffinity; t++) {
		int64_t c = pair_count(AFFINITY(s), s->di, 0, row, row ? s->kid[t] : 0, node, pod->affinity[t].topology_key,
				       &has);
		if (!has)
			return false; /* every topology label must exist on the node */
		if (c <= 0)
			pods_exist = false;
	}
	if (pods_exist)
		return true;
	/* The first pod of a series with affinity to itself: no pod anywhere matches the terms, and the
	 * pod matches them itself. */
	return AFFINITY(s)->n == 0 && s->self_affinity;
}

static bool satisfy_pod_anti_affinity(const struct ipa_filter_state *s, const struct sk_node *node, const uint32_t *row)
{
	if (ANTI(s)->n == 0)
		return true;
	const struct sk_pod *pod = s->pod;
	bool has;
	for (int t = 0; t < pod->nanti_affinity; t++)
		if (pair_count(ANTI(s), s->di, 1, row, row ? s->kid[pod->naffinity + t] : 0, node,
			       pod->anti_affinity[t].topology_key, &has) > 0)
			return false;
	return true;
}

/* Any node label (k, v) counted: only the counted keys can be (existing->keys). */
static bool satisfy_existing_anti_affinity(const struct ipa_filter_state *s, const struct sk_node *node,
					   const uint32_t *row)
{
	if (EXISTING_ANTI(s)->n == 0)
		return true;
	int base = s->pod->naffinity + s->pod->nanti_affinity;
	bool has;
	for (int i = 0; i < s->existing->nkeys; i++)
		if (pair_count(EXISTING_ANTI(s), s->dx, 0, row, row ? s->kid[base + i] : 0, node, s->existing->keys[i],
			       &has) > 0)
			return false;
	return true;
}

static struct sk_status ipa_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const struct sk_node_info *ni)
{
	(void)pod;
	const struct ipa_filter_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_status(SK_ERROR, "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	const uint32_t *row = s->kid ? topo_row(s->nodes, ni) : NULL;
	if (!satisfy_pod_affinity(s, ni->node, row))
		return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY);
	if (!satisfy_pod_anti_affinity(s, ni->node, row))
		return sk_status(SK_UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY);
	if (!satisfy_existing_anti_affinity(s, ni->node, row))
		return sk_status(SK_UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY);
	return sk_ok();
}

/* ---------- PreScore / Score / NormalizeScore ---------- */

/* The (topology key, value) -> summed weight map in two parts, each an aggregate (schedkit/node_memo.h)
 * over nodes: parts[0] the existing pods' own terms matching the incoming pod, parts[1] the
 * incoming pod's preferred terms against the existing pods (NULL when it has none). In each,
 * maps[0] holds the weights and maps[1] how many weights were added for the pair: a pair exists
 * (upstream's topologyScore entry, which may sum to 0) while maps[1] counts it. */
struct ipa_score_state {
	struct sk_node_sums *parts[2];
	/* the parts by pair id (topology_ids.h; NULL: hash): the table, each part's mirror and the ids
	 * of its keys in the table */
	struct topo_nodes *nodes;
	struct topo_dense *dense[2];
	int *kid[2];
};

static void score_state_free(void *p)
{
	struct ipa_score_state *s = p;
	if (!s)
		return;
	for (int i = 0; i < 2; i++) {
		sk_node_sums_unref(s->parts[i]);
		topo_dense_unref(s->dense[i]);
		free(s->kid[i]);
	}
	topo_nodes_unref(s->nodes);
	free(s);
}

/* The key ids of each mirrored part's keys; a part whose keys are not all in the table hashes. */
static int score_state_kids(struct ipa_score_state *s)
{
	for (int p = 0; p < 2; p++) {
		const struct sk_node_sums *a = s->parts[p];
		if (!a || !s->dense[p])
			continue;
		if (!(s->kid[p] = malloc((size_t)(a->nkeys ? a->nkeys : 1) * sizeof(int))))
			return -1;
		for (int i = 0; i < a->nkeys; i++) {
			if ((s->kid[p][i] = topo_nodes_key(s->nodes, a->keys[i])) < 0) {
				topo_dense_unref(s->dense[p]);
				s->dense[p] = NULL;
				break;
			}
		}
	}
	return 0;
}

static const struct sk_state_ops score_state_ops = { .free = score_state_free, .clone = NULL };

static int score_pairs(const struct ipa_score_state *s)
{
	return (s->parts[0] ? s->parts[0]->maps[1].n : 0) + (s->parts[1] ? s->parts[1]->maps[1].n : 0);
}

struct score_job {
	const struct sk_pod *pod;
	const struct ns_view *view;
	const struct ipa_args *args;
};

/* Adds weight w for (key, node's value) when the node has the key. */
static int score_add(struct sk_node_contribs *out, const struct sk_node *node, const char *key, int64_t w)
{
	const char *v = sk_labels_get(&node->labels, key);
	if (!v)
		return 0;
	return sk_node_contribs_add(out, 0, key, v, w) < 0 || sk_node_contribs_add(out, 1, key, v, 1) < 0 ? -1 : 0;
}

static bool has_any_affinity(const struct sk_pod *p)
{
	return p->naffinity || p->nanti_affinity || p->npreferred_affinity || p->npreferred_anti_affinity;
}

/* One node's existing pods: their own terms that match the incoming pod (upstream
 * processExistingPod, the part that depends on the existing pod's affinity). */
static int score_existing_contrib(const struct sk_node_info *ni, void *ctx, struct sk_node_contribs *out)
{
	const struct score_job *x = ctx;
	const struct sk_node *node = ni->node;
	const struct sk_pod *pod = x->pod;
	int32_t hard = x->args->hard_pod_affinity_weight;
	if (node->labels.n == 0)
		return 0;
	for (int k = 0; k < ni->npods; k++) {
		const struct sk_pod *e = ni->pods[k].pod;
		if (!has_any_affinity(e))
			continue;
		for (int i = 0; hard > 0 && i < e->naffinity; i++)
			if (term_matches(x->view, &e->affinity[i], e, pod) &&
			    score_add(out, node, e->affinity[i].topology_key, hard) < 0)
				return -1;
		for (int i = 0; i < e->npreferred_affinity; i++) {
			const struct sk_affinity_term *t = &e->preferred_affinity_terms[i];
			if (term_matches(x->view, t, e, pod) && score_add(out, node, t->topology_key, t->weight) < 0)
				return -1;
		}
		for (int i = 0; i < e->npreferred_anti_affinity; i++) {
			const struct sk_affinity_term *t = &e->preferred_anti_affinity_terms[i];
			if (term_matches(x->view, t, e, pod) &&
			    score_add(out, node, t->topology_key, -(int64_t)t->weight) < 0)
				return -1;
		}
	}
	return 0;
}

/* One node: the existing pods matching each of the incoming pod's preferred terms, times the
 * term's weight (negative for anti-affinity). */
static int score_preferred_contrib(const struct sk_node_info *ni, void *ctx, struct sk_node_contribs *out)
{
	const struct score_job *x = ctx;
	const struct sk_pod *pod = x->pod;
	if (ni->node->labels.n == 0)
		return 0;
	int na = pod->npreferred_affinity, nt = na + pod->npreferred_anti_affinity;
	for (int t = 0; t < nt; t++) {
		const struct sk_affinity_term *term =
			t < na ? &pod->preferred_affinity_terms[t] : &pod->preferred_anti_affinity_terms[t - na];
		int64_t n = 0;
		for (int k = 0; k < ni->npods; k++)
			n += term_matches(x->view, term, pod, ni->pods[k].pod);
		if (n && score_add(out, ni->node, term->topology_key, (t < na ? 1 : -1) * (int64_t)term->weight * n) < 0)
			return -1;
	}
	return 0;
}

static struct sk_status ipa_pre_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      const struct sk_node_info *const *nodes, int nnodes)
{
	(void)nodes;
	struct ipa *pl = self->priv;
	if (nnodes == 0)
		return sk_status(SK_SKIP, NULL);
	bool has_constraints = pod->npreferred_affinity > 0 || pod->npreferred_anti_affinity > 0;
	if (pl->args->ignore_preferred_terms_of_existing_pods && !has_constraints)
		return sk_status(SK_SKIP, NULL);
	const struct sk_snapshot *snap = sk_handle_snapshot(self->handle);
	if (!snap)
		return sk_status(SK_SKIP, NULL);
	struct ipa_score_state *s = calloc(1, sizeof(*s));
	struct ns_view *view = s ? ns_view_new(self->handle, pod, true) : NULL;
	if (!view) {
		score_state_free(s);
		return sk_status(SK_ERROR, "InterPodAffinity: out of memory");
	}
	struct score_job x = { .pod = pod, .view = view, .args = pl->args };
	/* the existing pods' own terms: only pods with affinity have any */
	struct ipa_dense_out o0 = { 0 }, o1 = { 0 };
	s->parts[0] = count_over(self->handle, pl, &pl->score_existing, existing_sig_equal, pod, view, snap->have_affinity,
				 snap->nhave_affinity, score_existing_contrib, &x, NULL, &o0);
	/* the incoming pod's preferred terms against every pod (only when it has some) */
	bool oom = !s->parts[0];
	if (!oom && has_constraints)
		oom = !(s->parts[1] = count_over(self->handle, pl, &pl->score_preferred, preferred_sig_equal, pod, view,
						 snap->nodes, snap->nnodes, score_preferred_contrib, &x, NULL, &o1));
	ns_view_unref(view);
	s->nodes = newer_table(o0.nodes, o1.nodes);
	s->dense[0] = o0.d;
	s->dense[1] = o1.d;
	if (!oom && s->nodes)
		oom = score_state_kids(s) < 0;
	if (oom) {
		score_state_free(s);
		return sk_status(SK_ERROR, "InterPodAffinity: out of memory");
	}
	if (score_pairs(s) == 0) {
		score_state_free(s);
		return sk_status(SK_SKIP, NULL);
	}
	sk_cycle_state_put(cs, self->slot, s, &score_state_ops);
	return sk_ok();
}

static int64_t part_score(const struct sk_node_sums *a, const struct topo_dense *d, const int *kid, const uint32_t *row,
			  const struct sk_node *node)
{
	int64_t sum = 0;
	bool has;
	if (!d)
		row = NULL;
	for (int i = 0; a && i < a->nkeys; i++)
		sum += pair_count(&a->maps[0], d, 0, row, row ? kid[i] : 0, node, a->keys[i], &has);
	return sum;
}

static struct sk_status ipa_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni, int64_t *score)
{
	(void)pod;
	const struct ipa_score_state *s = sk_cycle_state_get(cs, self->slot);
	*score = 0;
	if (!s)
		return sk_status(SK_ERROR, "failed to read \"PreScoreInterPodAffinity\" from cycleState: not found");
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	const uint32_t *row = topo_row(s->nodes, ni);
	*score = part_score(s->parts[0], s->dense[0], s->kid[0], row, ni->node) +
		 part_score(s->parts[1], s->dense[1], s->kid[1], row, ni->node);
	return sk_ok();
}

static struct sk_status ipa_normalize(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_node_score *scores, int n)
{
	(void)pod;
	const struct ipa_score_state *s = sk_cycle_state_get(cs, self->slot);
	if (!s)
		return sk_status(SK_ERROR, "failed to read \"PreScoreInterPodAffinity\" from cycleState: not found");
	if (score_pairs(s) == 0)
		return sk_ok();
	int64_t min = INT64_MAX, max = INT64_MIN;
	for (int i = 0; i < n; i++) {
		if (scores[i].score > max)
			max = scores[i].score;
		if (scores[i].score < min)
			min = scores[i].score;
	}
	int64_t diff = max - min;
	for (int i = 0; i < n; i++) {
		double f = 0;
		if (diff > 0)
			f = (double)SK_MAX_NODE_SCORE * ((double)(scores[i].score - min) / (double)diff);
		scores[i].score = (int64_t)f;
	}
	return sk_ok();
}

/* ---------- EnqueueExtensions ---------- */

static enum sk_hint ipa_hint_pod(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				 const void *new_obj)
{
	(void)self;
	const struct sk_pod *oldp = old_obj, *newp = new_obj;
	if ((newp && !newp->node_name) || (oldp && !oldp->node_name))
		return SK_QUEUE_SKIP;
	if (oldp && newp) {
		if (!matches_all(NULL, pod->affinity, pod->naffinity, pod, oldp) &&
		    matches_all(NULL, pod->affinity, pod->naffinity, pod, newp))
			return SK_QUEUE;
		if (matches_all(NULL, pod->anti_affinity, pod->nanti_affinity, pod, oldp) &&
		    !matches_all(NULL, pod->anti_affinity, pod->nanti_affinity, pod, newp))
			return SK_QUEUE;
		return SK_QUEUE_SKIP;
	}
	if (newp)
		return matches_all(NULL, pod->affinity, pod->naffinity, pod, newp) ? SK_QUEUE : SK_QUEUE_SKIP;
	if (oldp)
		return matches_all(NULL, pod->anti_affinity, pod->nanti_affinity, pod, oldp) ? SK_QUEUE : SK_QUEUE_SKIP;
	return SK_QUEUE;
}

static enum sk_hint ipa_hint_node(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
				  const void *new_obj)
{
	(void)self;
	(void)old_obj;
	const struct sk_node *node = new_obj;
	if (!node)
		return SK_QUEUE;
	for (int i = 0; i < pod->naffinity; i++)
		if (sk_labels_get(&node->labels, pod->affinity[i].topology_key))
			return SK_QUEUE;
	for (int i = 0; i < pod->nanti_affinity; i++)
		if (sk_labels_get(&node->labels, pod->anti_affinity[i].topology_key))
			return SK_QUEUE;
	return SK_QUEUE_SKIP;
}

static int ipa_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	if (max < 2)
		return 0;
	out[0] = (struct sk_event_registration){
		.event = { SK_EV_POD, SK_ACT_ADD | SK_ACT_UPDATE_POD_LABEL | SK_ACT_DELETE, "PodAdd|UpdatePodLabel|PodDelete" },
		.hint = ipa_hint_pod,
	};
	out[1] = (struct sk_event_registration){
		.event = { SK_EV_NODE, SK_ACT_ADD | SK_ACT_UPDATE_NODE_LABEL | SK_ACT_UPDATE_NODE_TAINT,
			   "NodeAdd|UpdateNodeLabel|UpdateNodeTaint" },
		.hint = ipa_hint_node,
	};
	return 2;
}

const struct sk_plugin_desc sk_plugin_inter_pod_affinity = {
	SK_PLUGIN_HEADER,
	.name = "InterPodAffinity",
	.args_kind = "InterPodAffinityArgs",
	.args_decode = args_decode,
	.args_encode = args_encode,
	.args_free = args_free,
	.init = ipa_init,
	.fini = ipa_fini,
	.pre_filter = ipa_pre_filter,
	.pre_filter_add_pod = ipa_add_pod,
	.pre_filter_remove_pod = ipa_remove_pod,
	.filter = ipa_filter,
	.pre_score = ipa_pre_score,
	.score = ipa_score,
	.normalize_score = ipa_normalize,
	.events_to_register = ipa_events,
};
