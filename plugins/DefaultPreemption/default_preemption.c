/* DefaultPreemption (PostFilter, PreEnqueue): args, eligibility, candidate search (dry runs on
 * copies of the node and the cycle state), PDB accounting, node choice, victim eviction and
 * nomination, with upstream v1.34 semantics (pkg/scheduler/framework/preemption/preemption.go).
 * With the SchedulerAsyncPreemption gate on (v1.34's default) the victims are evicted off the
 * scheduling thread after the nomination (dp_async.c) and PreEnqueue holds the preemptor back
 * while that runs; with it off they are evicted before the pod is nominated.
 * Threads: PostFilter runs on the scheduling thread; the per-node dry runs fan out over the
 * framework's pool, each on its own NodeInfo and CycleState copies. The offset generator is an
 * atomic. */
#include "default_preemption.h"
#include "dp_async.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/args.h"
#include "schedkit/log.h"

#define NAME "DefaultPreemption"
#define MSG_NO_VICTIMS "No preemption victims found for incoming pod"
#define MSG_NOT_HELPFUL "Preemption is not helpful for scheduling"

/* ---------- args ---------- */

static int dp_args_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "minCandidateNodesPercentage", "minCandidateNodesAbsolute", NULL };
	int64_t pct = 10, abs_ = 100;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, "DefaultPreemptionArgs", path, e) < 0 ||
	    sk_json_int(json, "minCandidateNodesPercentage", path, INT32_MIN, INT32_MAX, &pct, NULL, e) < 0 ||
	    sk_json_int(json, "minCandidateNodesAbsolute", path, INT32_MIN, INT32_MAX, &abs_, NULL, e) < 0)
		return -1;
	int rc = 0;
	char *pp = sk_path_child(path, "minCandidateNodesPercentage");
	char *ap = sk_path_child(path, "minCandidateNodesAbsolute");
	if (pct < 0 || pct > 100) {
		sk_err_invalid_int(e, pp, pct, "not in valid range [0, 100]");
		rc = -1;
	}
	if (abs_ < 0) {
		sk_err_invalid_int(e, ap, abs_, "not in valid range [0, inf)");
		rc = -1;
	}
	if (pct == 0 && abs_ == 0) {
		sk_err_invalid_int(e, pp, pct, "cannot be zero at the same time as minCandidateNodesAbsolute");
		sk_err_invalid_int(e, ap, abs_, "cannot be zero at the same time as minCandidateNodesPercentage");
		rc = -1;
	}
	free(pp);
	free(ap);
	if (rc < 0)
		return -1;
	struct sk_default_preemption_args *a = calloc(1, sizeof(*a));
	if (!a) {
		sk_errors_addf(e, "%s: out of memory", path);
		return -1;
	}
	a->min_candidate_nodes_percentage = (int32_t)pct;
	a->min_candidate_nodes_absolute = (int32_t)abs_;
	*out = a;
	return 0;
}

static cJSON *dp_args_encode(const void *p)
{
	const struct sk_default_preemption_args *a = p;
	cJSON *o = sk_args_json_new("DefaultPreemptionArgs");
	if (!o || !cJSON_AddNumberToObject(o, "minCandidateNodesPercentage", a->min_candidate_nodes_percentage) ||
	    !cJSON_AddNumberToObject(o, "minCandidateNodesAbsolute", a->min_candidate_nodes_absolute)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static void dp_args_free(void *p) { free(p); }

/* ---------- instance ---------- */

/* One node's Filter status code in nodes_where_preemption_might_help, at its snapshot index. */
struct index_slot {
	const struct sk_node_info *ni; /* the node info the diagnosis gave this code for */
	uint64_t stamp;                /* == dp.stamp: written by the current call; else unset */
	enum sk_code code;
};

struct dp {
	struct sk_default_preemption_args args;
	atomic_uint_fast64_t rng; /* xorshift state for the candidate offset */
	struct dp_async *async;   /* SchedulerAsyncPreemption on; NULL: synchronous */
	pthread_mutex_t by_index_mu; /* guards by_index, nby_index, stamp (PostFilter: one thread) */
	struct index_slot *by_index; /* [nby_index]: kept between calls, valid only at their stamp */
	int32_t nby_index;
	uint64_t stamp;
};

static int32_t (*offset_fn)(int32_t n);

void sk_dp_set_offset_fn(int32_t (*fn)(int32_t n)) { offset_fn = fn; }

static int dp_init(struct sk_plugin *self, const void *args, char **err)
{
	struct dp *d = calloc(1, sizeof(*d));
	if (!d) {
		*err = strdup("out of memory");
		return -1;
	}
	if (args) {
		d->args = *(const struct sk_default_preemption_args *)args;
	} else {
		d->args.min_candidate_nodes_percentage = 10;
		d->args.min_candidate_nodes_absolute = 100;
	}
	/* A fixed seed keeps `simulate` reproducible; upstream's offset is random, any value is valid. */
	atomic_init(&d->rng, 0x9e3779b97f4a7c15ULL);
	pthread_mutex_init(&d->by_index_mu, NULL);
	if (sk_handle_feature_enabled(self->handle, "SchedulerAsyncPreemption") &&
	    !(d->async = dp_async_new(self, sk_handle_parallelism(self->handle)))) {
		pthread_mutex_destroy(&d->by_index_mu);
		free(d);
		*err = strdup("out of memory");
		return -1;
	}
	self->priv = d;
	return 0;
}

static void dp_fini(struct sk_plugin *self)
{
	struct dp *d = self->priv;
	if (d) {
		dp_async_free(d->async); /* waits for the preemptions in flight */
		pthread_mutex_destroy(&d->by_index_mu);
		free(d->by_index);
	}
	free(d);
	self->priv = NULL;
}

bool sk_dp_wait_async(struct sk_plugin *self)
{
	struct dp *d = self->priv;
	return dp_async_wait_idle(d ? d->async : NULL);
}

bool sk_dp_is_async(struct sk_plugin *self)
{
	struct dp *d = self->priv;
	return d && d->async;
}

bool sk_dp_running_preemption(struct sk_plugin *self, const char *uid)
{
	struct dp *d = self->priv;
	return d && dp_async_running(d->async, uid);
}

static int32_t random_offset(struct dp *d, int32_t n)
{
	if (n <= 0)
		return 0;
	if (offset_fn)
		return offset_fn(n);
	uint_fast64_t x = atomic_load(&d->rng), nx;
	do {
		nx = x;
		nx ^= nx << 13;
		nx ^= nx >> 7;
		nx ^= nx << 17;
	} while (!atomic_compare_exchange_weak(&d->rng, &x, nx));
	return (int32_t)(nx % (uint64_t)n);
}

int32_t sk_dp_num_candidates(const struct sk_default_preemption_args *a, int32_t num_nodes)
{
	int32_t n = (int32_t)((int64_t)num_nodes * a->min_candidate_nodes_percentage / 100);
	if (n < a->min_candidate_nodes_absolute)
		n = a->min_candidate_nodes_absolute;
	if (n > num_nodes)
		n = num_nodes;
	return n;
}

/* ---------- victims ---------- */

void sk_dp_candidate_clear(struct sk_dp_candidate *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nvictims; i++)
		sk_pod_unref(c->victims[i].pod);
	if (!c->victims_borrowed)
		free(c->victims);
	c->victims = NULL;
	c->victims_borrowed = false;
	c->nvictims = 0;
	c->num_pdb_violations = 0;
}

bool sk_dp_more_important(const struct sk_dp_victim *a, const struct sk_dp_victim *b)
{
	if (a->pod->priority != b->pod->priority)
		return a->pod->priority > b->pod->priority;
	return a->start_ns < b->start_ns;
}

/* Stable insertion sort by importance (victim lists are short; sort.Slice order among equals is
 * unspecified upstream, stability keeps node order). */
static void sort_by_importance(struct sk_dp_victim *v, int n)
{
	for (int i = 1; i < n; i++) {
		struct sk_dp_victim x = v[i];
		int j = i - 1;
		while (j >= 0 && sk_dp_more_important(&x, &v[j])) {
			v[j + 1] = v[j];
			j--;
		}
		v[j + 1] = x;
	}
}

static bool pdb_matches(const struct sk_pdb *pdb, const struct sk_pod *pod)
{
	if (!pdb->selector || strcmp(pdb->ns ? pdb->ns : "", pod->ns ? pod->ns : "") != 0)
		return false;
	if (kube_label_selector_is_empty(pdb->selector) || kube_label_selector_is_nothing(pdb->selector))
		return false;
	return kube_label_selector_matches(pdb->selector, sk_labels_get, &pod->labels);
}

void sk_dp_pdb_violations(struct sk_dp_victim *pods, int n, struct sk_pdb *const *pdbs, int npdbs, bool *violating)
{
	for (int i = 0; i < n; i++)
		violating[i] = false;
	if (npdbs == 0)
		return;
	int64_t small[32];
	int64_t *allowed = npdbs <= 32 ? small : calloc((size_t)npdbs, sizeof(*allowed));
	if (!allowed) /* ENOMEM: no PDB accounting rather than a wrong one */
		return;
	for (int k = 0; k < npdbs; k++)
		allowed[k] = pdbs[k]->disruptions_allowed;
	for (int i = 0; i < n; i++) {
		const struct sk_pod *pod = pods[i].pod;
		if (pod->labels.n == 0)
			continue;
		for (int k = 0; k < npdbs; k++) {
			const struct sk_pdb *pdb = pdbs[k];
			if (!pdb_matches(pdb, pod))
				continue;
			bool disrupted = false;
			for (int d = 0; d < pdb->ndisrupted && !disrupted; d++)
				disrupted = strcmp(pdb->disrupted_pods[d], pod->name) == 0;
			if (disrupted)
				continue;
			if (--allowed[k] < 0)
				violating[i] = true;
		}
	}
	if (allowed != small)
		free(allowed);
}

/* A PreFilter extension's failure as the dry run returns it: anything but an Error becomes one with
 * its message. */
static struct sk_status as_error(struct sk_status s)
{
	if (s.code != SK_ERROR) {
		char *m = sk_status_message(&s);
		sk_status_reset(&s);
		s = sk_statusf(SK_ERROR, "%s", m ? m : "");
		free(m);
	}
	return s;
}

/* remove_victim and add_victim: true on success, else false with *st set. Success moves no status
 * (64 bytes each way, ~11 calls per candidate node). */
static inline bool remove_victim(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				 struct sk_node_info *ni, struct sk_pod *victim, struct sk_status *st)
{
	if (sk_node_info_remove_pod(ni, victim) != 0) {
		*st = sk_statusf(SK_ERROR, "no corresponding pod %s in pods of node %s", victim->name,
				 ni->node ? ni->node->name : "");
		return false;
	}
	struct sk_status s = sk_handle_run_pre_filter_remove_pod(self->handle, cs, pod, victim, ni);
	if (s.code == SK_SUCCESS)
		return true;
	*st = as_error(s);
	return false;
}

static inline bool add_victim(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			      struct sk_node_info *ni, struct sk_pod *victim, struct sk_status *st)
{
	if (sk_node_info_add_pod(ni, victim) != 0) {
		*st = sk_status(SK_ERROR, "adding pod to node: out of memory");
		return false;
	}
	struct sk_status s = sk_handle_run_pre_filter_add_pod(self->handle, cs, pod, victim, ni);
	if (s.code == SK_SUCCESS)
		return true;
	*st = as_error(s);
	return false;
}

/* sk_dp_select_victims_on_node with room for nbuf victims at buf (NULL, 0: none): the victims go
 * there when they fit (c->victims_borrowed), else to an array of their own. */
static struct sk_status select_victims(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       struct sk_node_info *ni, struct sk_pdb *const *pdbs, int npdbs, int64_t now_ns,
				       struct sk_dp_candidate *c, struct sk_dp_victim *buf, int nbuf)
{
	struct sk_status st = sk_ok();
	struct sk_dp_victim pot_small[16], *pot = pot_small; /* a node's pods: usually a handful */
	bool viol_small[16], *viol = viol_small;
	int npot = 0;
	c->nvictims = 0;
	c->victims = NULL;
	c->victims_borrowed = false;
	c->num_pdb_violations = 0;
	if (ni->npods > 16 && !(pot = calloc((size_t)ni->npods, sizeof(*pot))))
		return sk_status(SK_ERROR, "selecting victims: out of memory");
	for (int i = 0; i < ni->npods; i++) {
		struct sk_pod *p = ni->pods[i].pod;
		if (p->priority < pod->priority)
			pot[npot++].pod = sk_pod_ref(p);
	}
	for (int i = 0; i < npot; i++)
		if (!remove_victim(self, cs, pod, ni, pot[i].pod, &st))
			goto out;
	if (npot == 0) {
		st = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NO_VICTIMS);
		goto out;
	}
	st = sk_handle_run_filter_with_nominated(self->handle, cs, pod, ni);
	if (st.code != SK_SUCCESS)
		goto out;
	/* Start times only now: a node where the pod does not fit even without every lower-priority
	 * pod never needs them (end to end each is a read of the pod informer's copy). */
	for (int i = 0; i < npot; i++) {
		int64_t t = sk_handle_pod_start_time(self->handle, pot[i].pod);
		pot[i].start_ns = t >= 0 ? t : now_ns;
	}
	sort_by_importance(pot, npot);
	if (npot > 16)
		viol = calloc((size_t)npot, sizeof(*viol));
	if (npot <= nbuf) { /* [0, nvictims) written below */
		c->victims = buf;
		c->victims_borrowed = true;
	} else {
		c->victims = malloc((size_t)npot * sizeof(*c->victims));
	}
	if (!viol || !c->victims) {
		st = sk_status(SK_ERROR, "selecting victims: out of memory");
		goto out;
	}
	sk_dp_pdb_violations(pot, npot, pdbs, npdbs, viol);
	int nviolating = 0;
	for (int i = 0; i < npot; i++)
		nviolating += viol[i];
	/* Reprieve: PDB-violating victims first, then the others, most important first. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < npot; i++) {
			if (viol[i] != (pass == 0))
				continue;
			if (!add_victim(self, cs, pod, ni, pot[i].pod, &st))
				goto out;
			struct sk_status fs = sk_handle_run_filter_with_nominated(self->handle, cs, pod, ni);
			bool fits = fs.code == SK_SUCCESS;
			if (fs.owned) /* static reasons only (the usual rejection): nothing to free */
				sk_status_reset(&fs);
			if (fits)
				continue;
			if (!remove_victim(self, cs, pod, ni, pot[i].pod, &st))
				goto out;
			c->victims[c->nvictims].pod = sk_pod_ref(pot[i].pod);
			c->victims[c->nvictims].start_ns = pot[i].start_ns;
			c->nvictims++;
			if (pass == 0)
				c->num_pdb_violations++;
			klog_info(5, "Pod is a potential preemption victim on node", " pod=%s/%s node=%s",
				  pot[i].pod->ns, pot[i].pod->name, ni->node ? ni->node->name : "");
		}
	}
	if (nviolating != 0 && nviolating != npot)
		sort_by_importance(c->victims, c->nvictims);
out:
	for (int i = 0; i < npot; i++)
		sk_pod_unref(pot[i].pod);
	if (pot != pot_small)
		free(pot);
	if (viol != viol_small)
		free(viol);
	if (st.code != SK_SUCCESS)
		sk_dp_candidate_clear(c);
	return st;
}

struct sk_status sk_dp_select_victims_on_node(struct sk_plugin *self, struct sk_cycle_state *cs,
					      const struct sk_pod *pod, struct sk_node_info *ni,
					      struct sk_pdb *const *pdbs, int npdbs, int64_t now_ns,
					      struct sk_dp_candidate *c)
{
	return select_victims(self, cs, pod, ni, pdbs, npdbs, now_ns, c, NULL, 0);
}

/* ---------- choosing the node ---------- */

/* GetEarliestPodStartTime over the victims that have the highest victim priority. */
static int64_t earliest_start(const struct sk_dp_candidate *c)
{
	int64_t earliest = c->victims[0].start_ns;
	int32_t maxp = c->victims[0].pod->priority;
	for (int i = 0; i < c->nvictims; i++) {
		int32_t p = c->victims[i].pod->priority;
		if (p == maxp) {
			if (c->victims[i].start_ns < earliest)
				earliest = c->victims[i].start_ns;
		} else if (p > maxp) {
			maxp = p;
			earliest = c->victims[i].start_ns;
		}
	}
	return earliest;
}

static int64_t criterion(const struct sk_dp_candidate *c, int k)
{
	switch (k) {
	case 0: /* fewest PDB violations */
		return -(int64_t)c->num_pdb_violations;
	case 1: /* lowest highest-victim priority */
		return c->nvictims ? -(int64_t)c->victims[0].pod->priority : INT64_MIN;
	case 2: { /* smallest sum of (priority + 2^31) */
		int64_t sum = 0;
		for (int i = 0; i < c->nvictims; i++)
			sum += (int64_t)c->victims[i].pod->priority + 2147483648LL;
		return -sum;
	}
	case 3: /* fewest victims */
		return -(int64_t)c->nvictims;
	default: /* latest start of the oldest highest-priority victim */
		return c->nvictims ? earliest_start(c) : INT64_MIN;
	}
}

int sk_dp_pick_one_node(const struct sk_dp_candidate *cands, int n)
{
	if (n <= 0)
		return -1;
	int small[1024]; /* the candidates of clusters up to 10,000 nodes (10%): no allocation */
	int *sel = n <= 1024 ? small : malloc((size_t)n * sizeof(int));
	if (!sel)
		return 0;
	int nsel = n;
	for (int i = 0; i < n; i++)
		sel[i] = i;
	int pick = -1;
	for (int k = 0; k < 5 && pick < 0; k++) {
		int64_t best = INT64_MIN;
		int nkeep = 0;
		for (int i = 0; i < nsel; i++) {
			int64_t s = criterion(&cands[sel[i]], k);
			if (s > best) {
				best = s;
				nkeep = 0;
			}
			if (s == best)
				sel[nkeep++] = sel[i];
		}
		nsel = nkeep;
		if (nsel == 1)
			pick = sel[0];
	}
	if (pick < 0)
		pick = sel[0];
	if (sel != small)
		free(sel);
	return pick;
}

/* ---------- the dry run ---------- */

struct node_result {
	struct sk_status status;
	struct sk_dp_candidate cand;
	bool done;
};

struct dry_run {
	struct sk_plugin *self;
	struct sk_cycle_state *cs;
	const struct sk_pod *pod;
	const struct sk_node_info **potential;
	int npotential;
	int offset;
	int base;          /* first index of the running batch */
	struct sk_pdb **pdbs;
	int npdbs;
	int64_t now_ns;
	struct node_result *res; /* [nres]: the nodes tried, by i (not node index); cancelled: done false */
	int nres, res_cap;
	/* The running batch's victims: VICTIM_SLOTS per node from vbuf, one block per batch (instead of
	 * an array per candidate); blocks[nblocks] freed with the candidates, which borrow them. */
	struct sk_dp_victim *vbuf;
	void **blocks;
	int nblocks, blocks_cap;
};

#define VICTIM_SLOTS 8

static void check_node(int j, void *arg)
{
	struct dry_run *d = arg;
	int i = d->base + j;
	struct node_result *r = &d->res[i];
	const struct sk_node_info *orig = d->potential[(d->offset + i) % d->npotential];
	r->done = true;
	r->cand = (struct sk_dp_candidate){ .node = orig->node ? orig->node->name : "" };
	struct sk_node_info *ni = sk_node_info_clone(orig);
	struct sk_cycle_state *cs = sk_handle_cycle_state_clone(d->self->handle, d->cs);
	if (!ni || !cs) {
		r->status = sk_status(SK_ERROR, "preemption dry run: out of memory");
	} else {
		r->status = select_victims(d->self, cs, d->pod, ni, d->pdbs, d->npdbs, d->now_ns, &r->cand,
					   d->vbuf ? d->vbuf + (size_t)j * VICTIM_SLOTS : NULL, d->vbuf ? VICTIM_SLOTS : 0);
		if (r->status.code == SK_SUCCESS && r->cand.nvictims == 0)
			r->status = sk_statusf(SK_ERROR, "expected at least one victim pod on node \"%s\"", r->cand.node);
	}
	sk_node_info_free(ni);
	sk_handle_cycle_state_free(d->self->handle, cs);
}

/* ---------- messages ---------- */

struct reason_count {
	const char *reason;
	int count;
};

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void count(struct reason_count *rc, int *n, const char *reason, int k)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(rc[i].reason, reason)) {
			rc[i].count += k;
			return;
		}
	rc[*n].reason = reason;
	rc[*n].count = k;
	(*n)++;
}

/* "0/<all> nodes are available: <histogram>." over the failed nodes, the others counting as
 * "Preemption is not helpful for scheduling" (FitError with absent nodes UU). Caller frees. */
static char *fit_error(int num_all, const struct node_result *res, int n)
{
	int cap = 1;
	for (int i = 0; i < n; i++)
		if (res[i].done)
			cap += sk_status_reason_count(&res[i].status);
	struct reason_count *rc = calloc((size_t)cap, sizeof(*rc));
	char **items = calloc((size_t)cap, sizeof(char *));
	char *out = NULL;
	size_t len = 0;
	FILE *f = rc && items ? open_memstream(&out, &len) : NULL;
	if (!f) {
		free(rc);
		free(items);
		return NULL;
	}
	int nrc = 0, nfailed = 0;
	for (int i = 0; i < n; i++) {
		if (!res[i].done || res[i].status.code == SK_SUCCESS)
			continue;
		nfailed++;
		for (int r = 0; r < sk_status_reason_count(&res[i].status); r++)
			count(rc, &nrc, sk_status_reason(&res[i].status, r), 1);
	}
	if (num_all > nfailed)
		count(rc, &nrc, MSG_NOT_HELPFUL, num_all - nfailed);
	int nitems = 0;
	for (int i = 0; i < nrc; i++)
		if (asprintf(&items[nitems], "%d %s", rc[i].count, rc[i].reason) >= 0)
			nitems++;
	qsort(items, (size_t)nitems, sizeof(char *), cmp_str);
	fprintf(f, "0/%d nodes are available:", num_all);
	for (int i = 0; i < nitems; i++) {
		fprintf(f, "%s%s", i ? ", " : " ", items[i]);
		free(items[i]);
	}
	if (nitems)
		fputc('.', f);
	free(items);
	free(rc);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

static struct sk_status prefixed(enum sk_code code, const char *msg)
{
	return sk_statusf(code, "preemption: %s", msg ? msg : "out of memory");
}

/* ---------- PostFilter ---------- */

static const struct sk_status *diag_status(const struct sk_filter_diagnosis *diag, const char *node)
{
	for (int i = 0; i < diag->n; i++)
		if (diag->nodes[i].node && diag->nodes[i].node->node && !strcmp(diag->nodes[i].node->node->name, node))
			return &diag->nodes[i].status;
	return NULL;
}

static enum sk_code diag_code(const struct sk_filter_diagnosis *diag, const char *node)
{
	const struct sk_status *s = diag_status(diag, node);
	if (s)
		return s->code;
	return diag->absent_unschedulable ? SK_UNSCHEDULABLE : SK_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

/* PodEligibleToPreemptOthers: NULL when eligible, else the reason. */
static const char *eligible(struct sk_plugin *self, const struct sk_pod *pod, const struct sk_filter_diagnosis *diag,
			    const struct sk_snapshot *snap)
{
	if (pod->preempt_never)
		return "not eligible due to preemptionPolicy=Never.";
	const char *nom = pod->nominated_node_name;
	if (!nom || !*nom)
		return NULL;
	if (diag_code(diag, nom) == SK_UNSCHEDULABLE_AND_UNRESOLVABLE)
		return NULL;
	const struct sk_node_info *ni = snap ? sk_snapshot_get(snap, nom) : NULL;
	for (int i = 0; ni && i < ni->npods; i++) {
		const struct sk_pod *p = ni->pods[i].pod;
		if (p->priority < pod->priority && sk_handle_terminating_by_preemption(self->handle, p))
			return "not eligible due to a terminating pod on the nominated node.";
	}
	return NULL;
}

/* prepareCandidate: evict the victims (in parallel), then clear lower-priority nominations on the
 * node. A victim already being deleted gets no API call; a waiting (Permit) victim is rejected. */
struct evict_job {
	struct sk_plugin *self;
	const struct sk_pod *pod;
	const struct sk_dp_candidate *c;
	const char *note;
	pthread_mutex_t mu; /* guards err */
	char *err;
};

static void evict_one(int i, void *arg)
{
	struct evict_job *j = arg;
	const struct sk_pod *v = j->c->victims[i].pod, *pod = j->pod;
	if (v->terminating) {
		klog_info(2, "Victim Pod is already being deleted, skipping the API call for it",
			  " preemptor=%s/%s node=%s victim=%s/%s", pod->ns, pod->name, j->c->node, v->ns, v->name);
		return;
	}
	pthread_mutex_lock(&j->mu);
	bool failed = j->err != NULL;
	pthread_mutex_unlock(&j->mu);
	if (failed) /* upstream cancels the remaining work after the first error */
		return;
	char *err = NULL;
	if (dp_preempt_pod(j->self, pod, j->c->node, j->note, v, &err) != 0) {
		pthread_mutex_lock(&j->mu);
		if (!j->err) {
			j->err = err;
			err = NULL;
		}
		pthread_mutex_unlock(&j->mu);
	}
	free(err);
}

static struct sk_status prepare_candidate(struct sk_plugin *self, const struct sk_pod *pod,
					  const struct sk_dp_candidate *c)
{
	char note[512];
	snprintf(note, sizeof(note), "Preempted by pod %s on node %s", pod->uid ? pod->uid : "", c->node);
	struct evict_job j = { .self = self, .pod = pod, .c = c, .note = note };
	pthread_mutex_init(&j.mu, NULL);
	sk_handle_parallel_for(self->handle, c->nvictims, evict_one, &j);
	pthread_mutex_destroy(&j.mu);
	if (j.err) {
		struct sk_status s = prefixed(SK_ERROR, j.err);
		free(j.err);
		return s;
	}
	dp_clear_lower_nominated(self, pod, c->node); /* not critical (upstream) */
	return sk_ok();
}

/* nodesWherePreemptionMightHelp: the nodes whose status is plain Unschedulable (nodes without a
 * status carry the absent one), in snapshot order, into potential (num_all slots). Returns their
 * count, or -1 when out of memory. The diagnosis holds the snapshot's own node infos, so statuses
 * are found by snapshot index (might_help_by_index) or, where that does not apply, by pointer (an
 * open-addressing table: no sort, no string compare); when a status's node info is not the
 * snapshot's (a caller building its own diagnosis) they are matched by name. */
struct ptr_code {
	const struct sk_node_info *ni; /* NULL: empty slot */
	enum sk_code code;
};

static size_t ptr_hash(const void *p, size_t mask)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	return (size_t)(((x >> 4) * 0x9e3779b97f4a7c15ULL) >> 32) & mask;
}

static const struct ptr_code *ptr_find(const struct ptr_code *t, size_t mask, const struct sk_node_info *ni)
{
	for (size_t i = ptr_hash(ni, mask);; i = (i + 1) & mask) {
		if (t[i].ni == ni)
			return &t[i];
		if (!t[i].ni)
			return NULL;
	}
}

static int might_help_by_pointer_or_name(const struct sk_filter_diagnosis *diag, const struct sk_snapshot *snap,
					 const struct sk_node_info **potential)
{
	size_t size = 16;
	while (size < (size_t)diag->n * 2)
		size *= 2;
	size_t mask = size - 1;
	struct ptr_code *t = calloc(size, sizeof(*t));
	if (!t)
		return -1;
	int ncodes = 0, npotential = 0, matched = 0;
	for (int i = 0; i < diag->n; i++) {
		const struct sk_node_info *ni = diag->nodes[i].node;
		if (!ni || !ni->node)
			continue;
		size_t k = ptr_hash(ni, mask);
		while (t[k].ni && t[k].ni != ni)
			k = (k + 1) & mask;
		ncodes += !t[k].ni;
		t[k].ni = ni;
		t[k].code = diag->nodes[i].status.code;
	}
	enum sk_code absent = diag->absent_unschedulable ? SK_UNSCHEDULABLE : SK_UNSCHEDULABLE_AND_UNRESOLVABLE;
	for (int pass = 0; pass < 2; pass++) {
		/* pass 0 by pointer; pass 1 (some status is not of a snapshot node info) by name */
		npotential = 0;
		for (int i = 0; i < snap->nnodes; i++) {
			const struct sk_node_info *ni = snap->nodes[i];
			if (!ni->node)
				continue;
			enum sk_code c;
			if (pass == 0) {
				const struct ptr_code *hit = ptr_find(t, mask, ni);
				matched += hit != NULL;
				c = hit ? hit->code : absent;
			} else {
				c = diag_code(diag, ni->node->name);
			}
			if (c == SK_UNSCHEDULABLE)
				potential[npotential++] = ni;
		}
		if (matched == ncodes)
			break;
	}
	free(t);
	return npotential;
}

/* The same answer as might_help_by_pointer_or_name when every status is of a distinct snapshot
 * node info (the scheduling loop's diagnosis): the codes go to d->by_index at each node's
 * snapshot index (sk_node_info.index), stamped with this call, so nothing is cleared or hashed per
 * call (the pointer table was a 256 KiB calloc per preemptor at 5,000 nodes). Returns -2 when the
 * diagnosis or the snapshot is not of that kind (a status of a node info that is not the
 * snapshot's, two node infos at one index, a node without an index): the caller then takes the
 * general path. d->by_index_mu held. */
static int might_help_by_index(struct dp *d, const struct sk_filter_diagnosis *diag, const struct sk_snapshot *snap,
			       const struct sk_node_info **potential)
{
	int32_t end = snap->index_end;
	if (end <= 1)
		return -2;
	if (end > d->nby_index) {
		struct index_slot *x = realloc(d->by_index, (size_t)end * sizeof(*x));
		if (!x)
			return -2;
		memset(x + d->nby_index, 0, (size_t)(end - d->nby_index) * sizeof(*x)); /* stamp 0: unset */
		d->by_index = x;
		d->nby_index = end;
	}
	uint64_t stamp = ++d->stamp;
	struct index_slot *t = d->by_index;
	int ncodes = 0, matched = 0, npotential = 0;
	for (int i = 0; i < diag->n; i++) {
		const struct sk_node_info *ni = diag->nodes[i].node;
		if (!ni || !ni->node)
			continue;
		if (ni->index <= 0 || ni->index >= end)
			return -2;
		struct index_slot *sl = &t[ni->index];
		if (sl->stamp == stamp && sl->ni != ni)
			return -2;
		ncodes += sl->stamp != stamp;
		sl->ni = ni;
		sl->stamp = stamp;
		sl->code = diag->nodes[i].status.code; /* a node listed twice: the last status, as by pointer */
	}
	enum sk_code absent = diag->absent_unschedulable ? SK_UNSCHEDULABLE : SK_UNSCHEDULABLE_AND_UNRESOLVABLE;
	for (int i = 0; i < snap->nnodes; i++) {
		const struct sk_node_info *ni = snap->nodes[i];
		if (!ni->node)
			continue;
		if (ni->index <= 0 || ni->index >= end)
			return -2;
		const struct index_slot *sl = &t[ni->index];
		bool hit = sl->stamp == stamp && sl->ni == ni;
		matched += hit;
		if ((hit ? sl->code : absent) == SK_UNSCHEDULABLE)
			potential[npotential++] = ni;
	}
	return matched == ncodes ? npotential : -2;
}

/* The same answer again for the diagnosis of a failing pass over every node (the scheduling loop's
 * when nothing fits): one status for each snapshot node, in snapshot order from some node on (the
 * pass starts at nextStartNodeIndex and wraps, pkg/scheduler/schedule_one.go). The node at
 * snapshot position i then has status start + i (mod n): one pass of pointer compares, no slot
 * array. Returns -2 when the diagnosis is not of that shape (then might_help_by_index). */
static int might_help_in_order(const struct sk_filter_diagnosis *diag, const struct sk_snapshot *snap,
			       const struct sk_node_info **potential)
{
	int n = snap->nnodes, start = -1;
	if (n <= 0 || diag->n != n || !diag->nodes[0].node)
		return -2;
	for (int i = 0; i < n && start < 0; i++)
		if (snap->nodes[i] == diag->nodes[0].node)
			start = i;
	if (start < 0)
		return -2;
	int npotential = 0; /* every node has its status: the absent code never applies */
	const struct sk_node_status *st = diag->nodes;
	for (int i = 0, k = n - start; i < n; i++, k++) {
		if (k == n)
			k = 0;
		const struct sk_node_info *ni = snap->nodes[i];
		if (st[k].node != ni || !ni->node)
			return -2;
		if (st[k].status.code == SK_UNSCHEDULABLE)
			potential[npotential++] = ni;
	}
	return npotential;
}

static int nodes_where_preemption_might_help(struct dp *d, const struct sk_filter_diagnosis *diag,
					     const struct sk_snapshot *snap, const struct sk_node_info **potential)
{
	int n = might_help_in_order(diag, snap, potential);
	if (n != -2)
		return n;
	if (pthread_mutex_trylock(&d->by_index_mu) == 0) {
		n = might_help_by_index(d, diag, snap, potential);
		pthread_mutex_unlock(&d->by_index_mu);
	}
	return n != -2 ? n : might_help_by_pointer_or_name(diag, snap, potential);
}

/* Grows *a (of *cap elements of size sz) to at least n and at most max (max >= n), doubling, so
 * the dry run's batches of `parallelism` nodes cost O(log) reallocations instead of one each (a
 * copy of everything so far). The new part is left as it is: every element below the count in use
 * is written before it is read. 0 or -1. */
static int grow_doubling(void **a, int *cap, int n, int max, size_t sz)
{
	if (n <= *cap)
		return 0;
	int want = *cap > max / 2 ? max : *cap * 2;
	if (want < n)
		want = n;
	void *x = realloc(*a, (size_t)want * sz);
	if (!x)
		return -1;
	*a = x;
	*cap = want;
	return 0;
}

/* DryRunPreemption over dr->potential from dr->offset, in batches of `parallelism` nodes. Results
 * are taken in offset order, so the candidate list and the stopping point (want candidates once
 * one violates no PDB) do not depend on thread timing. The result slots grow with the batches
 * (the search usually stops after a tenth of the nodes). *out: the candidates (the ones violating
 * no PDB first; caller frees); returns their count, or -1 when out of memory. */
static int dry_run_preemption(struct sk_plugin *self, struct dry_run *dr, int32_t want, struct sk_dp_candidate **out)
{
	int npotential = dr->npotential;
	int batch = sk_handle_parallelism(self->handle);
	if (batch < 1)
		batch = 1;
	int nonviolating = 0, violating = 0, ccap = 0, vcap = 0, rc = 0;
	bool stop = false;
	struct sk_dp_candidate *cands = NULL, *viol = NULL;
	/* sized at once for where the search stops when most nodes give a candidate (want, rounded up
	 * to a batch): the doubling from one batch was ~18 reallocations per preemptor */
	int first = want + batch < npotential ? want + batch : npotential;
	if (grow_doubling((void **)&dr->res, &dr->res_cap, first, npotential, sizeof(*dr->res)) != 0 ||
	    grow_doubling((void **)&cands, &ccap, first, npotential, sizeof(*cands)) != 0 ||
	    grow_doubling((void **)&viol, &vcap, first, npotential, sizeof(*viol)) != 0)
		rc = -1;
	for (int base = 0; rc == 0 && base < npotential && !stop; base += batch) {
		int n = npotential - base < batch ? npotential - base : batch;
		if (grow_doubling((void **)&dr->res, &dr->res_cap, base + n, npotential, sizeof(*dr->res)) != 0 ||
		    grow_doubling((void **)&cands, &ccap, base + n, npotential, sizeof(*cands)) != 0 ||
		    grow_doubling((void **)&viol, &vcap, base + n, npotential, sizeof(*viol)) != 0) {
			rc = -1;
			break;
		}
		dr->base = base;
		/* no block (out of memory): each candidate allocates its own array, as before */
		dr->vbuf = NULL;
		if (grow_doubling((void **)&dr->blocks, &dr->blocks_cap, dr->nblocks + 1, INT32_MAX, sizeof(void *)) == 0 &&
		    (dr->vbuf = malloc((size_t)n * VICTIM_SLOTS * sizeof(*dr->vbuf))))
			dr->blocks[dr->nblocks++] = dr->vbuf;
		sk_handle_parallel_for(self->handle, n, check_node, dr); /* writes every res[base, base + n) */
		dr->nres = base + n;
		for (int i = base; i < base + n; i++) {
			struct node_result *r = &dr->res[i];
			if (stop) { /* cancelled upstream: never ran */
				sk_dp_candidate_clear(&r->cand);
				sk_status_reset(&r->status);
				r->done = false;
				continue;
			}
			if (r->status.code != SK_SUCCESS)
				continue;
			if (r->cand.num_pdb_violations == 0)
				cands[nonviolating++] = r->cand;
			else
				viol[violating++] = r->cand;
			memset(&r->cand, 0, sizeof(r->cand));
			if (nonviolating > 0 && nonviolating + violating >= want)
				stop = true;
		}
	}
	if (rc == 0 && violating)
		memcpy(cands + nonviolating, viol, (size_t)violating * sizeof(*viol));
	if (rc != 0) {
		for (int i = 0; i < nonviolating; i++)
			sk_dp_candidate_clear(&cands[i]);
		for (int i = 0; i < violating; i++)
			sk_dp_candidate_clear(&viol[i]);
		free(cands);
		cands = NULL;
	}
	free(viol);
	*out = cands;
	return rc == 0 ? nonviolating + violating : -1;
}

/* No candidate: the dry-run errors first (an aggregate, bracketed when more than one), else the
 * FitError over the dry-run statuses with clearNominatedNode. */
static struct sk_status no_candidate_status(int num_all, const struct node_result *res, int npotential,
					    struct sk_postfilter_result *result)
{
	int nerr = 0;
	char *agg = NULL;
	size_t alen = 0;
	FILE *f = open_memstream(&agg, &alen);
	for (int i = 0; f && i < npotential; i++) {
		if (!res[i].done || res[i].status.code != SK_ERROR)
			continue;
		char *m = sk_status_message(&res[i].status);
		fprintf(f, "%s%s", nerr ? ", " : "", m ? m : "");
		free(m);
		nerr++;
	}
	if (f)
		fclose(f);
	struct sk_status ret;
	if (nerr) {
		if (nerr > 1) {
			char *w = NULL;
			if (asprintf(&w, "[%s]", agg) < 0)
				w = NULL;
			free(agg);
			agg = w;
		}
		ret = prefixed(SK_ERROR, agg);
		free(agg);
		return ret;
	}
	free(agg);
	char *m = fit_error(num_all, res, npotential);
	ret = prefixed(SK_UNSCHEDULABLE, m);
	free(m);
	result->clear_nominated = true;
	return ret;
}

/* callExtenders (pkg/scheduler/framework/preemption/preemption.go): the candidates go to the
 * preempt extenders (sk_handle_preempt_extenders); the nodes they keep, with the victims they
 * return, replace cands[0..*n) (in their order). An extender error fails the preemption. */
static struct sk_status call_extenders(struct sk_plugin *self, const struct sk_pod *pod, int64_t now_ns,
				       struct sk_dp_candidate *cands, int *n)
{
	struct sk_victims *v = calloc((size_t)*n, sizeof(*v));
	if (!v)
		return prefixed(SK_ERROR, NULL);
	int nv = 0;
	for (; nv < *n; nv++) {
		struct sk_dp_candidate *c = &cands[nv];
		v[nv].node = c->node;
		v[nv].num_pdb_violations = c->num_pdb_violations;
		if (!(v[nv].pods = calloc((size_t)(c->nvictims ? c->nvictims : 1), sizeof(*v[nv].pods)))) {
			sk_victims_free(v, nv);
			return prefixed(SK_ERROR, NULL);
		}
		for (int k = 0; k < c->nvictims; k++)
			v[nv].pods[v[nv].npods++] = sk_pod_ref(c->victims[k].pod);
	}
	char *err = NULL;
	const struct sk_victims *sent = v;
	if (sk_handle_preempt_extenders(self->handle, pod, &v, &nv, &err) != 0) {
		struct sk_status st = prefixed(SK_ERROR, err ? err : "preemption extender failed");
		free(err);
		sk_victims_free(v, nv);
		return st;
	}
	if (v == sent) { /* no extender took part: the candidates stay as they are */
		sk_victims_free(v, nv);
		return sk_ok();
	}
	for (int i = 0; i < *n; i++)
		sk_dp_candidate_clear(&cands[i]);
	int k = 0; /* nv <= the input count: the extenders only keep or drop sent nodes */
	struct sk_status st = sk_ok();
	for (int i = 0; i < nv && k < *n; i++) {
		struct sk_dp_candidate *c = &cands[k];
		c->node = v[i].node;
		c->num_pdb_violations = (int)v[i].num_pdb_violations;
		c->victims_borrowed = false;
		if (!(c->victims = calloc((size_t)(v[i].npods ? v[i].npods : 1), sizeof(*c->victims)))) {
			st = prefixed(SK_ERROR, NULL);
			break;
		}
		for (int j = 0; j < v[i].npods; j++) {
			c->victims[j].pod = sk_pod_ref(v[i].pods[j]);
			int64_t t = sk_handle_pod_start_time(self->handle, v[i].pods[j]);
			c->victims[j].start_ns = t < 0 ? now_ns : t;
		}
		c->nvictims = v[i].npods;
		k++;
	}
	*n = k;
	sk_victims_free(v, nv);
	return st;
}

/* Evaluator.Preempt (pkg/scheduler/framework/preemption/preemption.go): eligibility, the nodes
 * where preemption might help, PDBs, the dry run from a random offset, SelectCandidate, then
 * prepareCandidate on the chosen node. */
static struct sk_status dp_post_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *in,
				       const struct sk_filter_diagnosis *diag, struct sk_postfilter_result *result)
{
	struct dp *d = self->priv;
	struct sk_status ret = sk_ok();
	struct sk_pdb **pdbs = NULL;
	int npdbs = 0;
	const struct sk_node_info **potential = NULL;
	struct node_result *res = NULL;
	struct sk_dp_candidate *cands = NULL;
	void **blocks = NULL;
	int ncands = 0, npotential = 0, nres = 0, nblocks = 0;

	struct sk_pod *pod = sk_handle_get_pod(self->handle, in);
	if (!pod)
		return sk_statusf(SK_ERROR, "preemption: pod \"%s\" not found", in->name);
	const struct sk_snapshot *snap = sk_handle_snapshot(self->handle);
	const char *why = eligible(self, pod, diag, snap);
	if (why) {
		klog_info(5, "Pod is not eligible for preemption", " pod=%s/%s reason=\"%s\"", pod->ns, pod->name, why);
		ret = prefixed(SK_UNSCHEDULABLE, why);
		goto out;
	}
	int num_all = snap ? snap->nnodes : 0;
	if (num_all == 0) {
		ret = prefixed(SK_ERROR, "no nodes available");
		goto out;
	}
	potential = calloc((size_t)num_all, sizeof(*potential));
	if (!potential || (npotential = nodes_where_preemption_might_help(d, diag, snap, potential)) < 0) {
		npotential = 0;
		ret = prefixed(SK_ERROR, NULL);
		goto out;
	}
	if (npotential == 0) {
		klog_info(3, "Preemption will not help schedule pod on any node", " pod=%s/%s", pod->ns, pod->name);
		char *m = fit_error(num_all, NULL, 0);
		ret = prefixed(SK_UNSCHEDULABLE, m);
		free(m);
		result->clear_nominated = true;
		goto out;
	}
	char *err = NULL;
	npdbs = sk_handle_list_pdbs(self->handle, &pdbs, &err);
	if (npdbs < 0) {
		ret = prefixed(SK_ERROR, err ? err : "listing PodDisruptionBudgets failed");
		free(err);
		npdbs = 0;
		pdbs = NULL;
		goto out;
	}
	free(err);
	int32_t offset = random_offset(d, npotential);
	int32_t want = sk_dp_num_candidates(&d->args, npotential);
	struct dry_run dr = { .self = self, .cs = cs, .pod = pod, .potential = potential, .npotential = npotential,
			      .offset = offset, .pdbs = pdbs, .npdbs = npdbs,
			      .now_ns = sk_handle_wall_now_ns(self->handle) };
	ncands = dry_run_preemption(self, &dr, want, &cands);
	res = dr.res;
	nres = dr.nres;
	blocks = dr.blocks;
	nblocks = dr.nblocks;
	if (ncands < 0) {
		ncands = 0;
		ret = prefixed(SK_ERROR, NULL);
		goto out;
	}
	if (ncands == 0) {
		ret = no_candidate_status(num_all, res, nres, result);
		goto out;
	}
	ret = call_extenders(self, pod, dr.now_ns, cands, &ncands);
	if (ret.code != SK_SUCCESS)
		goto out;
	int best = ncands == 1 ? 0 : sk_dp_pick_one_node(cands, ncands);
	if (best < 0 || !cands[best].node || !*cands[best].node) {
		ret = prefixed(SK_UNSCHEDULABLE, "no candidate node for preemption");
		goto out;
	}
	klog_info(2, "the target node for the preemption is determined", " node=%s pod=%s/%s", cands[best].node, pod->ns,
		  pod->name);
	ret = d->async ? dp_async_start(d->async, pod, &cands[best]) : prepare_candidate(self, pod, &cands[best]);
	if (ret.code != SK_SUCCESS)
		goto out;
	result->nominated_node = sk_intern(cands[best].node);
out:
	for (int i = 0; res && i < nres; i++) {
		sk_dp_candidate_clear(&res[i].cand);
		sk_status_reset(&res[i].status);
	}
	for (int i = 0; i < ncands; i++)
		sk_dp_candidate_clear(&cands[i]);
	for (int i = 0; i < nblocks; i++) /* after the candidates, which borrow them */
		free(blocks[i]);
	free(blocks);
	free(cands);
	free(res);
	free(potential);
	sk_pdb_list_free(pdbs, npdbs);
	sk_pod_unref(pod);
	return ret;
}

/* PreEnqueue (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go): a pod
 * whose asynchronous preemption is in flight waits. */
static struct sk_status dp_pre_enqueue(struct sk_plugin *self, const struct sk_pod *pod)
{
	struct dp *d = self->priv;
	if (d->async && dp_async_running(d->async, pod->uid))
		return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for the preemption for this pod to be finished");
	return sk_ok();
}

/* isPodSchedulableAfterAssignedPodDeletion: always Skip. The pods this plugin gates also carry the
 * plugins whose failure the preemption resolves; their hints decide the requeue. */
static enum sk_hint after_assigned_pod_delete(struct sk_plugin *self, const struct sk_pod *pod, const void *old_obj,
					      const void *new_obj)
{
	(void)self;
	(void)pod;
	(void)old_obj;
	(void)new_obj;
	return SK_QUEUE_SKIP;
}

/* With async preemption: AssignedPod/Delete, so a gated preemptor is reconsidered when its victims
 * go; without it nothing is gated by this plugin: no events (upstream returns none). */
static int dp_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	struct dp *d = self->priv;
	if (!d || !d->async || max < 1)
		return 0;
	out[0] = (struct sk_event_registration){
		.event = { SK_EV_ASSIGNED_POD, SK_ACT_DELETE, "AssignedPodDelete" },
		.hint = after_assigned_pod_delete,
	};
	return 1;
}

const struct sk_plugin_desc sk_plugin_default_preemption = {
	SK_PLUGIN_HEADER,
	.name = NAME,
	.args_kind = "DefaultPreemptionArgs",
	.args_decode = dp_args_decode,
	.args_encode = dp_args_encode,
	.args_free = dp_args_free,
	.init = dp_init,
	.fini = dp_fini,
	.pre_enqueue = dp_pre_enqueue,
	.post_filter = dp_post_filter,
	.events_to_register = dp_events,
};
