/* The schedkit-scheduler daemon: upstream kube-scheduler flags, the kube client, pod and node
 * informers feeding the cache and the queue, one framework per profile, the scheduling loop
 * (only while leading), binder threads, FailedScheduling/Scheduled events, PodScheduled=False
 * status patches, leader election on a Lease (with the config hash annotation), and the
 * /healthz /livez /readyz /metrics /configz endpoints, and the reload of the --config file
 * without a restart. SIGTERM/SIGINT: stop popping, finish in-flight bindings, release the lease,
 * exit 0.
 *
 * Reload: a watcher thread reads the --config file every second (by content hash: a mounted
 * ConfigMap changes by an atomic symlink swap, its mtime says little), parses and validates a
 * change off the scheduling thread, builds every framework of the new configuration beside the
 * running ones, then swaps frameworks, the set of our schedulerNames, event recorders, /configz
 * and the Lease's config-hash annotation at once. Pending pods of an added profile are queued,
 * those of a removed one leave the queue (and are never bound afterwards), the others keep their
 * queue state. A bad file, or one that changes what needs a restart (parallelism, leaderElection,
 * clientConnection, podInitial/MaxBackoffSeconds, the queueSort plugin or its args), is rejected
 * as a whole: logged, counted, the running configuration and hash stay. A replaced configuration
 * is freed once the cycles begun on it are over.
 *
 * Threads: informer threads (cache + queue updates), the scheduling loop, binder threads
 * (schedule_one.h), the status-patch thread, event sender threads (kube/events.h), the elector
 * (kube/leader.h), the HTTP server, a 1 s housekeeping thread (pending-pods gauge), the config
 * watcher and the reaper of replaced configurations. Locks: d->mu guards the started/stopping
 * flags and the loop thread handle; d->conflict_mu the set of pods whose binding got 409; the
 * patch queue has its own mutex; d->names_lock (rwlock, writer-preferring) the running
 * generation (frameworks, schedulerNames, recorders, /configz) — pod handlers hold its read side
 * for a whole event, a reload its write side for the swap; d->reload_mu serializes reloads;
 * d->reap_mu the list of replaced generations. No lock is held across HTTP. */
#ifndef SK_DAEMON_H
#define SK_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "schedkit/types.h"
#include "scheduler/backend/queue.h"

struct sk_daemon_opts {
	char *config_path;        /* --config */
	char *policy_path;        /* --policy-config-file: a legacy Policy (scheduler/config/legacy.h) */
	bool use_legacy_policy;   /* --use-legacy-policy-config: accepted (upstream wanted it with the file) */
	char *policy_configmap;   /* --policy-configmap: a ConfigMap's "policy.cfg", read through the API (policy_source.c) */
	char *policy_configmap_ns; /* --policy-configmap-namespace (upstream default kube-system) */
	char *config_configmap;   /* --config-configmap NS/NAME: also watched through the API (cmwatch.c) */
	char *kubeconfig;         /* --kubeconfig */
	char *master;             /* --master: overrides the kubeconfig's server */
	int leader_elect;         /* --leader-elect: -1 unset (config decides), 0, 1 */
	int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms; /* -1 unset */
	char *lease_name, *lease_namespace, *lease_lock; /* NULL unset */
	int verbosity;            /* --v; -1 unset */
	int secure_port;          /* --secure-port, default 10259; 0 disables serving; -1 (not a flag
				     value): any free port, see sk_daemon_http_port (tests) */
	char *bind_address;       /* --bind-address, default "0.0.0.0" */
	char *tls_cert_file, *tls_key_file; /* --tls-cert-file / --tls-private-key-file */
	char *cert_dir;           /* --cert-dir: where the self-signed pair is kept (NULL: in memory) */
	char *tls_cipher_suites;  /* --tls-cipher-suites (Go names, comma-separated) */
	char *tls_min_version;    /* --tls-min-version (VersionTLS12, ...) */
	char *authn_kubeconfig, *authz_kubeconfig; /* --authentication-/--authorization-kubeconfig */
	char **always_allow_paths; /* --authorization-always-allow-paths (NULL: /healthz,/readyz,/livez) */
	int64_t authn_ttl_ms, authz_allowed_ttl_ms, authz_denied_ttl_ms; /* the webhook cache TTLs; -1 unset */
	char *write_config_to;    /* --write-config-to: write the defaulted configuration there, exit */
	double kube_api_qps;      /* --kube-api-qps (no --config only); < 0 unset */
	int kube_api_burst;       /* --kube-api-burst (no --config only); -1 unset */
	char *kube_api_content_type; /* --kube-api-content-type (validated; JSON is spoken) */
	char **feature_gates;     /* --feature-gates values (repeatable), validated */
	char *logging_format;     /* --logging-format: text (default) or json */
	int64_t pod_max_unsched_ms; /* --pod-max-in-unschedulable-pods-duration; -1 unset (5m) */
	bool validate;            /* --validate (with --config) */
	/* --decision-records-per-pod / --decision-records-max / --decision-records-max-mib
	 * (docs/explain.md); 0 = the store's defaults */
	int decisions_per_pod, decisions_max, decisions_max_mib;
	char **plugin_dirs;       /* --plugin-dir (repeatable): NULL-terminated, or NULL */
	int binder_threads;       /* not a flag: 0 = default (16; upstream binds in a goroutine per pod) */
	int config_poll_ms;       /* not a flag: how often the --config file is read; 0 = default (1000),
				     < 0 = no watcher (tests call sk_daemon_reload) */
	/* not a flag (tests): called after every binding POST with the HTTP code (201, 409, ...;
	 * 0 when the server was not reached), from binder threads. */
	void (*on_binding)(void *ctx, const struct sk_pod *pod, const char *node, int http_code);
	void *on_binding_ctx;
};

/* Parses argv (argv[0] is the program). Both --flag=value and --flag value. Returns 0 (run),
 * 1 (--help printed to out: exit 0) or 2 (usage error printed to errout: exit 2). opts is
 * initialised here; free it with sk_daemon_opts_free whatever the result. */
int sk_daemon_parse_args(int argc, char **argv, struct sk_daemon_opts *opts, FILE *out, FILE *errout);
void sk_daemon_opts_free(struct sk_daemon_opts *opts);
/* The flag table (tests compare it with kube-scheduler v1.34's flags). */
struct kube_flag;
const struct kube_flag *sk_daemon_flags(size_t *n);

/* sk_node_update_actions and sk_node_object_update_actions, which the node informer handler
 * uses to classify node updates, are declared in scheduler/backend/queue.h, next to their pod
 * counterpart sk_pod_update_events. */

struct sk_daemon;

/* Loads the config, builds the client, frameworks, scheduler, informers, metrics and the HTTP
 * server (bound, not serving). Returns 0 and *out, or -1 and *err (caller frees). */
int sk_daemon_new(const struct sk_daemon_opts *opts, struct sk_daemon **out, char **err);
/* Starts serving, the informers, and leader election (or the scheduling loop without it). */
int sk_daemon_start(struct sk_daemon *d, char **err);
/* Graceful stop: no further pops, in-flight bindings finish, the lease is released, events and
 * status patches are flushed. Idempotent. */
void sk_daemon_stop(struct sk_daemon *d);
void sk_daemon_free(struct sk_daemon *d); /* stops first; NULL ok */
/* True once leadership was lost while running (kube-scheduler exits then). */
bool sk_daemon_failed(struct sk_daemon *d);
int sk_daemon_http_port(const struct sk_daemon *d); /* 0 when not serving */
bool sk_daemon_is_leading(struct sk_daemon *d);
bool sk_daemon_synced(struct sk_daemon *d);

/* Reads the --config file now and reloads it when its content changed (what the watcher does every
 * config_poll_ms). Returns 1 when a new configuration was applied, 0 when nothing changed (same
 * content, a content rejected before, or no --config), -1 when rejected (*err, caller frees: every
 * error joined by "; "; err may be NULL). Thread-safe; reloads are serialized. */
int sk_daemon_reload(struct sk_daemon *d, char **err);
/* The sha256 (hex) of the running configuration, as written to the Lease. */
void sk_daemon_config_hash(struct sk_daemon *d, char out[65]);

/* The whole daemon: new, start, wait for SIGTERM/SIGINT (or lost leadership), stop. Returns the
 * process exit code. opts->validate: the plugin dirs are loaded and the file checked
 * (sk_config_validate_file_opts) only. */
int sk_daemon_run(const struct sk_daemon_opts *opts);

#endif
