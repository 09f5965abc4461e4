/* ComputeResource (PreFilter, Filter, PreScore, Score, Reserve) and ComputeResourceArgs: load-aware
 * placement from measured usage (metrics.k8s.io/v1beta1 NodeMetrics, refreshed by a thread of the
 * instance). Filter rejects nodes above usageThresholds; Score prefers the most free measured
 * capacity after the pod's estimated usage; nodes without fresh metrics are scored by requests.
 * Semantics and args: docs/plugins.md ("Seed plugins: ComputeResource"). */
#ifndef _GNU_SOURCE /* the repository's CFLAGS and plugin_boundary.sh already define it */
#define _GNU_SOURCE /* pthread_condattr_setclock, strdup */
#endif
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <schedkit/args.h>
#include <schedkit/log.h>
#include <schedkit/plugin.h>
#include <schedkit/module.h>

#include "compute_resource.h"

#define CR_ARGS_KIND "ComputeResourceArgs"
#define CR_REASON_CPU "node(s) had cpu usage above the load threshold"
#define CR_REASON_MEM "node(s) had memory usage above the load threshold"
#define NS_PER_S 1000000000LL

enum { CR_CPU = 0, CR_MEM = 1, CR_NRES = 2 };
static const char *const cr_res_names[CR_NRES] = { "cpu", "memory" };

/* ---------- args ---------- */

struct cr_args {
	int64_t refresh_s, expiration_s;
	int64_t threshold[CR_NRES];    /* percent of allocatable; 0 = no threshold */
	int64_t estimate_pct[CR_NRES]; /* the pod's estimated usage: requests times this / 100 */
	int nres;
	int res_kind[CR_NRES];         /* CR_CPU / CR_MEM, in the configured order */
	int64_t res_weight[CR_NRES];
	struct sk_resource_spec *specs; /* as decoded (or the defaults), for args_encode */
	int nspecs;
};

static void cr_args_free(void *p)
{
	struct cr_args *a = p;
	if (!a)
		return;
	sk_resource_specs_free(a->specs, a->nspecs);
	free(a);
}

static int res_index(const char *name)
{
	for (int i = 0; i < CR_NRES; i++)
		if (!strcmp(name, cr_res_names[i]))
			return i;
	return -1;
}

/* An int32 field in [lo, hi]; absent keeps *out. The range error names the range (the JSON
 * reader's own one would only say "out of range for int32"). */
static int int_in(const cJSON *obj, const char *field, const char *path, int64_t lo, int64_t hi, int64_t *out,
		  struct sk_errors *e)
{
	int64_t v = *out;
	bool present = false;
	if (sk_json_int(obj, field, path, INT32_MIN, INT32_MAX, &v, &present, e) < 0)
		return -1;
	if (!present)
		return 0;
	if (v < lo || v > hi) {
		char *p = sk_path_child(path, field), detail[64];
		snprintf(detail, sizeof(detail), "must be in the range [%lld, %lld]", (long long)lo, (long long)hi);
		sk_err_invalid_int(e, p ? p : path, v, detail);
		free(p);
		return -1;
	}
	*out = v;
	return 0;
}

/* {cpu: N, memory: N} at path.field with values in [min, max]; absent keys keep out[]. */
static int decode_res_map(const cJSON *json, const char *field, const char *path, int64_t min, int64_t max,
			  int64_t out[CR_NRES], struct sk_errors *e)
{
	static const char *const keys[] = { "cpu", "memory", NULL };
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(json, field);
	if (!obj || cJSON_IsNull(obj))
		return 0;
	char *fpath = sk_path_child(path, field);
	int rc = -1;
	if (!fpath) {
		sk_errors_addf(e, "%s: out of memory", path);
		return -1;
	}
	if (sk_json_check_object(obj, fpath, keys, false, e) == 0) {
		rc = 0;
		for (int i = 0; i < CR_NRES; i++)
			if (int_in(obj, cr_res_names[i], fpath, min, max, &out[i], e) < 0)
				rc = -1;
	}
	free(fpath);
	return rc;
}

/* resources: [{name, weight}], names cpu or memory (the two NodeMetrics report), once each,
 * weights in [1, 100]. */
static int decode_resources(const cJSON *json, const char *path, struct cr_args *a, struct sk_errors *e)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(json, "resources");
	static const char *const supported[] = { "cpu", "memory", NULL };
	if (!arr || cJSON_IsNull(arr))
		return 0;
	char *rpath = sk_path_child(path, "resources");
	struct sk_resource_spec *specs = NULL;
	int n = 0, rc = 0;
	if (!rpath || sk_resource_specs_decode(arr, rpath, &specs, &n, e) < 0) {
		if (!rpath)
			sk_errors_addf(e, "%s: out of memory", path);
		free(rpath);
		return -1;
	}
	if (n == 0) {
		sk_err_required(e, rpath, "at least one of cpu and memory");
		rc = -1;
	}
	bool seen[CR_NRES] = { false, false };
	int nres = 0;
	for (int i = 0; i < n; i++) {
		char *pi = sk_path_index(rpath, i);
		char *pn = sk_path_child(pi ? pi : rpath, "name"), *pw = sk_path_child(pi ? pi : rpath, "weight");
		int k = res_index(specs[i].name);
		if (k < 0) {
			sk_err_unsupported(e, pn ? pn : rpath, specs[i].name, supported);
			rc = -1;
		} else if (seen[k]) {
			sk_err_duplicate(e, pn ? pn : rpath, specs[i].name);
			rc = -1;
		} else if (specs[i].weight < 1 || specs[i].weight > 100) {
			sk_err_invalid_int(e, pw ? pw : rpath, specs[i].weight, "must be in the range [1, 100]");
			rc = -1;
		} else if (nres < CR_NRES) {
			seen[k] = true;
			a->res_kind[nres] = k;
			a->res_weight[nres] = specs[i].weight;
			nres++;
		}
		free(pi);
		free(pn);
		free(pw);
	}
	free(rpath);
	if (rc < 0) {
		sk_resource_specs_free(specs, n);
		return -1;
	}
	sk_resource_specs_free(a->specs, a->nspecs);
	a->specs = specs;
	a->nspecs = n;
	a->nres = nres;
	return 0;
}

/* The default resources list: cpu and memory, weight 1 each (as NodeResourcesFit). */
static int default_resources(struct cr_args *a)
{
	a->specs = calloc(CR_NRES, sizeof(*a->specs));
	if (!a->specs)
		return -1;
	a->nspecs = CR_NRES;
	for (int i = 0; i < CR_NRES; i++) {
		if (!(a->specs[i].name = strdup(cr_res_names[i])))
			return -1;
		a->specs[i].weight = 1;
		a->res_kind[i] = i;
		a->res_weight[i] = 1;
	}
	a->nres = CR_NRES;
	return 0;
}

static int cr_args_decode(const cJSON *json, void **out, struct sk_errors *e, const char *path)
{
	static const char *const fields[] = { "refreshSeconds", "metricsExpirationSeconds", "usageThresholds",
					      "estimatedUsagePercent", "resources", NULL };
	struct cr_args *a = calloc(1, sizeof(*a));
	int rc = 0;
	if (!a || default_resources(a) < 0) {
		sk_errors_addf(e, "%s: out of memory", path);
		cr_args_free(a);
		return -1;
	}
	a->refresh_s = 15;
	a->expiration_s = 180;
	a->estimate_pct[CR_CPU] = a->estimate_pct[CR_MEM] = 100;
	if (sk_json_check_object(json, path, fields, true, e) < 0 ||
	    sk_args_check_type_meta(json, CR_ARGS_KIND, path, e) < 0) {
		cr_args_free(a);
		return -1;
	}
	if (json) {
		if (int_in(json, "refreshSeconds", path, 1, 3600, &a->refresh_s, e) < 0)
			rc = -1;
		if (int_in(json, "metricsExpirationSeconds", path, 1, 86400, &a->expiration_s, e) < 0)
			rc = -1;
		if (rc == 0 && a->expiration_s < a->refresh_s) {
			/* metrics would expire between two refreshes: every node scored without them */
			char *p = sk_path_child(path, "metricsExpirationSeconds"), detail[96];
			snprintf(detail, sizeof(detail), "must be at least refreshSeconds (%lld)", (long long)a->refresh_s);
			sk_err_invalid_int(e, p ? p : path, a->expiration_s, detail);
			free(p);
			rc = -1;
		}
		if (decode_res_map(json, "usageThresholds", path, 0, 100, a->threshold, e) < 0)
			rc = -1;
		if (decode_res_map(json, "estimatedUsagePercent", path, 0, 1000, a->estimate_pct, e) < 0)
			rc = -1;
		if (decode_resources(json, path, a, e) < 0)
			rc = -1;
	}
	if (rc < 0) {
		cr_args_free(a);
		return -1;
	}
	*out = a;
	return 0;
}

static cJSON *res_map_json(const int64_t v[CR_NRES])
{
	cJSON *o = cJSON_CreateObject();
	for (int i = 0; o && i < CR_NRES; i++) {
		cJSON *n = sk_json_create_int64(v[i]);
		if (!n || !cJSON_AddItemToObject(o, cr_res_names[i], n)) {
			cJSON_Delete(n);
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

static cJSON *cr_args_encode(const void *p)
{
	const struct cr_args *a = p;
	cJSON *o = sk_args_json_new(CR_ARGS_KIND);
	if (!o || !a)
		return o;
	cJSON *items[] = { sk_json_create_int64(a->refresh_s), sk_json_create_int64(a->expiration_s),
			   res_map_json(a->threshold), res_map_json(a->estimate_pct),
			   sk_resource_specs_encode(a->specs, a->nspecs) };
	static const char *const keys[] = { "refreshSeconds", "metricsExpirationSeconds", "usageThresholds",
					    "estimatedUsagePercent", "resources" };
	bool ok = true;
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		if (ok && items[i] && cJSON_AddItemToObject(o, keys[i], items[i]))
			continue;
		ok = false;
		cJSON_Delete(items[i]);
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---------- the instance ---------- */

/* A pod this instance reserved on a node: its estimate counts on top of the node's sample until a
 * sample taken after the reservation arrives (that one measures the pod itself). */
struct cr_placement {
	char *uid;
	const char *node;                /* interned */
	int64_t cpu, mem;                /* the estimate added */
	int64_t wall_ns;                 /* when reserved (Unix ns) */
	struct cr_metrics *counted_in;   /* the table whose extras hold it (no reference), or NULL */
	struct cr_node_metrics *entry;   /* its entry in counted_in */
};

struct cr {
	const struct cr_args *a;
	struct sk_handle *h;
	bool filter_on;                  /* any usageThresholds set */
	int64_t threshold[CR_NRES];      /* copies of the args the per-node callbacks read */
	int64_t weight[CR_NRES];         /* per resource kind, 0 when not in args.resources */
	int64_t weight_sum;

	pthread_mutex_t lock;            /* cur, generation, placements, stopping */
	pthread_cond_t wake;             /* fini wakes the refresh thread */
	bool stopping, started;
	pthread_t thread;
	struct cr_metrics *cur;          /* never NULL after init */
	uint64_t generation;
	struct cr_placement *pl;
	int npl, cappl;

	bool fetch_failing;              /* refresh thread only: log a failure once, then the recovery */
	atomic_int logged_unmetered;     /* last count logged by cr_state_free, -1 initially */
	atomic_uint_fast64_t logged_generation;
};

/* Per-attempt state: the table of the cycle (one reference), the pod's numbers, and what Score saw
 * of nodes without metrics (reported once the attempt ends). */
struct cr_state {
	struct cr *c;
	struct cr_metrics *m;
	struct cr_by_index *ix;          /* m's entries by node index (a reference), or NULL */
	int64_t now_ns;
	int64_t est[CR_NRES];            /* the pod's estimated usage (scaled requests) */
	int64_t req[CR_NRES];            /* the pod's non-zero requests (scoring by requests) */
	atomic_int unmetered;
	_Atomic(const char *) first_unmetered; /* smallest name, so the log line is deterministic */
};

static bool fresh(const struct cr_node_metrics *e, int64_t now_ns)
{
	return e && now_ns <= e->fresh_until_ns;
}

/* Sums of usages, estimates and requests saturate: a hostile NodeMetrics or pod quantity must not
 * overflow (the parsers saturate at INT64_MAX themselves). */
static inline int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* The pod's estimate per resource: its non-zero requests (100m / 200Mi when it requests none, as
 * scoring assumes) times estimatedUsagePercent. */
static void pod_estimate(const struct cr_args *a, const struct sk_pod *pod, int64_t est[CR_NRES], int64_t req[CR_NRES])
{
	req[CR_CPU] = pod->non_zero_milli_cpu;
	req[CR_MEM] = pod->non_zero_memory;
	for (int i = 0; i < CR_NRES; i++) {
		__int128 v = (__int128)req[i] * a->estimate_pct[i] / 100;
		est[i] = v > INT64_MAX ? INT64_MAX : (int64_t)v;
	}
}

/* Placements: `counted` when the node's sample in m predates the reservation and is fresh. */
static bool placement_counts(const struct cr_placement *p, const struct cr_node_metrics *e, int64_t now_ns)
{
	return e && fresh(e, now_ns) && p->wall_ns > e->sample_unix_ns;
}

static void count_in(struct cr_placement *p, struct cr_metrics *m, struct cr_node_metrics *e)
{
	atomic_fetch_add_explicit(&e->extra_cpu, p->cpu, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->extra_mem, p->mem, memory_order_relaxed);
	p->counted_in = m;
	p->entry = e;
}

/* Under c->lock: moves the placements onto a new table, dropping those its samples now measure
 * (taken after the reservation) and those older than the expiration. */
static void placements_rebase(struct cr *c, struct cr_metrics *m, int64_t now_ns, int64_t wall_ns)
{
	int64_t exp_ns = c->a->expiration_s * NS_PER_S;
	int k = 0;
	for (int i = 0; i < c->npl; i++) {
		struct cr_placement *p = &c->pl[i];
		struct cr_node_metrics *e = cr_metrics_find(m, p->node);
		bool measured = e && e->sample_unix_ns >= p->wall_ns;
		if (measured || wall_ns - p->wall_ns > exp_ns) {
			free(p->uid);
			continue;
		}
		p->counted_in = NULL;
		p->entry = NULL;
		if (placement_counts(p, e, now_ns))
			count_in(p, m, e);
		c->pl[k++] = *p;
	}
	c->npl = k;
}

/* Under c->lock, when a refresh failed: the kept table goes on counting its placements; only
 * those older than the expiration leave (their nodes' samples are stale by then anyway). */
static void placements_expire(struct cr *c, int64_t wall_ns)
{
	int64_t exp_ns = c->a->expiration_s * NS_PER_S;
	int k = 0;
	for (int i = 0; i < c->npl; i++) {
		struct cr_placement *p = &c->pl[i];
		if (wall_ns - p->wall_ns <= exp_ns) {
			c->pl[k++] = *p;
			continue;
		}
		if (p->counted_in == c->cur && p->entry) {
			atomic_fetch_sub_explicit(&p->entry->extra_cpu, p->cpu, memory_order_relaxed);
			atomic_fetch_sub_explicit(&p->entry->extra_mem, p->mem, memory_order_relaxed);
		}
		free(p->uid);
	}
	c->npl = k;
}

/* One GET of the NodeMetricsList; a new table replaces the current one. A failure keeps the last
 * table, whose entries go stale on their own. Logs the first failure and the recovery. */
static void cr_refresh(struct cr *c)
{
	cJSON *body = NULL;
	char *err = NULL;
	struct cr_metrics *m = NULL;
	int rc = sk_handle_api_get(c->h, CR_METRICS_PATH, &body, &err);
	int64_t now = sk_handle_now_ns(c->h), wall = sk_handle_wall_now_ns(c->h);
	pthread_mutex_lock(&c->lock);
	uint64_t gen = c->generation + 1;
	pthread_mutex_unlock(&c->lock);
	if (rc == 0)
		m = cr_metrics_from_list(body, now, wall, c->a->expiration_s * NS_PER_S, gen, &err);
	cJSON_Delete(body);

	struct cr_metrics *old = NULL;
	pthread_mutex_lock(&c->lock);
	if (m) {
		c->generation = gen;
		placements_rebase(c, m, now, wall);
		old = c->cur;
		c->cur = m;
	} else {
		placements_expire(c, wall);
	}
	pthread_mutex_unlock(&c->lock);

	if (!m) {
		if (!c->fetch_failing)
			sk_log_warning("ComputeResource: cannot read node metrics; nodes without fresh metrics are scored by their requests",
				       " profile=\"%s\" path=\"%s\" err=\"%s\"", sk_handle_profile_name(c->h), CR_METRICS_PATH,
				       err ? err : "unknown error");
		c->fetch_failing = true;
	} else {
		if (c->fetch_failing || gen == 1)
			sk_log_info(2, "ComputeResource: node metrics read", " profile=\"%s\" nodes=%d skipped=%d",
				    sk_handle_profile_name(c->h), m->n, m->skipped);
		else
			sk_log_info(5, "ComputeResource: node metrics refreshed", " profile=\"%s\" nodes=%d skipped=%d",
				    sk_handle_profile_name(c->h), m->n, m->skipped);
		c->fetch_failing = false;
	}
	if (old) {
		/* extras of the old table are no longer written: placements point at the new one */
		cr_metrics_unref(old);
	}
	free(err);
}

static void *cr_refresh_main(void *arg)
{
	struct cr *c = arg;
	pthread_mutex_lock(&c->lock);
	while (!c->stopping) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)c->a->refresh_s;
		int rc = 0;
		while (!c->stopping && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&c->wake, &c->lock, &until);
		if (c->stopping)
			break;
		pthread_mutex_unlock(&c->lock);
		cr_refresh(c);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static void cr_free(struct cr *c)
{
	for (int i = 0; i < c->npl; i++)
		free(c->pl[i].uid);
	free(c->pl);
	cr_metrics_unref(c->cur);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* The first read happens here, on the thread that builds the configuration, so the first pods
 * already see metrics (and simulate is deterministic); the thread then refreshes every
 * refreshSeconds until fini. */
static int cr_init(struct sk_plugin *self, const void *args, char **err)
{
	const struct cr_args *a = args;
	struct cr *c = calloc(1, sizeof(*c));
	pthread_condattr_t ca;
	if (!c || !a) {
		free(c);
		*err = strdup(a ? "out of memory" : "ComputeResource: no args (ComputeResourceArgs expected)");
		return -1;
	}
	c->a = a;
	c->h = self->handle;
	c->filter_on = a->threshold[CR_CPU] > 0 || a->threshold[CR_MEM] > 0;
	for (int i = 0; i < CR_NRES; i++)
		c->threshold[i] = a->threshold[i];
	for (int i = 0; i < a->nres; i++) {
		c->weight[a->res_kind[i]] = a->res_weight[i];
		c->weight_sum += a->res_weight[i];
	}
	atomic_init(&c->logged_unmetered, -1);
	atomic_init(&c->logged_generation, 0);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (!(c->cur = cr_metrics_empty())) {
		cr_free(c);
		*err = strdup("out of memory");
		return -1;
	}
	cr_refresh(c);
	int rc = pthread_create(&c->thread, NULL, cr_refresh_main, c);
	if (rc != 0) {
		cr_free(c);
		if (asprintf(err, "ComputeResource: cannot start the metrics refresh thread: %s", strerror(rc)) < 0)
			*err = NULL;
		return -1;
	}
	c->started = true;
	self->priv = c;
	return 0;
}

static void cr_fini(struct sk_plugin *self)
{
	struct cr *c = self->priv;
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	pthread_cond_broadcast(&c->wake);
	pthread_mutex_unlock(&c->lock);
	if (c->started)
		pthread_join(c->thread, NULL); /* the module may be unloaded right after fini */
	cr_free(c);
	self->priv = NULL;
}

/* ---------- cycle state ---------- */

/* At the end of the attempt, the nodes Score found without fresh metrics: one line at V(0) for the
 * first attempt on each table that saw a new count, at V(4) whenever the count changes, so a
 * steady cluster logs nothing per pod. */
static void cr_state_free(void *p)
{
	struct cr_state *st = p;
	if (!st)
		return;
	int n = atomic_load(&st->unmetered);
	uint64_t gen = st->m ? st->m->generation + 1 : 0; /* + 1: 0 is "never logged" */
	if (n > 0 && atomic_exchange(&st->c->logged_unmetered, n) != n) {
		bool first_on_table = atomic_exchange(&st->c->logged_generation, gen) != gen;
		const char *first = atomic_load(&st->first_unmetered);
		sk_log_info(first_on_table ? 0 : 4, "ComputeResource: nodes scored without metrics (by their requests)",
			    " profile=\"%s\" nodes=%d first=\"%s\"", sk_handle_profile_name(st->c->h), n,
			    first ? first : "");
	}
	cr_by_index_unref(st->ix);
	cr_metrics_unref(st->m);
	free(st);
}
static const struct sk_state_ops cr_state_ops = { .free = cr_state_free, .clone = NULL };

static struct cr_state *cr_state_new(struct cr *c, const struct sk_pod *pod)
{
	struct cr_state *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->c = c;
	st->now_ns = sk_handle_now_ns(c->h);
	pod_estimate(c->a, pod, st->est, st->req);
	atomic_init(&st->unmetered, 0);
	atomic_init(&st->first_unmetered, NULL);
	pthread_mutex_lock(&c->lock);
	st->m = cr_metrics_ref(c->cur);
	pthread_mutex_unlock(&c->lock);
	return st;
}

/* The threshold rule of Filter: usage (the sample plus the estimates placed since) / allocatable
 * above threshold / 100, multiplied out in 128 bits (no division). Bit 0 cpu, bit 1 memory. */
static unsigned over_threshold(const struct cr *c, const struct cr_node_metrics *e, const struct sk_node *node)
{
	int64_t used_cpu = sat_add(e->cpu_milli, atomic_load_explicit(&e->extra_cpu, memory_order_relaxed));
	int64_t used_mem = sat_add(e->mem_bytes, atomic_load_explicit(&e->extra_mem, memory_order_relaxed));
	unsigned over = 0;
	if (c->threshold[CR_CPU] > 0 &&
	    (__int128)used_cpu * 100 > (__int128)node->allocatable.milli_cpu * c->threshold[CR_CPU])
		over |= 1u << CR_CPU;
	if (c->threshold[CR_MEM] > 0 &&
	    (__int128)used_mem * 100 > (__int128)node->allocatable.memory * c->threshold[CR_MEM])
		over |= 1u << CR_MEM;
	return over;
}

/* Scheduling thread, under c->lock: (re)numbers the table's entries by the snapshot's node index
 * and (re)marks the nodes above a threshold against the snapshot. */
static void evaluate_table(const struct cr *c, struct cr_metrics *m, const struct sk_snapshot *snap, int64_t now_ns)
{
	m->over_count = 0;
	for (int k = 0; k < m->n; k++)
		m->nodes[k].over = false;
	(void)cr_by_index_build(m, snap); /* out of memory: lookups hash the name */
	for (int i = 0; snap && i < snap->nnodes; i++) {
		const struct sk_node_info *ni = snap->nodes[i];
		struct cr_node_metrics *e = ni->node ? cr_lookup(m->by_index, m, ni, ni->node->name) : NULL;
		if (e && !e->over && fresh(e, now_ns) && over_threshold(c, e, ni->node)) {
			e->over = true;
			m->over_count++;
		}
	}
	m->evaluated = true;
	m->evaluated_nnodes = snap ? snap->nnodes : 0;
	m->evaluated_version = snap ? snap->index_version : 0;
}

/* Scheduling thread: the cycle's table evaluated against the snapshot (again when the snapshot's
 * nodes changed), its index taken into st. Returns how many nodes are above a threshold. */
static int cr_state_evaluate(struct cr *c, struct cr_state *st)
{
	const struct sk_snapshot *snap = sk_handle_snapshot(c->h);
	struct cr_metrics *m = st->m;
	pthread_mutex_lock(&c->lock); /* Reserve marks nodes under it */
	if (!m->evaluated || m->evaluated_nnodes != (snap ? snap->nnodes : 0) ||
	    m->evaluated_version != (snap ? snap->index_version : 0))
		evaluate_table(c, m, snap, st->now_ns);
	if (m->by_index && !st->ix) {
		st->ix = m->by_index;
		atomic_fetch_add_explicit(&st->ix->refs, 1, memory_order_relaxed);
	}
	int over = m->over_count;
	pthread_mutex_unlock(&c->lock);
	return over;
}

/* Takes the cycle's table once. Filter is skipped for the pod when no threshold is set, or when
 * no node was above one at the last evaluation (a node whose usage rose through this scheduler's
 * own placements is marked again by Reserve). */
static struct sk_status cr_pre_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_prefilter_result *result)
{
	(void)result;
	struct cr *c = self->priv;
	struct cr_state *st = cr_state_new(c, pod);
	if (!st)
		return sk_status(SK_ERROR, "out of memory");
	sk_cycle_state_put(cs, self->slot, st, &cr_state_ops);
	int over = cr_state_evaluate(c, st);
	return c->filter_on && over ? sk_ok() : sk_status(SK_SKIP, NULL);
}

/* Parallel; reads the cycle's table and the node. Usage is the sample plus the estimates of pods
 * placed here since it was taken. Evicting pods would not lower a measured usage the scheduler
 * can see, so the rejection is UnschedulableAndUnresolvable (no preemption). */
static struct sk_status cr_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni)
{
	(void)pod;
	const struct cr *c = self->priv;
	const struct cr_state *st = sk_cycle_state_get(cs, self->slot);
	if (!st)
		return sk_status(SK_ERROR, "reading \"PreFilterComputeResource\" from cycleState: not found");
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	struct cr_node_metrics *e = cr_lookup(st->ix, st->m, ni, ni->node->name);
	if (!fresh(e, st->now_ns))
		return sk_ok(); /* no fresh sample: never filtered */
	unsigned over = over_threshold(c, e, ni->node);
	if (!over)
		return sk_ok();
	struct sk_status s = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, over & 1u ? CR_REASON_CPU : CR_REASON_MEM);
	if (over == 3u)
		sk_status_add(&s, CR_REASON_MEM);
	return s;
}

/* Score needs the cycle's table: taken here when ComputeResource is not enabled at PreFilter. */
static struct sk_status cr_pre_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     const struct sk_node_info *const *nodes, int nnodes)
{
	(void)nodes;
	(void)nnodes;
	if (sk_cycle_state_get(cs, self->slot))
		return sk_ok();
	struct cr *c = self->priv;
	struct cr_state *st = cr_state_new(c, pod);
	if (!st)
		return sk_status(SK_ERROR, "out of memory");
	sk_cycle_state_put(cs, self->slot, st, &cr_state_ops);
	(void)cr_state_evaluate(c, st); /* for the index by node */
	return sk_ok();
}

/* cold: most nodes have a fresh sample, and keeping this out of cr_node_score keeps its registers */
static __attribute__((noinline, cold)) void note_unmetered(struct cr_state *st, const char *name)
{
	atomic_fetch_add_explicit(&st->unmetered, 1, memory_order_relaxed);
	const char *cur = atomic_load(&st->first_unmetered);
	while ((!cur || strcmp(name, cur) < 0) && !atomic_compare_exchange_weak(&st->first_unmetered, &cur, name))
		;
}

/* (alloc - used) * 100 / alloc, 0 when nothing is free. 64 bits unless a node has above 92 PB. */
static inline int64_t free_percent(int64_t alloc, int64_t used)
{
	if (alloc <= 0 || used > alloc)
		return 0;
	if (alloc <= INT64_MAX / SK_MAX_NODE_SCORE)
		return (alloc - used) * SK_MAX_NODE_SCORE / alloc;
	return (int64_t)((__int128)(alloc - used) * SK_MAX_NODE_SCORE / alloc);
}

/* Per resource: (allocatable - used) * 100 / allocatable, 0 when used exceeds it, where used is
 * the fresh sample + the estimates placed since + this pod's estimate; without a fresh sample, the
 * node's non-zero requests + the pod's (NodeResourcesFit's LeastAllocated). The node's score is the
 * weighted mean (integer division, as NodeResourcesFit). */
/* What Score reads for every node, copied out of the instance and the CycleState once per call
 * so that the per-node loop keeps it in registers (the atomic loads of the extras would otherwise
 * make the compiler read it again for each node). */
struct cr_score_ctx {
	struct cr_state *st;
	const struct cr_metrics *m; /* NULL when it holds no node */
	const struct cr_by_index *ix;
	int64_t now_ns, est_cpu, est_mem, req_cpu, req_mem, w_cpu, w_mem, w_sum;
};

static inline struct cr_score_ctx cr_score_ctx(const struct cr *c, struct cr_state *st)
{
	return (struct cr_score_ctx){ .st = st, .m = st->m && st->m->n > 0 ? st->m : NULL, .ix = st->ix,
				      .now_ns = st->now_ns, .est_cpu = st->est[CR_CPU],
				      .est_mem = st->est[CR_MEM], .req_cpu = st->req[CR_CPU], .req_mem = st->req[CR_MEM],
				      .w_cpu = c->weight[CR_CPU], .w_mem = c->weight[CR_MEM], .w_sum = c->weight_sum };
}

/* The node's entry (or NULL), through the index by node when the node info has one. */
static inline __attribute__((always_inline)) const struct cr_node_metrics *cr_score_entry(const struct cr_score_ctx *k,
											 const struct sk_node_info *ni,
											 const struct sk_node *n)
{
	return k->m ? cr_lookup(k->ix, k->m, ni, n->name) : NULL;
}

/* always_inline: the batch loop calls it for every scored node; e is cr_score_entry's */
static inline __attribute__((always_inline)) int64_t cr_node_score(const struct cr_score_ctx *k,
								   const struct sk_node_info *ni, const struct sk_node *n,
								   const struct cr_node_metrics *e)
{
	int64_t used_cpu, used_mem;
	if (__builtin_expect(fresh(e, k->now_ns), 1)) {
		used_cpu = sat_add(sat_add(e->cpu_milli, atomic_load_explicit(&e->extra_cpu, memory_order_relaxed)),
				   k->est_cpu);
		used_mem = sat_add(sat_add(e->mem_bytes, atomic_load_explicit(&e->extra_mem, memory_order_relaxed)),
				   k->est_mem);
	} else {
		note_unmetered(k->st, n->name);
		used_cpu = sat_add(ni->non_zero_milli_cpu, k->req_cpu);
		used_mem = sat_add(ni->non_zero_memory, k->req_mem);
	}
	int64_t sum = k->w_cpu * free_percent(n->allocatable.milli_cpu, used_cpu) +
		      k->w_mem * free_percent(n->allocatable.memory, used_mem);
	/* sum >= 0; the default weights (1 and 1) divide by 2 without a division instruction */
	return k->w_sum == 2 ? sum >> 1 : k->w_sum ? sum / k->w_sum : 0;
}

#define CR_NO_STATE "reading \"PreScoreComputeResource\" from cycleState: not found"

/* Parallel: one node (simulate, tests, and a scheduler of ABI 1.0, which has no score_batch). */
static struct sk_status cr_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				 const struct sk_node_info *ni, int64_t *score)
{
	(void)pod;
	struct cr_state *st = sk_cycle_state_get(cs, self->slot);
	if (!st)
		return sk_status(SK_ERROR, CR_NO_STATE);
	if (!ni->node)
		return sk_status(SK_ERROR, "node not found");
	struct cr_score_ctx k = cr_score_ctx(self->priv, st);
	*score = cr_node_score(&k, ni, ni->node, cr_score_entry(&k, ni, ni->node));
	return sk_ok();
}

/* Nodes per block of cr_score_batch: the entries of a block are looked up (and fetched) before
 * any is scored. */
#define CR_BLOCK 32

/* Parallel: a worker's chunk of nodes in one call (ABI 1.1, docs/plugins.md "Batch scoring"):
 * the CycleState is read once instead of once per node. In blocks: first every node's entry is
 * found through the index by node (the node info's index and one element of an array) and its
 * line requested from memory (the node's own lines were read by Filter in this cycle); then the
 * nodes are scored. The loads of a block are independent, so their cache misses overlap instead
 * of coming one per node. */
static struct sk_status cr_score_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       const struct sk_node_info *const *nodes, int n, int64_t *scores, int *failed)
{
	(void)pod;
	const struct cr *c = self->priv;
	struct cr_state *st = sk_cycle_state_get(cs, self->slot);
	if (!st) {
		*failed = 0;
		return sk_status(SK_ERROR, CR_NO_STATE);
	}
	const struct cr_score_ctx k = cr_score_ctx(c, st);
	const struct cr_node_metrics *es[CR_BLOCK];
	for (int b = 0; b < n; b += CR_BLOCK) {
		int len = n - b < CR_BLOCK ? n - b : CR_BLOCK;
		for (int j = 0; j < len; j++) {
			const struct sk_node *node = nodes[b + j]->node;
			if (!node) {
				*failed = b + j;
				return sk_status(SK_ERROR, "node not found");
			}
			es[j] = cr_score_entry(&k, nodes[b + j], node);
			__builtin_prefetch(es[j]);
		}
		for (int j = 0; j < len; j++)
			scores[b + j] = cr_node_score(&k, nodes[b + j], nodes[b + j]->node, es[j]);
	}
	return sk_ok();
}

/* Records the pod's estimate on its node until a sample taken after now measures the pod. */
static struct sk_status cr_reserve(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const char *node_name)
{
	(void)cs;
	struct cr *c = self->priv;
	int64_t est[CR_NRES], req[CR_NRES];
	pod_estimate(c->a, pod, est, req);
	int64_t now = sk_handle_now_ns(c->h), wall = sk_handle_wall_now_ns(c->h);
	struct sk_status s = sk_ok();
	pthread_mutex_lock(&c->lock);
	if (c->cur->n == 0)
		goto out; /* no metrics at all: every node is scored by requests, which hold the pod */
	if (c->npl == c->cappl) {
		int cap = c->cappl ? c->cappl * 2 : 64;
		struct cr_placement *np = realloc(c->pl, (size_t)cap * sizeof(*np));
		if (!np) {
			s = sk_status(SK_ERROR, "out of memory");
			goto out;
		}
		c->pl = np;
		c->cappl = cap;
	}
	struct cr_placement *p = &c->pl[c->npl];
	*p = (struct cr_placement){ .uid = strdup(pod->uid ? pod->uid : ""), .node = sk_intern(node_name),
				    .cpu = est[CR_CPU], .mem = est[CR_MEM], .wall_ns = wall };
	if (!p->uid || !p->node) {
		free(p->uid);
		s = sk_status(SK_ERROR, "out of memory");
		goto out;
	}
	struct cr_node_metrics *e = cr_metrics_find(c->cur, p->node);
	if (placement_counts(p, e, now)) {
		count_in(p, c->cur, e);
		/* the node may have crossed a threshold with this pod: PreFilter must not skip Filter */
		const struct sk_node_info *ni = c->cur->evaluated ? sk_snapshot_get(sk_handle_snapshot(c->h), p->node) : NULL;
		if (ni && ni->node && !e->over && over_threshold(c, e, ni->node)) {
			e->over = true;
			c->cur->over_count++;
		}
	}
	c->npl++;
out:
	pthread_mutex_unlock(&c->lock);
	return s;
}

/* Idempotent: a pod never reserved (or already released) is not found. */
static void cr_unreserve(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			 const char *node_name)
{
	(void)cs;
	struct cr *c = self->priv;
	pthread_mutex_lock(&c->lock);
	for (int i = c->npl - 1; i >= 0; i--) {
		struct cr_placement *p = &c->pl[i];
		if (strcmp(p->uid, pod->uid ? pod->uid : "") || strcmp(p->node, node_name))
			continue;
		if (p->counted_in == c->cur && p->entry) {
			atomic_fetch_sub_explicit(&p->entry->extra_cpu, p->cpu, memory_order_relaxed);
			atomic_fetch_sub_explicit(&p->entry->extra_mem, p->mem, memory_order_relaxed);
		}
		free(p->uid);
		c->pl[i] = c->pl[--c->npl];
		break;
	}
	pthread_mutex_unlock(&c->lock);
}

/* Only a threshold rejects; load falls when pods leave a node and capacity comes with new or
 * resized nodes. A metrics refresh is not a cluster event: rejected pods otherwise wait for the
 * periodic flush of the unschedulable queue. */
static int cr_events(struct sk_plugin *self, struct sk_event_registration *out, int max)
{
	(void)self;
	if (max < 2)
		return 0;
	out[0] = (struct sk_event_registration){ .event = { SK_EV_ASSIGNED_POD, SK_ACT_DELETE, "AssignedPodDelete" } };
	out[1] = (struct sk_event_registration){
		.event = { SK_EV_NODE, SK_ACT_ADD | SK_ACT_UPDATE_NODE_ALLOCATABLE, "NodeAdd|UpdateNodeAllocatable" }
	};
	return 2;
}

static const struct sk_plugin_desc cr_plugin = {
	SK_PLUGIN_HEADER,
	.name = CR_NAME,
	.args_kind = CR_ARGS_KIND,
	.args_decode = cr_args_decode,
	.args_encode = cr_args_encode,
	.args_free = cr_args_free,
	.init = cr_init,
	.fini = cr_fini,
	.pre_filter = cr_pre_filter,
	.filter = cr_filter,
	.pre_score = cr_pre_score,
	.score = cr_score,
	.score_batch = cr_score_batch,
	.reserve = cr_reserve,
	.unreserve = cr_unreserve,
	.events_to_register = cr_events,
};

SK_MODULE("computeresource", &cr_plugin);
