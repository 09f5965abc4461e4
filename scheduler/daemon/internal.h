/* Private to scheduler/daemon/: struct sk_daemon and the pieces its files share. Each file owns
 * one job: flags.c (argv), handlers.c (informer handlers), env.c (the framework and scheduler
 * callbacks, the status-patch worker), loop.c (scheduling loop, housekeeping, leader callbacks),
 * serve.c (HTTP endpoints), reload.c (configuration generations, swap, reaper, watcher) and
 * daemon.c (lifecycle). Not installed, not for tests: they use daemon.h. */
#ifndef SK_DAEMON_INTERNAL_H
#define SK_DAEMON_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube/events.h"
#include "kube/httpserver.h"
#include "kube/informer.h"
#include "kube/leader.h"
#include "kube/metrics.h"
#include "kube/procmetrics.h"
#include "kube/rest.h"
#include "scheduler/backend/cache.h"
#include "scheduler/backend/nominator.h"
#include "scheduler/config/config.h"
#include "scheduler/daemon/daemon.h"
#include "scheduler/daemon/metrics_sched.h"
#include "scheduler/daemon/preempt_client.h"
#include "scheduler/decisions/annotate.h"
#include "scheduler/decisions/store.h"
#include "scheduler/decisions/summary.h"
#include "scheduler/framework/parallel.h"
#include "scheduler/framework/runtime.h"
#include "scheduler/schedule_one.h"
#include "scheduler/api/workloads.h"

#define CONFIG_HASH_ANNOTATION "schedkit.io/config-hash"
/* Set on the Lease by a rejected reload (the rejected file's sha256 and the message), removed
 * by the next successful one; the operator turns them into SchedulerProfile status. */
#define REJECTED_HASH_ANNOTATION "schedkit.io/rejected-config-hash"
#define REJECTED_ERROR_ANNOTATION "schedkit.io/rejected-config-error"
#define REJECTED_ERROR_MAX 1024
#define DEFAULT_BINDER_THREADS 16
#define CONFLICT_BUCKETS 256
#define DEFAULT_CONFIG_POLL_MS 1000
#define MAX_CONFIG_BYTES (16 << 20)
#define SK_DM_NVOLUME_INFORMERS 7

struct vhandler;
struct sk_volume_store;

/* An event recorder shared by the generations that run a profile of the same schedulerName. */
struct rec_holder {
	atomic_int refs;
	struct kube_event_recorder *rec;
};

/* The env ctx of one profile's framework in one generation. */
struct profile_ctx {
	struct sk_daemon *d;
	const char *name;                 /* the profile's schedulerName (owned by the generation's cfg) */
	struct rec_holder *rh;
	atomic_bool removed;              /* a reload dropped this schedulerName: no more bindings/events */
	pthread_mutex_t bind_mu;          /* guards binds */
	pthread_cond_t bind_cv;           /* signalled when binds drops to 0 */
	int binds;                        /* binding POSTs in flight */
};

/* One loaded configuration and everything built from it (see the top of reload.c). */
struct gen {
	struct sk_config *cfg;
	int n;
	struct profile_ctx *pcs;
	struct sk_framework **fws;        /* our references; NULL once released */
	char *configz;                    /* /configz body, NULL when not serving */
	struct gen *next;                 /* on d->retired / d->zombies */
	uint64_t retired_cycles;          /* d->cycles right after the swap */
};

/* A PodScheduled=False (and nominatedNodeName) patch waiting for the patch thread. */
struct patch_job {
	struct patch_job *next;
	char *ns, *name, *uid;
	char *reason, *message;
	bool nominate;
	char *nominated_node;
};

/* A pod whose binding got 409: someone else bound it, or it is being deleted. */
struct conflict {
	struct conflict *next;
	char *uid;
};

/* Lock order: reload_mu -> names_lock (write) -> the pod store's lock -> the queue's and cache's
 * own locks; reload_mu -> profile_ctx.bind_mu; reload_mu -> reap_mu. mu, conflict_mu, patch_mu
 * and house_mu are leaves: nothing else is taken while one is held. No lock of this struct is
 * held across an HTTP request. */
struct sk_daemon {
	struct sk_daemon_opts opts;      /* borrowed strings (the caller's opts outlive the daemon) */
	char identity[256];
	char *lease_ns, *lease_name;     /* owned */

	/* names_lock (writer-preferring rwlock) guards gen: informer pod handlers, the binding
	 * failure path and /configz read it; a reload writes it. */
	pthread_rwlock_t names_lock;
	struct gen *gen;
	pthread_mutex_t reload_mu;       /* serializes reloads; guards last_seen */
	char last_seen[224];             /* hashes of the last config file content + plugin files + Policy looked at */
	char policy_hash[65];            /* sha256 of the running generation's Policy text, "" = none (reload_mu) */
	struct sk_cmwatch *cmwatch;      /* --config-configmap watched through the API (cmwatch.c); NULL = none */
	struct sk_policy_watch *policy_watch; /* --policy-configmap kept by an informer (policy_source.c); NULL = none */
	char plugins_hash[65];           /* sk_plugin_dirs_hash of the running generation's modules (reload_mu) */
	/* reap_mu guards retired, zombies, reap_stop, watch_stop; reap_cv wakes the reaper
	 * (a generation retired, a cycle finished, stop), watch_cv the watcher (stop). */
	pthread_mutex_t reap_mu;
	pthread_cond_t reap_cv, watch_cv;
	struct gen *retired, *zombies;
	bool reap_stop, watch_stop;
	/* Written by sk_daemon_start and sk_daemon_stop only (one thread): no lock. */
	pthread_t reap_thread, watch_thread;
	bool reap_running, watch_running;
	atomic_uint_fast64_t cycles;     /* scheduling attempts finished by the loop */
	atomic_bool loop_active;         /* the loop thread is between its start and its exit */
	struct kube_metric *m_reloads, *m_last_ok, *m_last_ok_ts, *m_reload_failures;

	/* Built by sk_daemon_new, freed by sk_daemon_free: read-only in between. */
	struct kube_client *client, *event_client;
	struct kube_informer *pods, *nodes;
	struct kube_informer *pdbs;      /* PodDisruptionBudgets, read by DefaultPreemption */
	/* PVCs, PVs, StorageClasses, CSINodes, CSIDrivers (volumes.c) feeding the volume store. */
	struct kube_informer *vol_informers[SK_DM_NVOLUME_INFORMERS];
	struct vhandler *vol_handlers;
	struct sk_volume_store *volumes;
	/* Services, RCs, ReplicaSets, StatefulSets, Namespaces (listers.c), read through `listers` */
	struct kube_informer *workloads[SK_LISTER_NKINDS];
	struct sk_listers listers;
	struct sk_preempt_client *preempt;
	struct sk_cache *cache;
	struct sk_snapshot *snap;
	struct sk_nominator *nom;
	struct sk_pool *pool;
	struct sk_scheduler *sched;
	struct kube_leader *leader;
	struct kube_metrics_registry *registry;
	struct sk_sched_metrics *metrics;
	struct kube_std_metrics *std_metrics; /* process_*, kubernetes_build_info, rest_client_* */
	char api_host[256];              /* host:port of the API server (rest_client_* host label) */
	struct kube_http_server *http;
	struct sk_decisions *decisions;  /* decision records (docs/explain.md); thread-safe */
	struct sk_annotator *annotator;  /* result annotations (docs/explain.md); thread-safe */
	struct sk_summary *summary;      /* per-profile counts over a window (docs/explain.md); thread-safe */
	char *summary_published;         /* housekeeper only: the Lease annotation last set */
	int64_t summary_published_ns;    /* housekeeper only */
	struct sk_serving *serving;      /* serve.c: TLS material, delegation clients (sk_dm_serve_free) */
	struct sk_dm_dashboard *dash;    /* dashboard.c: the live web view and its feeder thread */

	pthread_mutex_t mu;              /* guards started, loop_running, stopped, loop_thread */
	bool started, loop_running, stopped;
	pthread_t loop_thread;
	/* Written by sk_daemon_start and sk_daemon_stop only: no lock. */
	pthread_t house_thread, patch_thread;
	bool house_running, patch_running;
	atomic_bool stopping;            /* stop requested: no new pops */
	atomic_bool failed;              /* leadership lost while running */
	atomic_bool leading;
	atomic_bool api_down;            /* a binding during shutdown found the API unreachable */
	atomic_bool events_abandoned;    /* the shutdown flush timed out: recorders are not freed */

	pthread_mutex_t conflict_mu;     /* guards conflicts */
	struct conflict *conflicts[CONFLICT_BUCKETS];

	/* patch_mu guards patch_head/tail, npatch_pending, patch_stop, patch_busy; patch_cv wakes
	 * the patch thread (a job, stop) and whoever waits for the queue to drain. */
	pthread_mutex_t patch_mu;
	pthread_cond_t patch_cv;
	struct patch_job *patch_head, *patch_tail;
	int npatch_pending;
	bool patch_stop, patch_busy;

	pthread_mutex_t house_mu;        /* guards house_stop; house_cv wakes the housekeeper */
	pthread_cond_t house_cv;
	bool house_stop;
};

/* handlers.c: the informer handlers and the pod helpers the other files share. */
void sk_dm_add_handlers(struct sk_daemon *d);
struct sk_pod *sk_dm_decode_pod(const cJSON *obj); /* logs a pod that does not decode */
/* The same for obj parsed from t, the pod store's text of it: the view shares t for the extender
 * wire instead of printing obj (scheduler/api/raw.h). t NULL: as sk_dm_decode_pod. */
struct sk_pod *sk_dm_decode_pod_text(const cJSON *obj, struct kube_text *t);
bool sk_dm_pod_terminal(const struct sk_pod *p);
bool sk_dm_is_ours_locked(struct sk_daemon *d, const char *scheduler_name); /* names_lock held */
bool sk_dm_is_ours(struct sk_daemon *d, const char *scheduler_name);
void sk_dm_incoming(struct sk_daemon *d, const struct sk_pod *p, const char *event);

/* env.c: the callbacks of the frameworks and of the scheduler, the 409 set, the patch worker. */
/* The Pod an event is about (regarding): metadata's namespace, name, uid and resourceVersion
 * (when set), kind, apiVersion — as a tree built in r without an allocation, whose
 * items borrow pod's strings: valid while r and pod are, read-only, never cJSON_Delete'd. Each call
 * rebuilds r whole. Returns r's root; NULL when pod has no namespace or name (no event). */
struct sk_dm_pod_ref { cJSON root, kind, meta, api, ns, name, uid, rv; };
const cJSON *sk_dm_pod_ref(struct sk_dm_pod_ref *r, const struct sk_pod *pod);
void sk_dm_framework_env(struct profile_ctx *pc, struct sk_framework_env *out);
void sk_dm_sched_env(struct sk_daemon *d, const struct sk_config *cfg, struct sk_sched_env *out);
void *sk_dm_patch_main(void *d);
void sk_dm_conflict_add(struct sk_daemon *d, const char *uid);
/* Whether uid's binding got 409; with remove, forgets it (the informer saw the pod bound or gone). */
bool sk_dm_conflict_has(struct sk_daemon *d, const char *uid, bool remove);
void sk_dm_free_pending(struct sk_daemon *d); /* queued patches and the 409 set (sk_daemon_free) */

/* volumes.c: the storage informers (built by build_informers, started with the others) and the
 * frameworks' merge-patch call. */
int sk_dm_volume_store_new(struct sk_daemon *d, char **err); /* before the first generation */
int sk_dm_volumes_new(struct sk_daemon *d, char **err);
int sk_dm_volumes_start(struct sk_daemon *d);
bool sk_dm_volumes_synced(struct sk_daemon *d);
void sk_dm_volumes_stop(struct sk_daemon *d);
void sk_dm_volumes_free(struct sk_daemon *d);
int sk_dm_api_patch(void *ctx, const char *path, const cJSON *patch, cJSON **out, bool *conflict, char **err);

/* loop.c: the scheduling loop (started by leadership, or at start without election), the
 * housekeeper, the leader callbacks. */
void sk_dm_start_loop(struct sk_daemon *d);
void *sk_dm_house_main(void *d);
void sk_dm_leader_callbacks(struct sk_daemon *d, struct kube_leader_config *lc);

/* serve.c: the HTTPS server with /healthz /livez /readyz /metrics /configz (bound, not started),
 * its certificate and the delegated authentication and authorization of its requests. */
int sk_dm_serve_new(struct sk_daemon *d, char **err);
void sk_dm_serve_free(struct sk_daemon *d); /* after the server is freed */
/* The /configz body: the configuration with the extenders' tlsConfig keyData, certData and caData
 * replaced by "--- REDACTED ---". NULL on OOM. */
char *sk_dm_build_configz(const struct sk_config *cfg);

/* daemon.c: the plugin dirs and --config (or the defaults), as at start. NULL and *err. */
struct sk_config *sk_dm_load_config(const struct sk_daemon_opts *o, char plugins_hash[65], char **err);
/* The same with the Policy's text given (policy_source.c read it; NULL: none, --policy-config-file
 * not read either); where names it in errors. */
struct sk_config *sk_dm_load_config_policy(const struct sk_daemon_opts *o, const char *policy, size_t policy_len,
					   const char *where, char plugins_hash[65], char **err);
/* policy_source.c: whether a Policy is configured (--policy-config-file or --policy-configmap),
 * and its current text: 0 and *text (caller frees; NULL when none is configured) with where
 * naming it, or -1 and *err (upstream's messages: "failed to get policy config map NS/NAME: ...",
 * "missing policy config map value at key \"policy.cfg\""). c: the API client (for the ConfigMap). */
#define SK_DM_POLICY_WHERE 320
/* The configuration without --config. */
#define SK_DM_DEFAULT_CONFIG "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
bool sk_dm_policy_configured(const struct sk_daemon_opts *o);
int sk_dm_policy_read(const struct sk_daemon_opts *o, struct kube_client *c, char **text, size_t *len,
		      char where[SK_DM_POLICY_WHERE], char **err);
/* The --policy-configmap informer (policy_source.c): new is 0 without a ConfigMap (or with
 * --policy-config-file, which wins); events counts the states it delivered (tests).
 * sk_dm_policy_current is sk_dm_policy_read for the configuration checks: from the informer's
 * state once it has synced (no request; the same messages as a GET), else a GET. */
int sk_dm_policy_watch_new(struct sk_daemon *d, char **err);
int sk_dm_policy_watch_start(struct sk_daemon *d);
void sk_dm_policy_watch_stop(struct sk_daemon *d);
void sk_dm_policy_watch_free(struct sk_daemon *d);
unsigned long sk_dm_policy_watch_events(struct sk_daemon *d);
int sk_dm_policy_current(struct sk_daemon *d, char **text, size_t *len, char where[SK_DM_POLICY_WHERE], char **err);
/* sha256 of buf as 64 hex digits ("" on failure). */
void sk_dm_sha256_hex(const void *buf, size_t len, char out[65]);
/* writeconfig.c: --write-config-to: the defaulted configuration written to the file; the exit code. */
int sk_dm_write_config(const struct sk_daemon_opts *o);
/* decisions_http.c: GET /debug/schedkit/v1/decisions (docs/explain.md). */
void sk_dm_decisions_handler(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx);
/* GET /debug/schedkit/v1/summary; and, from the housekeeper, the Lease annotation. */
void sk_dm_summary_handler(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx);
void sk_dm_publish_summary(struct sk_daemon *d);
/* GET /debug/schedkit/v1/config: the /configz body under the debug prefix. */
void sk_dm_config_handler(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx);

/* dashboard.c: the live web view (docs/explain.md): routes and WebSocket (from serve.c), the
 * feeder thread (started after the HTTP server, stopped before it), freed after the server. */
int sk_dm_dashboard_new(struct sk_daemon *d);
int sk_dm_dashboard_start(struct sk_daemon *d);
void sk_dm_dashboard_stop(struct sk_daemon *d);
void sk_dm_dashboard_free(struct sk_daemon *d);

/* reload.c: one look at a configuration's content from a source (the file, the ConfigMap);
 * reload_mu held; last_seen (SEEN_MAX bytes) is the source's own; takes buf. 1 applied, 0 nothing
 * to do, -1 rejected (*err). */
#define SEEN_MAX 224
int sk_dm_reload_content_locked(struct sk_daemon *d, char *buf, size_t len, const char *source, char *last_seen,
				char **err);
/* cmwatch.c: the ConfigMap named by --config-configmap, watched through the API. new: 0 (also
 * without the flag: nothing), or -1 and *err; start/stop/free accept a daemon without one. */
int sk_dm_cmwatch_new(struct sk_daemon *d, char **err);
/* An informer (not started) on the ConfigMap ns/name alone (fieldSelector metadata.name, which RBAC
 * resourceNames allow) with handlers h; NULL on failure. cmwatch.c and policy_source.c use it. */
struct kube_informer *sk_dm_configmap_informer(struct sk_daemon *d, const char *ns, const char *name,
						const struct kube_informer_handlers *h);
int sk_dm_cmwatch_start(struct sk_daemon *d);
void sk_dm_cmwatch_stop(struct sk_daemon *d);
void sk_dm_cmwatch_free(struct sk_daemon *d);
/* True once the watch has delivered the ConfigMap (the API is the configuration's source). */
bool sk_dm_cmwatch_active(struct sk_daemon *d);
/* reload_mu held: offers the ConfigMap's last content again, so the periodic check still
 * reloads when only a plugin file changed. Same returns as sk_dm_reload_content_locked. */
int sk_dm_cmwatch_recheck_locked(struct sk_daemon *d, char **err);

/* reload.c: generations, the swap, the reaper, the config watcher, the reload metrics. */
int sk_dm_reload_metrics_new(struct sk_daemon *d);
struct gen *sk_dm_gen_build(struct sk_daemon *d, struct sk_config *cfg, const struct gen *old, char **err);
int sk_dm_gen_swap(struct sk_daemon *d, struct gen *g, char **err);
void sk_dm_gen_free(struct sk_daemon *d, struct gen *g);
void *sk_dm_reaper_main(void *d);
void *sk_dm_watch_main(void *d);
/* listers.c: the informers behind d->listers (built, not started; started; stopped; freed). */
int sk_dm_listers_new(struct sk_daemon *d);
int sk_dm_listers_start(struct sk_daemon *d);
/* Every lister informer has listed once. */
bool sk_dm_listers_synced(struct sk_daemon *d);
void sk_dm_listers_stop(struct sk_daemon *d);
void sk_dm_listers_free(struct sk_daemon *d);

#endif
