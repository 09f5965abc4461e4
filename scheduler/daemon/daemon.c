/* The schedkit-scheduler daemon (daemon.h): flag parsing, wiring of client, informers, cache,
 * queue, frameworks, binder, events, status patches, leader election and the HTTP endpoints. */
#include "scheduler/daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "kube/config.h"
#include "kube/events.h"
#include "kube/httpserver.h"
#include "kube/informer.h"
#include "kube/leader.h"
#include "kube/log.h"
#include "kube/metrics.h"
#include "kube/object.h"
#include "kube/rest.h"
#include "scheduler/backend/cache.h"
#include "scheduler/config/config.h"
#include "scheduler/daemon/metrics_sched.h"
#include "scheduler/backend/nominator.h"
#include "scheduler/framework/parallel.h"
#include "scheduler/daemon/preempt_client.h"
#include "scheduler/framework/runtime.h"
#include "scheduler/schedule_one.h"
#include "kube/hash.h"

#define CONFIG_HASH_ANNOTATION "schedkit.io/config-hash"
#define DEFAULT_BINDER_THREADS 16
#define CONFLICT_BUCKETS 256
#define DEFAULT_CONFIG_POLL_MS 1000
#define MAX_CONFIG_BYTES (16 << 20)

/* ======================================================================== flags */

static void usage(FILE *f)
{
	fprintf(f,
		"The schedkit scheduler: a C implementation of the Kubernetes scheduling framework.\n"
		"\n"
		"Usage:\n"
		"  schedkit-scheduler [flags]\n"
		"  schedkit-scheduler simulate --config FILE --cluster FILE [--explain] [--seed N]\n"
		"\n"
		"Flags:\n"
		"  --config string                          The path to the KubeSchedulerConfiguration file.\n"
		"  --validate                               With --config: check the file, print every error, exit 0 or 1.\n"
		"  --kubeconfig string                      Path to a kubeconfig (overrides clientConnection.kubeconfig).\n"
		"  --master string                          The address of the Kubernetes API server (overrides the kubeconfig).\n"
		"  --leader-elect                           Start a leader election client and gain leadership before\n"
		"                                           executing the main loop (default from the config: true).\n"
		"  --leader-elect-lease-duration duration   Lease duration (default 15s).\n"
		"  --leader-elect-renew-deadline duration   Renew deadline (default 10s).\n"
		"  --leader-elect-retry-period duration     Retry period (default 2s).\n"
		"  --leader-elect-resource-lock string      Only \"leases\" is supported (default \"leases\").\n"
		"  --leader-elect-resource-name string      Lease name (default \"kube-scheduler\").\n"
		"  --leader-elect-resource-namespace string Lease namespace (default \"kube-system\").\n"
		"  --secure-port int                        Port of /healthz, /livez, /readyz, /metrics, /configz;\n"
		"                                           0 disables serving (default 10259).\n"
		"  --bind-address string                    Address to serve on (default \"0.0.0.0\").\n"
		"  --tls-cert-file string                   Serve HTTPS with this certificate (PEM); plain HTTP without.\n"
		"  --tls-private-key-file string            The key of --tls-cert-file.\n"
		"  --authentication-kubeconfig string       Accepted and ignored (no delegated authentication).\n"
		"  --authorization-kubeconfig string        Accepted and ignored (no delegated authorization).\n"
		"  -v, --v int                              Log verbosity.\n"
		"  -h, --help                               Help for schedkit-scheduler.\n");
}

/* strconv.ParseBool */
static int parse_bool(const char *s, bool *out)
{
	static const char *const t[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const f[] = { "0", "f", "F", "FALSE", "false", "False" };
	for (int i = 0; i < 6; i++) {
		if (!strcmp(s, t[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, f[i])) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

static int parse_int(const char *s, long lo, long hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

enum flag_kind { F_STRING, F_BOOL, F_DURATION, F_INT, F_IGNORED };
struct flag_def {
	const char *name;
	enum flag_kind kind;
	size_t offset; /* into struct sk_daemon_opts */
};
#define OFF(f) offsetof(struct sk_daemon_opts, f)
static const struct flag_def flags[] = {
	{ "config", F_STRING, OFF(config_path) },
	{ "kubeconfig", F_STRING, OFF(kubeconfig) },
	{ "master", F_STRING, OFF(master) },
	{ "leader-elect", F_BOOL, OFF(leader_elect) },
	{ "leader-elect-lease-duration", F_DURATION, OFF(lease_duration_ms) },
	{ "leader-elect-renew-deadline", F_DURATION, OFF(renew_deadline_ms) },
	{ "leader-elect-retry-period", F_DURATION, OFF(retry_period_ms) },
	{ "leader-elect-resource-name", F_STRING, OFF(lease_name) },
	{ "leader-elect-resource-namespace", F_STRING, OFF(lease_namespace) },
	{ "leader-elect-resource-lock", F_STRING, OFF(lease_lock) },
	{ "v", F_INT, OFF(verbosity) },
	{ "secure-port", F_INT, OFF(secure_port) },
	{ "bind-address", F_STRING, OFF(bind_address) },
	{ "tls-cert-file", F_STRING, OFF(tls_cert_file) },
	{ "tls-private-key-file", F_STRING, OFF(tls_key_file) },
	{ "validate", F_BOOL, OFF(validate) },
	{ "authentication-kubeconfig", F_IGNORED, 0 },
	{ "authorization-kubeconfig", F_IGNORED, 0 },
};

int sk_daemon_parse_args(int argc, char **argv, struct sk_daemon_opts *o, FILE *out, FILE *errout)
{
	*o = (struct sk_daemon_opts){ .leader_elect = -1, .lease_duration_ms = -1, .renew_deadline_ms = -1,
				      .retry_period_ms = -1, .verbosity = -1, .secure_port = 10259 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(out);
			return 1;
		}
		const char *name;
		if (!strncmp(a, "--", 2))
			name = a + 2;
		else if (!strncmp(a, "-v", 2) && (a[2] == '\0' || a[2] == '='))
			name = a + 1;
		else if (a[0] == '-') {
			fprintf(errout, "Error: unknown shorthand flag: '%c' in %s\nRun 'schedkit-scheduler --help' for usage.\n",
				a[1], a);
			return 2;
		} else {
			fprintf(errout, "Error: \"schedkit-scheduler\" does not take any arguments, got [\"%s\"]\n"
					"Run 'schedkit-scheduler --help' for usage.\n", a);
			return 2;
		}
		const char *eq = strchr(name, '=');
		size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
		const struct flag_def *fd = NULL;
		for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
			if (strlen(flags[k].name) == nlen && !strncmp(flags[k].name, name, nlen))
				fd = &flags[k];
		if (!fd) {
			fprintf(errout, "Error: unknown flag: --%.*s\nRun 'schedkit-scheduler --help' for usage.\n", (int)nlen,
				name);
			return 2;
		}
		const char *val = eq ? eq + 1 : NULL;
		if (!val && fd->kind != F_BOOL) {
			if (i + 1 >= argc) {
				fprintf(errout, "Error: flag needs an argument: --%s\n", fd->name);
				return 2;
			}
			val = argv[++i];
		}
		char *field = (char *)o + fd->offset;
		switch (fd->kind) {
		case F_STRING: {
			char **dst = (char **)field;
			free(*dst);
			if (!(*dst = strdup(val))) {
				fprintf(errout, "Error: out of memory\n");
				return 2;
			}
			break;
		}
		case F_BOOL: {
			bool b = true;
			if (val && parse_bool(val, &b) != 0) {
				fprintf(errout, "Error: invalid argument \"%s\" for \"--%s\" flag: strconv.ParseBool: parsing \"%s\": invalid syntax\n",
					val, fd->name, val);
				return 2;
			}
			if (fd->offset == OFF(validate))
				o->validate = b;
			else
				*(int *)field = b;
			break;
		}
		case F_DURATION: {
			int64_t ms;
			if (sk_duration_parse_ms(val, &ms) != 0 || ms < 0) {
				fprintf(errout, "Error: invalid argument \"%s\" for \"--%s\" flag: time: invalid duration \"%s\"\n",
					val, fd->name, val);
				return 2;
			}
			*(int64_t *)field = ms;
			break;
		}
		case F_INT: {
			int v;
			bool port = fd->offset == OFF(secure_port);
			if (parse_int(val, 0, port ? 65535 : 1000, &v) != 0) {
				fprintf(errout, "Error: invalid argument \"%s\" for \"--%s\" flag: %s\n", val, fd->name,
					port ? "must be a port number between 0 and 65535"
									: "strconv.ParseInt: parsing: invalid syntax");
				return 2;
			}
			*(int *)field = v;
			break;
		}
		case F_IGNORED:
			fprintf(errout, "W: flag --%s is accepted and ignored: schedkit does not delegate authentication or authorization\n",
				fd->name);
			break;
		}
	}
	if (o->lease_lock && strcmp(o->lease_lock, "leases")) {
		fprintf(errout, "Error: invalid argument \"%s\" for \"--leader-elect-resource-lock\" flag: only \"leases\" is supported\n",
			o->lease_lock);
		return 2;
	}
	if (o->validate && !o->config_path) {
		fprintf(errout, "Error: --validate needs --config\n");
		return 2;
	}
	if ((o->tls_cert_file != NULL) != (o->tls_key_file != NULL)) {
		fprintf(errout, "Error: --tls-cert-file and --tls-private-key-file must be given together\n");
		return 2;
	}
	return 0;
}

void sk_daemon_opts_free(struct sk_daemon_opts *o)
{
	if (!o)
		return;
	free(o->config_path);
	free(o->kubeconfig);
	free(o->master);
	free(o->lease_name);
	free(o->lease_namespace);
	free(o->lease_lock);
	free(o->bind_address);
	free(o->tls_cert_file);
	free(o->tls_key_file);
	memset(o, 0, sizeof *o);
}

/* ======================================================================== node update events */

static bool labels_equal(const struct sk_labels *a, const struct sk_labels *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->items[i].key, b->items[i].key) || strcmp(a->items[i].value, b->items[i].value))
			return false;
	return true;
}

static bool resource_equal(const struct sk_resource *a, const struct sk_resource *b)
{
	if (a->milli_cpu != b->milli_cpu || a->memory != b->memory || a->ephemeral_storage != b->ephemeral_storage ||
	    a->allowed_pod_number != b->allowed_pod_number || a->nscalar != b->nscalar)
		return false;
	for (int i = 0; i < a->nscalar; i++)
		if (strcmp(a->scalar[i].name, b->scalar[i].name) || a->scalar[i].value != b->scalar[i].value)
			return false;
	return true;
}

static bool taints_equal(const struct sk_node *a, const struct sk_node *b)
{
	if (a->ntaints != b->ntaints)
		return false;
	for (int i = 0; i < a->ntaints; i++)
		if (strcmp(a->taints[i].key, b->taints[i].key) || strcmp(a->taints[i].value, b->taints[i].value) ||
		    a->taints[i].effect != b->taints[i].effect)
			return false;
	return true;
}

uint32_t sk_node_update_actions(const struct sk_node *o, const struct sk_node *n)
{
	uint32_t a = 0;
	if (!o || !n)
		return SK_ACT_UPDATE;
	if (o->unschedulable != n->unschedulable)
		a |= SK_ACT_UPDATE_NODE_TAINT;
	if (!resource_equal(&o->allocatable, &n->allocatable))
		a |= SK_ACT_UPDATE_NODE_ALLOCATABLE;
	if (!labels_equal(&o->labels, &n->labels))
		a |= SK_ACT_UPDATE_NODE_LABEL;
	if (!taints_equal(o, n))
		a |= SK_ACT_UPDATE_NODE_TAINT;
	return a;
}

/* "type=status" of every condition, in order, for comparison. */
static bool conditions_equal(const cJSON *a, const cJSON *b)
{
	int na = cJSON_GetArraySize(a), nb = cJSON_GetArraySize(b);
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++) {
		const cJSON *ca = cJSON_GetArrayItem(a, i);
		const char *t = kube_obj_get_string(ca, "type"), *st = kube_obj_get_string(ca, "status");
		const cJSON *cb = t ? kube_condition_find(b, t) : NULL;
		const char *st2 = cb ? kube_obj_get_string(cb, "status") : NULL;
		if (!cb || !st != !st2 || (st && strcmp(st, st2)))
			return false;
	}
	return true;
}

uint32_t sk_node_object_update_actions(const cJSON *old_obj, const cJSON *new_obj)
{
	uint32_t a = 0;
	if (!conditions_equal(kube_obj_get(old_obj, "status.conditions"), kube_obj_get(new_obj, "status.conditions")))
		a |= SK_ACT_UPDATE_NODE_CONDITION;
	const cJSON *oa = kube_meta_annotations(old_obj), *na = kube_meta_annotations(new_obj);
	bool same = (!oa || !cJSON_GetArraySize(oa)) && (!na || !cJSON_GetArraySize(na));
	if (!same && !(oa && na && cJSON_Compare(oa, na, true)))
		a |= SK_ACT_UPDATE_NODE_ANNOTATION;
	return a;
}

/* ======================================================================== the daemon */

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
	pthread_cond_t bind_cv;
	int binds;                        /* binding POSTs in flight */
};

/* One loaded configuration and everything built from it. The current generation is d->gen
 * (guarded by d->names_lock); a replaced one sits on d->retired until its frameworks are
 * released (see reaper_main), then its cfg, contexts and recorders are freed. */
struct gen {
	struct sk_config *cfg;
	int n;
	struct profile_ctx *pcs;
	struct sk_framework **fws;        /* our references; NULL once released */
	char *configz;                    /* /configz body, NULL when not serving */
	struct gen *next;                 /* on d->retired / d->zombies */
	uint64_t retired_cycles;          /* d->cycles right after the swap */
};

struct patch_job {
	struct patch_job *next;
	char *ns, *name, *uid;
	char *reason, *message;
	bool nominate;
	char *nominated_node;
};

struct conflict {
	struct conflict *next;
	char *uid;
};

struct sk_daemon {
	struct sk_daemon_opts opts;      /* borrowed strings (the caller's opts outlive the daemon) */
	char identity[256];
	char *lease_ns, *lease_name;     /* owned */

	/* names_lock (writer-preferring rwlock) guards gen: informer pod handlers, the binding
	 * failure path and /configz read it; a reload writes it. Never held across HTTP. */
	pthread_rwlock_t names_lock;
	struct gen *gen;
	pthread_mutex_t reload_mu;       /* serializes reloads; guards last_seen */
	char last_seen[72];              /* hash of the last config file content looked at */
	pthread_mutex_t reap_mu;         /* guards retired, zombies, reap_stop, watch_stop */
	pthread_cond_t reap_cv, watch_cv;
	struct gen *retired, *zombies;
	bool reap_stop, watch_stop;
	pthread_t reap_thread, watch_thread;
	bool reap_running, watch_running;
	atomic_uint_fast64_t cycles;     /* scheduling attempts finished by the loop */
	atomic_bool loop_active;         /* the loop thread is between its start and its exit */
	struct kube_metric *m_reloads, *m_last_ok, *m_last_ok_ts;

	struct kube_client *client, *event_client;
	struct kube_informer *pods, *nodes;
	struct kube_informer *pdbs;      /* PodDisruptionBudgets, read by DefaultPreemption */
	struct sk_preempt_client *preempt;
	struct sk_cache *cache;
	struct sk_snapshot *snap;
	struct sk_nominator *nom;
	struct sk_pool *pool;
	struct sk_scheduler *sched;
	struct kube_leader *leader;
	struct kube_metrics_registry *registry;
	struct sk_sched_metrics *metrics;
	struct kube_http_server *http;

	pthread_mutex_t mu;              /* guards started, loop_running, stopped */
	bool started, loop_running, stopped;
	pthread_t loop_thread, house_thread, patch_thread;
	bool house_running, patch_running;
	atomic_bool stopping;            /* stop requested: no new pops */
	atomic_bool failed;              /* leadership lost while running */
	atomic_bool leading;
	atomic_bool api_down;            /* a binding during shutdown found the API unreachable */
	atomic_bool events_abandoned;    /* the shutdown flush timed out: recorders are not freed */

	pthread_mutex_t conflict_mu;     /* guards conflicts */
	struct conflict *conflicts[CONFLICT_BUCKETS];

	pthread_mutex_t patch_mu;        /* guards patch_head/tail, patch_stop */
	pthread_cond_t patch_cv;
	struct patch_job *patch_head, *patch_tail;
	int npatch_pending;
	bool patch_stop, patch_busy;

	pthread_mutex_t house_mu;        /* guards house_stop; house_cv wakes the housekeeper */
	pthread_cond_t house_cv;
	bool house_stop;
};

static int errf(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int errf(char **err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		if (vasprintf(err, fmt, ap) < 0)
			*err = NULL;
		va_end(ap);
	}
	return -1;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---------- 409 conflicts: pods someone else bound (or that are being deleted) ---------- */

static void conflict_add(struct sk_daemon *d, const char *uid)
{
	struct conflict *c = calloc(1, sizeof *c);
	if (!c || !(c->uid = strdup(uid))) {
		free(c);
		return;
	}
	uint32_t b = kube_fnv1a32(uid) % CONFLICT_BUCKETS;
	pthread_mutex_lock(&d->conflict_mu);
	c->next = d->conflicts[b];
	d->conflicts[b] = c;
	pthread_mutex_unlock(&d->conflict_mu);
}

/* Tests (and with remove, clears) membership. */
static bool conflict_has(struct sk_daemon *d, const char *uid, bool remove)
{
	uint32_t b = kube_fnv1a32(uid) % CONFLICT_BUCKETS;
	bool found = false;
	pthread_mutex_lock(&d->conflict_mu);
	for (struct conflict **pp = &d->conflicts[b]; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->uid, uid)) {
			found = true;
			if (remove) {
				struct conflict *c = *pp;
				*pp = c->next;
				free(c->uid);
				free(c);
			}
			break;
		}
	pthread_mutex_unlock(&d->conflict_mu);
	return found;
}

/* ---------- helpers ---------- */

/* A minimal Pod object for events (regarding). Caller cJSON_Delete's. */
static cJSON *pod_ref_json(const struct sk_pod *pod)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *m = o ? cJSON_AddObjectToObject(o, "metadata") : NULL;
	if (!m || !cJSON_AddStringToObject(o, "kind", "Pod") || !cJSON_AddStringToObject(o, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(m, "namespace", pod->ns) || !cJSON_AddStringToObject(m, "name", pod->name) ||
	    !cJSON_AddStringToObject(m, "uid", pod->uid ? pod->uid : "") ||
	    (pod->resource_version && !cJSON_AddStringToObject(m, "resourceVersion", pod->resource_version))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* Caller holds names_lock (either side). */
static bool is_ours_locked(struct sk_daemon *d, const char *scheduler_name)
{
	if (!scheduler_name || !d->gen)
		return false;
	for (int i = 0; i < d->gen->n; i++)
		if (!strcmp(d->gen->pcs[i].name, scheduler_name))
			return true;
	return false;
}

static bool is_ours(struct sk_daemon *d, const char *scheduler_name)
{
	pthread_rwlock_rdlock(&d->names_lock);
	bool r = is_ours_locked(d, scheduler_name);
	pthread_rwlock_unlock(&d->names_lock);
	return r;
}

static bool pod_terminal(const struct sk_pod *p)
{
	return p->phase && (!strcmp(p->phase, "Succeeded") || !strcmp(p->phase, "Failed"));
}

static struct sk_pod *decode_pod(const cJSON *obj)
{
	char *err = NULL;
	struct sk_pod *p = sk_pod_decode(obj, &err);
	if (!p) {
		klog_error("Cannot decode pod", " pod=%s/%s err=\"%s\"", kube_meta_namespace(obj) ? kube_meta_namespace(obj) : "",
			   kube_meta_name(obj) ? kube_meta_name(obj) : "", err ? err : "");
		free(err);
	}
	return p;
}

static void log_cache_err(const char *what, const struct sk_pod *p, char *err)
{
	if (err) {
		klog_error(what, " pod=%s/%s err=\"%s\"", p->ns, p->name, err);
		free(err);
	}
}

/* ---------- pod informer handlers ---------- */

static void incoming(struct sk_daemon *d, const struct sk_pod *p, const char *event)
{
	const char *q = sk_sched_metrics_queue_label(sk_queue_where_is(sk_scheduler_queue(d->sched), p->uid));
	sk_sched_metrics_incoming(d->metrics, q, event);
}

static void assigned_add(struct sk_daemon *d, struct sk_pod *p)
{
	char *err = NULL;
	if (pod_terminal(p)) {
		if (sk_cache_pod_state(d->cache, p->uid) != SK_POD_NOT_CACHED &&
		    sk_cache_remove_pod(d->cache, p, &err) == 0)
			sk_queue_move_all(sk_scheduler_queue(d->sched), &SK_EVENT_ASSIGNED_POD_DELETE, p, NULL);
		log_cache_err("Scheduler cache RemovePod failed", p, err);
		return;
	}
	if (sk_cache_add_pod(d->cache, p, &err) != 0) {
		log_cache_err("Scheduler cache AddPod failed", p, err);
		return;
	}
	sk_queue_move_all(sk_scheduler_queue(d->sched), &SK_EVENT_ASSIGNED_POD_ADD, NULL, p);
}

static void on_pod_add(void *ctx, const cJSON *obj)
{
	struct sk_daemon *d = ctx;
	struct sk_pod *p = decode_pod(obj);
	if (!p)
		return;
	/* The read side of names_lock for the whole handler: a reload's queue changes for added
	 * and removed profiles are ordered with this event, never interleaved with it. */
	pthread_rwlock_rdlock(&d->names_lock);
	if (p->node_name) {
		assigned_add(d, p);
		conflict_has(d, p->uid, true);
	} else if (is_ours_locked(d, p->scheduler_name) && !pod_terminal(p)) {
		if (sk_queue_add(sk_scheduler_queue(d->sched), p) == 0) {
			sk_nominator_add(d->nom, p, NULL);
			incoming(d, p, "PodAdd");
		}
	}
	pthread_rwlock_unlock(&d->names_lock);
	sk_pod_unref(p);
}

static void on_pod_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
	struct sk_daemon *d = ctx;
	struct sk_pod *p = decode_pod(new_obj);
	if (!p)
		return;
	struct sk_queue *q = sk_scheduler_queue(d->sched);
	pthread_rwlock_rdlock(&d->names_lock);
	if (p->node_name) {
		conflict_has(d, p->uid, true);
		enum sk_pod_cache_state st = sk_cache_pod_state(d->cache, p->uid);
		if (is_ours_locked(d, p->scheduler_name)) {
			/* Unassigned -> assigned: it leaves the queue (no-op when not queued). */
			if (!kube_obj_get_string(old_obj, "spec.nodeName")) {
				sk_queue_delete(q, p);
				sk_nominator_delete(d->nom, p->uid);
			}
		}
		if (st != SK_POD_BOUND || pod_terminal(p)) {
			assigned_add(d, p);
		} else {
			struct sk_pod *old = sk_cache_get_pod(d->cache, p->uid);
			char *err = NULL;
			if (sk_cache_update_pod(d->cache, p, &err) != 0) {
				log_cache_err("Scheduler cache UpdatePod failed", p, err);
			} else if (old) {
				struct sk_cluster_event evs[8];
				int n = sk_pod_update_events(old, p, evs, 8);
				for (int i = 0; i < n; i++) {
					evs[i].resource = SK_EV_ASSIGNED_POD;
					sk_queue_move_all(q, &evs[i], old, p);
				}
			}
			sk_pod_unref(old);
		}
	} else if (is_ours_locked(d, p->scheduler_name)) {
		if (pod_terminal(p)) {
			sk_queue_delete(q, p);
			sk_nominator_delete(d->nom, p->uid);
		} else {
			struct sk_pod *old = decode_pod(old_obj);
			if (old) {
				sk_queue_update(q, old, p);
				sk_nominator_update(d->nom, old, p);
				incoming(d, p, "PodUpdate");
			}
			sk_pod_unref(old);
		}
	}
	pthread_rwlock_unlock(&d->names_lock);
	sk_pod_unref(p);
}

static void on_pod_delete(void *ctx, const cJSON *obj)
{
	struct sk_daemon *d = ctx;
	struct sk_pod *p = decode_pod(obj);
	if (!p)
		return;
	conflict_has(d, p->uid, true);
	pthread_rwlock_rdlock(&d->names_lock);
	if (sk_cache_pod_state(d->cache, p->uid) != SK_POD_NOT_CACHED) {
		char *err = NULL;
		if (sk_cache_remove_pod(d->cache, p, &err) == 0)
			sk_queue_move_all(sk_scheduler_queue(d->sched), &SK_EVENT_ASSIGNED_POD_DELETE, p, NULL);
		log_cache_err("Scheduler cache RemovePod failed", p, err);
	}
	if (!p->node_name && is_ours_locked(d, p->scheduler_name)) {
		sk_queue_delete(sk_scheduler_queue(d->sched), p);
		sk_nominator_delete(d->nom, p->uid);
		sk_sched_metrics_forget_pod(d->metrics, p->uid);
	}
	pthread_rwlock_unlock(&d->names_lock);
	sk_pod_unref(p);
}

/* ---------- node informer handlers ---------- */

static struct sk_node *decode_node(const cJSON *obj)
{
	char *err = NULL;
	struct sk_node *n = sk_node_decode(obj, &err);
	if (!n) {
		klog_error("Cannot decode node", " node=%s err=\"%s\"", kube_meta_name(obj) ? kube_meta_name(obj) : "",
			   err ? err : "");
		free(err);
	}
	return n;
}

static void on_node_add(void *ctx, const cJSON *obj)
{
	struct sk_daemon *d = ctx;
	struct sk_node *n = decode_node(obj);
	if (!n)
		return;
	char *err = NULL;
	if (sk_cache_add_node(d->cache, n, &err) == 0)
		sk_queue_move_all(sk_scheduler_queue(d->sched), &SK_EVENT_NODE_ADD, NULL, n);
	else
		klog_error("Scheduler cache AddNode failed", " node=%s err=\"%s\"", n->name, err ? err : "");
	free(err);
	sk_node_unref(n);
}

static void on_node_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
	struct sk_daemon *d = ctx;
	struct sk_node *n = decode_node(new_obj);
	struct sk_node *o = n ? decode_node(old_obj) : NULL;
	char *err = NULL;
	if (n && sk_cache_update_node(d->cache, n, &err) == 0) {
		uint32_t actions = sk_node_update_actions(o, n) | sk_node_object_update_actions(old_obj, new_obj);
		if (actions) {
			struct sk_cluster_event ev = { .resource = SK_EV_NODE, .action = actions, .label = "NodeUpdate" };
			sk_queue_move_all(sk_scheduler_queue(d->sched), &ev, o, n);
		}
	} else if (n) {
		klog_error("Scheduler cache UpdateNode failed", " node=%s err=\"%s\"", n->name, err ? err : "");
	}
	free(err);
	sk_node_unref(o);
	sk_node_unref(n);
}

static void on_node_delete(void *ctx, const cJSON *obj)
{
	struct sk_daemon *d = ctx;
	const char *name = kube_meta_name(obj);
	char *err = NULL;
	if (name && sk_cache_remove_node(d->cache, name, &err) != 0)
		klog_error("Scheduler cache RemoveNode failed", " node=%s err=\"%s\"", name, err ? err : "");
	free(err);
}

/* ---------- framework env ---------- */

static const struct sk_snapshot *fw_snapshot(void *ctx)
{
	struct profile_ctx *pc = ctx;
	return sk_scheduler_snapshot(pc->d->sched);
}

/* DefaultBinder: POST pods/<name>/binding. A 409 means someone else bound the pod (or it is
 * being deleted): remember it so the failure path forgets the pod instead of requeueing it. */
static int fw_bind(void *ctx, const struct sk_pod *pod, const char *node_name, char **err)
{
	struct profile_ctx *pc = ctx;
	struct sk_daemon *d = pc->d;
	char *path = kube_path("", "v1", "pods", pod->ns, pod->name, "binding");
	cJSON *b = cJSON_CreateObject();
	cJSON *m = b ? cJSON_AddObjectToObject(b, "metadata") : NULL;
	cJSON *t = b ? cJSON_AddObjectToObject(b, "target") : NULL;
	if (!path || !m || !t || !cJSON_AddStringToObject(b, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(b, "kind", "Binding") || !cJSON_AddStringToObject(m, "name", pod->name) ||
	    !cJSON_AddStringToObject(m, "namespace", pod->ns) || !cJSON_AddStringToObject(m, "uid", pod->uid) ||
	    !cJSON_AddStringToObject(t, "apiVersion", "v1") || !cJSON_AddStringToObject(t, "kind", "Node") ||
	    !cJSON_AddStringToObject(t, "name", node_name)) {
		free(path);
		cJSON_Delete(b);
		return errf(err, "binding pod %s/%s: out of memory", pod->ns, pod->name);
	}
	/* Shutting down with the API server gone: fail the queued bindings at once instead of
	 * retrying each of them (the pods stay pending for the next leader). */
	if (atomic_load(&d->stopping) && atomic_load(&d->api_down)) {
		free(path);
		cJSON_Delete(b);
		return errf(err, "binding pod %s/%s: the API server is unreachable and the scheduler is stopping",
			    pod->ns, pod->name);
	}
	/* A reload that removed this profile waits for the POSTs in flight, then refuses the rest:
	 * once the reload returns, no pod of a removed profile is bound. */
	pthread_mutex_lock(&pc->bind_mu);
	bool removed = atomic_load(&pc->removed);
	if (!removed)
		pc->binds++;
	pthread_mutex_unlock(&pc->bind_mu);
	if (removed) {
		free(path);
		cJSON_Delete(b);
		return errf(err, "binding pod %s/%s: profile %s was removed by a configuration reload", pod->ns,
			    pod->name, pc->name);
	}
	struct kube_error ke = { 0 };
	int rc = kube_create(d->client, path, b, NULL, &ke);
	free(path);
	cJSON_Delete(b);
	/* The test hook runs inside the in-flight window, so a reload that returned has seen it. */
	if (d->opts.on_binding)
		d->opts.on_binding(d->opts.on_binding_ctx, pod, node_name, rc == 0 ? 201 : ke.http_code);
	pthread_mutex_lock(&pc->bind_mu);
	if (--pc->binds == 0)
		pthread_cond_broadcast(&pc->bind_cv);
	pthread_mutex_unlock(&pc->bind_mu);
	if (rc == 0)
		return 0;
	if (ke.http_code == 0 && atomic_load(&d->stopping))
		atomic_store(&d->api_down, true);
	if (ke.http_code == 409) {
		conflict_add(d, pod->uid);
		sk_sched_metrics_binding_conflict(d->metrics);
		klog_warning("Binding conflict: the pod is bound already or being deleted; not retrying",
			     " pod=%s/%s node=%s err=\"%s\"", pod->ns, pod->name, node_name, ke.message);
	}
	return errf(err, "%s", ke.message[0] ? ke.message : "binding failed");
}

static void fw_event(void *ctx, const struct sk_pod *pod, const char *type, const char *reason, const char *action,
		     const char *note)
{
	struct profile_ctx *pc = ctx;
	if (atomic_load(&pc->removed))
		return; /* not ours any more: leave the pod alone */
	cJSON *ref = pod_ref_json(pod);
	if (ref)
		kube_event_record(pc->rh->rec, ref, type, reason, action, "%s", note);
	cJSON_Delete(ref);
}

static void fw_observe(void *ctx, const char *profile, const char *point, const char *plugin, enum sk_code code,
		       double seconds)
{
	struct profile_ctx *pc = ctx;
	sk_sched_metrics_observe_point(pc->d->metrics, profile, point, plugin, code, seconds);
}

/* ---------- scheduler env ---------- */

static const struct sk_snapshot *se_update_snapshot(void *ctx, char **err)
{
	struct sk_daemon *d = ctx;
	return sk_cache_update_snapshot(d->cache, d->snap, err) == 0 ? d->snap : NULL;
}
static int se_assume(void *ctx, struct sk_pod *p, char **err) { return sk_cache_assume_pod(((struct sk_daemon *)ctx)->cache, p, err); }
static int se_forget(void *ctx, const struct sk_pod *p, char **err) { return sk_cache_forget_pod(((struct sk_daemon *)ctx)->cache, p, err); }
static int se_finish(void *ctx, const struct sk_pod *p, char **err) { return sk_cache_finish_binding(((struct sk_daemon *)ctx)->cache, p, err); }
static bool se_is_assumed(void *ctx, const char *uid) { return sk_cache_is_assumed(((struct sk_daemon *)ctx)->cache, uid); }

struct get_pod_ctx {
	const char *uid;
	struct sk_pod *out;
};

static void get_pod_fn(const cJSON *obj, void *u)
{
	struct get_pod_ctx *g = u;
	const char *uid = obj ? kube_meta_uid(obj) : NULL;
	if (uid && !strcmp(uid, g->uid))
		g->out = decode_pod(obj);
}

/* The informer's copy; NULL when gone, replaced by a pod of the same name, or when our binding
 * got 409 (someone else bound it: never requeue). */
static struct sk_pod *se_get_pod(void *ctx, const struct sk_pod *pod)
{
	struct sk_daemon *d = ctx;
	if (conflict_has(d, pod->uid, false))
		return NULL;
	/* A reload removed its profile while it was in flight: not requeued. */
	if (!is_ours(d, pod->scheduler_name))
		return NULL;
	char key[512];
	snprintf(key, sizeof key, "%s/%s", pod->ns, pod->name);
	struct get_pod_ctx g = { .uid = pod->uid };
	kube_store_get_with(d->pods, key, get_pod_fn, &g);
	return g.out;
}

/* ---------- framework env: preemption (ctx = struct profile_ctx *) ---------- */

static struct sk_daemon *pc_daemon(void *ctx) { return ((struct profile_ctx *)ctx)->d; }

static int fw_list_pdbs(void *ctx, struct sk_pdb ***out, char **err)
{
	*out = NULL;
	return sk_preempt_list_pdbs(pc_daemon(ctx)->preempt, out, err);
}

static struct sk_pod *fw_get_pod(void *ctx, const struct sk_pod *pod) { return se_get_pod(pc_daemon(ctx), pod); }

static int64_t fw_pod_start_time(void *ctx, const struct sk_pod *pod)
{
	return sk_preempt_pod_start_time(pc_daemon(ctx)->preempt, pod);
}

static bool fw_terminating_by_preemption(void *ctx, const struct sk_pod *pod)
{
	return sk_preempt_terminating_by_preemption(pc_daemon(ctx)->preempt, pod);
}

/* Evicts a victim. A profile dropped by a reload evicts nothing, as it binds nothing. */
static int fw_preempt_victim(void *ctx, const struct sk_pod *preemptor, const struct sk_pod *victim, const char *node,
			     const char *msg, char **err)
{
	struct profile_ctx *pc = ctx;
	if (atomic_load(&pc->removed))
		return errf(err, "preempting for pod %s/%s: profile %s was removed by a configuration reload",
			    preemptor->ns, preemptor->name, pc->name);
	return sk_preempt_victim(pc->d->preempt, preemptor, victim, node, msg, err);
}

static int fw_clear_nominated(void *ctx, const struct sk_pod *pod, char **err)
{
	return sk_preempt_clear_nominated(pc_daemon(ctx)->preempt, pod, err);
}

static void patch_job_free(struct patch_job *j)
{
	if (!j)
		return;
	free(j->ns);
	free(j->name);
	free(j->uid);
	free(j->reason);
	free(j->message);
	free(j->nominated_node);
	free(j);
}

/* Queued for the patch thread: the scheduling thread never waits on this HTTP call. */
static void se_patch_failure(void *ctx, const struct sk_pod *pod, const char *reason, const char *message,
			     bool nominate, const char *nominated_node)
{
	struct sk_daemon *d = ctx;
	/* Someone else bound it (409): never mark a bound pod PodScheduled=False. A pod whose
	 * profile a reload removed is not ours any more. */
	if (conflict_has(d, pod->uid, false) || !is_ours(d, pod->scheduler_name))
		return;
	struct patch_job *j = calloc(1, sizeof *j);
	if (!j || !(j->ns = strdup(pod->ns)) || !(j->name = strdup(pod->name)) || !(j->uid = strdup(pod->uid)) ||
	    !(j->reason = strdup(reason)) || !(j->message = strdup(message ? message : "")) ||
	    !(j->nominated_node = strdup(nominated_node ? nominated_node : ""))) {
		patch_job_free(j);
		klog_error("Cannot queue the pod status update: out of memory", " pod=%s/%s", pod->ns, pod->name);
		return;
	}
	j->nominate = nominate;
	pthread_mutex_lock(&d->patch_mu);
	if (d->patch_tail)
		d->patch_tail->next = j;
	else
		d->patch_head = j;
	d->patch_tail = j;
	d->npatch_pending++;
	pthread_cond_broadcast(&d->patch_cv);
	pthread_mutex_unlock(&d->patch_mu);
}

struct cond_check {
	const char *uid, *reason, *message, *nominated;
	bool nominate;
	bool exists, cond_same, nom_same, status_false;
};

static void cond_check_fn(const cJSON *obj, void *u)
{
	struct cond_check *c = u;
	const char *uid = obj ? kube_meta_uid(obj) : NULL;
	if (!uid || strcmp(uid, c->uid) || kube_obj_get_string(obj, "spec.nodeName"))
		return;
	c->exists = true;
	const cJSON *cond = kube_condition_find(kube_obj_get(obj, "status.conditions"), "PodScheduled");
	const char *st = cond ? kube_obj_get_string(cond, "status") : NULL;
	const char *re = cond ? kube_obj_get_string(cond, "reason") : NULL;
	const char *me = cond ? kube_obj_get_string(cond, "message") : NULL;
	c->status_false = st && !strcmp(st, "False");
	c->cond_same = c->status_false && re && !strcmp(re, c->reason) && me && !strcmp(me, c->message);
	const char *nn = kube_obj_get_string(obj, "status.nominatedNodeName");
	c->nom_same = !c->nominate || !strcmp(nn ? nn : "", c->nominated);
}

static void do_patch(struct sk_daemon *d, const struct patch_job *j)
{
	char key[512];
	snprintf(key, sizeof key, "%s/%s", j->ns, j->name);
	struct cond_check c = { .uid = j->uid, .reason = j->reason, .message = j->message,
				.nominated = j->nominated_node, .nominate = j->nominate };
	kube_store_get_with(d->pods, key, cond_check_fn, &c);
	if (!c.exists || (c.cond_same && c.nom_same))
		return; /* gone, bound, or nothing would change */
	char now[32];
	kube_time_rfc3339(now, time(NULL));
	cJSON *patch = cJSON_CreateObject();
	cJSON *status = patch ? cJSON_AddObjectToObject(patch, "status") : NULL;
	cJSON *conds = status ? cJSON_AddArrayToObject(status, "conditions") : NULL;
	cJSON *cond = cJSON_CreateObject();
	bool ok = conds && cond && cJSON_AddItemToArray(conds, cond);
	if (!ok)
		cJSON_Delete(cond);
	ok = ok && cJSON_AddStringToObject(cond, "type", "PodScheduled") &&
	     cJSON_AddStringToObject(cond, "status", "False") && cJSON_AddStringToObject(cond, "reason", j->reason) &&
	     cJSON_AddStringToObject(cond, "message", j->message) && cJSON_AddNullToObject(cond, "lastProbeTime");
	if (ok && !c.status_false)
		ok = cJSON_AddStringToObject(cond, "lastTransitionTime", now) != NULL;
	if (ok && !c.nom_same)
		ok = (*j->nominated_node ? cJSON_AddStringToObject(status, "nominatedNodeName", j->nominated_node)
					 : cJSON_AddNullToObject(status, "nominatedNodeName")) != NULL;
	char *path = ok ? kube_path("", "v1", "pods", j->ns, j->name, "status") : NULL;
	struct kube_error ke = { 0 };
	if (!path)
		klog_error("Cannot build the pod status patch: out of memory", " pod=%s", key);
	else if (kube_patch(d->client, path, KUBE_PATCH_STRATEGIC, patch, NULL, &ke) != 0 && ke.http_code != 404)
		klog_error("Error updating pod", " pod=%s err=\"%s\"", key, ke.message);
	free(path);
	cJSON_Delete(patch);
}

static void *patch_main(void *arg)
{
	struct sk_daemon *d = arg;
	pthread_mutex_lock(&d->patch_mu);
	for (;;) {
		while (!d->patch_head && !d->patch_stop)
			pthread_cond_wait(&d->patch_cv, &d->patch_mu);
		/* On stop, pending patches are dropped (freed by sk_daemon_free): the next leader
		 * re-evaluates those pods and writes their conditions again. */
		if (!d->patch_head || d->patch_stop)
			break;
		struct patch_job *j = d->patch_head;
		d->patch_head = j->next;
		if (!d->patch_head)
			d->patch_tail = NULL;
		d->patch_busy = true;
		pthread_mutex_unlock(&d->patch_mu);
		do_patch(d, j);
		patch_job_free(j);
		pthread_mutex_lock(&d->patch_mu);
		d->patch_busy = false;
		d->npatch_pending--;
		pthread_cond_broadcast(&d->patch_cv);
	}
	pthread_mutex_unlock(&d->patch_mu);
	return NULL;
}

static void se_observe(void *ctx, const struct sk_outcome *o)
{
	struct sk_daemon *d = ctx;
	sk_sched_metrics_attempt(d->metrics, o, mono_ns());
	if (o->result != SK_RESULT_SCHEDULED)
		incoming(d, o->pod, "ScheduleAttemptFailure");
}

/* ---------- loops ---------- */

static void *loop_main(void *arg)
{
	struct sk_daemon *d = arg;
	while (!atomic_load(&d->stopping) &&
	       !(kube_informer_has_synced(d->pods) && kube_informer_has_synced(d->nodes)))
		usleep(20000);
	if (!atomic_load(&d->stopping))
		klog_info(0, "Starting the scheduling loop");
	while (!atomic_load(&d->stopping)) {
		int r = sk_schedule_one(d->sched, true);
		/* After the call returns this thread holds no framework reference: the reaper uses
		 * the count to know that a cycle begun before a swap is over. */
		atomic_fetch_add(&d->cycles, 1);
		if (r < 0)
			break;
	}
	atomic_store(&d->loop_active, false);
	return NULL;
}

static void start_loop(struct sk_daemon *d)
{
	pthread_mutex_lock(&d->mu);
	if (!d->loop_running && !atomic_load(&d->stopping)) {
		atomic_store(&d->loop_active, true);
		if (pthread_create(&d->loop_thread, NULL, loop_main, d) == 0) {
			d->loop_running = true;
		} else {
			atomic_store(&d->loop_active, false);
			klog_error("Cannot start the scheduling loop thread");
		}
	}
	pthread_mutex_unlock(&d->mu);
}

static void *house_main(void *arg)
{
	struct sk_daemon *d = arg;
	pthread_mutex_lock(&d->house_mu);
	while (!d->house_stop) {
		pthread_mutex_unlock(&d->house_mu);
		struct sk_queue_counts c;
		sk_queue_counts(sk_scheduler_queue(d->sched), &c);
		sk_sched_metrics_pending(d->metrics, &c);
		sk_sched_metrics_cache_size(d->metrics, sk_cache_node_count(d->cache), sk_cache_pod_count(d->cache),
					    sk_cache_assumed_count(d->cache));
		sk_cache_cleanup_expired(d->cache);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_mutex_lock(&d->house_mu);
		if (!d->house_stop)
			pthread_cond_timedwait(&d->house_cv, &d->house_mu, &ts);
	}
	pthread_mutex_unlock(&d->house_mu);
	return NULL;
}

/* ---------- leader election ---------- */

static void on_started_leading(void *ctx)
{
	struct sk_daemon *d = ctx;
	atomic_store(&d->leading, true);
	sk_sched_metrics_leader(d->metrics, d->lease_name, true);
	klog_info(0, "Started leading", " lease=%s/%s identity=%s", d->lease_ns, d->lease_name, d->identity);
	start_loop(d);
}

static void on_stopped_leading(void *ctx)
{
	struct sk_daemon *d = ctx;
	atomic_store(&d->leading, false);
	sk_sched_metrics_leader(d->metrics, d->lease_name, false);
	if (atomic_load(&d->stopping)) {
		klog_info(0, "Requested to terminate, exiting");
		return;
	}
	/* kube-scheduler exits here ("leaderelection lost"); stop popping at once. */
	klog_error("leaderelection lost", " lease=%s/%s", d->lease_ns, d->lease_name);
	atomic_store(&d->failed, true);
	sk_queue_close(sk_scheduler_queue(d->sched));
}

static void on_new_leader(void *ctx, const char *identity)
{
	struct sk_daemon *d = ctx;
	if (strcmp(identity, d->identity))
		klog_info(0, "New leader elected", " identity=%s", identity);
}

/* ---------- HTTP ---------- */

static int check_synced(void *ctx, char *reason, size_t len)
{
	struct sk_daemon *d = ctx;
	if (sk_daemon_synced(d))
		return 0;
	snprintf(reason, len, "waiting for the pod and node informers to sync");
	return 1;
}

static int check_leader(void *ctx, char *reason, size_t len)
{
	(void)ctx;
	(void)reason;
	(void)len;
	return 0; /* the elector steps down by itself when it cannot renew */
}

static void configz_handler(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	(void)req;
	struct sk_daemon *d = ctx;
	pthread_rwlock_rdlock(&d->names_lock);
	/* copied: the body is sent after the handler returns, maybe after a reload */
	kube_http_respondf(resp, 200, "application/json", "%s", d->gen && d->gen->configz ? d->gen->configz : "{}");
	pthread_rwlock_unlock(&d->names_lock);
}

static char *build_configz(const struct sk_config *cfg)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *cc = sk_config_to_json(cfg);
	cJSON *un = cJSON_CreateArray();
	bool ok = root && cc && un;
	if (ok) {
		cJSON_AddItemToObject(root, "componentconfig", cc);
		cc = NULL;
		for (int i = 0; ok && sk_unavailable_default_plugins[i]; i++)
			ok = cJSON_AddItemToArray(un, cJSON_CreateString(sk_unavailable_default_plugins[i]));
		cJSON *per = cJSON_CreateObject();
		for (int p = 0; ok && per && p < cfg->nprofiles; p++) {
			cJSON *a = cJSON_AddArrayToObject(per, cfg->profiles[p].scheduler_name);
			for (int i = 0; a && i < cfg->profiles[p].nunavailable; i++)
				cJSON_AddItemToArray(a, cJSON_CreateString(cfg->profiles[p].unavailable[i]));
		}
		cJSON_AddItemToObject(root, "unavailableDefaultPlugins", un);
		un = NULL;
		if (per)
			cJSON_AddItemToObject(root, "unavailablePluginsByProfile", per);
	}
	char *s = ok ? cJSON_Print(root) : NULL;
	cJSON_Delete(root);
	cJSON_Delete(cc);
	cJSON_Delete(un);
	return s;
}

/* ======================================================================== generations and reload */

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
static void gen_free(struct sk_daemon *d, struct gen *g)
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

/* Builds every framework of cfg (taken: freed on failure) beside the running generation `old`
 * (may be NULL), reusing its event recorders for the schedulerNames it keeps. Returns the new
 * generation, or NULL and *err naming the profile. Touches nothing the running one uses. */
static struct gen *gen_build(struct sk_daemon *d, struct sk_config *cfg, const struct gen *old, char **err)
{
	struct gen *g = calloc(1, sizeof *g);
	if (!g) {
		sk_config_free(cfg);
		errf(err, "out of memory");
		return NULL;
	}
	g->cfg = cfg;
	g->pcs = calloc((size_t)cfg->nprofiles + 1, sizeof *g->pcs);
	g->fws = calloc((size_t)cfg->nprofiles + 1, sizeof *g->fws);
	if (!g->pcs || !g->fws) {
		gen_free(d, g);
		errf(err, "out of memory");
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
		struct rec_holder *rh = find_holder(old, p->scheduler_name);
		if (rh) {
			atomic_fetch_add(&rh->refs, 1);
		} else {
			char instance[512];
			snprintf(instance, sizeof instance, "%s-%s", p->scheduler_name, host);
			if (!(rh = calloc(1, sizeof *rh)) ||
			    kube_event_recorder_new(d->event_client, p->scheduler_name, instance, &rh->rec) != 0) {
				free(rh);
				gen_free(d, g);
				errf(err, "event recorder for profile %s: cannot start", p->scheduler_name);
				return NULL;
			}
			atomic_init(&rh->refs, 1);
		}
		pc->rh = rh;
		struct sk_framework_env fenv = {
			.ctx = pc, .pool = d->pool, .nominator = d->nom, .snapshot = fw_snapshot,
			.bind = fw_bind, .event = fw_event, .observe = fw_observe,
			.list_pdbs = fw_list_pdbs, .get_pod = fw_get_pod, .pod_start_time = fw_pod_start_time,
			.terminating_by_preemption = fw_terminating_by_preemption,
			.preempt_victim = fw_preempt_victim, .clear_nominated = fw_clear_nominated,
		};
		if (!(g->fws[i] = sk_framework_new(cfg, p, &fenv, &e))) {
			errf(err, "profile %s: %s", p->scheduler_name, e ? e : "cannot build");
			free(e);
			gen_free(d, g);
			return NULL;
		}
		if (!old && p->nunavailable > 0) { /* at start-up; the loader logs them on reloads */
			char list[1024] = "";
			for (int k = 0; k < p->nunavailable; k++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? "," : "",
					 p->unavailable[k]);
			klog_warning("Upstream default plugins are not available in this build and are skipped",
				     " profile=%s plugins=%s", p->scheduler_name, list);
		}
	}
	if (d->opts.secure_port != 0 && !(g->configz = build_configz(cfg))) {
		gen_free(d, g);
		errf(err, "configz: out of memory");
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
	struct sk_pod *p = decode_pod(obj);
	if (!p)
		return;
	struct sk_queue *q = sk_scheduler_queue(r->d->sched);
	if (now && !pod_terminal(p)) {
		if (sk_queue_add(q, p) == 0) {
			sk_nominator_add(r->d->nom, p, NULL);
			incoming(r->d, p, "SchedulerConfigReload");
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
static int gen_swap(struct sk_daemon *d, struct gen *g, char **err)
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
		return errf(err, "installing the frameworks: out of memory");
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
		gen_free(d, g);
		return;
	}
	klog_warning("A replaced configuration is still referenced; keeping it until exit", " config-hash=%s",
		     g->cfg->sha256);
	pthread_mutex_lock(&d->reap_mu);
	g->next = d->zombies;
	d->zombies = g;
	pthread_mutex_unlock(&d->reap_mu);
}

static void *reaper_main(void *arg)
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

static void sha256_hex(const void *buf, size_t len, char out[65])
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
		return e == EFBIG ? errf(err, "reading %s: larger than %d bytes", path, MAX_CONFIG_BYTES)
				  : errf(err, "reading %s: %s", path, strerror(e));
	return 0;
}

static void reload_failed(struct sk_daemon *d, const char *hash, const char *summary, const char *const *msgs, int nmsgs)
{
	kube_counter_inc(d->m_reloads, KUBE_LABELS("failure"));
	kube_gauge_set(d->m_last_ok, 0, NULL);
	klog_error("Configuration reload rejected; the running configuration stays", " file=%s config-hash=%s running=%s err=\"%s\"",
		   d->opts.config_path, hash, d->gen->cfg->sha256, summary);
	for (int i = 0; i < nmsgs; i++)
		klog_error("Invalid scheduler configuration", " file=%s err=\"%s\"", d->opts.config_path, msgs[i]);
}

static void reload_ok(struct sk_daemon *d)
{
	kube_counter_inc(d->m_reloads, KUBE_LABELS("success"));
	kube_gauge_set(d->m_last_ok, 1, NULL);
	kube_gauge_set(d->m_last_ok_ts, (double)time(NULL), NULL);
}

/* One look at the config file (reload_mu held). */
static int check_config_locked(struct sk_daemon *d, char **err)
{
	char *buf = NULL, *e = NULL;
	size_t len = 0;
	char hash[72];
	if (read_file(d->opts.config_path, &buf, &len, &e) != 0) {
		/* Reported once per failure state, not every poll. */
		snprintf(hash, sizeof hash, "unreadable");
		int rc = 0;
		if (strcmp(d->last_seen, hash)) {
			snprintf(d->last_seen, sizeof d->last_seen, "%s", hash);
			reload_failed(d, "-", e, NULL, 0);
			rc = errf(err, "%s", e);
		}
		free(e);
		return rc;
	}
	sha256_hex(buf, len, hash);
	if (!strcmp(hash, d->gen->cfg->sha256)) {
		if (strcmp(d->last_seen, hash)) {
			if (d->last_seen[0])
				klog_info(0, "The configuration file is back to the running configuration", " config-hash=%s",
					  hash);
			snprintf(d->last_seen, sizeof d->last_seen, "%s", hash);
			kube_gauge_set(d->m_last_ok, 1, NULL);
		}
		free(buf);
		return 0;
	}
	if (!strcmp(hash, d->last_seen)) {
		free(buf);
		return 0; /* rejected before */
	}
	snprintf(d->last_seen, sizeof d->last_seen, "%s", hash);
	klog_info(0, "The configuration file changed; loading it", " file=%s config-hash=%s", d->opts.config_path, hash);

	struct sk_errors errs = { 0 };
	struct sk_config *cfg = sk_config_load(buf, len, &errs);
	free(buf);
	if (!cfg) {
		char *joined = sk_errors_join(&errs, "; ");
		reload_failed(d, hash, joined ? joined : "invalid configuration", (const char *const *)errs.msgs, errs.n);
		errf(err, "%s", joined ? joined : "invalid configuration");
		free(joined);
		sk_errors_free(&errs);
		return -1;
	}
	sk_errors_free(&errs);
	char fields[256];
	if (restart_fields(d->gen->cfg, cfg, fields, sizeof fields) != 0) {
		sk_config_free(cfg);
		reload_failed(d, hash, "out of memory", NULL, 0);
		return errf(err, "out of memory");
	}
	if (fields[0]) {
		char *msg = NULL;
		errf(&msg, "changing %s needs a restart of the scheduler; nothing of this configuration was applied", fields);
		reload_failed(d, hash, msg ? msg : fields, NULL, 0);
		errf(err, "%s", msg ? msg : fields);
		free(msg);
		sk_config_free(cfg);
		return -1;
	}
	struct gen *g = gen_build(d, cfg, d->gen, &e);
	if (!g || gen_swap(d, g, &e) != 0) {
		reload_failed(d, hash, e ? e : "cannot build the frameworks", NULL, 0);
		errf(err, "%s", e ? e : "cannot build the frameworks");
		free(e);
		gen_free(d, g);
		return -1;
	}
	reload_ok(d);
	return 1;
}

int sk_daemon_reload(struct sk_daemon *d, char **err)
{
	if (!d->opts.config_path)
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

static void *watch_main(void *arg)
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

/* ======================================================================== lifecycle */

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

static struct sk_config *load_config(const struct sk_daemon_opts *o, char **err)
{
	struct sk_errors errs = { 0 };
	struct sk_config *cfg;
	if (o->config_path) {
		cfg = sk_config_load_file(o->config_path, &errs);
	} else {
		static const char def[] = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
		cfg = sk_config_load(def, sizeof def - 1, &errs);
	}
	if (!cfg) {
		char *joined = sk_errors_join(&errs, "\n  ");
		errf(err, "config %s:\n  %s", o->config_path ? o->config_path : "(default)", joined ? joined : "invalid");
		free(joined);
	}
	sk_errors_free(&errs);
	return cfg;
}

int sk_daemon_new(const struct sk_daemon_opts *opts, struct sk_daemon **out, char **err)
{
	*out = NULL;
	struct sk_daemon *d = calloc(1, sizeof *d);
	if (!d)
		return errf(err, "out of memory");
	d->opts = *opts;
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
	char *e = NULL;
	struct sk_config *cfg = load_config(opts, err);
	if (!cfg)
		goto fail;
	make_identity(d->identity, sizeof d->identity);
	const struct sk_leader_election_config *le = &cfg->leader_election;
	d->lease_ns = strdup(opts->lease_namespace ? opts->lease_namespace
						   : (le->resource_namespace ? le->resource_namespace : "kube-system"));
	d->lease_name = strdup(opts->lease_name ? opts->lease_name
						: (le->resource_name ? le->resource_name : "kube-scheduler"));
	if (!d->lease_ns || !d->lease_name) {
		sk_config_free(cfg);
		errf(err, "out of memory");
		goto fail;
	}
	/* d->gen takes cfg below; until then it is freed on every failure path */

	/* client */
	struct kube_config *kc = NULL;
	const char *kpath = opts->kubeconfig ? opts->kubeconfig
					     : (cfg->client_kubeconfig && *cfg->client_kubeconfig ? cfg->client_kubeconfig : NULL);
	if (kpath || !opts->master) {
		if (kube_config_load(kpath, NULL, &kc, &e) != 0) {
			errf(err, "kubeconfig: %s", e ? e : "cannot load");
			sk_config_free(cfg);
			goto fail;
		}
	} else if (!(kc = kube_config_new(opts->master))) {
		errf(err, "out of memory");
		sk_config_free(cfg);
		goto fail;
	}
	if (opts->master && kpath) {
		free(kc->server);
		kc->server = strdup(opts->master);
	}
	if (cfg->client_qps > 0)
		kc->qps = cfg->client_qps;
	if (cfg->client_burst > 0)
		kc->burst = cfg->client_burst;
	int rc = kube_client_new(kc, &d->client, &e);
	if (rc == 0)
		rc = kube_client_new(kc, &d->event_client, &e);
	kube_config_free(kc);
	if (rc != 0) {
		errf(err, "kube client: %s", e ? e : "cannot create");
		sk_config_free(cfg);
		goto fail;
	}
	/* Events are best effort (as client-go's broadcaster): no retries and a bounded wait, so a
	 * slow or vanished API server never holds up shutdown behind a thousand queued events. */
	kube_client_set_max_retries(d->event_client, 0);
	kube_client_set_timeout(d->event_client, 10);

	/* cluster state, metrics */
	d->cache = sk_cache_new(0);
	d->snap = sk_snapshot_new();
	d->nom = sk_nominator_new();
	d->registry = kube_metrics_registry_new();
	d->metrics = d->registry ? sk_sched_metrics_new(d->registry) : NULL;
	if (d->registry) {
		d->m_reloads = kube_counter_new(d->registry, "schedkit_config_reloads_total",
						"Reloads of the --config file by result (success, failure).", 1,
						KUBE_LABELS("result"));
		d->m_last_ok = kube_gauge_new(d->registry, "schedkit_config_last_reload_successful",
					      "1 when the running configuration is the --config file's content, 0 after a rejected change.",
					      0, NULL);
		d->m_last_ok_ts = kube_gauge_new(d->registry, "schedkit_config_last_reload_success_timestamp_seconds",
						 "Unix time of the last configuration load that succeeded (start-up included).",
						 0, NULL);
		kube_counter_add(d->m_reloads, 0, KUBE_LABELS("success"));
		kube_counter_add(d->m_reloads, 0, KUBE_LABELS("failure"));
		kube_gauge_set(d->m_last_ok, 1, NULL);
		kube_gauge_set(d->m_last_ok_ts, (double)time(NULL), NULL);
	}
	if (!d->cache || !d->snap || !d->nom || !d->metrics) {
		errf(err, "out of memory");
		sk_config_free(cfg);
		goto fail;
	}
	if (!(d->pool = sk_pool_new(cfg->parallelism, &e))) {
		errf(err, "worker pool: %s", e ? e : "cannot start");
		sk_config_free(cfg);
		goto fail;
	}
	struct sk_sched_env env = {
		.ctx = d,
		.update_snapshot = se_update_snapshot,
		.assume = se_assume,
		.forget = se_forget,
		.finish_binding = se_finish,
		.is_assumed = se_is_assumed,
		.get_pod = se_get_pod,
		.patch_failure = se_patch_failure,
		.observe = se_observe,
		.binder_threads = opts->binder_threads > 0 ? opts->binder_threads : DEFAULT_BINDER_THREADS,
		.nominator = d->nom,
		.queue = {
			.initial_backoff_ns = cfg->pod_initial_backoff_seconds * 1000000000LL,
			.max_backoff_ns = cfg->pod_max_backoff_seconds * 1000000000LL,
		},
	};
	if (!(d->sched = sk_scheduler_new(&env, &e))) {
		errf(err, "scheduler: %s", e ? e : "cannot create");
		sk_config_free(cfg);
		goto fail;
	}

	/* one framework and one event recorder per profile */
	struct gen *g = gen_build(d, cfg, NULL, err);
	if (!g)
		goto fail;
	if (gen_swap(d, g, err) != 0) {
		gen_free(d, g);
		goto fail;
	}
	if (opts->config_path)
		snprintf(d->last_seen, sizeof d->last_seen, "%s", g->cfg->sha256);

	/* informers */
	struct kube_informer_opts po = { .version = "v1", .resource = "pods" };
	struct kube_informer_opts no = { .version = "v1", .resource = "nodes" };
	struct kube_informer_opts pdbo = { .group = "policy", .version = "v1", .resource = "poddisruptionbudgets" };
	if (kube_informer_new(d->client, &po, &d->pods) != 0 || kube_informer_new(d->client, &no, &d->nodes) != 0 ||
	    kube_informer_new(d->client, &pdbo, &d->pdbs) != 0 ||
	    !(d->preempt = sk_preempt_client_new(d->client, d->pods, d->pdbs))) {
		errf(err, "informers: out of memory");
		goto fail;
	}
	kube_informer_add_handlers(d->pods, &(struct kube_informer_handlers){ on_pod_add, on_pod_update, on_pod_delete, d });
	kube_informer_add_handlers(d->nodes, &(struct kube_informer_handlers){ on_node_add, on_node_update, on_node_delete, d });

	/* leader election */
	bool elect = opts->leader_elect >= 0 ? opts->leader_elect : le->leader_elect;
	if (elect) {
		struct kube_leader_config lc = {
			.ns = d->lease_ns, .name = d->lease_name, .identity = d->identity,
			.lease_duration_s = (opts->lease_duration_ms >= 0 ? opts->lease_duration_ms : le->lease_duration_ms) / 1000.0,
			.renew_deadline_s = (opts->renew_deadline_ms >= 0 ? opts->renew_deadline_ms : le->renew_deadline_ms) / 1000.0,
			.retry_period_s = (opts->retry_period_ms >= 0 ? opts->retry_period_ms : le->retry_period_ms) / 1000.0,
			.release_on_cancel = true,
			.on_started_leading = on_started_leading,
			.on_stopped_leading = on_stopped_leading,
			.on_new_leader = on_new_leader,
			.ctx = d,
		};
		if (kube_leader_new(d->client, &lc, &d->leader, &e) != 0) {
			errf(err, "leader election: %s", e ? e : "invalid configuration");
			goto fail;
		}
		if (kube_leader_set_annotation(d->leader, CONFIG_HASH_ANNOTATION, d->gen->cfg->sha256) != 0) {
			errf(err, "out of memory");
			goto fail;
		}
		sk_sched_metrics_leader(d->metrics, d->lease_name, false);
	}

	/* HTTP endpoints */
	if (opts->secure_port != 0) {
		struct kube_http_server_opts ho = {
			.bind_address = opts->bind_address ? opts->bind_address : "0.0.0.0",
			.port = opts->secure_port > 0 ? opts->secure_port : 0, .tls_cert_file = opts->tls_cert_file,
			.tls_key_file = opts->tls_key_file, .name = "scheduler",
		};
		if (kube_http_server_new(&ho, &d->http, &e) != 0) {
			errf(err, "serving on %s:%d: %s", ho.bind_address, ho.port, e ? e : "cannot listen");
			goto fail;
		}
		if (kube_http_add_check(d->http, KUBE_HEALTHZ | KUBE_LIVEZ, "ping", NULL, NULL) != 0 ||
		    (d->leader && kube_http_add_check(d->http, KUBE_HEALTHZ, "leaderElection", check_leader, d) != 0) ||
		    kube_http_add_check(d->http, KUBE_READYZ, "ping", NULL, NULL) != 0 ||
		    kube_http_add_check(d->http, KUBE_READYZ, "sched-handler-sync", check_synced, d) != 0 ||
		    kube_http_add_metrics(d->http, d->registry) != 0 ||
		    kube_http_route(d->http, "GET", "/configz", configz_handler, d) != 0) {
			errf(err, "HTTP routes: out of memory");
			goto fail;
		}
	}
	free(e);
	*out = d;
	return 0;
fail:
	free(e);
	sk_daemon_free(d);
	return -1;
}

int sk_daemon_start(struct sk_daemon *d, char **err)
{
	char *e = NULL;
	pthread_mutex_lock(&d->mu);
	bool already = d->started;
	d->started = true;
	pthread_mutex_unlock(&d->mu);
	if (already)
		return 0;
	if (d->http && kube_http_server_start(d->http, &e) != 0) {
		errf(err, "HTTP server: %s", e ? e : "cannot start");
		free(e);
		return -1;
	}
	if (d->http)
		klog_info(0, "Serving health, metrics and configz", " port=%d tls=%s", kube_http_server_port(d->http),
			  d->opts.tls_cert_file ? "true" : "false");
	if (pthread_create(&d->patch_thread, NULL, patch_main, d) != 0)
		return errf(err, "cannot start the status patch thread");
	d->patch_running = true;
	if (pthread_create(&d->house_thread, NULL, house_main, d) != 0)
		return errf(err, "cannot start the housekeeping thread");
	d->house_running = true;
	if (sk_queue_start_flushers(sk_scheduler_queue(d->sched)) != 0)
		return errf(err, "cannot start the queue flushers");
	if (kube_informer_start(d->nodes) != 0 || kube_informer_start(d->pods) != 0 || kube_informer_start(d->pdbs) != 0)
		return errf(err, "cannot start the informers");
	if (pthread_create(&d->reap_thread, NULL, reaper_main, d) != 0)
		return errf(err, "cannot start the configuration reaper thread");
	d->reap_running = true;
	if (d->opts.config_path && d->opts.config_poll_ms >= 0) {
		if (pthread_create(&d->watch_thread, NULL, watch_main, d) != 0)
			return errf(err, "cannot start the configuration watcher thread");
		d->watch_running = true;
	}
	klog_info(0, "Starting schedkit-scheduler", " profiles=%d config-hash=%s leader-elect=%s config-reload=%s",
		  d->gen->n, d->gen->cfg->sha256, d->leader ? "true" : "false", d->watch_running ? "true" : "false");
	if (d->leader) {
		if (kube_leader_start(d->leader) != 0)
			return errf(err, "cannot start leader election");
	} else {
		start_loop(d);
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
	kube_leader_free(d->leader);
	kube_informer_free(d->pods);
	kube_informer_free(d->nodes);
	sk_scheduler_free(d->sched);
	sk_preempt_client_free(d->preempt); /* after the scheduler: binding cycles may still evict */
	kube_informer_free(d->pdbs);
	/* The scheduler is gone: no cycle holds a framework any more. */
	gen_free(d, d->gen);
	for (struct gen *g = d->retired, *n; g; g = n) {
		n = g->next;
		gen_free(d, g);
	}
	for (struct gen *g = d->zombies, *n; g; g = n) {
		n = g->next;
		gen_free(d, g);
	}
	sk_pool_free(d->pool);
	sk_nominator_free(d->nom);
	sk_snapshot_free(d->snap);
	sk_cache_free(d->cache);
	sk_sched_metrics_free(d->metrics);
	kube_metrics_registry_free(d->registry);
	if (!atomic_load(&d->events_abandoned)) /* still used by the abandoned senders */
		kube_client_free(d->event_client);
	kube_client_free(d->client);
	for (struct patch_job *j = d->patch_head, *n; j; j = n) {
		n = j->next;
		patch_job_free(j);
	}
	for (int b = 0; b < CONFLICT_BUCKETS; b++)
		for (struct conflict *c = d->conflicts[b], *n; c; c = n) {
			n = c->next;
			free(c->uid);
			free(c);
		}
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
	return d->pods && d->nodes && kube_informer_has_synced(d->pods) && kube_informer_has_synced(d->nodes);
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
	if (opts->validate)
		return sk_config_validate_file(opts->config_path, stdout);
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
