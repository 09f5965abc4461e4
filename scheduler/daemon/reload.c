/* Configuration generations: building the frameworks of a (re)loaded --config beside the
 * running ones, the swap, the reaper that frees a replaced generation once no cycle uses it, the
 * config watcher, and the reload metrics.
 *
 * Locking rules (the fields are in internal.h):
 *  - d->gen, the running generation, is written only by sk_dm_gen_swap, with reload_mu held
 *    (or by sk_daemon_new before any thread runs) and names_lock's write side. Readers on other
 *    threads hold names_lock's read side (pod handlers for a whole event, se_get_pod and
 *    se_patch_failure through sk_dm_is_ours, /configz, sk_daemon_config_hash); code under
 *    reload_mu may read d->gen without names_lock, since only it writes.
 *  - reload_mu serializes sk_daemon_reload (the watcher, tests) and guards last_seen. Held
 *    while building and swapping; it is taken before names_lock, a profile's bind_mu and
 *    reap_mu, never while holding them.
 *  - names_lock's write side is held for the swap only: the scheduler's framework list, d->gen,
 *    the Lease annotation and the requeue pass over the pod store (the store's read lock, then
 *    queue/nominator/metrics locks, inside it). Never across HTTP, never while waiting.
 *  - profile_ctx.bind_mu guards binds: fw_bind counts a POST in flight under it unless removed
 *    is set; the swap sets removed under it and waits (bind_cv) until binds is 0, after it
 *    released names_lock: a POST can take seconds, and names_lock is never held across HTTP.
 *  - reap_mu guards retired, zombies, reap_stop and watch_stop. The swap appends the old
 *    generation to retired under it; the reaper takes it off, then frees it without the lock.
 *    The watcher sleeps on watch_cv under reap_mu and drops it before calling sk_daemon_reload.
 *
 * Why frameworks in flight are safe: a scheduling cycle takes its framework reference from the
 * scheduler (sk_scheduler_set_frameworks swaps the list; a cycle begun before keeps the old
 * framework), and a binding job keeps it until it ends. The swap stores d->cycles in
 * retired_cycles; the reaper waits until the loop finished a cycle after that (or is not
 * running) and until no binding is queued or running (sk_scheduler_wait_bindings), then drops
 * the generation's references. If one is still not the last, the generation goes to zombies and
 * lives until sk_daemon_free, after the scheduler is gone: a config is never freed under a live
 * framework. Event recorders are shared between generations by reference count. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "kube/log.h"
#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/backend/queue.h"
#include "kube/flags.h"
#include "scheduler/daemon/internal.h"
#include "scheduler/framework/loader.h"

int sk_dm_reload_metrics_new(struct sk_daemon *d)
{
	d->m_reloads = kube_counter_new(d->registry, "schedkit_config_reloads_total",
					"Reloads of the --config file by result (success, failure).", 1,
					KUBE_LABELS("result"));
	d->m_last_ok = kube_gauge_new(d->registry, "schedkit_config_last_reload_successful",
				      "1 when the running configuration is the --config file's content, 0 after a rejected change.",
				      0, NULL);
	d->m_last_ok_ts = kube_gauge_new(d->registry, "schedkit_config_last_reload_success_timestamp_seconds",
					 "Unix time of the last configuration load that succeeded (start-up included).",
					 0, NULL);
	d->m_reload_failures = kube_counter_new(d->registry, "schedkit_config_reload_failures_total",
						"Rejected reloads (the --config file or the --plugin-dir modules); the running configuration stayed.",
						0, NULL);
	kube_counter_add(d->m_reload_failures, 0, NULL);
	kube_counter_add(d->m_reloads, 0, KUBE_LABELS("success"));
	kube_counter_add(d->m_reloads, 0, KUBE_LABELS("failure"));
	kube_gauge_set(d->m_last_ok, 1, NULL);
	kube_gauge_set(d->m_last_ok_ts, (double)time(NULL), NULL);
	return 0;
}

static void rec_holder_unref(struct sk_daemon *d, struct rec_holder *rh)
{
	if (!rh || atomic_fetch_sub(&rh->refs, 1) != 1)
		return;
	/* With the shutdown flush abandoned, the recorder's sender may still be blocked on the API
	 * server: leave it (the process is exiting). */
	if (!atomic_load(&d->events_abandoned))
		kube_event_recorder_free(rh->rec);
	free(rh);
}

/* Frees a generation whose frameworks are released (or were never built). */
void sk_dm_gen_free(struct sk_daemon *d, struct gen *g)
{
	if (!g)
		return;
	for (int i = 0; g->fws && i < g->n; i++)
		sk_framework_unref(g->fws[i]);
	free(g->fws);
	for (int i = 0; g->pcs && i < g->n; i++) {
		rec_holder_unref(d, g->pcs[i].rh);
		pthread_mutex_destroy(&g->pcs[i].bind_mu);
		pthread_cond_destroy(&g->pcs[i].bind_cv);
	}
	free(g->pcs);
	free(g->configz);
	sk_config_free(g->cfg);
	free(g);
}

static struct rec_holder *find_holder(const struct gen *g, const char *name)
{
	for (int i = 0; g && i < g->n; i++)
		if (!strcmp(g->pcs[i].name, name))
			return g->pcs[i].rh;
	return NULL;
}

/* The event recorder of schedulerName `name`: the one `old` has for it (one more reference), or
 * a new one. NULL when it cannot start. */
static struct rec_holder *hold_recorder(struct sk_daemon *d, const struct gen *old, const char *name, const char *host)
{
	struct rec_holder *rh = find_holder(old, name);
	if (rh) {
		atomic_fetch_add(&rh->refs, 1);
		return rh;
	}
	char instance[512];
	snprintf(instance, sizeof instance, "%s-%s", name, host);
	if (!(rh = calloc(1, sizeof *rh)) || kube_event_recorder_new(d->event_client, name, instance, &rh->rec) != 0) {
		free(rh);
		return NULL;
	}
	atomic_init(&rh->refs, 1);
	return rh;
}

static void warn_unavailable(const struct sk_profile_config *p)
{
	char list[1024] = "";
	for (int k = 0; k < p->nunavailable; k++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? "," : "", p->unavailable[k]);
	klog_warning("Upstream default plugins are not available in this build and are skipped",
		     " profile=%s plugins=%s", p->scheduler_name, list);
}

/* Builds every framework of cfg (taken: freed on failure) beside the running generation `old`
 * (may be NULL), reusing its event recorders for the schedulerNames it keeps. Returns the new
 * generation, or NULL and *err naming the profile. Touches nothing the running one uses. */
struct gen *sk_dm_gen_build(struct sk_daemon *d, struct sk_config *cfg, const struct gen *old, char **err)
{
	struct gen *g = calloc(1, sizeof *g);
	if (!g) {
		sk_config_free(cfg);
		kube_errf(err, "out of memory");
		return NULL;
	}
	g->cfg = cfg;
	g->pcs = calloc((size_t)cfg->nprofiles + 1, sizeof *g->pcs);
	g->fws = calloc((size_t)cfg->nprofiles + 1, sizeof *g->fws);
	if (!g->pcs || !g->fws) {
		sk_dm_gen_free(d, g);
		kube_errf(err, "out of memory");
		return NULL;
	}
	char host[200] = "localhost";
	gethostname(host, sizeof host - 1);
	char *e = NULL;
	for (int i = 0; i < cfg->nprofiles; i++) {
		const struct sk_profile_config *p = &cfg->profiles[i];
		struct profile_ctx *pc = &g->pcs[i];
		pc->d = d;
		pc->name = p->scheduler_name;
		pthread_mutex_init(&pc->bind_mu, NULL);
		pthread_cond_init(&pc->bind_cv, NULL);
		atomic_init(&pc->removed, false);
		g->n = i + 1; /* pcs[0..i] are initialised: gen_free cleans them up */
		if (!(pc->rh = hold_recorder(d, old, p->scheduler_name, host))) {
			sk_dm_gen_free(d, g);
			kube_errf(err, "event recorder for profile %s: cannot start", p->scheduler_name);
			return NULL;
		}
		struct sk_framework_env fenv;
		sk_dm_framework_env(pc, &fenv);
		if (!(g->fws[i] = sk_framework_new(cfg, p, &fenv, &e))) {
			kube_errf(err, "profile %s: %s", p->scheduler_name, e ? e : "cannot build");
			free(e);
			sk_dm_gen_free(d, g);
			return NULL;
		}
		if (p->nunavailable > 0) /* the loader logs nothing (scheduler/config.h) */
			warn_unavailable(p);
	}
	sk_config_log_warnings(cfg);
	if (d->opts.secure_port != 0 && !(g->configz = sk_dm_build_configz(cfg))) {
		sk_dm_gen_free(d, g);
		kube_errf(err, "configz: out of memory");
		return NULL;
	}
	return g;
}

/* ---------- what a reload cannot change ---------- */

static bool json_field_equal(const cJSON *a, const cJSON *b, const char *field)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, field), *y = cJSON_GetObjectItemCaseSensitive(b, field);
	if (!x || !y)
		return !x && !y;
	return cJSON_Compare(x, y, true);
}

static const cJSON *plugin_args_json(const cJSON *cfg_json, const char *plugin)
{
	const cJSON *prof = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cfg_json, "profiles"), 0);
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(prof, "pluginConfig")) {
		const char *n = kube_obj_get_string(it, "name");
		if (n && !strcmp(n, plugin))
			return cJSON_GetObjectItemCaseSensitive(it, "args");
	}
	return NULL;
}

static const char *queue_sort_name(const struct sk_config *c)
{
	if (c->nprofiles < 1 || c->profiles[0].points[SK_EP_QUEUE_SORT].n < 1)
		return "";
	return c->profiles[0].points[SK_EP_QUEUE_SORT].items[0].desc->name;
}

/* The fields of `next` that the running process cannot take without a restart, comma-separated
 * into buf ("" when none): the worker pool (parallelism), the client, leader election, the
 * queue's backoff bounds and its order (queueSort plugin and args: the activeQ heap is ordered
 * by it). Returns -1 on OOM. */
static int restart_fields(const struct sk_config *cur, const struct sk_config *next, char *buf, size_t n)
{
	static const char *const fields[] = { "parallelism", "leaderElection", "clientConnection",
					      "podInitialBackoffSeconds", "podMaxBackoffSeconds" };
	buf[0] = '\0';
	cJSON *a = sk_config_to_json(cur), *b = sk_config_to_json(next);
	if (!a || !b) {
		cJSON_Delete(a);
		cJSON_Delete(b);
		return -1;
	}
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (!json_field_equal(a, b, fields[i]))
			snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? "," : "", fields[i]);
	const char *qa = queue_sort_name(cur), *qb = queue_sort_name(next);
	const cJSON *aa = plugin_args_json(a, qa), *ab = plugin_args_json(b, qb);
	if (strcmp(qa, qb) || !(aa ? ab && cJSON_Compare(aa, ab, true) : !ab))
		snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? "," : "", "queueSort");
	cJSON_Delete(a);
	cJSON_Delete(b);
	return 0;
}

/* ---------- the swap ---------- */

static const struct sk_cluster_event RELOAD_EVENT = { SK_EV_WILDCARD, SK_ACT_ALL, "SchedulerConfigReload" };

static bool gen_has(const struct gen *g, const char *name)
{
	return g && name && find_holder(g, name) != NULL;
}

struct requeue_ctx {
	struct sk_daemon *d;
	const struct gen *old, *next;
	int added, removed;
};

/* Under the store's read lock and names_lock (write side): pending pods of a profile the reload
 * added are queued, those of a profile it removed leave the queue. */
static void requeue_fn(const cJSON *obj, void *u)
{
	struct requeue_ctx *r = u;
	const char *sn = kube_obj_get_string(obj, "spec.schedulerName");
	if (!sn)
		sn = "default-scheduler";
	bool now = gen_has(r->next, sn), before = gen_has(r->old, sn);
	if (now == before || kube_obj_get_string(obj, "spec.nodeName"))
		return;
	struct sk_pod *p = sk_dm_decode_pod(obj);
	if (!p)
		return;
	struct sk_queue *q = sk_scheduler_queue(r->d->sched);
	if (now && !sk_dm_pod_terminal(p)) {
		if (sk_queue_add(q, p) == 0) {
			sk_nominator_add(r->d->nom, p, NULL);
			sk_dm_incoming(r->d, p, "SchedulerConfigReload");
			r->added++;
		}
	} else if (!now && sk_queue_where_is(q, p->uid) != SK_Q_IN_FLIGHT) {
		/* A pod in flight stays: its attempt ends on the old framework, whose binding is
		 * refused (fw_bind), and the failure path finds it not ours (se_get_pod) unless a later
		 * reload added its profile back, in which case it is requeued, never duplicated. */
		sk_queue_delete(q, p);
		sk_nominator_delete(r->d->nom, p->uid);
		sk_sched_metrics_forget_pod(r->d->metrics, p->uid);
		r->removed++;
	}
	sk_pod_unref(p);
}

static void names_list(const struct gen *g, const struct gen *other, bool in_other, char *buf, size_t n)
{
	buf[0] = '\0';
	for (int i = 0; g && i < g->n; i++)
		if (gen_has(other, g->pcs[i].name) == in_other)
			snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? "," : "", g->pcs[i].name);
}

/* Installs g (built by gen_build) as the running generation. 0, or -1 and *err (nothing changed). */
int sk_dm_gen_swap(struct sk_daemon *d, struct gen *g, char **err)
{
	struct gen *old = d->gen;
	char added[1024], removed[1024], kept[1024];
	names_list(g, old, false, added, sizeof added);
	names_list(old, g, false, removed, sizeof removed);
	names_list(g, old, true, kept, sizeof kept);
	struct requeue_ctx rq = { .d = d, .old = old, .next = g };

	pthread_rwlock_wrlock(&d->names_lock);
	if (sk_scheduler_set_frameworks(d->sched, g->fws, g->n) != 0) {
		pthread_rwlock_unlock(&d->names_lock);
		return kube_errf(err, "installing the frameworks: out of memory");
	}
	d->gen = g;
	if (d->leader && kube_leader_set_annotation(d->leader, CONFIG_HASH_ANNOTATION, g->cfg->sha256) != 0)
		klog_error("Cannot update the config hash annotation of the Lease: out of memory");
	if (d->pods && (added[0] || removed[0]))
		kube_store_list_with(d->pods, requeue_fn, &rq);
	pthread_rwlock_unlock(&d->names_lock);
	if (!old)
		return 0;
	/* Cycles begun before the swap finish on the old frameworks: the reaper waits for them. */
	old->retired_cycles = atomic_load(&d->cycles);

	/* Removed profiles: wait for their binding POSTs in flight, refuse the others. */
	for (int i = 0; i < old->n; i++) {
		struct profile_ctx *pc = &old->pcs[i];
		if (gen_has(g, pc->name))
			continue;
		pthread_mutex_lock(&pc->bind_mu);
		atomic_store(&pc->removed, true);
		while (pc->binds > 0)
			pthread_cond_wait(&pc->bind_cv, &pc->bind_mu);
		pthread_mutex_unlock(&pc->bind_mu);
	}
	/* Kept profiles may schedule differently now: pods waiting as unschedulable are tried again
	 * (those still backing off go to the backoff queue: their backoff is kept). */
	if (kept[0])
		sk_queue_move_all(sk_scheduler_queue(d->sched), &RELOAD_EVENT, NULL, NULL);

	klog_info(0, "Configuration reloaded", " config-hash=%s previous=%s profiles=%d added=[%s] removed=[%s] kept=[%s]"
		  " pods-queued=%d pods-dropped=%d", g->cfg->sha256, old->cfg->sha256, g->n, added, removed, kept,
		  rq.added, rq.removed);
	/* Handed to the reaper: old may be freed from here on. */
	pthread_mutex_lock(&d->reap_mu);
	old->next = NULL;
	struct gen **pp = &d->retired;
	while (*pp)
		pp = &(*pp)->next;
	*pp = old;
	pthread_cond_broadcast(&d->reap_cv);
	pthread_mutex_unlock(&d->reap_mu);
	return 0;
}

/* ---------- the reaper: frees a replaced generation once nothing uses it ---------- */

/* A retired generation's frameworks are referenced by the scheduler's cycles that began before
 * the swap (the loop's current one, then binding jobs). Waits until the loop finished a cycle
 * after the swap (or is not running) and no binding is queued or running. False on stop. */
static bool wait_quiescent(struct sk_daemon *d, const struct gen *g)
{
	pthread_mutex_lock(&d->reap_mu);
	while (!d->reap_stop && atomic_load(&d->loop_active) && atomic_load(&d->cycles) <= g->retired_cycles) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&d->reap_cv, &d->reap_mu, &ts);
	}
	bool stop = d->reap_stop;
	pthread_mutex_unlock(&d->reap_mu);
	if (stop)
		return false;
	sk_scheduler_wait_bindings(d->sched);
	return true;
}

/* Drops our references to g's frameworks. When each was the last one, g is freed; otherwise
 * (something unforeseen still holds one) g's config stays alive until sk_daemon_free, after the
 * scheduler is gone: never freed under a live framework. */
static void gen_release(struct sk_daemon *d, struct gen *g)
{
	bool all = true;
	for (int i = 0; i < g->n; i++) {
		if (g->fws[i] && !sk_framework_unref(g->fws[i]))
			all = false;
		g->fws[i] = NULL;
	}
	if (all) {
		klog_info(2, "Released the frameworks of a replaced configuration", " config-hash=%s", g->cfg->sha256);
		sk_dm_gen_free(d, g);
		return;
	}
	klog_warning("A replaced configuration is still referenced; keeping it until exit", " config-hash=%s",
		     g->cfg->sha256);
	pthread_mutex_lock(&d->reap_mu);
	g->next = d->zombies;
	d->zombies = g;
	pthread_mutex_unlock(&d->reap_mu);
}

void *sk_dm_reaper_main(void *arg)
{
	struct sk_daemon *d = arg;
	for (;;) {
		pthread_mutex_lock(&d->reap_mu);
		while (!d->retired && !d->reap_stop)
			pthread_cond_wait(&d->reap_cv, &d->reap_mu);
		struct gen *g = d->reap_stop ? NULL : d->retired;
		pthread_mutex_unlock(&d->reap_mu);
		if (!g || !wait_quiescent(d, g))
			break;
		pthread_mutex_lock(&d->reap_mu);
		d->retired = g->next;
		pthread_mutex_unlock(&d->reap_mu);
		gen_release(d, g);
	}
	return NULL;
}

/* ---------- the config watcher ---------- */

void sk_dm_sha256_hex(const void *buf, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	out[0] = '\0';
	if (EVP_Digest(buf, len, md, &mdlen, EVP_sha256(), NULL) != 1)
		return;
	for (unsigned int i = 0; i < mdlen && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* Reads the whole file through one descriptor: with kubelet's atomic `..data` symlink swap the
 * path resolves to either the old or the new content, never a mix. 0, or -1 and *err. */
static int read_file(const char *path, char **out, size_t *len, char **err)
{
	int e;
	if (!(*out = kube_read_file(path, MAX_CONFIG_BYTES, len, &e)))
		return e == EFBIG ? kube_errf(err, "reading %s: larger than %d bytes", path, MAX_CONFIG_BYTES)
				  : kube_errf(err, "reading %s: %s", path, strerror(e));
	return 0;
}

/* The rejection on the leader's Lease: the rejected file's hash and the message, cut at
 * REJECTED_ERROR_MAX bytes (on a UTF-8 boundary). The messages carry paths and field values of the
 * config, never credentials (the config holds none; the kubeconfig is not read here). */
static void mark_rejected(struct sk_daemon *d, const char *hash, const char *summary)
{
	if (!d->leader)
		return;
	char msg[REJECTED_ERROR_MAX + 1];
	snprintf(msg, sizeof msg, "%s", summary ? summary : "rejected");
	size_t n = strlen(msg);
	if (n == REJECTED_ERROR_MAX)
		while (n > 0 && ((unsigned char)msg[n] & 0xc0) == 0x80)
			msg[--n] = '\0';
	if (kube_leader_set_annotation(d->leader, REJECTED_HASH_ANNOTATION, hash) != 0 ||
	    kube_leader_set_annotation(d->leader, REJECTED_ERROR_ANNOTATION, msg) != 0)
		klog_error("Cannot note the rejected configuration on the Lease: out of memory");
}

static void reload_failed(struct sk_daemon *d, const char *source, const char *hash, const char *summary,
			  const char *const *msgs, int nmsgs)
{
	kube_counter_inc(d->m_reloads, KUBE_LABELS("failure"));
	kube_counter_inc(d->m_reload_failures, NULL);
	mark_rejected(d, hash, summary);
	kube_gauge_set(d->m_last_ok, 0, NULL);
	klog_error("Configuration reload rejected; the running configuration stays", " file=%s config-hash=%s running=%s err=\"%s\"",
		   source, hash, d->gen->cfg->sha256, summary);
	for (int i = 0; i < nmsgs; i++)
		klog_error("Invalid scheduler configuration", " file=%s err=\"%s\"", source, msgs[i]);
}

/* The Lease no longer reports a rejection: after a good reload, and when the files are back to
 * what runs (a rejected change was undone). */
static void clear_rejected(struct sk_daemon *d)
{
	if (d->leader && (kube_leader_set_annotation(d->leader, REJECTED_HASH_ANNOTATION, NULL) != 0 ||
			  kube_leader_set_annotation(d->leader, REJECTED_ERROR_ANNOTATION, NULL) != 0))
		klog_error("Cannot clear the rejected configuration on the Lease: out of memory");
}

static void reload_ok(struct sk_daemon *d)
{
	clear_rejected(d);
	kube_counter_inc(d->m_reloads, KUBE_LABELS("success"));
	kube_gauge_set(d->m_last_ok, 1, NULL);
	kube_gauge_set(d->m_last_ok_ts, (double)time(NULL), NULL);
}

/* One look at a configuration's content from source (the --config file, or the ConfigMap
 * watched through the API: cmwatch.c), reload_mu held. last_seen (size SEEN_MAX) is that
 * source's own memory of what it offered last: a source reloads only when its content changed
 * since, so a file that lags behind the API does not put an older configuration back. Takes buf. */
int sk_dm_reload_content_locked(struct sk_daemon *d, char *buf, size_t len, const char *source, char *last_seen,
				char **err)
{
	char *e = NULL;
	char hash[72];
	sk_dm_sha256_hex(buf, len, hash);
	/* The plugin files count as part of the configuration: a changed .so reloads like a changed file. */
	const char *const *dirs = (const char *const *)d->opts.plugin_dirs;
	int ndirs = kube_flag_strings_len(d->opts.plugin_dirs);
	char phash[65] = "", seen[sizeof d->last_seen];
	if (ndirs && sk_plugin_dirs_hash(dirs, ndirs, phash, NULL) != 0)
		snprintf(phash, sizeof phash, "unhashable");
	/* So does the Policy (--policy-config-file, --policy-configmap: policy_source.c), read now and
	 * handed to the load as read: a changed Policy alone reloads. */
	char *ptext = NULL, pwhere[SK_DM_POLICY_WHERE] = "", polhash[65] = "";
	size_t plen = 0;
	if (sk_dm_policy_configured(&d->opts)) {
		if (sk_dm_policy_current(d, &ptext, &plen, pwhere, &e) != 0) {
			int rc = 0; /* reported once per failure state, not every poll */
			if (strcmp(last_seen, "policy-unreadable")) {
				snprintf(last_seen, SEEN_MAX, "policy-unreadable");
				reload_failed(d, source, hash, e ? e : "cannot read the Policy", NULL, 0);
				rc = kube_errf(err, "%s", e ? e : "cannot read the Policy");
			}
			free(e);
			free(buf);
			return rc;
		}
		sk_dm_sha256_hex(ptext, plen, polhash);
	}
	snprintf(seen, sizeof seen, "%s/%s/%s", hash, phash, polhash);
	if (!strcmp(hash, d->gen->cfg->sha256) && !strcmp(phash, d->plugins_hash) && !strcmp(polhash, d->policy_hash)) {
		free(ptext);
		if (strcmp(last_seen, seen)) {
			if (last_seen[0])
				klog_info(0, "The configuration is back to the running configuration", " source=%s config-hash=%s",
					  source, hash);
			snprintf(last_seen, SEEN_MAX, "%s", seen);
			kube_gauge_set(d->m_last_ok, 1, NULL);
			clear_rejected(d);
		}
		free(buf);
		return 0;
	}
	if (!strcmp(seen, last_seen)) {
		free(ptext);
		free(buf);
		return 0; /* rejected before, or offered before and since replaced by another source's */
	}
	snprintf(last_seen, SEEN_MAX, "%s", seen);
	klog_info(0, "The configuration file, a plugin file or the Policy changed; loading it",
		  " file=%s config-hash=%s plugins-hash=%s%s%s%s", source, hash, phash, ptext ? " policy=\"" : "",
		  ptext ? pwhere : "", ptext ? "\"" : "");

	/* A new module set for the new generation: the running one keeps its own modules. */
	struct sk_module_set *mods = NULL;
	if (sk_module_set_load(dirs, ndirs, &mods, &e) != 0) {
		reload_failed(d, source, hash, e ? e : "loading plugins failed", NULL, 0);
		kube_errf(err, "%s", e ? e : "loading plugins failed");
		free(e);
		free(ptext);
		free(buf);
		return -1;
	}
	struct sk_errors errs = { 0 };
	struct sk_config_opts co = { .modules = mods, .policy_path = d->opts.policy_path, .policy_text = ptext,
				     .policy_len = plen, .policy_where = pwhere };
	struct sk_config *cfg = sk_config_load_opts(buf, len, &co, &errs);
	sk_module_set_unref(mods);
	free(ptext);
	free(buf);
	if (!cfg) {
		char *joined = sk_errors_join(&errs, "; ");
		reload_failed(d, source, hash, joined ? joined : "invalid configuration", (const char *const *)errs.msgs, errs.n);
		kube_errf(err, "%s", joined ? joined : "invalid configuration");
		free(joined);
		sk_errors_free(&errs);
		return -1;
	}
	sk_errors_free(&errs);
	char fields[256];
	if (restart_fields(d->gen->cfg, cfg, fields, sizeof fields) != 0) {
		sk_config_free(cfg);
		reload_failed(d, source, hash, "out of memory", NULL, 0);
		return kube_errf(err, "out of memory");
	}
	if (fields[0]) {
		char *msg = NULL;
		kube_errf(&msg, "changing %s needs a restart of the scheduler; nothing of this configuration was applied", fields);
		reload_failed(d, source, hash, msg ? msg : fields, NULL, 0);
		kube_errf(err, "%s", msg ? msg : fields);
		free(msg);
		sk_config_free(cfg);
		return -1;
	}
	struct gen *g = sk_dm_gen_build(d, cfg, d->gen, &e);
	if (!g || sk_dm_gen_swap(d, g, &e) != 0) {
		reload_failed(d, source, hash, e ? e : "cannot build the frameworks", NULL, 0);
		kube_errf(err, "%s", e ? e : "cannot build the frameworks");
		free(e);
		sk_dm_gen_free(d, g);
		return -1;
	}
	snprintf(d->plugins_hash, sizeof d->plugins_hash, "%s", phash);
	snprintf(d->policy_hash, sizeof d->policy_hash, "%s", polhash);
	reload_ok(d);
	return 1;
}

/* One look at the --config file (reload_mu held). While the ConfigMap is watched through the
 * API (cmwatch.c) that is the source: its last content is looked at again instead (with the
 * plugin files, which may have changed); the file, which kubelet refreshes later, is only the
 * fallback for when the API watch has not delivered the ConfigMap. */
static int check_config_locked(struct sk_daemon *d, char **err)
{
	char *buf = NULL, *e = NULL;
	size_t len = 0;
	if (sk_dm_cmwatch_active(d))
		return sk_dm_cmwatch_recheck_locked(d, err);
	if (!d->opts.config_path) { /* a Policy alone: over the defaults, as at start (daemon.c) */
		if (!(buf = strdup(SK_DM_DEFAULT_CONFIG)))
			return kube_errf(err, "out of memory");
		return sk_dm_reload_content_locked(d, buf, strlen(buf), "(default)", d->last_seen, err);
	}
	if (read_file(d->opts.config_path, &buf, &len, &e) != 0) {
		/* Reported once per failure state, not every poll. */
		int rc = 0;
		if (strcmp(d->last_seen, "unreadable")) {
			snprintf(d->last_seen, sizeof d->last_seen, "unreadable");
			reload_failed(d, d->opts.config_path, "-", e, NULL, 0);
			rc = kube_errf(err, "%s", e);
		}
		free(e);
		return rc;
	}
	return sk_dm_reload_content_locked(d, buf, len, d->opts.config_path, d->last_seen, err);
}

int sk_daemon_reload(struct sk_daemon *d, char **err)
{
	if (err)
		*err = NULL; /* kube_errf frees what *err holds: never a caller's stale pointer */
	if (!d->opts.config_path && !sk_dm_policy_configured(&d->opts))
		return 0;
	pthread_mutex_lock(&d->reload_mu);
	int rc = check_config_locked(d, err);
	pthread_mutex_unlock(&d->reload_mu);
	return rc;
}

void sk_daemon_config_hash(struct sk_daemon *d, char out[65])
{
	pthread_rwlock_rdlock(&d->names_lock);
	snprintf(out, 65, "%s", d->gen ? d->gen->cfg->sha256 : "");
	pthread_rwlock_unlock(&d->names_lock);
}

void *sk_dm_watch_main(void *arg)
{
	struct sk_daemon *d = arg;
	int ms = d->opts.config_poll_ms > 0 ? d->opts.config_poll_ms : DEFAULT_CONFIG_POLL_MS;
	pthread_mutex_lock(&d->reap_mu);
	while (!d->watch_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += ms / 1000;
		ts.tv_nsec += (long)(ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&d->watch_cv, &d->reap_mu, &ts);
		if (d->watch_stop)
			break;
		pthread_mutex_unlock(&d->reap_mu);
		sk_daemon_reload(d, NULL);
		pthread_mutex_lock(&d->reap_mu);
	}
	pthread_mutex_unlock(&d->reap_mu);
	return NULL;
}
