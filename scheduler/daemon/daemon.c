/* The daemon's lifecycle (daemon.h): sk_daemon_new in build steps, start (threads, informers,
 * election or the loop), the graceful stop (with the bounded event flush), free, and
 * sk_daemon_run with its signal handling. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/config.h"
#include "kube/flags.h"
#include "kube/log.h"
#include "kube/util.h"
#include "scheduler/backend/queue.h"
#include "scheduler/daemon/internal.h"
#include "scheduler/framework/extender.h"
#include "scheduler/framework/loader.h"

/* ---------- sk_daemon_new, step by step ---------- */

/* "<hostname>_<uuid>", as kube-scheduler names itself on the Lease. */
static void make_identity(char *buf, size_t n)
{
	char host[128] = "localhost", uuid[64] = "";
	gethostname(host, sizeof host - 1);
	FILE *f = fopen("/proc/sys/kernel/random/uuid", "r");
	if (f) {
		if (!fgets(uuid, sizeof uuid, f))
			uuid[0] = '\0';
		fclose(f);
		uuid[strcspn(uuid, "\n")] = '\0';
	}
	if (!uuid[0])
		snprintf(uuid, sizeof uuid, "%ld-%ld", (long)getpid(), (long)time(NULL));
	snprintf(buf, n, "%s_%s", host, uuid);
}

/* The modules of --plugin-dir, then --config (or the defaults without it) with them. NULL and
 * *err with every error; plugins_hash gets the hash of the plugin files loaded. */
struct sk_config *sk_dm_load_config(const struct sk_daemon_opts *o, char plugins_hash[65], char **err)
{
	return sk_dm_load_config_policy(o, NULL, 0, NULL, plugins_hash, err);
}

struct sk_config *sk_dm_load_config_policy(const struct sk_daemon_opts *o, const char *policy, size_t policy_len,
					   const char *where, char plugins_hash[65], char **err)
{
	struct sk_errors errs = { 0 };
	struct sk_config *cfg;
	const char *const *dirs = (const char *const *)o->plugin_dirs;
	int ndirs = kube_flag_strings_len(o->plugin_dirs);
	struct sk_module_set *mods = NULL;
	char *lerr = NULL;
	plugins_hash[0] = '\0'; /* as the watcher computes it: empty without --plugin-dir */
	if ((ndirs && sk_plugin_dirs_hash(dirs, ndirs, plugins_hash, &lerr) != 0) ||
	    sk_module_set_load(dirs, ndirs, &mods, &lerr) != 0) {
		kube_errf(err, "%s", lerr ? lerr : "loading plugins failed");
		free(lerr);
		return NULL;
	}
	struct sk_config_opts co = { .modules = mods, .policy_path = policy ? NULL : o->policy_path, .policy_text = policy,
				     .policy_len = policy_len, .policy_where = where };
	if (o->config_path) {
		cfg = sk_config_load_file_opts(o->config_path, &co, &errs);
	} else {
		static const char def[] = SK_DM_DEFAULT_CONFIG;
		cfg = sk_config_load_opts(def, sizeof def - 1, &co, &errs);
	}
	sk_module_set_unref(mods); /* the config holds it */
	if (!cfg) {
		char *joined = sk_errors_join(&errs, "\n  ");
		kube_errf(err, "config %s:\n  %s", o->config_path ? o->config_path : "(default)", joined ? joined : "invalid");
		free(joined);
	}
	sk_errors_free(&errs);
	return cfg;
}

/* The Policy read through the API (--policy-configmap) once the client exists: the configuration
 * loaded again with it (the first load, which built the client, had none). The Policy's hash
 * becomes the running one (reload.c compares against it). Replaces *cfg. */
static int load_with_policy(struct sk_daemon *d, struct sk_config **cfg, char **err)
{
	if (!sk_dm_policy_configured(&d->opts))
		return 0;
	char *text = NULL, where[SK_DM_POLICY_WHERE];
	size_t len = 0;
	if (sk_dm_policy_read(&d->opts, d->client, &text, &len, where, err) != 0)
		return -1;
	struct sk_config *with = sk_dm_load_config_policy(&d->opts, text, len, where, d->plugins_hash, err);
	sk_dm_sha256_hex(text, len, d->policy_hash);
	free(text);
	if (!with)
		return -1;
	sk_config_free(*cfg);
	*cfg = with;
	return 0;
}

static void init_locks(struct sk_daemon *d)
{
	pthread_mutex_init(&d->mu, NULL);
	pthread_mutex_init(&d->conflict_mu, NULL);
	pthread_mutex_init(&d->patch_mu, NULL);
	pthread_cond_init(&d->patch_cv, NULL);
	pthread_mutex_init(&d->house_mu, NULL);
	pthread_cond_init(&d->house_cv, NULL);
	pthread_rwlockattr_t rwa;
	pthread_rwlockattr_init(&rwa);
	/* a reload must not wait behind a steady stream of informer events */
	pthread_rwlockattr_setkind_np(&rwa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&d->names_lock, &rwa);
	pthread_rwlockattr_destroy(&rwa);
	pthread_mutex_init(&d->reload_mu, NULL);
	pthread_mutex_init(&d->reap_mu, NULL);
	pthread_cond_init(&d->reap_cv, NULL);
	pthread_cond_init(&d->watch_cv, NULL);
}

/* Our identity on the Lease and the Lease's name (flags over the config). */
static int build_identity(struct sk_daemon *d, const struct sk_config *cfg, char **err)
{
	const struct sk_daemon_opts *opts = &d->opts;
	const struct sk_leader_election_config *le = &cfg->leader_election;
	make_identity(d->identity, sizeof d->identity);
	d->lease_ns = strdup(opts->lease_namespace ? opts->lease_namespace
						   : (le->resource_namespace ? le->resource_namespace : "kube-system"));
	d->lease_name = strdup(opts->lease_name ? opts->lease_name
						: (le->resource_name ? le->resource_name : "kube-scheduler"));
	if (!d->lease_ns || !d->lease_name)
		return kube_errf(err, "out of memory");
	return 0;
}

/* The API client and the events client (--kubeconfig / --master over clientConnection). */
static int build_clients(struct sk_daemon *d, const struct sk_config *cfg, char **err)
{
	const struct sk_daemon_opts *opts = &d->opts;
	struct kube_config *kc = NULL;
	char *e = NULL;
	const char *kpath = opts->kubeconfig ? opts->kubeconfig
					     : (cfg->client_kubeconfig && *cfg->client_kubeconfig ? cfg->client_kubeconfig : NULL);
	if (kpath || !opts->master) {
		if (kube_config_load(kpath, NULL, &kc, &e) != 0) {
			kube_errf(err, "kubeconfig: %s", e ? e : "cannot load");
			free(e);
			return -1;
		}
	} else if (!(kc = kube_config_new(opts->master))) {
		return kube_errf(err, "out of memory");
	}
	if (opts->master && kpath) {
		free(kc->server);
		kc->server = strdup(opts->master);
	}
	if (cfg->client_qps > 0)
		kc->qps = cfg->client_qps;
	if (cfg->client_burst > 0)
		kc->burst = cfg->client_burst;
	/* the deprecated flags count without --config only (cmd/kube-scheduler/app/options ApplyDeprecated) */
	if (!opts->config_path && opts->kube_api_qps > 0)
		kc->qps = opts->kube_api_qps;
	if (!opts->config_path && opts->kube_api_burst > 0)
		kc->burst = opts->kube_api_burst;
	const char *h = kc->server ? strstr(kc->server, "://") : NULL;
	snprintf(d->api_host, sizeof d->api_host, "%.*s", h ? (int)strcspn(h + 3, "/") : 0, h ? h + 3 : "");
	int rc = kube_client_new(kc, &d->client, &e);
	if (rc == 0)
		rc = kube_client_new(kc, &d->event_client, &e);
	kube_config_free(kc);
	if (rc != 0) {
		kube_errf(err, "kube client: %s", e ? e : "cannot create");
		free(e);
		return -1;
	}
	/* Events are best effort (as client-go's broadcaster): no retries and a bounded wait, so a
	 * slow or vanished API server never holds up shutdown behind a thousand queued events. */
	kube_client_set_max_retries(d->event_client, 0);
	kube_client_set_timeout(d->event_client, 10);
	return 0;
}

/* Cluster state (cache, snapshot, nominator) and the metrics registry. */
static int build_state(struct sk_daemon *d, char **err)
{
	d->cache = sk_cache_new(0);
	d->snap = sk_snapshot_new();
	d->nom = sk_nominator_new();
	d->registry = kube_metrics_registry_new();
	d->metrics = d->registry ? sk_sched_metrics_new(d->registry) : NULL;
	sk_extender_metrics_register(d->registry); /* the extenders' calls (extender.h) */
	if (d->registry)
		sk_dm_reload_metrics_new(d);
	struct kube_client *clients[] = {d->client, d->event_client, NULL};
	d->std_metrics = d->registry ? kube_std_metrics_new(d->registry, clients, d->api_host) : NULL;
	d->decisions = sk_decisions_new(&(struct sk_decisions_opts){ .per_pod = d->opts.decisions_per_pod,
								      .max_records = d->opts.decisions_max,
								      .max_bytes = (int64_t)d->opts.decisions_max_mib << 20 });
	d->annotator = sk_annotator_new(d->client);
	d->summary = sk_summary_new(SK_SUMMARY_WINDOW_S, SK_SUMMARY_BUCKET_S);
	if (!d->cache || !d->snap || !d->nom || !d->metrics || !d->std_metrics || !d->decisions || !d->annotator ||
	    !d->summary)
		return kube_errf(err, "out of memory");
	return 0;
}

/* The worker pool and the scheduler (queue, binder threads) with the daemon as its env. */
static int build_scheduler(struct sk_daemon *d, const struct sk_config *cfg, char **err)
{
	char *e = NULL;
	if (!(d->pool = sk_pool_new(cfg->parallelism, &e))) {
		kube_errf(err, "worker pool: %s", e ? e : "cannot start");
		free(e);
		return -1;
	}
	struct sk_sched_env env;
	sk_dm_sched_env(d, cfg, &env);
	if (d->opts.pod_max_unsched_ms > 0)
		env.queue.max_in_unschedulable_ns = d->opts.pod_max_unsched_ms * 1000000LL;
	env.queue.moved = sk_sched_metrics_queue_moved;
	env.queue.moved_ctx = d->metrics;
	env.queue.inflight = sk_sched_metrics_queue_inflight;
	env.queue.hint_observed = sk_sched_metrics_queue_hint;
	if (!(d->sched = sk_scheduler_new(&env, &e))) {
		kube_errf(err, "scheduler: %s", e ? e : "cannot create");
		free(e);
		return -1;
	}
	return 0;
}

/* The first generation: one framework and one event recorder per profile. Takes cfg. */
static int build_first_generation(struct sk_daemon *d, struct sk_config *cfg, char **err)
{
	struct gen *g = sk_dm_gen_build(d, cfg, NULL, err);
	if (!g)
		return -1;
	if (sk_dm_gen_swap(d, g, err) != 0) {
		sk_dm_gen_free(d, g);
		return -1;
	}
	if (d->opts.config_path || sk_dm_policy_configured(&d->opts)) /* as reload.c notes what a source offered */
		snprintf(d->last_seen, sizeof d->last_seen, "%s/%s/%s", g->cfg->sha256, d->plugins_hash, d->policy_hash);
	return 0;
}

/* Pod, node and PodDisruptionBudget informers (not started) and the preemption client. */
static int build_informers(struct sk_daemon *d, char **err)
{
	struct kube_informer_opts po = { .version = "v1", .resource = "pods" };
	struct kube_informer_opts no = { .version = "v1", .resource = "nodes" };
	struct kube_informer_opts pdbo = { .group = "policy", .version = "v1", .resource = "poddisruptionbudgets" };
	if (kube_informer_new(d->client, &po, &d->pods) != 0 || kube_informer_new(d->client, &no, &d->nodes) != 0 ||
	    kube_informer_new(d->client, &pdbo, &d->pdbs) != 0 ||
	    !(d->preempt = sk_preempt_client_new(d->client, d->pods, d->pdbs)) || sk_dm_listers_new(d) != 0)
		return kube_errf(err, "informers: out of memory");
	if (sk_dm_volumes_new(d, err) != 0)
		return -1;
	/* As upstream's informer factory (cmd/kube-scheduler/app/server.go: TransformStripManagedFields). */
	kube_informer_set_transform(d->pods, kube_transform_strip_managed_fields, NULL);
	kube_informer_set_transform(d->nodes, kube_transform_strip_managed_fields, NULL);
	sk_dm_add_handlers(d);
	return 0;
}

/* The elector when leader election is on (flags over the config), with the config hash. */
static int build_leader(struct sk_daemon *d, char **err)
{
	const struct sk_daemon_opts *opts = &d->opts;
	const struct sk_leader_election_config *le = &d->gen->cfg->leader_election;
	if (!(opts->leader_elect >= 0 ? opts->leader_elect : le->leader_elect))
		return 0;
	struct kube_leader_config lc = {
		.ns = d->lease_ns, .name = d->lease_name, .identity = d->identity,
		.lease_duration_s = (opts->lease_duration_ms >= 0 ? opts->lease_duration_ms : le->lease_duration_ms) / 1000.0,
		.renew_deadline_s = (opts->renew_deadline_ms >= 0 ? opts->renew_deadline_ms : le->renew_deadline_ms) / 1000.0,
		.retry_period_s = (opts->retry_period_ms >= 0 ? opts->retry_period_ms : le->retry_period_ms) / 1000.0,
		.release_on_cancel = true,
	};
	sk_dm_leader_callbacks(d, &lc);
	char *e = NULL;
	if (kube_leader_new(d->client, &lc, &d->leader, &e) != 0) {
		kube_errf(err, "leader election: %s", e ? e : "invalid configuration");
		free(e);
		return -1;
	}
	if (kube_leader_set_annotation(d->leader, CONFIG_HASH_ANNOTATION, d->gen->cfg->sha256) != 0)
		return kube_errf(err, "out of memory");
	sk_sched_metrics_leader(d->metrics, d->lease_name, false);
	return 0;
}

int sk_daemon_new(const struct sk_daemon_opts *opts, struct sk_daemon **out, char **err)
{
	if (err)
		*err = NULL; /* kube_errf frees what *err holds: never a caller's stale pointer */
	*out = NULL;
	struct sk_daemon *d = calloc(1, sizeof *d);
	if (!d)
		return kube_errf(err, "out of memory");
	d->opts = *opts;
	init_locks(d);
	/* With --policy-configmap the Policy needs the API client, which needs the configuration's
	 * clientConnection: a first load without it, then load_with_policy (which also reads a
	 * --policy-config-file again, so that the running Policy's hash is of what was loaded). */
	struct sk_config *cfg = sk_dm_load_config(opts, d->plugins_hash, err);
	if (!cfg)
		goto fail;
	/* the first generation takes cfg; until then it is freed on every failure path */
	if (build_identity(d, cfg, err) != 0 || build_clients(d, cfg, err) != 0 || load_with_policy(d, &cfg, err) != 0 ||
	    build_state(d, err) != 0 || build_scheduler(d, cfg, err) != 0) {
		sk_config_free(cfg);
		goto fail;
	}
	if (sk_dm_volume_store_new(d, err) != 0 || build_first_generation(d, cfg, err) != 0 ||
	    build_informers(d, err) != 0 || build_leader(d, err) != 0 || sk_dm_cmwatch_new(d, err) != 0 ||
	    sk_dm_policy_watch_new(d, err) != 0 ||
	    (opts->secure_port != 0 && sk_dm_serve_new(d, err) != 0))
		goto fail;
	*out = d;
	return 0;
fail:
	sk_daemon_free(d);
	return -1;
}

int sk_daemon_start(struct sk_daemon *d, char **err)
{
	if (err)
		*err = NULL; /* kube_errf frees what *err holds: never a caller's stale pointer */
	char *e = NULL;
	pthread_mutex_lock(&d->mu);
	bool already = d->started;
	d->started = true;
	pthread_mutex_unlock(&d->mu);
	if (already)
		return 0;
	if (d->http && kube_http_server_start(d->http, &e) != 0) {
		kube_errf(err, "HTTP server: %s", e ? e : "cannot start");
		free(e);
		return -1;
	}
	if (d->http)
		klog_info(0, "Serving securely", " port=%d cert=%s", kube_http_server_port(d->http),
			  d->opts.tls_cert_file ? "file" : d->opts.cert_dir ? "cert-dir" : "self-signed-in-memory");
	if (sk_dm_dashboard_start(d) != 0)
		return kube_errf(err, "cannot start the dashboard thread");
	if (pthread_create(&d->patch_thread, NULL, sk_dm_patch_main, d) != 0)
		return kube_errf(err, "cannot start the status patch thread");
	d->patch_running = true;
	if (pthread_create(&d->house_thread, NULL, sk_dm_house_main, d) != 0)
		return kube_errf(err, "cannot start the housekeeping thread");
	d->house_running = true;
	if (sk_queue_start_flushers(sk_scheduler_queue(d->sched)) != 0)
		return kube_errf(err, "cannot start the queue flushers");
	if (kube_informer_start(d->nodes) != 0 || kube_informer_start(d->pods) != 0 || kube_informer_start(d->pdbs) != 0 ||
	    sk_dm_volumes_start(d) != 0 || sk_dm_listers_start(d) != 0)
		return kube_errf(err, "cannot start the informers");
	if (pthread_create(&d->reap_thread, NULL, sk_dm_reaper_main, d) != 0)
		return kube_errf(err, "cannot start the configuration reaper thread");
	d->reap_running = true;
	if (sk_dm_cmwatch_start(d) != 0)
		return kube_errf(err, "cannot start the ConfigMap watch");
	if (sk_dm_policy_watch_start(d) != 0)
		return kube_errf(err, "cannot start the policy config map watch");
	if ((d->opts.config_path || sk_dm_policy_configured(&d->opts)) && d->opts.config_poll_ms >= 0) {
		if (pthread_create(&d->watch_thread, NULL, sk_dm_watch_main, d) != 0)
			return kube_errf(err, "cannot start the configuration watcher thread");
		d->watch_running = true;
	}
	klog_info(0, "Starting schedkit-scheduler", " profiles=%d config-hash=%s leader-elect=%s config-reload=%s",
		  d->gen->n, d->gen->cfg->sha256, d->leader ? "true" : "false", d->watch_running ? "true" : "false");
	sk_config_log_notes(d->gen->cfg); /* --policy-config-file: what the Policy could not carry over */
	if (d->leader) {
		if (kube_leader_start(d->leader) != 0)
			return kube_errf(err, "cannot start leader election");
	} else {
		sk_dm_start_loop(d);
	}
	return 0;
}

struct flush_ctx {
	int nrecs;
	struct kube_event_recorder **recs; /* copied: the flusher never touches the daemon */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	int refs; /* the waiter and the flusher; the last one frees */
};

static void flush_ctx_unref(struct flush_ctx *f)
{
	pthread_mutex_lock(&f->mu);
	bool last = --f->refs == 0;
	pthread_mutex_unlock(&f->mu);
	if (last) {
		free(f->recs);
		pthread_mutex_destroy(&f->mu);
		pthread_cond_destroy(&f->cv);
		free(f);
	}
}

static void *flush_main(void *arg)
{
	struct flush_ctx *f = arg;
	for (int i = 0; i < f->nrecs; i++)
		if (f->recs[i])
			kube_event_recorder_flush(f->recs[i]);
	pthread_mutex_lock(&f->mu);
	f->done = true;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	flush_ctx_unref(f);
	return NULL;
}

/* Sends the queued events, waiting at most EVENT_FLUSH_TIMEOUT_S. When the API server does not
 * answer in time the recorders are left alone (d->events_abandoned): freeing them would wait
 * for the same sends; the process is exiting anyway. */
#define EVENT_FLUSH_TIMEOUT_S 5
static void flush_events(struct sk_daemon *d)
{
	/* every generation's recorders: the retired ones may hold events of removed profiles */
	int n = 0;
	for (struct gen *g = d->gen; g; g = NULL)
		n += g->n;
	for (struct gen *g = d->retired; g; g = g->next)
		n += g->n;
	for (struct gen *g = d->zombies; g; g = g->next)
		n += g->n;
	if (n == 0)
		return;
	struct flush_ctx *f = calloc(1, sizeof *f);
	pthread_t t;
	if (!f || !(f->recs = calloc((size_t)n + 1, sizeof *f->recs))) {
		free(f);
		return;
	}
	struct gen *lists[3] = { d->gen, d->retired, d->zombies };
	for (int l = 0; l < 3; l++)
		for (struct gen *g = lists[l]; g; g = l == 0 ? NULL : g->next)
			for (int i = 0; i < g->n; i++)
				f->recs[f->nrecs++] = g->pcs[i].rh->rec;
	f->refs = 2;
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	if (pthread_create(&t, NULL, flush_main, f) != 0) {
		f->refs = 1;
		flush_main(f);
		return;
	}
	pthread_detach(t);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += EVENT_FLUSH_TIMEOUT_S;
	pthread_mutex_lock(&f->mu);
	while (!f->done)
		if (pthread_cond_timedwait(&f->cv, &f->mu, &ts) != 0)
			break;
	bool done = f->done;
	pthread_mutex_unlock(&f->mu);
	if (!done) {
		klog_warning("Events not delivered before shutdown; giving up on them",
			     " timeout=%ds", EVENT_FLUSH_TIMEOUT_S);
		atomic_store(&d->events_abandoned, true);
	}
	flush_ctx_unref(f);
}

void sk_daemon_stop(struct sk_daemon *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	bool was_stopped = d->stopped, started = d->started;
	d->stopped = true;
	bool loop = d->loop_running;
	d->loop_running = false;
	pthread_mutex_unlock(&d->mu);
	if (was_stopped)
		return;
	atomic_store(&d->stopping, true);
	/* 0. no more reloads; 1. stop popping; 2. finish in-flight bindings; 3. release the lease. */
	pthread_mutex_lock(&d->reap_mu);
	d->watch_stop = true;
	pthread_cond_broadcast(&d->watch_cv);
	pthread_mutex_unlock(&d->reap_mu);
	if (d->watch_running) {
		pthread_join(d->watch_thread, NULL);
		d->watch_running = false;
	}
	sk_dm_cmwatch_stop(d);
	sk_dm_policy_watch_stop(d);
	if (d->sched)
		sk_queue_close(sk_scheduler_queue(d->sched));
	if (loop)
		pthread_join(d->loop_thread, NULL);
	if (d->sched)
		sk_scheduler_wait_bindings(d->sched);
	pthread_mutex_lock(&d->reap_mu);
	d->reap_stop = true;
	pthread_cond_broadcast(&d->reap_cv);
	pthread_mutex_unlock(&d->reap_mu);
	if (d->reap_running) {
		pthread_join(d->reap_thread, NULL);
		d->reap_running = false;
	}
	if (d->leader)
		kube_leader_stop(d->leader);
	if (d->pods)
		kube_informer_stop(d->pods);
	if (d->nodes)
		kube_informer_stop(d->nodes);
	if (d->pdbs)
		kube_informer_stop(d->pdbs);
	sk_dm_volumes_stop(d);
	sk_dm_listers_stop(d);
	if (d->patch_running) {
		pthread_mutex_lock(&d->patch_mu);
		d->patch_stop = true;
		pthread_cond_broadcast(&d->patch_cv);
		pthread_mutex_unlock(&d->patch_mu);
		pthread_join(d->patch_thread, NULL);
		d->patch_running = false;
	}
	if (d->house_running) {
		pthread_mutex_lock(&d->house_mu);
		d->house_stop = true;
		pthread_cond_broadcast(&d->house_cv);
		pthread_mutex_unlock(&d->house_mu);
		pthread_join(d->house_thread, NULL);
		d->house_running = false;
	}
	flush_events(d);
	sk_dm_dashboard_stop(d);
	if (d->http)
		kube_http_server_stop(d->http);
	if (started)
		klog_info(0, "Scheduler stopped");
}

void sk_daemon_free(struct sk_daemon *d)
{
	if (!d)
		return;
	sk_daemon_stop(d);
	kube_http_server_free(d->http);
	sk_dm_dashboard_free(d);
	sk_dm_serve_free(d);
	sk_dm_cmwatch_free(d);
	sk_dm_policy_watch_free(d);
	kube_leader_free(d->leader);
	kube_informer_free(d->pods);
	kube_informer_free(d->nodes);
	sk_scheduler_free(d->sched);
	sk_preempt_client_free(d->preempt); /* after the scheduler: binding cycles may still evict */
	kube_informer_free(d->pdbs);
	sk_dm_volumes_free(d);
	sk_dm_listers_free(d); /* after the scheduler: cycles read the listers */
	/* The scheduler is gone: no cycle holds a framework any more. */
	sk_dm_gen_free(d, d->gen);
	for (struct gen *g = d->retired, *n; g; g = n) {
		n = g->next;
		sk_dm_gen_free(d, g);
	}
	for (struct gen *g = d->zombies, *n; g; g = n) {
		n = g->next;
		sk_dm_gen_free(d, g);
	}
	sk_pool_free(d->pool);
	sk_nominator_free(d->nom);
	sk_snapshot_free(d->snap);
	sk_cache_free(d->cache);
	sk_sched_metrics_free(d->metrics);
	kube_std_metrics_free(d->std_metrics);
	sk_extender_metrics_unregister(d->registry);
	kube_metrics_registry_free(d->registry);
	sk_decisions_free(d->decisions);
	sk_annotator_free(d->annotator); /* before the client it writes with */
	sk_summary_free(d->summary);
	free(d->summary_published);
	if (!atomic_load(&d->events_abandoned)) /* still used by the abandoned senders */
		kube_client_free(d->event_client);
	kube_client_free(d->client);
	sk_dm_free_pending(d);
	free(d->lease_ns);
	free(d->lease_name);
	pthread_rwlock_destroy(&d->names_lock);
	pthread_mutex_destroy(&d->reload_mu);
	pthread_mutex_destroy(&d->reap_mu);
	pthread_cond_destroy(&d->reap_cv);
	pthread_cond_destroy(&d->watch_cv);
	pthread_mutex_destroy(&d->mu);
	pthread_mutex_destroy(&d->conflict_mu);
	pthread_mutex_destroy(&d->patch_mu);
	pthread_cond_destroy(&d->patch_cv);
	pthread_mutex_destroy(&d->house_mu);
	pthread_cond_destroy(&d->house_cv);
	free(d);
}

bool sk_daemon_failed(struct sk_daemon *d) { return atomic_load(&d->failed); }
int sk_daemon_http_port(const struct sk_daemon *d) { return d->http ? kube_http_server_port(d->http) : 0; }
bool sk_daemon_is_leading(struct sk_daemon *d) { return d->leader ? atomic_load(&d->leading) : true; }
bool sk_daemon_synced(struct sk_daemon *d)
{
	return d->pods && d->nodes && kube_informer_has_synced(d->pods) && kube_informer_has_synced(d->nodes) &&
	       sk_dm_volumes_synced(d) && sk_dm_listers_synced(d);
}

/* During a graceful stop, a second SIGTERM/SIGINT exits at once (as kube-scheduler does). */
static void *second_signal_main(void *arg)
{
	sigset_t *set = arg;
	int sig = 0;
	if (sigwait(set, &sig) == 0) {
		static const char msg[] = "Received a second signal, exiting immediately\n";
		if (write(2, msg, sizeof msg - 1) < 0) {
			/* nothing more to do */
		}
		_exit(1);
	}
	return NULL;
}

int sk_daemon_run(const struct sk_daemon_opts *opts)
{
	if (opts->verbosity >= 0)
		kube_log_set_verbosity(opts->verbosity);
	if (opts->logging_format && !strcmp(opts->logging_format, "json"))
		kube_log_set_format(KUBE_LOG_JSON);
	if (opts->write_config_to)
		return sk_dm_write_config(opts);
	if (opts->validate) {
		struct sk_module_set *mods = NULL;
		char *lerr = NULL;
		if (sk_module_set_load((const char *const *)opts->plugin_dirs, kube_flag_strings_len(opts->plugin_dirs),
				       &mods, &lerr) != 0) {
			fprintf(stdout, "error: %s\n", lerr ? lerr : "loading plugins failed");
			free(lerr);
			return 1;
		}
		struct sk_config_opts co = { .modules = mods, .policy_path = opts->policy_path };
		int vrc = sk_config_validate_file_opts(opts->config_path, &co, stdout);
		sk_module_set_unref(mods);
		return vrc;
	}
	/* Signals are taken synchronously by this thread; every other thread inherits the mask. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct sk_daemon *d = NULL;
	char *err = NULL;
	if (sk_daemon_new(opts, &d, &err) != 0 || sk_daemon_start(d, &err) != 0) {
		fprintf(stderr, "Error: %s\n", err ? err : "cannot start");
		free(err);
		sk_daemon_free(d);
		return 1;
	}
	int rc = 0;
	for (;;) {
		struct timespec ts = { 0, 200 * 1000000L };
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT) {
			klog_info(0, "Received signal, shutting down", " signal=%s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
			break;
		}
		if (sk_daemon_failed(d)) {
			rc = 1;
			break;
		}
	}
	pthread_t second;
	if (pthread_create(&second, NULL, second_signal_main, &set) == 0)
		pthread_detach(second);
	sk_daemon_stop(d);
	if (sk_daemon_failed(d))
		rc = 1;
	sk_daemon_free(d);
	return rc;
}
