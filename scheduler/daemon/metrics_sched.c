/* Scheduler metrics (metrics_sched.h): registration with upstream names, help texts and buckets,
 * and the small uid -> first-attempt map behind the SLI histogram. */
#include "scheduler/daemon/metrics_sched.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/hash.h"

#define SLI_BUCKETS 1024 /* hash chains of the SLI map */
#define VICTIM_SLOTS 64  /* preemptors whose victims are being counted (one per cycle in practice) */

struct sli_entry {
	struct sli_entry *next;
	char *uid;
	int64_t start_ns;
};

struct sk_sched_metrics {
	uint64_t id;        /* unique per instance: keys the per-thread series cache */
	struct kube_metric *attempts, *attempt_duration, *pod_attempts, *sli, *pending, *point, *plugin, *incoming,
		*leader, *conflicts, *cache_size, *algorithm, *preempt_attempts, *victims, *unsched, *slowpath, *evaluations,
		*permit_wait, *goroutines, *event_handling, *hint_duration, *inflight;
	/* scheduler_goroutines{operation} of the three operations, resolved once (added per chunk) */
	struct kube_metric_series *g_binding, *g_filter, *g_score;
	pthread_mutex_t mu; /* guards sli_map, nsli, victims_of, unsched_seen */
	struct sli_entry *sli_map[SLI_BUCKETS];
	int nsli;
	/* victims evicted for a preemptor in its current cycle (uid, count), observed with the outcome */
	struct victim_count {
		char uid[64];
		int n;
	} victims_of[VICTIM_SLOTS];
	int nvictims_of;
	/* the (plugin, profile) series of scheduler_unschedulable_pods set so far (interned names) */
	struct unsched_key {
		const char *plugin, *profile;
		int n;
	} *unsched_seen;
	int nunsched_seen, capunsched_seen;
};

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static atomic_uint_fast64_t next_id = 1;

struct sk_sched_metrics *sk_sched_metrics_new(struct kube_metrics_registry *reg)
{
	struct sk_sched_metrics *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->id = atomic_fetch_add(&next_id, 1);
	double b_attempt[15], b_sli[20], b_pod_attempts[5], b_point[12], b_plugin[20], b_victims[7];
	kube_exponential_buckets(1, 2, 7, b_victims);
	kube_exponential_buckets(0.001, 2, 15, b_attempt);
	kube_exponential_buckets(0.01, 2, 20, b_sli);
	kube_exponential_buckets(1, 2, 5, b_pod_attempts);
	kube_exponential_buckets(0.0001, 2, 12, b_point);
	kube_exponential_buckets(0.00001, 1.5, 20, b_plugin);
	m->attempts = kube_counter_new(reg, "scheduler_schedule_attempts_total",
				       "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
				       2, KUBE_LABELS("result", "profile"));
	m->attempt_duration = kube_histogram_new(reg, "scheduler_scheduling_attempt_duration_seconds",
						 "Scheduling attempt latency in seconds (scheduling algorithm + binding)", 2,
						 KUBE_LABELS("result", "profile"), b_attempt, 15);
	m->pod_attempts = kube_histogram_new(reg, "scheduler_pod_scheduling_attempts",
					     "Number of attempts to successfully schedule a pod.", 0, NULL, b_pod_attempts, 5);
	m->sli = kube_histogram_new(reg, "scheduler_pod_scheduling_sli_duration_seconds",
				    "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.",
				    1, KUBE_LABELS("attempts"), b_sli, 20);
	m->pending = kube_gauge_new(reg, "scheduler_pending_pods",
				    "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
				    1, KUBE_LABELS("queue"));
	m->point = kube_histogram_new(reg, "scheduler_framework_extension_point_duration_seconds",
				      "Latency for running all plugins of a specific extension point.", 3,
				      KUBE_LABELS("extension_point", "status", "profile"), b_point, 12);
	m->plugin = kube_histogram_new(reg, "scheduler_plugin_execution_duration_seconds",
				       "Duration for running a plugin at a specific extension point.", 3,
				       KUBE_LABELS("plugin", "extension_point", "status"), b_plugin, 20);
	m->incoming = kube_counter_new(reg, "scheduler_queue_incoming_pods_total",
				       "Number of pods added to scheduling queues by event and queue type.", 2,
				       KUBE_LABELS("queue", "event"));
	m->leader = kube_gauge_new(reg, "leader_election_master_status",
				   "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
				   1, KUBE_LABELS("name"));
	m->cache_size = kube_gauge_new(reg, "scheduler_scheduler_cache_size",
				       "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.", 1,
				       KUBE_LABELS("type"));
	m->conflicts = kube_counter_new(reg, "schedkit_scheduler_binding_conflicts_total",
					"Bindings the API server refused with 409 Conflict (the pod was already bound or is being deleted); such pods are forgotten, never retried.",
					0, NULL);
	m->algorithm = kube_histogram_new(reg, "scheduler_scheduling_algorithm_duration_seconds",
					  "Scheduling algorithm latency in seconds", 0, NULL, b_attempt, 15);
	m->preempt_attempts = kube_counter_new(reg, "scheduler_preemption_attempts_total",
					       "Total preemption attempts in the cluster till now", 0, NULL);
	m->victims = kube_histogram_new(reg, "scheduler_preemption_victims", "Number of selected preemption victims", 0,
					NULL, b_victims, 7);
	m->unsched = kube_gauge_new(reg, "scheduler_unschedulable_pods",
				    "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for all plugins that caused it to not schedule and so this metric have meaning only when broken down by plugin.",
				    2, KUBE_LABELS("plugin", "profile"));
	m->slowpath = kube_counter_new(reg, "leader_election_slowpath_total",
				       "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
				       1, KUBE_LABELS("name"));
	m->evaluations = kube_counter_new(reg, "scheduler_plugin_evaluation_total",
					  "Number of attempts to schedule pods by each plugin and the extension point (available only in PreFilter, Filter, PreScore, and Score).",
					  3, KUBE_LABELS("plugin", "extension_point", "profile"));
	m->permit_wait = kube_histogram_new(reg, "scheduler_permit_wait_duration_seconds", "Duration of waiting on permit.", 1,
					    KUBE_LABELS("result"), b_attempt, 15);
	m->goroutines = kube_gauge_new(reg, "scheduler_goroutines",
				       "Number of running goroutines split by the work they do such as binding.", 1,
				       KUBE_LABELS("operation"));
	m->event_handling = kube_histogram_new(reg, "scheduler_event_handling_duration_seconds",
					       "Event handling latency in seconds.", 1, KUBE_LABELS("event"), b_point, 12);
	m->hint_duration = kube_histogram_new(reg, "scheduler_queueing_hint_execution_duration_seconds",
					      "Duration for running a queueing hint function of a plugin.", 3,
					      KUBE_LABELS("plugin", "event", "hint"), b_plugin, 20);
	m->inflight = kube_gauge_new(reg, "scheduler_inflight_events",
				     "Number of events currently tracked in the scheduling queue.", 1, KUBE_LABELS("event"));
	if (!m->slowpath || !m->evaluations || !m->permit_wait || !m->goroutines || !m->event_handling ||
	    !m->hint_duration || !m->inflight)
		m->attempts = NULL; /* fail below */
	if (!m->attempts || !m->attempt_duration || !m->pod_attempts || !m->sli || !m->pending || !m->point ||
	    !m->plugin || !m->incoming || !m->leader || !m->conflicts || !m->cache_size || !m->algorithm ||
	    !m->preempt_attempts || !m->victims || !m->unsched) {
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->mu, NULL);
	/* Series present from the start, so dashboards see zeros rather than gaps. */
	static const char *const queues[] = { "active", "backoff", "unschedulable", "gated" };
	for (int i = 0; i < 4; i++)
		kube_gauge_set(m->pending, 0, KUBE_LABELS(queues[i]));
	kube_counter_add(m->conflicts, 0, NULL);
	kube_counter_add(m->preempt_attempts, 0, NULL);
	m->g_binding = kube_metric_with(m->goroutines, KUBE_LABELS("binding"));
	m->g_filter = kube_metric_with(m->goroutines, KUBE_LABELS("Filter"));
	m->g_score = kube_metric_with(m->goroutines, KUBE_LABELS("Score"));
	return m;
}

void sk_sched_metrics_free(struct sk_sched_metrics *m)
{
	if (!m)
		return;
	for (int i = 0; i < SLI_BUCKETS; i++)
		for (struct sli_entry *e = m->sli_map[i], *next; e; e = next) {
			next = e->next;
			free(e->uid);
			free(e);
		}
	pthread_mutex_destroy(&m->mu);
	free(m->unsched_seen);
	free(m);
}

const char *sk_sched_metrics_result_label(enum sk_result r)
{
	switch (r) {
	case SK_RESULT_SCHEDULED: return "scheduled";
	case SK_RESULT_UNSCHEDULABLE: return "unschedulable";
	default: return "error";
	}
}

const char *sk_sched_metrics_queue_label(enum sk_queue_where w)
{
	switch (w) {
	case SK_Q_ACTIVE: return "active";
	case SK_Q_BACKOFF:
	case SK_Q_ERROR_BACKOFF: return "backoff";
	case SK_Q_UNSCHEDULABLE: return "unschedulable";
	case SK_Q_GATED: return "gated";
	default: return NULL;
	}
}

/* Per-thread cache of resolved histogram series. The framework calls the observe hook per plugin
 * per node in sampled cycles, from every pool thread; the label strings it passes (extension
 * point and plugin names, the profile name, sk_code_string) are static or live as long as the
 * framework, so their addresses identify the series. The instance id (never reused) guards
 * against a cache entry outliving its registry. */
#define SERIES_CACHE 128
struct series_cache_entry {
	uint64_t id;
	const char *a, *b;
	enum sk_code code;
	struct kube_metric_series *series;
};
static _Thread_local struct series_cache_entry series_cache[SERIES_CACHE];

static struct kube_metric_series *cached_series(struct sk_sched_metrics *m, const char *a, const char *b,
						enum sk_code code, bool plugin)
{
	uintptr_t h = ((uintptr_t)a >> 3) * 31u + ((uintptr_t)b >> 3) * 131u + (uintptr_t)code * 7u + (plugin ? 1u : 0u);
	struct series_cache_entry *e = &series_cache[h % SERIES_CACHE];
	uint64_t id = m->id * 2 + (plugin ? 1 : 0);
	if (e->id == id && e->a == a && e->b == b && e->code == code && e->series)
		return e->series;
	struct kube_metric_series *s =
		plugin ? kube_metric_with(m->plugin, KUBE_LABELS(a, b, sk_code_string(code)))
		       : kube_metric_with(m->point, KUBE_LABELS(a, sk_code_string(code), b));
	if (s)
		*e = (struct series_cache_entry){ .id = id, .a = a, .b = b, .code = code, .series = s };
	return s;
}

void sk_sched_metrics_observe_point(struct sk_sched_metrics *m, const char *profile, const char *point,
				    const char *plugin, enum sk_code code, double seconds)
{
	if (!m || !point)
		return;
	/* DefaultPreemption counts every PostFilter run (defaultpreemption.PostFilter: PreemptionAttempts);
	 * it is the one in-tree PostFilter plugin, and the extension point is observed every cycle. */
	if (!plugin && !strcmp(point, "PostFilter"))
		kube_counter_inc(m->preempt_attempts, NULL);
	if (plugin)
		kube_series_observe(cached_series(m, plugin, point, code, true), seconds);
	else
		kube_series_observe(cached_series(m, point, profile ? profile : "", code, false), seconds);
}

/* Removes uid's entry; returns its start time or -1. Caller holds mu. */
static int64_t sli_take_locked(struct sk_sched_metrics *m, const char *uid)
{
	struct sli_entry **pp = &m->sli_map[hash_str(uid) % SLI_BUCKETS];
	for (; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->uid, uid)) {
			struct sli_entry *e = *pp;
			int64_t start = e->start_ns;
			*pp = e->next;
			free(e->uid);
			free(e);
			m->nsli--;
			return start;
		}
	return -1;
}

void sk_sched_metrics_victim(struct sk_sched_metrics *m, const char *preemptor_uid)
{
	if (!m || !preemptor_uid)
		return;
	pthread_mutex_lock(&m->mu);
	int i = 0;
	while (i < m->nvictims_of && strcmp(m->victims_of[i].uid, preemptor_uid))
		i++;
	if (i == m->nvictims_of) {
		if (m->nvictims_of == VICTIM_SLOTS) /* full: forget the oldest */
			memmove(m->victims_of, m->victims_of + 1, (VICTIM_SLOTS - 1) * sizeof m->victims_of[0]), i--;
		else
			m->nvictims_of++;
		snprintf(m->victims_of[i].uid, sizeof m->victims_of[i].uid, "%s", preemptor_uid);
		m->victims_of[i].n = 0;
	}
	m->victims_of[i].n++;
	pthread_mutex_unlock(&m->mu);
}

/* The victims counted for uid since its last outcome (0 when none), forgotten. */
static int take_victims(struct sk_sched_metrics *m, const char *uid)
{
	int n = 0;
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < m->nvictims_of; i++)
		if (!strcmp(m->victims_of[i].uid, uid)) {
			n = m->victims_of[i].n;
			memmove(m->victims_of + i, m->victims_of + i + 1, (size_t)(m->nvictims_of - i - 1) * sizeof m->victims_of[0]);
			m->nvictims_of--;
			break;
		}
	pthread_mutex_unlock(&m->mu);
	return n;
}

void sk_sched_metrics_attempt(struct sk_sched_metrics *m, const struct sk_outcome *o, int64_t now_ns)
{
	if (!m || !o || !o->pod)
		return;
	const char *result = sk_sched_metrics_result_label(o->result);
	const char *profile = o->profile ? o->profile : "";
	kube_counter_inc(m->attempts, KUBE_LABELS(result, profile));
	kube_histogram_observe(m->attempt_duration, o->duration_s, KUBE_LABELS(result, profile));
	if (o->algorithm_s > 0)
		kube_histogram_observe(m->algorithm, o->algorithm_s, NULL);
	int victims = take_victims(m, o->pod->uid);
	if (o->nominated_node && victims > 0)
		kube_histogram_observe(m->victims, victims, NULL); /* preemption.prepareCandidate */
	int64_t attempt_start = now_ns - (int64_t)(o->duration_s * 1e9);
	pthread_mutex_lock(&m->mu);
	int64_t start = sli_take_locked(m, o->pod->uid);
	if (o->result != SK_RESULT_SCHEDULED) {
		/* Remember when the first attempt began; later attempts keep that start. */
		struct sli_entry *e = calloc(1, sizeof *e);
		if (e && (e->uid = strdup(o->pod->uid))) {
			uint32_t b = hash_str(e->uid) % SLI_BUCKETS;
			e->start_ns = start >= 0 ? start : attempt_start;
			e->next = m->sli_map[b];
			m->sli_map[b] = e;
			m->nsli++;
		} else {
			free(e);
		}
	}
	pthread_mutex_unlock(&m->mu);
	if (o->result == SK_RESULT_SCHEDULED) {
		char attempts[16];
		snprintf(attempts, sizeof attempts, "%d", o->attempts > 0 ? o->attempts : 1);
		double sli = (double)(now_ns - (start >= 0 ? start : attempt_start)) / 1e9;
		kube_histogram_observe(m->sli, sli, KUBE_LABELS(attempts));
		kube_histogram_observe(m->pod_attempts, o->attempts > 0 ? o->attempts : 1, NULL);
	}
}

void sk_sched_metrics_forget_pod(struct sk_sched_metrics *m, const char *uid)
{
	if (!m || !uid)
		return;
	pthread_mutex_lock(&m->mu);
	if (m->nsli > 0)
		sli_take_locked(m, uid);
	pthread_mutex_unlock(&m->mu);
}

void sk_sched_metrics_pending(struct sk_sched_metrics *m, const struct sk_queue_counts *c)
{
	if (!m)
		return;
	kube_gauge_set(m->pending, c->active, KUBE_LABELS("active"));
	kube_gauge_set(m->pending, c->backoff, KUBE_LABELS("backoff"));
	kube_gauge_set(m->pending, c->unschedulable, KUBE_LABELS("unschedulable"));
	kube_gauge_set(m->pending, c->gated, KUBE_LABELS("gated"));
}

void sk_sched_metrics_cache_size(struct sk_sched_metrics *m, int nodes, int pods, int assumed_pods)
{
	if (!m)
		return;
	kube_gauge_set(m->cache_size, nodes, KUBE_LABELS("nodes"));
	kube_gauge_set(m->cache_size, pods, KUBE_LABELS("pods"));
	kube_gauge_set(m->cache_size, assumed_pods, KUBE_LABELS("assumed_pods"));
}

void sk_sched_metrics_incoming(struct sk_sched_metrics *m, const char *queue, const char *event)
{
	if (m && queue && event)
		kube_counter_inc(m->incoming, KUBE_LABELS(queue, event));
}

void sk_sched_metrics_binding_conflict(struct sk_sched_metrics *m)
{
	if (m)
		kube_counter_inc(m->conflicts, NULL);
}

void sk_sched_metrics_leader(struct sk_sched_metrics *m, const char *lease_name, bool leading)
{
	if (m)
		kube_gauge_set(m->leader, leading ? 1 : 0, KUBE_LABELS(lease_name)), kube_counter_add(m->slowpath, 0, KUBE_LABELS(lease_name));
}

static void count_rejector(void *ctx, const struct sk_pod *pod, const char *plugin)
{
	struct sk_sched_metrics *m = ctx;
	const char *profile = pod->scheduler_name ? pod->scheduler_name : "";
	for (int i = 0; i < m->nunsched_seen; i++)
		if (!strcmp(m->unsched_seen[i].plugin, plugin) && !strcmp(m->unsched_seen[i].profile, profile)) {
			m->unsched_seen[i].n++;
			return;
		}
	if (m->nunsched_seen == m->capunsched_seen) {
		int cap = m->capunsched_seen ? 2 * m->capunsched_seen : 16;
		struct unsched_key *g = realloc(m->unsched_seen, (size_t)cap * sizeof *g);
		if (!g)
			return;
		m->unsched_seen = g;
		m->capunsched_seen = cap;
	}
	/* both names are interned (the plugin's registered name, the pod's schedulerName) */
	m->unsched_seen[m->nunsched_seen++] = (struct unsched_key){ .plugin = plugin, .profile = profile, .n = 1 };
}

void sk_sched_metrics_unschedulable(struct sk_sched_metrics *m, struct sk_queue *q)
{
	if (!m || !q)
		return;
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < m->nunsched_seen; i++)
		m->unsched_seen[i].n = 0;
	sk_queue_each_rejector(q, count_rejector, m);
	for (int i = 0; i < m->nunsched_seen; i++) /* series seen before and now empty go to 0 */
		kube_gauge_set(m->unsched, m->unsched_seen[i].n, KUBE_LABELS(m->unsched_seen[i].plugin, m->unsched_seen[i].profile));
	pthread_mutex_unlock(&m->mu);
}

void sk_sched_metrics_queue_moved(void *ctx, const struct sk_pod *pod, int to, const char *event)
{
	(void)pod;
	const char *queue = sk_sched_metrics_queue_label((enum sk_queue_where)to);
	if (queue && event)
		kube_counter_inc(((struct sk_sched_metrics *)ctx)->incoming, KUBE_LABELS(queue, event));
}

void sk_sched_metrics_leader_slowpath(struct sk_sched_metrics *m, const char *lease_name)
{
	if (m)
		kube_counter_inc(m->slowpath, KUBE_LABELS(lease_name ? lease_name : ""));
}

/* Per-thread cache of scheduler_plugin_evaluation_total series, keyed by the addresses of the
 * label strings (the framework's plugin and profile names, literal points: stable for the
 * framework's life) and the instance id, as series_cache: added once per chunk of nodes per
 * plugin, a lookup by labels each time would cost more than the count. */
#define EVAL_CACHE 256 /* 4-way sets: a profile has a few dozen (plugin, point) pairs */
#define EVAL_WAYS 4
static _Thread_local struct eval_cache_entry {
	uint64_t id;
	const char *plugin, *point, *profile;
	struct kube_metric_series *series;
} eval_cache[EVAL_CACHE];
static _Thread_local unsigned eval_victim;

void sk_sched_metrics_plugin_evaluated(struct sk_sched_metrics *m, const char *profile, const char *point,
				       const char *plugin, double n)
{
	if (!m || !point || !plugin)
		return;
	if (!profile)
		profile = "";
	uint64_t h = (uint64_t)(uintptr_t)plugin * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)point * 0xC2B2AE3D27D4EB4Full ^
		     (uint64_t)(uintptr_t)profile * 0x165667B19E3779F9ull;
	struct eval_cache_entry *set = &eval_cache[((h ^ (h >> 29)) % (EVAL_CACHE / EVAL_WAYS)) * EVAL_WAYS];
	for (int w = 0; w < EVAL_WAYS; w++) {
		struct eval_cache_entry *e = &set[w];
		if (e->id == m->id && e->plugin == plugin && e->point == point && e->profile == profile && e->series) {
			kube_series_add(e->series, n);
			return;
		}
	}
	struct kube_metric_series *s = kube_metric_with(m->evaluations, KUBE_LABELS(plugin, point, profile));
	if (!s)
		return;
	set[eval_victim++ % EVAL_WAYS] =
		(struct eval_cache_entry){ .id = m->id, .plugin = plugin, .point = point, .profile = profile, .series = s };
	kube_series_add(s, n);
}

void sk_sched_metrics_permit_waited(struct sk_sched_metrics *m, enum sk_code code, double seconds)
{
	if (m)
		kube_histogram_observe(m->permit_wait, seconds, KUBE_LABELS(sk_code_string(code)));
}

void sk_sched_metrics_goroutines(struct sk_sched_metrics *m, const char *operation, int delta)
{
	if (!m || !operation)
		return;
	struct kube_metric_series *s = !strcmp(operation, "Filter") ? m->g_filter
				       : !strcmp(operation, "Score") ? m->g_score
				       : !strcmp(operation, "binding") ? m->g_binding : NULL;
	if (s)
		kube_series_gauge_add(s, delta);
	else
		kube_gauge_add(m->goroutines, delta, KUBE_LABELS(operation));
}

void sk_sched_metrics_event_handled(struct sk_sched_metrics *m, const char *event, double seconds)
{
	if (m && event)
		kube_histogram_observe(m->event_handling, seconds, KUBE_LABELS(event));
}

void sk_sched_metrics_queue_inflight(void *ctx, const char *event, int delta)
{
	struct sk_sched_metrics *m = ctx;
	if (m && event)
		kube_gauge_add(m->inflight, delta, KUBE_LABELS(event));
}

void sk_sched_metrics_queue_hint(void *ctx, const char *plugin, const char *event, const char *hint, double seconds)
{
	struct sk_sched_metrics *m = ctx;
	if (m && plugin && event && hint)
		kube_histogram_observe(m->hint_duration, seconds, KUBE_LABELS(plugin, event, hint));
}
