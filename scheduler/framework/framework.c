/* The framework runtime (runtime.h): builds a profile into plugin instances and flat per-point
 * arrays and runs every extension point with upstream's semantics and status handling; CycleState
 * is in cycle_state.c, the plugin handle in handle.c, the shared structs in fw_internal.h. A framework is immutable after sk_framework_new
 * except for its refcount and its waiting-pods map (own lock), so every run function may be
 * called from any thread. */
#include "scheduler/framework/runtime.h"
#include "kube/util.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scheduler/framework/extender.h"
#include "scheduler/framework/fw_internal.h"
#include "scheduler/framework/loader.h"
#include "scheduler/framework/record.h"

#define MAX_REGISTRATIONS 64

/* ---------- small helpers ---------- */

int64_t sk_framework_now_ns(const struct sk_framework *fw)
{
	return fw->env.now_ns ? fw->env.now_ns(fw->env.ctx) : kube_mono_ns();
}

/* Timed for the metrics hook and for a decision record being made on this thread (record.h). */
static int64_t point_begin(const struct sk_framework *fw)
{
	return fw->env.observe || sk_rec_active() ? kube_mono_ns() : 0;
}

static void point_end(const struct sk_framework *fw, const char *point, enum sk_code code, int64_t t0)
{
	if (!t0)
		return;
	double dt = (double)(kube_mono_ns() - t0) / 1e9;
	if (fw->env.observe)
		fw->env.observe(fw->env.ctx, fw->name, point, NULL, code, dt);
	sk_rec_time(point, dt);
}

static int64_t plugin_begin(const struct sk_framework *fw, const struct sk_cycle_state *cs)
{
	return cs && cs->record_plugin_metrics && fw->env.observe ? kube_mono_ns() : 0;
}

static void plugin_end(const struct sk_framework *fw, const char *point, const struct sk_plugin *pl,
		       enum sk_code code, int64_t t0)
{
	if (t0)
		fw->env.observe(fw->env.ctx, fw->name, point, pl->desc->name, code, (double)(kube_mono_ns() - t0) / 1e9);
}

/* scheduler_plugin_evaluation_total (env.evaluated). */
static void evaluated(const struct sk_framework *fw, const char *point, const struct sk_plugin *pl, double n)
{
	if (fw->env.evaluated && n > 0)
		fw->env.evaluated(fw->env.ctx, fw->name, point, pl->desc->name, n);
}

/* Filter evaluations of the chunk this thread runs (sk_fw_filter_chunk_begin/end), by instance
 * slot: a plain increment per plugin per node, reported once per chunk. */
#define EVAL_SLOTS 64
static _Thread_local struct {
	const struct sk_framework *fw; /* non-NULL between begin and end */
	uint32_t n[EVAL_SLOTS];
} tls_eval;

void sk_fw_filter_chunk_begin(const struct sk_framework *fw)
{
	if (fw->env.working)
		fw->env.working(fw->env.ctx, "Filter", 1);
	if (fw->env.evaluated)
		tls_eval.fw = fw;
}

void sk_fw_filter_chunk_end(const struct sk_framework *fw)
{
	if (fw->env.working)
		fw->env.working(fw->env.ctx, "Filter", -1);
	if (tls_eval.fw != fw)
		return;
	tls_eval.fw = NULL;
	int n = fw->nplugins < EVAL_SLOTS ? fw->nplugins : EVAL_SLOTS;
	for (int slot = 0; slot < n; slot++)
		if (tls_eval.n[slot]) {
			evaluated(fw, "Filter", &fw->inst[slot], tls_eval.n[slot]);
			tls_eval.n[slot] = 0;
		}
}

static inline void filter_evaluated(const struct sk_framework *fw, const struct sk_plugin *pl)
{
	if (tls_eval.fw == fw && pl->slot < EVAL_SLOTS)
		tls_eval.n[pl->slot]++;
	else
		evaluated(fw, "Filter", pl, 1);
}

/* Per-node extension points (Filter, Score) run every plugin on hundreds of nodes per cycle; two
 * clock reads and one histogram observation per plugin per node cost as much as the plugins
 * themselves. In a cycle sampled for plugin metrics (10% of cycles, as upstream), they therefore
 * time only every NODE_SAMPLE_EVERY-th node a thread evaluates in that cycle (the first one
 * included): scheduler_plugin_execution_duration_seconds keeps the per-call distribution of
 * those points, with 1/NODE_SAMPLE_EVERY of the observations. Other points time every call. */
#define NODE_SAMPLE_EVERY 16u

struct node_sample_tick {
	const struct sk_cycle_state *cs;
	unsigned tick;
};
static _Thread_local struct node_sample_tick tls_filter_tick;

/* True when this thread's current Filter call in cs is one to time. */
static bool filter_node_sampled(const struct sk_cycle_state *cs)
{
	if (tls_filter_tick.cs != cs) {
		tls_filter_tick.cs = cs;
		tls_filter_tick.tick = 0;
	}
	return tls_filter_tick.tick++ % NODE_SAMPLE_EVERY == 0;
}

/* Error status "<prefix><message of s>" (prefix printf-formatted); s is reset. */
static struct sk_status wrapf(struct sk_status *s, const char *plugin, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static struct sk_status wrapf(struct sk_status *s, const char *plugin, const char *fmt, ...)
{
	char *prefix = NULL, *msg = sk_status_message(s);
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&prefix, fmt, ap) < 0)
		prefix = NULL;
	va_end(ap);
	struct sk_status out = sk_statusf(SK_ERROR, "%s%s", prefix ? prefix : "", msg ? msg : "");
	out.plugin = plugin;
	free(prefix);
	free(msg);
	sk_status_reset(s);
	return out;
}

int sk_prefilter_result_add(struct sk_prefilter_result *r, const char *node_name)
{
	if (r->n == r->cap) {
		int cap = r->cap ? r->cap * 2 : 8;
		const char **names = realloc(r->names, (size_t)cap * sizeof(*names));
		if (!names)
			return -1;
		r->names = names;
		r->cap = cap;
	}
	r->names[r->n++] = sk_intern(node_name);
	r->all = false;
	return 0;
}

/* ---------- build ---------- */

static const char *const iface_names[SK_EP_COUNT] = {
	"PreEnqueuePlugin", "QueueSortPlugin", "PreFilterPlugin", "FilterPlugin",
	"PostFilterPlugin", "PreScorePlugin", "ScorePlugin",     "ReservePlugin",
	"PermitPlugin",     "PreBindPlugin",  "BindPlugin",      "PostBindPlugin",
};

static void framework_free(struct sk_framework *fw)
{
	for (int i = fw->nplugins - 1; i >= 0; i--) {
		struct sk_plugin *pl = &fw->inst[i];
		if (fw->inited && fw->inited[i] && pl->desc->fini)
			pl->desc->fini(pl);
		if (fw->owned_args && fw->owned_args[i] && pl->desc->args_free)
			pl->desc->args_free(fw->owned_args[i]);
		if (fw->events)
			free(fw->events[i].regs);
	}
	for (int ep = 0; ep < SK_EP_COUNT; ep++)
		free(fw->pts[ep]);
	for (int i = 0; i < fw->nmodules; i++)
		sk_module_unref(fw->modules[i]);
	free(fw->modules);
	sk_waiting_free(fw->waiting);
	sk_extenders_free(fw->extenders, fw->nextenders);
	free(fw->weights);
	free(fw->events);
	free(fw->inited);
	free(fw->owned_args);
	free(fw->inst);
	free(fw);
}

static int instance_index(struct sk_framework *fw, const struct sk_plugin_desc *d)
{
	for (int i = 0; i < fw->nplugins; i++)
		if (fw->inst[i].desc == d || strcmp(fw->inst[i].desc->name, d->name) == 0)
			return i;
	return -1;
}

static int build_instances(struct sk_framework *fw, const struct sk_profile_config *p, char **err)
{
	int total = 0;
	for (int ep = 0; ep < SK_EP_COUNT; ep++)
		total += p->points[ep].n;
	fw->inst = calloc((size_t)(total ? total : 1), sizeof(*fw->inst));
	fw->owned_args = calloc((size_t)(total ? total : 1), sizeof(void *));
	fw->inited = calloc((size_t)(total ? total : 1), sizeof(bool));
	fw->events = calloc((size_t)(total ? total : 1), sizeof(*fw->events));
	if (!fw->inst || !fw->owned_args || !fw->inited || !fw->events)
		return kube_errf(err, "profile %s: out of memory", fw->name);
	for (int ep = 0; ep < SK_EP_COUNT; ep++) {
		for (int i = 0; i < p->points[ep].n; i++) {
			const struct sk_plugin_desc *d = p->points[ep].items[i].desc;
			if (!d)
				return kube_errf(err, "profile %s: %s plugin %d has no descriptor", fw->name,
					    sk_ext_point_field((enum sk_ext_point)ep), i);
			if (instance_index(fw, d) >= 0)
				continue;
			struct sk_plugin *pl = &fw->inst[fw->nplugins];
			pl->desc = d;
			pl->slot = fw->nplugins;
			pl->handle = &fw->handle;
			fw->nplugins++;
		}
	}
	return 0;
}

/* One reference per distinct module among the instances' descriptors (before any init runs). */
static int hold_modules(struct sk_framework *fw, char **err)
{
	const struct sk_module_set *set = fw->cfg ? fw->cfg->modules : NULL;
	if (!set)
		return 0;
	fw->modules = calloc((size_t)(fw->nplugins ? fw->nplugins : 1), sizeof(*fw->modules));
	if (!fw->modules)
		return kube_errf(err, "profile %s: out of memory", fw->name);
	for (int i = 0; i < fw->nplugins; i++) {
		struct sk_loaded_module *m = sk_module_set_module_of(set, fw->inst[i].desc);
		bool held = !m;
		for (int k = 0; k < fw->nmodules && !held; k++)
			held = fw->modules[k] == m;
		if (!held)
			fw->modules[fw->nmodules++] = sk_module_ref(m);
	}
	return 0;
}

static int init_instances(struct sk_framework *fw, const struct sk_profile_config *p, char **err)
{
	for (int i = 0; i < fw->nplugins; i++) {
		struct sk_plugin *pl = &fw->inst[i];
		const struct sk_plugin_desc *d = pl->desc;
		char abi_msg[512];
		if (sk_desc_check_abi(d, abi_msg, sizeof(abi_msg)) != 0)
			return kube_errf(err, "profile %s: %s", fw->name, abi_msg);
		const void *args = sk_profile_args(p, d->name);
		if (!args && d->args_kind && d->args_decode) {
			struct sk_errors errs = { 0 };
			void *a = NULL;
			char path[256];
			snprintf(path, sizeof(path), "profiles[%s].pluginConfig[%s].args", fw->name, d->name);
			if (d->args_decode(NULL, &a, &errs, path) != 0) {
				char *msg = sk_errors_join(&errs, "; ");
				kube_errf(err, "profile %s: plugin \"%s\": default args: %s", fw->name, d->name,
				     msg ? msg : "invalid");
				free(msg);
				sk_errors_free(&errs);
				if (a && d->args_free)
					d->args_free(a);
				return -1;
			}
			sk_errors_free(&errs);
			fw->owned_args[i] = a;
			args = a;
		}
		if (d->init) {
			char *perr = NULL;
			if (d->init(pl, args, &perr) != 0) {
				kube_errf(err, "profile %s: initializing plugin \"%s\": %s", fw->name, d->name,
				     perr ? perr : "failed");
				free(perr);
				return -1;
			}
		}
		fw->inited[i] = true;
		struct plugin_events *ev = &fw->events[i];
		if (d->events_to_register) {
			struct sk_event_registration buf[MAX_REGISTRATIONS];
			int n = d->events_to_register(pl, buf, MAX_REGISTRATIONS);
			if (n < 0)
				n = 0;
			if (n > MAX_REGISTRATIONS)
				n = MAX_REGISTRATIONS;
			if (n) {
				ev->regs = malloc((size_t)n * sizeof(*ev->regs));
				if (!ev->regs)
					return kube_errf(err, "profile %s: out of memory", fw->name);
				memcpy(ev->regs, buf, (size_t)n * sizeof(*buf));
				ev->n = n;
			}
		} else {
			/* No EnqueueExtensions: interested in every event (upstream). */
			ev->regs = calloc(1, sizeof(*ev->regs));
			if (!ev->regs)
				return kube_errf(err, "profile %s: out of memory", fw->name);
			ev->regs[0].event.resource = SK_EV_WILDCARD;
			ev->regs[0].event.action = SK_ACT_ALL;
			ev->regs[0].event.label = "WildCardEvent";
			ev->n = 1;
		}
	}
	return 0;
}

static int build_points(struct sk_framework *fw, const struct sk_profile_config *p, char **err)
{
	for (int ep = 0; ep < SK_EP_COUNT; ep++) {
		const struct sk_plugin_list *l = &p->points[ep];
		if (!l->n)
			continue;
		fw->pts[ep] = calloc((size_t)l->n, sizeof(struct sk_plugin *));
		if (!fw->pts[ep])
			return kube_errf(err, "profile %s: out of memory", fw->name);
		if (ep == SK_EP_SCORE) {
			fw->weights = calloc((size_t)l->n, sizeof(int32_t));
			if (!fw->weights)
				return kube_errf(err, "profile %s: out of memory", fw->name);
		}
		for (int i = 0; i < l->n; i++) {
			const struct sk_plugin_desc *d = l->items[i].desc;
			if (!sk_desc_implements(d, (enum sk_ext_point)ep))
				return kube_errf(err, "profile %s: plugin \"%s\" does not extend %s plugin", fw->name, d->name,
					    iface_names[ep]);
			for (int k = 0; k < fw->n[ep]; k++)
				if (strcmp(fw->pts[ep][k]->desc->name, d->name) == 0)
					return kube_errf(err, "profile %s: plugin \"%s\" already registered as \"%s\"",
						    fw->name, d->name, iface_names[ep]);
			fw->pts[ep][fw->n[ep]] = &fw->inst[instance_index(fw, d)];
			if (ep == SK_EP_SCORE)
				fw->weights[i] = l->items[i].weight != 0 ? l->items[i].weight : 1; /* negative: as given */
			fw->n[ep]++;
		}
	}
	/* The total-score overflow check is the loader's (score_weights in scheduler/config/config.c):
	 * it must walk upstream's order (score list, then multiPoint), which a negative weight makes
	 * significant; the score point's order here may differ. */
	if (fw->n[SK_EP_QUEUE_SORT] != 1)
		return kube_errf(err, "only one queue sort plugin required for profile with scheduler name \"%s\", but got %d",
			    fw->name, fw->n[SK_EP_QUEUE_SORT]);
	if (fw->n[SK_EP_BIND] == 0)
		return kube_errf(err, "at least one bind plugin is needed for profile with scheduler name \"%s\"", fw->name);
	return 0;
}

struct sk_framework *sk_framework_new(const struct sk_config *cfg, const struct sk_profile_config *profile,
				      const struct sk_framework_env *env, char **err)
{
	if (err)
		*err = NULL;
	struct sk_framework *fw = calloc(1, sizeof(*fw));
	if (!fw) {
		kube_errf(err, "framework: out of memory");
		return NULL;
	}
	atomic_init(&fw->refs, 1);
	fw->cfg = cfg;
	fw->profile = profile;
	if (env)
		fw->env = *env;
	fw->handle.fw = fw;
	fw->name = profile->scheduler_name ? profile->scheduler_name : "";
	fw->waiting = sk_waiting_new();
	if (!fw->waiting) {
		kube_errf(err, "framework: out of memory");
		free(fw);
		return NULL;
	}
	/* Points first: "does not extend" and duplicate errors come before any plugin is initialized. */
	if (build_instances(fw, profile, err) != 0 || build_points(fw, profile, err) != 0 ||
	    hold_modules(fw, err) != 0 || init_instances(fw, profile, err) != 0) {
		framework_free(fw);
		return NULL;
	}
	char *eerr = NULL;
	int ne = sk_extenders_build(cfg ? cfg->extenders : NULL, profile->extenders, &fw->extenders, &eerr);
	if (ne < 0) {
		kube_errf(err, "profile %s: %s", fw->name, eerr ? eerr : "building extenders failed");
		free(eerr);
		framework_free(fw);
		return NULL;
	}
	fw->nextenders = ne;
	return fw;
}

struct sk_framework *sk_framework_ref(struct sk_framework *fw)
{
	if (fw)
		atomic_fetch_add(&fw->refs, 1);
	return fw;
}

bool sk_framework_unref(struct sk_framework *fw)
{
	if (!fw || atomic_fetch_sub(&fw->refs, 1) != 1)
		return false;
	framework_free(fw);
	return true;
}

const char *sk_framework_profile_name(const struct sk_framework *fw) { return fw->name; }
const struct sk_profile_config *sk_framework_profile(const struct sk_framework *fw) { return fw->profile; }
const struct sk_config *sk_framework_config(const struct sk_framework *fw) { return fw->cfg; }
const struct sk_framework_env *sk_framework_env(const struct sk_framework *fw) { return &fw->env; }
struct sk_handle *sk_framework_handle(struct sk_framework *fw) { return &fw->handle; }
struct sk_framework *sk_handle_framework(struct sk_handle *h) { return h->fw; }
struct sk_waiting_pods *sk_framework_waiting_pods(struct sk_framework *fw) { return fw->waiting; }
int sk_framework_nplugins(const struct sk_framework *fw) { return fw->nplugins; }
struct sk_plugin *sk_framework_instance(struct sk_framework *fw, int slot)
{
	return slot >= 0 && slot < fw->nplugins ? &fw->inst[slot] : NULL;
}
int sk_framework_point_len(const struct sk_framework *fw, enum sk_ext_point ep) { return fw->n[ep]; }
struct sk_plugin *sk_framework_point_plugin(const struct sk_framework *fw, enum sk_ext_point ep, int i)
{
	return i >= 0 && i < fw->n[ep] ? fw->pts[ep][i] : NULL;
}
int32_t sk_framework_score_weight(const struct sk_framework *fw, int i) { return fw->weights[i]; }
bool sk_framework_has(const struct sk_framework *fw, enum sk_ext_point ep) { return fw->n[ep] > 0; }
int sk_framework_nextenders(const struct sk_framework *fw) { return fw->nextenders; }
struct sk_extender *sk_framework_extender(const struct sk_framework *fw, int i)
{
	return i >= 0 && i < fw->nextenders ? fw->extenders[i] : NULL;
}

/* ---------- PreEnqueue, QueueSort ---------- */

struct sk_status sk_fw_run_pre_enqueue(struct sk_framework *fw, const struct sk_pod *pod)
{
	if (fw->n[SK_EP_PRE_ENQUEUE] == 0)
		return sk_ok();
	int64_t t0 = point_begin(fw);
	struct sk_status ret = sk_ok();
	for (int i = 0; i < fw->n[SK_EP_PRE_ENQUEUE]; i++) {
		struct sk_plugin *pl = fw->pts[SK_EP_PRE_ENQUEUE][i];
		struct sk_status s = pl->desc->pre_enqueue(pl, pod);
		if (s.code != SK_SUCCESS) {
			if (!sk_is_rejected(&s)) {
				ret = wrapf(&s, pl->desc->name, "running PreEnqueue plugin \"%s\": ", pl->desc->name);
			} else {
				s.plugin = pl->desc->name;
				ret = s;
			}
			break;
		}
	}
	point_end(fw, "PreEnqueue", ret.code, t0);
	return ret;
}

bool sk_fw_less(struct sk_framework *fw, const struct sk_queued_pod *a, const struct sk_queued_pod *b)
{
	struct sk_plugin *pl = fw->pts[SK_EP_QUEUE_SORT][0];
	return pl->desc->less(pl, a, b);
}

/* ---------- PreFilter ---------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts and deduplicates r->names. */
static void result_normalize(struct sk_prefilter_result *r)
{
	if (r->n < 2)
		return;
	qsort(r->names, (size_t)r->n, sizeof(*r->names), cmp_str);
	int k = 1;
	for (int i = 1; i < r->n; i++)
		if (strcmp(r->names[i], r->names[k - 1]) != 0)
			r->names[k++] = r->names[i];
	r->n = k;
}

/* acc = acc ∩ r (both normalized); r is consumed. */
static void result_merge(struct sk_prefilter_result *acc, struct sk_prefilter_result *r)
{
	if (r->all) {
		free(r->names);
		return;
	}
	if (acc->all) {
		free(acc->names);
		*acc = *r;
		return;
	}
	int i = 0, j = 0, k = 0;
	while (i < acc->n && j < r->n) {
		int c = strcmp(acc->names[i], r->names[j]);
		if (c == 0) {
			acc->names[k++] = acc->names[i];
			i++;
			j++;
		} else if (c < 0) {
			i++;
		} else {
			j++;
		}
	}
	acc->n = k;
	free(r->names);
}

/* plugins: sorted (upstream formats sets.List of the names). */
static struct sk_status didnt_satisfy(const char *const *plugins, int n)
{
	if (n == 1)
		return sk_statusf(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin %s", plugins[0]);
	size_t len = 3;
	for (int i = 0; i < n; i++)
		len += strlen(plugins[i]) + 1;
	char *buf = malloc(len), *p = buf;
	if (!buf)
		return sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) simultaneously");
	*p++ = '[';
	for (int i = 0; i < n; i++) {
		if (i)
			*p++ = ' ';
		size_t l = strlen(plugins[i]);
		memcpy(p, plugins[i], l);
		p += l;
	}
	*p++ = ']';
	*p = '\0';
	struct sk_status s =
		sk_statusf(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) %s simultaneously", buf);
	free(buf);
	return s;
}

struct sk_status sk_fw_run_pre_filter(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				      struct sk_prefilter_result *result, const char **narrowing, int max,
				      int *nnarrowing)
{
	int64_t t0 = point_begin(fw);
	struct sk_status ret = sk_ok();
	const char *with_nodes[64];
	int nwith = 0;
	memset(result, 0, sizeof(*result));
	result->all = true;
	for (int i = 0; i < fw->n[SK_EP_PRE_FILTER]; i++) {
		struct sk_plugin *pl = fw->pts[SK_EP_PRE_FILTER][i];
		struct sk_prefilter_result r = { .all = true };
		int64_t pt = plugin_begin(fw, cs);
		struct sk_status s = pl->desc->pre_filter(pl, cs, pod, &r);
		plugin_end(fw, "PreFilter", pl, s.code, pt);
		evaluated(fw, "PreFilter", pl, 1);
		if (s.code == SK_SKIP) {
			cs->skip[pl->slot] |= SKIP_FILTER;
			sk_status_reset(&s);
			free(r.names);
			continue;
		}
		if (s.code != SK_SUCCESS) {
			free(r.names);
			s.plugin = pl->desc->name;
			if (s.code == SK_UNSCHEDULABLE_AND_UNRESOLVABLE) {
				sk_status_reset(&ret);
				ret = s;
				goto out;
			}
			if (s.code == SK_UNSCHEDULABLE) {
				sk_status_reset(&ret);
				ret = s;
				continue;
			}
			sk_status_reset(&ret);
			ret = wrapf(&s, pl->desc->name, "running PreFilter plugin \"%s\": ", pl->desc->name);
			goto out;
		}
		if (!r.all) {
			if (nwith < (int)(sizeof(with_nodes) / sizeof(with_nodes[0])))
				with_nodes[nwith++] = pl->desc->name;
			result_normalize(&r);
		}
		result_merge(result, &r);
		if (!result->all && result->n == 0) {
			const char *sorted[64];
			memcpy(sorted, with_nodes, (size_t)nwith * sizeof(*sorted));
			qsort(sorted, (size_t)nwith, sizeof(*sorted), cmp_str);
			sk_status_reset(&ret);
			ret = didnt_satisfy(sorted, nwith);
			goto out;
		}
	}
out:
	cs->nfilters = -1;
	cs->filters_batched = false;
	if (!cs->filters && fw->n[SK_EP_FILTER] > 0)
		cs->filters = malloc((size_t)fw->n[SK_EP_FILTER] * sizeof(*cs->filters));
	if (cs->filters) {
		int k = 0;
		for (int i = 0; i < fw->n[SK_EP_FILTER]; i++)
			if (!(cs->skip[fw->pts[SK_EP_FILTER][i]->slot] & SKIP_FILTER)) {
				cs->filters[k++] = fw->pts[SK_EP_FILTER][i];
				cs->filters_batched |= fw->pts[SK_EP_FILTER][i]->desc->filter_batch != NULL;
			}
		cs->nfilters = k;
	}
	cs->nexts = -1;
	if (cs->exts) { /* the AddPod/RemovePod extensions of the plugins not skipped, for run_add_remove */
		int k = 0;
		for (int i = 0; i < fw->n[SK_EP_PRE_FILTER]; i++) {
			struct sk_plugin *pl = fw->pts[SK_EP_PRE_FILTER][i];
			bool ext = pl->desc->pre_filter_add_pod || pl->desc->pre_filter_remove_pod;
			if (ext && !(cs->skip[pl->slot] & SKIP_FILTER))
				cs->exts[k++] = pl;
		}
		cs->nexts = k;
	}
	if (nnarrowing) {
		int k = nwith < max ? nwith : max;
		for (int i = 0; i < k; i++)
			narrowing[i] = with_nodes[i];
		*nnarrowing = k;
	}
	point_end(fw, "PreFilter", ret.code, t0);
	return ret;
}

static __attribute__((noinline)) struct sk_status run_add_remove(struct sk_framework *fw, struct sk_cycle_state *cs,
								  const struct sk_pod *pod, const struct sk_pod *other,
								  const struct sk_node_info *ni, bool add)
{
	/* upstream's RunPreFilterExtensionAddPod/RemovePod: the plugins with the extension, those
	 * skipped at PreFilter left out; PreFilter's list of them when it was built */
	struct sk_plugin *const *pts = cs->nexts >= 0 ? cs->exts : fw->pts[SK_EP_PRE_FILTER];
	int n = cs->nexts >= 0 ? cs->nexts : fw->n[SK_EP_PRE_FILTER];
	for (int i = 0; i < n; i++) {
		struct sk_plugin *pl = pts[i];
		if (cs->skip[pl->slot] & SKIP_FILTER)
			continue;
		if (add ? !pl->desc->pre_filter_add_pod : !pl->desc->pre_filter_remove_pod)
			continue;
		int64_t pt = plugin_begin(fw, cs);
		struct sk_status s = add ? pl->desc->pre_filter_add_pod(pl, cs, pod, other, ni)
					 : pl->desc->pre_filter_remove_pod(pl, cs, pod, other, ni);
		plugin_end(fw, add ? "PreFilterExtensionAddPod" : "PreFilterExtensionRemovePod", pl, s.code, pt);
		if (s.code != SK_SUCCESS)
			return wrapf(&s, pl->desc->name, "running %s on PreFilter plugin \"%s\": ",
				     add ? "AddPod" : "RemovePod", pl->desc->name);
	}
	return sk_ok();
}

struct sk_status sk_fw_run_pre_filter_add_pod(struct sk_framework *fw, struct sk_cycle_state *cs,
					      const struct sk_pod *pod, const struct sk_pod *to_add,
					      const struct sk_node_info *ni)
{
	if (cs->nexts == 0) /* PreFilter's list of extensions is built and empty: nothing to run */
		return sk_ok();
	return run_add_remove(fw, cs, pod, to_add, ni, true);
}

struct sk_status sk_fw_run_pre_filter_remove_pod(struct sk_framework *fw, struct sk_cycle_state *cs,
						 const struct sk_pod *pod, const struct sk_pod *to_remove,
						 const struct sk_node_info *ni)
{
	if (cs->nexts == 0)
		return sk_ok();
	return run_add_remove(fw, cs, pod, to_remove, ni, false);
}

/* ---------- Filter ---------- */

/* A Filter plugin's non-Success status as RunFilterPlugins returns it: rejections carry the
 * plugin's name, anything else becomes an Error naming it. */
struct sk_status sk_fw_filter_failed(const struct sk_plugin *pl, struct sk_status *s)
{
	if (!sk_is_rejected(s))
		return wrapf(s, pl->desc->name, "running \"%s\" filter plugin: ", pl->desc->name);
	s->plugin = pl->desc->name;
	return *s;
}

/* The Filter plugins of the list left after PreFilter, nothing timed, each call counted in this
 * thread's per-chunk evaluations (sk_fw_filter_chunk_begin). Out of line, as is the general loop:
 * merged into sk_fw_run_filter, they would cost its plain loop registers and branches on every
 * plugin call. */
static __attribute__((noinline)) struct sk_status run_filters_counted(const struct sk_framework *fw,
								       struct sk_plugin *const *pts, int nf,
								       struct sk_cycle_state *cs,
								       const struct sk_pod *pod,
								       const struct sk_node_info *ni)
{
	for (int i = 0; i < nf; i++) {
		struct sk_plugin *pl = pts[i];
		struct sk_status s = pl->desc->filter(pl, cs, pod, ni);
		if (pl->slot < EVAL_SLOTS)
			tls_eval.n[pl->slot]++;
		else
			evaluated(fw, "Filter", pl, 1);
		if (s.code != SK_SUCCESS)
			return sk_fw_filter_failed(pl, &s);
	}
	return sk_ok();
}

/* Every case: PreFilter's list or the profile's with its skip flags, timing in a sampled cycle,
 * evaluations counted per chunk or reported per call. */
static __attribute__((noinline)) struct sk_status run_filters_general(struct sk_framework *fw,
								       struct sk_cycle_state *cs,
								       const struct sk_pod *pod,
								       const struct sk_node_info *ni)
{
	int nf = fw->n[SK_EP_FILTER];
	struct sk_plugin **pts = fw->pts[SK_EP_FILTER];
	const uint8_t *skip = cs->skip;
	uint8_t skip_mask = SKIP_FILTER;
	if (cs->nfilters >= 0) { /* the list left after PreFilter: nothing to skip */
		nf = cs->nfilters;
		pts = cs->filters;
		skip_mask = 0;
	}
	bool timed = cs->record_plugin_metrics && fw->env.observe && filter_node_sampled(cs);
	for (int i = 0; i < nf; i++) {
		struct sk_plugin *pl = pts[i];
		if (skip_mask && (skip[pl->slot] & skip_mask))
			continue;
		int64_t pt = timed ? kube_mono_ns() : 0;
		struct sk_status s = pl->desc->filter(pl, cs, pod, ni);
		plugin_end(fw, "Filter", pl, s.code, pt);
		filter_evaluated(fw, pl);
		if (s.code != SK_SUCCESS)
			return sk_fw_filter_failed(pl, &s);
	}
	return sk_ok();
}

struct sk_status sk_fw_run_filter(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni)
{
	/* The common case, decided once per node instead of once per plugin: the list left after
	 * PreFilter (nothing to skip), no timing, and evaluations either not counted or counted per
	 * chunk. Same plugins, same order, same status as the general loop. */
	if (cs->nfilters < 0 || (cs->record_plugin_metrics && fw->env.observe))
		return run_filters_general(fw, cs, pod, ni);
	if (tls_eval.fw == fw)
		return run_filters_counted(fw, cs->filters, cs->nfilters, cs, pod, ni);
	if (fw->env.evaluated)
		return run_filters_general(fw, cs, pod, ni);
	struct sk_plugin *const *pts = cs->filters;
	for (int i = 0, nf = cs->nfilters; i < nf; i++) {
		struct sk_plugin *pl = pts[i];
		struct sk_status s = pl->desc->filter(pl, cs, pod, ni);
		if (s.code != SK_SUCCESS)
			return sk_fw_filter_failed(pl, &s);
	}
	return sk_ok();
}

/* How many nodes ahead the per-node Filter loop asks for a node info, and for its node half as
 * far ahead (by then the node info holding the node's pointer has arrived). */
#define FILTER_PREFETCH 16

/* The Filter loop's first read of a node is a cache miss apiece once the nodes outnumber the
 * cache: each cycle evaluates the next numFeasibleNodesToFind nodes in round-robin order, so a
 * node comes back only after every other one has been walked (at 5,000 nodes end to end, the
 * first plugin's read of the node, NodeUnschedulable's spec.unschedulable, was 17% of the
 * scheduler's CPU; docs/benchmarks.md, "Prefetching the Filter loop's nodes"). The first two
 * lines of a node info (its counters, 64-byte aligned in a snapshot) and the three a node
 * spans from its name to its images (152 bytes, as malloc places them). */
static inline __attribute__((always_inline)) void filter_prefetch(const struct sk_node_info *const *nodes, int k,
								  int n)
{
	if (k + FILTER_PREFETCH < n) {
		const struct sk_node_info *far = nodes[k + FILTER_PREFETCH];
		__builtin_prefetch(far);
		__builtin_prefetch((const char *)far + 64);
	}
	if (k + FILTER_PREFETCH / 2 < n) {
		const struct sk_node *node = nodes[k + FILTER_PREFETCH / 2]->node;
		if (node) {
			__builtin_prefetch(node);
			__builtin_prefetch((const char *)node + 64);
			__builtin_prefetch((const char *)node + 128);
		}
	}
}

/* sk_fw_run_filter_nodes in sk_fw_run_filter's plain and counted cases: the plain loop of
 * sk_fw_run_filter with the per-node call, its status return and its checks paid once per run
 * (the same plugins in the same order, the same status). Inlined once per value of counted, so
 * that the plain loop keeps the plugin loop's values in registers. */
static inline __attribute__((always_inline)) int
filter_nodes_plain(const struct sk_framework *fw, struct sk_plugin *const *pts, int nf, struct sk_cycle_state *cs,
		   const struct sk_pod *pod, const struct sk_node_info *const *nodes, int n, int max_feasible,
		   uint8_t *res, struct sk_status *st, int *ran, const bool counted)
{
	struct sk_plugin *const *const pts_end = pts + nf;
	int left = max_feasible, k = 0;
	for (; k < n && left > 0; k++) {
		const struct sk_node_info *ni = nodes[k];
		filter_prefetch(nodes, k, n);
		struct sk_plugin *const *pp = pts;
		for (; pp < pts_end; pp++) {
			/* scoped to the call, so that the plugin returns straight into it */
			struct sk_status s = (*pp)->desc->filter(*pp, cs, pod, ni);
			if (s.code != SK_SUCCESS) {
				st[k] = sk_fw_filter_failed(*pp, &s);
				break;
			}
		}
		if (counted)
			for (struct sk_plugin *const *q = pts; q < pp + (pp < pts_end); q++)
				filter_evaluated(fw, *q);
		if (pp == pts_end) {
			res[k] = SK_FW_FEASIBLE;
			left--;
			continue;
		}
		res[k] = st[k].code == SK_ERROR ? SK_FW_FAILED : SK_FW_REJECTED;
	}
	*ran = k;
	return max_feasible - left;
}

int sk_fw_run_filter_nodes(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
			   const struct sk_node_info *const *nodes, int n, int max_feasible, uint8_t *res,
			   struct sk_status *st, int *ran)
{
	int found = 0, k = 0;
	/* Outside sk_fw_run_filter's plain and counted cases (timing, PreFilter's list not built,
	 * evaluations reported per call), node by node through it. */
	if (cs->nfilters < 0 || (cs->record_plugin_metrics && fw->env.observe) ||
	    (tls_eval.fw != fw && fw->env.evaluated)) {
		for (; k < n && found < max_feasible; k++) {
			struct sk_status s = sk_fw_run_filter(fw, cs, pod, nodes[k]);
			if (s.code == SK_SUCCESS) {
				res[k] = SK_FW_FEASIBLE;
				found++;
				continue;
			}
			res[k] = s.code == SK_ERROR ? SK_FW_FAILED : SK_FW_REJECTED;
			st[k] = s;
		}
		*ran = k;
		return found;
	}
	bool batched = cs->filters_batched;
	if (tls_eval.fw == fw) {
		if (batched && fw->nplugins <= EVAL_SLOTS) /* every slot counted in tls_eval */
			return sk_fw_filter_blocks(cs->filters, cs->nfilters, cs, pod, nodes, n, max_feasible, res, st, ran,
						   tls_eval.n);
		return filter_nodes_plain(fw, cs->filters, cs->nfilters, cs, pod, nodes, n, max_feasible, res, st, ran,
					  true);
	}
	if (batched)
		return sk_fw_filter_blocks(cs->filters, cs->nfilters, cs, pod, nodes, n, max_feasible, res, st, ran, NULL);
	return filter_nodes_plain(fw, cs->filters, cs->nfilters, cs, pod, nodes, n, max_feasible, res, st, ran, false);
}

/* sk_fw_run_filter_with_nominated on a node somebody may be nominated to. */
static __attribute__((noinline)) struct sk_status filter_with_nominated(struct sk_framework *fw,
									 struct sk_cycle_state *cs,
									 const struct sk_pod *pod,
									 const struct sk_node_info *ni)
{
	struct sk_pod **nominated = NULL;
	int nn = sk_nominator_pods_for_node(fw->env.nominator, ni->node->name, &nominated);
	if (nn < 0)
		return sk_status(SK_ERROR, "listing nominated pods: out of memory");
	struct sk_node_info *ni2 = NULL;
	struct sk_cycle_state *cs2 = NULL;
	struct sk_status st = sk_ok();
	bool added = false;
	for (int i = 0; i < nn; i++) {
		struct sk_pod *np = nominated[i];
		if (np->priority < pod->priority || strcmp(np->uid, pod->uid) == 0)
			continue;
		if (!ni2) {
			ni2 = sk_node_info_clone(ni);
			cs2 = sk_cycle_state_clone(cs);
			if (!ni2 || !cs2) {
				st = sk_status(SK_ERROR, "cloning state for nominated pods: out of memory");
				goto out;
			}
		}
		if (sk_node_info_add_pod(ni2, np) != 0) {
			st = sk_status(SK_ERROR, "adding nominated pod: out of memory");
			goto out;
		}
		st = sk_fw_run_pre_filter_add_pod(fw, cs2, pod, np, ni2);
		if (st.code != SK_SUCCESS)
			goto out;
		added = true;
	}
	st = sk_fw_run_filter(fw, added ? cs2 : cs, pod, added ? ni2 : ni);
	if (added && st.code == SK_SUCCESS)
		st = sk_fw_run_filter(fw, cs, pod, ni);
out:
	for (int i = 0; i < nn; i++)
		sk_pod_unref(nominated[i]);
	free(nominated);
	sk_node_info_free(ni2);
	sk_cycle_state_free(cs2);
	return st;
}

struct sk_status sk_fw_run_filter_with_nominated(struct sk_framework *fw, struct sk_cycle_state *cs,
						 const struct sk_pod *pod, const struct sk_node_info *ni)
{
	/* The common case, lock-free: nobody is nominated to this node (the nominator's count and bit
	 * filter). Both calls are tail calls: this frame adds nothing to the Filter run, which the
	 * failing pass and preemption's dry run make once per node and victim. */
	if (!sk_fw_nominated_maybe_on(fw->env.nominator, ni))
		return sk_fw_run_filter(fw, cs, pod, ni);
	return filter_with_nominated(fw, cs, pod, ni);
}

/* ---------- PostFilter ---------- */

struct sk_status sk_fw_run_post_filter(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				       const struct sk_filter_diagnosis *diag, struct sk_postfilter_result *result,
				       bool *have_result)
{
	int64_t t0 = point_begin(fw);
	struct sk_status acc = sk_status(SK_UNSCHEDULABLE, NULL);
	*have_result = false;
	memset(result, 0, sizeof(*result));
	for (int i = 0; i < fw->n[SK_EP_POST_FILTER]; i++) {
		struct sk_plugin *pl = fw->pts[SK_EP_POST_FILTER][i];
		struct sk_postfilter_result r = { 0 };
		int64_t pt = plugin_begin(fw, cs);
		struct sk_status s = pl->desc->post_filter(pl, cs, pod, diag, &r);
		plugin_end(fw, "PostFilter", pl, s.code, pt);
		bool meaningful = r.nominated_node || r.clear_nominated;
		if (s.code == SK_SUCCESS || s.code == SK_UNSCHEDULABLE_AND_UNRESOLVABLE) {
			*result = r;
			*have_result = meaningful;
			s.plugin = pl->desc->name;
			sk_status_reset(&acc);
			point_end(fw, "PostFilter", s.code, t0);
			return s;
		}
		if (!sk_is_rejected(&s)) {
			sk_status_reset(&acc);
			struct sk_status e = wrapf(&s, pl->desc->name, "%s", "");
			point_end(fw, "PostFilter", e.code, t0);
			return e;
		}
		if (meaningful) {
			*result = r;
			*have_result = true;
		}
		for (int k = 0; k < sk_status_reason_count(&s); k++) {
			if (k >= s.nreasons || (s.owned & (1u << k)))
				sk_status_addf(&acc, "%s", sk_status_reason(&s, k));
			else
				sk_status_add(&acc, s.reasons[k]);
		}
		if (!acc.plugin)
			acc.plugin = pl->desc->name;
		sk_status_reset(&s);
	}
	point_end(fw, "PostFilter", acc.code, t0);
	return acc;
}

/* ---------- PreScore, Score ---------- */

struct sk_status sk_fw_run_pre_score(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				     const struct sk_node_info *const *nodes, int nnodes)
{
	int64_t t0 = point_begin(fw);
	struct sk_status ret = sk_ok();
	for (int i = 0; i < fw->n[SK_EP_PRE_SCORE]; i++) {
		struct sk_plugin *pl = fw->pts[SK_EP_PRE_SCORE][i];
		int64_t pt = plugin_begin(fw, cs);
		struct sk_status s = pl->desc->pre_score(pl, cs, pod, nodes, nnodes);
		plugin_end(fw, "PreScore", pl, s.code, pt);
		evaluated(fw, "PreScore", pl, 1);
		if (s.code == SK_SKIP) {
			cs->skip[pl->slot] |= SKIP_SCORE;
			sk_status_reset(&s);
			continue;
		}
		if (s.code != SK_SUCCESS) {
			ret = wrapf(&s, pl->desc->name, "running PreScore plugin \"%s\": ", pl->desc->name);
			break;
		}
	}
	point_end(fw, "PreScore", ret.code, t0);
	return ret;
}

void sk_score_table_free(struct sk_score_table *t)
{
	if (!t)
		return;
	free(t->ran);
	free(t->plugin);
	free(t->weight);
	free(t->scores);
	free(t->raw);
	free(t->total);
	memset(t, 0, sizeof(*t));
}

struct score_job {
	struct sk_framework *fw;
	struct sk_cycle_state *cs;
	const struct sk_pod *pod;
	const struct sk_node_info *const *nodes;
	struct sk_score_table *t;
	atomic_int cancel;
	pthread_mutex_t mu;     /* guards err */
	int err_node;
	struct sk_status err;
	int *order;             /* indexes into t's plugins: the nbatch with score_batch first, then the rest */
	int nbatch;
};

/* Records the failure of plugin pl on node i (the lowest failing node wins) and cancels the job. */
static void score_failed(struct score_job *j, struct sk_plugin *pl, int i, struct sk_status *s)
{
	pthread_mutex_lock(&j->mu);
	if (j->err_node < 0 || i < j->err_node) {
		sk_status_reset(&j->err);
		j->err = wrapf(s, pl->desc->name, "running Score plugins: plugin \"%s\" failed with: ", pl->desc->name);
		j->err_node = i;
	} else {
		sk_status_reset(s);
	}
	pthread_mutex_unlock(&j->mu);
	atomic_store(&j->cancel, 1);
}

/* A plugin with score_batch over [begin, end) in one call. In a cycle sampled for plugin
 * metrics, the call is timed and observed once, as the mean per node (the per-node plugins are
 * observed on every NODE_SAMPLE_EVERY-th node instead). */
static bool score_batch_range(struct score_job *j, int p, struct sk_plugin *pl, int begin, int end, bool sampling)
{
	int64_t *row = &j->t->scores[(size_t)p * (size_t)j->t->nnodes];
	int failed = 0;
	int64_t pt = sampling ? kube_mono_ns() : 0;
	struct sk_status s = pl->desc->score_batch(pl, j->cs, j->pod, j->nodes + begin, end - begin, row + begin, &failed);
	if (pt)
		j->fw->env.observe(j->fw->env.ctx, j->fw->name, "Score", pl->desc->name, s.code,
				   (double)(kube_mono_ns() - pt) / 1e9 / (end - begin));
	if (s.code == SK_SUCCESS)
		return true;
	score_failed(j, pl, begin + (failed >= 0 && failed < end - begin ? failed : 0), &s);
	return false;
}

/* Plugin p (an index into t's plugins) on node i; false once it failed (recorded). */
static inline bool score_one(struct score_job *j, struct sk_score_table *t, struct sk_plugin **pts, int p, int i,
			     bool timed)
{
	struct sk_plugin *pl = pts[t->ran[p]];
	int64_t score = 0;
	int64_t pt = timed ? kube_mono_ns() : 0;
	struct sk_status s = pl->desc->score(pl, j->cs, j->pod, j->nodes[i], &score);
	plugin_end(j->fw, "Score", pl, s.code, pt);
	if (s.code != SK_SUCCESS) {
		score_failed(j, pl, i, &s);
		return false;
	}
	t->scores[(size_t)p * (size_t)t->nnodes + (size_t)i] = score;
	return true;
}

static void score_chunk(int begin, int end, void *arg)
{
	struct score_job *j = arg;
	struct sk_score_table *t = j->t;
	struct sk_plugin **pts = j->fw->pts[SK_EP_SCORE];
	bool sampling = j->cs->record_plugin_metrics && j->fw->env.observe;
	/* see NODE_SAMPLE_EVERY: node indexes are fixed per cycle, so the sample is too */
	if (j->nbatch == 0) {
		for (int i = begin; i < end; i++) {
			bool timed = sampling && (unsigned)i % NODE_SAMPLE_EVERY == 0;
			for (int p = 0; p < t->nplugins; p++)
				if (!score_one(j, t, pts, p, i, timed))
					return;
		}
		return;
	}
	const int *order = j->order;
	const int nbatch = j->nbatch, nplugins = t->nplugins;
	for (int k = 0; k < nbatch; k++)
		if (!score_batch_range(j, order[k], pts[t->ran[order[k]]], begin, end, sampling))
			return;
	if (nbatch == nplugins)
		return;
	for (int i = begin; i < end; i++) {
		bool timed = sampling && (unsigned)i % NODE_SAMPLE_EVERY == 0;
		for (int k = nbatch; k < nplugins; k++)
			if (!score_one(j, t, pts, order[k], i, timed))
				return;
	}
}

/* score_chunk counted in scheduler_goroutines{operation="Score"} (env.working). */
static void score_range(int begin, int end, void *arg)
{
	const struct sk_framework *fw = ((struct score_job *)arg)->fw;
	fw->env.working(fw->env.ctx, "Score", 1);
	score_chunk(begin, end, arg);
	fw->env.working(fw->env.ctx, "Score", -1);
}

/* t->total[i] = Σ_p scores[p][i] × weight[p], four plugin rows per pass over the nodes (a group
 * short of four repeats its first row with weight 0), each score checked against
 * [SK_MIN_NODE_SCORE, SK_MAX_NODE_SCORE] through the largest distance from the minimum. False
 * when a score is out of range: the caller then finds the first one (pkg/scheduler/framework/
 * runtime/framework.go, RunScorePlugins) and drops the totals. The products and sums are taken
 * modulo 2^64, so an out-of-range score cannot overflow; in range they are the exact sums (the
 * profile's weights are checked against overflow, scheduler/config/config.c). */
static bool score_totals(struct sk_score_table *t)
{
	const size_t nn = (size_t)t->nnodes;
	const int np = t->nplugins;
	uint64_t worst = 0;
	for (int g = 0; g < np; g += 4) {
		const int64_t *r[4];
		uint64_t w[4];
		for (int q = 0; q < 4; q++) {
			int p = g + q < np ? g + q : g;
			r[q] = &t->scores[(size_t)p * nn];
			w[q] = g + q < np ? (uint64_t)(int64_t)t->weight[p] : 0;
		}
		const int64_t *r0 = r[0], *r1 = r[1], *r2 = r[2], *r3 = r[3];
		int64_t *total = t->total;
		for (size_t i = 0; i < nn; i++) {
			uint64_t a = (uint64_t)r0[i], b = (uint64_t)r1[i], c = (uint64_t)r2[i], d = (uint64_t)r3[i];
			uint64_t da = a - (uint64_t)SK_MIN_NODE_SCORE, db = b - (uint64_t)SK_MIN_NODE_SCORE;
			uint64_t dc = c - (uint64_t)SK_MIN_NODE_SCORE, dd = d - (uint64_t)SK_MIN_NODE_SCORE;
			worst = da > worst ? da : worst;
			worst = db > worst ? db : worst;
			worst = dc > worst ? dc : worst;
			worst = dd > worst ? dd : worst;
			uint64_t sum = a * w[0] + b * w[1] + c * w[2] + d * w[3];
			total[i] = (int64_t)(g ? (uint64_t)total[i] + sum : sum);
		}
	}
	return worst <= (uint64_t)(SK_MAX_NODE_SCORE - SK_MIN_NODE_SCORE);
}

struct sk_status sk_fw_run_score(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				 const struct sk_node_info *const *nodes, int nnodes, struct sk_score_table *t)
{
	int64_t t0 = point_begin(fw);
	struct sk_status ret = sk_ok();
	struct sk_node_score *ns = NULL;
	*t = (struct sk_score_table){ .want_raw = t->want_raw };
	int np = fw->n[SK_EP_SCORE];
	t->nnodes = nnodes;
	t->ran = calloc((size_t)(np ? np : 1), sizeof(int));
	t->plugin = calloc((size_t)(np ? np : 1), sizeof(char *));
	t->weight = calloc((size_t)(np ? np : 1), sizeof(int32_t));
	t->total = malloc((size_t)(nnodes ? nnodes : 1) * sizeof(int64_t)); /* every entry written below */
	if (!t->ran || !t->plugin || !t->weight || !t->total)
		goto oom;
	for (int p = 0; p < np; p++) {
		struct sk_plugin *pl = fw->pts[SK_EP_SCORE][p];
		if (cs->skip[pl->slot] & SKIP_SCORE)
			continue;
		t->ran[t->nplugins] = p;
		t->plugin[t->nplugins] = pl->desc->name;
		t->weight[t->nplugins] = fw->weights[p];
		t->nplugins++;
		evaluated(fw, "Score", pl, nnodes); /* called once per node (or once for them all by score_batch) */
	}
	if (t->nplugins == 0 || nnodes == 0) {
		memset(t->total, 0, (size_t)(nnodes ? nnodes : 1) * sizeof(int64_t));
		goto done;
	}
	/* every entry is written by score_range unless it fails, and then the table is dropped */
	t->scores = malloc((size_t)t->nplugins * (size_t)nnodes * sizeof(int64_t));
	ns = malloc((size_t)nnodes * sizeof(*ns));
	if (t->want_raw) /* the scores before NormalizeScore, for a decision record */
		t->raw = malloc((size_t)t->nplugins * (size_t)nnodes * sizeof(int64_t));
	if (!t->scores || !ns || (t->want_raw && !t->raw))
		goto oom;

	struct score_job j = { .fw = fw, .cs = cs, .pod = pod, .nodes = nodes, .t = t, .err_node = -1 };
	if (!(j.order = malloc((size_t)t->nplugins * sizeof(int))))
		goto oom;
	for (int p = 0; p < t->nplugins; p++)
		if (fw->pts[SK_EP_SCORE][t->ran[p]]->desc->score_batch)
			j.order[j.nbatch++] = p;
	for (int p = 0, k = j.nbatch; p < t->nplugins; p++)
		if (!fw->pts[SK_EP_SCORE][t->ran[p]]->desc->score_batch)
			j.order[k++] = p;
	atomic_init(&j.cancel, 0);
	pthread_mutex_init(&j.mu, NULL);
	/* Chunks of upstream's size let a worker share the loop; with no worker thread to share it
	 * (a pool of one thread, or none) they only add a score_batch call per plugin per chunk, so
	 * the nodes go in one chunk, except in a cycle sampled for plugin metrics, whose
	 * observations are per chunk (score_batch_range). */
	int chunk = sk_pool_threads(fw->env.pool) <= 1 && !(cs->record_plugin_metrics && fw->env.observe) ? nnodes : 0;
	sk_parallel_for_range(fw->env.pool, nnodes, chunk, fw->env.working ? score_range : score_chunk, &j, &j.cancel);
	pthread_mutex_destroy(&j.mu);
	free(j.order);
	if (j.err_node >= 0) {
		ret = j.err;
		goto fail;
	}

	if (t->raw)
		memcpy(t->raw, t->scores, (size_t)t->nplugins * (size_t)nnodes * sizeof(int64_t));
	for (int p = 0; p < t->nplugins; p++) {
		struct sk_plugin *pl = fw->pts[SK_EP_SCORE][t->ran[p]];
		if (!pl->desc->normalize_score)
			continue;
		int64_t *row = &t->scores[(size_t)p * (size_t)nnodes];
		for (int i = 0; i < nnodes; i++) {
			ns[i].name = nodes[i]->node ? nodes[i]->node->name : "";
			ns[i].score = row[i];
		}
		int64_t pt = plugin_begin(fw, cs);
		struct sk_status s = pl->desc->normalize_score(pl, cs, pod, ns, nnodes);
		plugin_end(fw, "ScoreExtensionNormalize", pl, s.code, pt);
		if (s.code != SK_SUCCESS) {
			ret = wrapf(&s, pl->desc->name, "running Normalize on Score plugins: plugin \"%s\" failed with: ",
				    pl->desc->name);
			goto fail;
		}
		for (int i = 0; i < nnodes; i++)
			row[i] = ns[i].score;
	}
	if (score_totals(t))
		goto done;
	for (int i = 0; i < nnodes; i++) { /* a score out of range: the first, node by node, as upstream */
		int64_t total = 0;
		for (int p = 0; p < t->nplugins; p++) {
			int64_t s = t->scores[(size_t)p * (size_t)nnodes + (size_t)i];
			if (s > SK_MAX_NODE_SCORE || s < SK_MIN_NODE_SCORE) {
				ret = sk_statusf(SK_ERROR,
						 "applying score defaultWeights on Score plugins: plugin \"%s\" returns an "
						 "invalid score %" PRId64 ", it should in the range of [%d, %d] after normalizing",
						 t->plugin[p], s, SK_MIN_NODE_SCORE, SK_MAX_NODE_SCORE);
				ret.plugin = t->plugin[p];
				goto fail;
			}
			total += s * t->weight[p];
		}
		t->total[i] = total;
	}
done:
	free(ns);
	point_end(fw, "Score", ret.code, t0);
	return ret;
oom:
	ret = sk_status(SK_ERROR, "running Score plugins: out of memory");
fail:
	free(ns);
	sk_score_table_free(t);
	point_end(fw, "Score", ret.code, t0);
	return ret;
}

/* ---------- Reserve, Permit ---------- */

struct sk_status sk_fw_run_reserve(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const char *node)
{
	int64_t t0 = point_begin(fw);
	struct sk_status ret = sk_ok();
	for (int i = 0; i < fw->n[SK_EP_RESERVE]; i++) {
		struct sk_plugin *pl = fw->pts[SK_EP_RESERVE][i];
		if (!pl->desc->reserve)
			continue;
		int64_t pt = plugin_begin(fw, cs);
		struct sk_status s = pl->desc->reserve(pl, cs, pod, node);
		plugin_end(fw, "Reserve", pl, s.code, pt);
		if (s.code != SK_SUCCESS) {
			if (sk_is_rejected(&s)) {
				s.plugin = pl->desc->name;
				ret = s;
			} else {
				ret = wrapf(&s, pl->desc->name, "running Reserve plugin \"%s\": ", pl->desc->name);
			}
			break;
		}
	}
	point_end(fw, "Reserve", ret.code, t0);
	return ret;
}

void sk_fw_run_unreserve(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
			 const char *node)
{
	int64_t t0 = point_begin(fw);
	for (int i = fw->n[SK_EP_RESERVE] - 1; i >= 0; i--) {
		struct sk_plugin *pl = fw->pts[SK_EP_RESERVE][i];
		if (!pl->desc->unreserve)
			continue;
		int64_t pt = plugin_begin(fw, cs);
		pl->desc->unreserve(pl, cs, pod, node);
		plugin_end(fw, "Unreserve", pl, SK_SUCCESS, pt);
	}
	point_end(fw, "Unreserve", SK_SUCCESS, t0);
}

struct sk_status sk_fw_run_permit(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const char *node)
{
	int64_t t0 = point_begin(fw);
	struct sk_status ret = sk_ok();
	const char *waiting[16];
	int64_t timeouts[16];
	int nwait = 0;
	for (int i = 0; i < fw->n[SK_EP_PERMIT]; i++) {
		struct sk_plugin *pl = fw->pts[SK_EP_PERMIT][i];
		int64_t timeout_ms = 0;
		int64_t pt = plugin_begin(fw, cs);
		struct sk_status s = pl->desc->permit(pl, cs, pod, node, &timeout_ms);
		plugin_end(fw, "Permit", pl, s.code, pt);
		if (s.code == SK_SUCCESS)
			continue;
		if (sk_is_rejected(&s)) {
			s.plugin = pl->desc->name;
			ret = s;
			goto out;
		}
		if (s.code == SK_WAIT) {
			sk_status_reset(&s);
			if (timeout_ms > SK_PERMIT_MAX_TIMEOUT_MS)
				timeout_ms = SK_PERMIT_MAX_TIMEOUT_MS;
			if (timeout_ms < 0)
				timeout_ms = 0;
			if (nwait < 16) {
				waiting[nwait] = pl->desc->name;
				timeouts[nwait] = timeout_ms;
				nwait++;
			}
			continue;
		}
		ret = wrapf(&s, pl->desc->name, "running Permit plugin \"%s\": ", pl->desc->name);
		goto out;
	}
	if (nwait) {
		if (sk_waiting_add(fw->waiting, (struct sk_pod *)pod, waiting, timeouts, nwait) != 0) {
			ret = sk_statusf(SK_ERROR, "pod %s/%s is already waiting on permit", pod->ns, pod->name);
			goto out;
		}
		ret = sk_statusf(SK_WAIT, "one or more plugins asked to wait and no plugin rejected pod \"%s\"",
				 pod->name);
	}
out:
	point_end(fw, "Permit", ret.code, t0);
	return ret;
}

struct sk_status sk_fw_wait_on_permit(struct sk_framework *fw, const struct sk_pod *pod)
{
	if (!sk_waiting_has(fw->waiting, pod->uid))
		return sk_ok();
	int64_t t0 = fw->env.permit_waited ? kube_mono_ns() : 0;
	struct sk_status s = sk_waiting_wait(fw->waiting, pod->uid);
	if (t0)
		fw->env.permit_waited(fw->env.ctx, s.code, (double)(kube_mono_ns() - t0) / 1e9);
	if (s.code == SK_SUCCESS || sk_is_rejected(&s))
		return s;
	const char *plugin = s.plugin;
	return wrapf(&s, plugin, "%s", "waiting on permit for pod: ");
}

/* ---------- PreBind, Bind, PostBind ---------- */

struct sk_status sk_fw_run_pre_bind(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const char *node)
{
	int64_t t0 = point_begin(fw);
	struct sk_status ret = sk_ok();
	for (int i = 0; i < fw->n[SK_EP_PRE_BIND]; i++) {
		struct sk_plugin *pl = fw->pts[SK_EP_PRE_BIND][i];
		int64_t pt = plugin_begin(fw, cs);
		struct sk_status s = pl->desc->pre_bind(pl, cs, pod, node);
		plugin_end(fw, "PreBind", pl, s.code, pt);
		if (s.code == SK_SUCCESS)
			continue;
		if (sk_is_rejected(&s)) {
			s.plugin = pl->desc->name;
			ret = s;
		} else {
			ret = wrapf(&s, pl->desc->name, "running PreBind plugin \"%s\": ", pl->desc->name);
		}
		break;
	}
	point_end(fw, "PreBind", ret.code, t0);
	return ret;
}

struct sk_status sk_fw_run_bind(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				const char *node)
{
	int64_t t0 = point_begin(fw);
	struct sk_status ret = sk_status(SK_SKIP, NULL);
	for (int i = 0; i < fw->n[SK_EP_BIND]; i++) {
		struct sk_plugin *pl = fw->pts[SK_EP_BIND][i];
		int64_t pt = plugin_begin(fw, cs);
		struct sk_status s = pl->desc->bind(pl, cs, pod, node);
		plugin_end(fw, "Bind", pl, s.code, pt);
		if (s.code == SK_SKIP) {
			sk_status_reset(&s);
			continue;
		}
		if (s.code == SK_SUCCESS || sk_is_rejected(&s)) {
			s.plugin = pl->desc->name;
			ret = s;
		} else {
			ret = wrapf(&s, pl->desc->name, "running Bind plugin \"%s\": ", pl->desc->name);
		}
		break;
	}
	point_end(fw, "Bind", ret.code, t0);
	return ret;
}

void sk_fw_run_post_bind(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
			 const char *node)
{
	int64_t t0 = point_begin(fw);
	for (int i = 0; i < fw->n[SK_EP_POST_BIND]; i++) {
		struct sk_plugin *pl = fw->pts[SK_EP_POST_BIND][i];
		int64_t pt = plugin_begin(fw, cs);
		pl->desc->post_bind(pl, cs, pod, node);
		plugin_end(fw, "PostBind", pl, SK_SUCCESS, pt);
	}
	point_end(fw, "PostBind", SK_SUCCESS, t0);
}

/* ---------- events and hints ---------- */

static uint32_t pod_expand(uint32_t r)
{
	if (r & SK_EV_POD)
		r |= SK_EV_ASSIGNED_POD | SK_EV_UNSCHEDULED_POD;
	return r;
}

bool sk_event_matches(const struct sk_cluster_event *reg, const struct sk_cluster_event *ev)
{
	if (reg->resource & SK_EV_WILDCARD)
		return (reg->action & ev->action) != 0 || reg->action == SK_ACT_ALL;
	if (ev->resource & SK_EV_WILDCARD)
		return true;
	return (pod_expand(reg->resource) & pod_expand(ev->resource)) != 0 && (reg->action & ev->action) != 0;
}

int sk_fw_queueing_hint(struct sk_framework *fw, const char *plugin, const struct sk_cluster_event *ev,
			const struct sk_pod *pod, const void *old_obj, const void *new_obj)
{
	int slot = -1;
	for (int i = 0; i < fw->nplugins; i++)
		if (fw->inst[i].desc->name == plugin || strcmp(fw->inst[i].desc->name, plugin) == 0) {
			slot = i;
			break;
		}
	if (slot < 0) /* extenders have no hints: their rejections requeue on every event (upstream) */
		return fw->nextenders > 0 && strcmp(plugin, SK_EXTENDER_NAME) == 0 ? SK_QUEUE : -1;
	struct plugin_events *pe = &fw->events[slot];
	int result = -1;
	for (int i = 0; i < pe->n; i++) {
		if (!sk_event_matches(&pe->regs[i].event, ev))
			continue;
		enum sk_hint h = pe->regs[i].hint ? pe->regs[i].hint(&fw->inst[slot], pod, old_obj, new_obj) : SK_QUEUE;
		if (h == SK_QUEUE)
			return SK_QUEUE;
		result = SK_QUEUE_SKIP;
	}
	return result;
}
