/* bin/schedkit-operator: flags, client, health/metrics endpoints, optional leader election, and
 * the controller (operator/controller.h); --once reconciles a single time and exits. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kube/config.h"
#include "kube/events.h"
#include "kube/flags.h"
#include "kube/version.h"
#include "kube/httpserver.h"
#include "kube/leader.h"
#include "kube/log.h"
#include "kube/metrics.h"
#include "kube/rest.h"
#include "kube/util.h"
#include "operator/controller.h"
#include "operator/plugins.h"
#include "operator/settings.h"
#include "operator/settings_watch.h"
#include "scheduler/framework/loader.h"

/* Strings are borrowed from argv or are the literal defaults. */
struct opts {
	char *kubeconfig, *ns, *image, *health_addr, *metrics_addr;
	char *lease_name, *lease_ns, *plugin_dir, *settings;
	int replicas, sched_v, verbosity;
	bool leader_elect, once;
	int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms, resync_ms, settings_interval_ms;
};

#define OFF(f) offsetof(struct opts, f)
static const struct kube_flag flags[] = {
	{ "kubeconfig", 0, KUBE_FLAG_STRING, OFF(kubeconfig),
	  .help = "Path to a kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)." },
	{ "namespace", 0, KUBE_FLAG_STRING, OFF(ns),
	  .help = "Namespace of the scheduler's objects (default \"schedkit-system\")." },
	{ "scheduler-image", 0, KUBE_FLAG_STRING, OFF(image),
	  .help = "Image of the scheduler Deployment (default: the settings file's,\nelse \"" OP_DEFAULT_IMAGE "\")." },
	{ "scheduler-replicas", 0, KUBE_FLAG_INT, OFF(replicas), 1, 100,
	  .help = "Scheduler replicas (default: the settings file's, else 2)." },
	{ "scheduler-settings", 0, KUBE_FLAG_STRING, OFF(settings), .arg = "FILE",
	  .help = "YAML settings of the scheduler Deployment: image, replicas,\n"
		  "priorityClassName, resources, nodeSelector, tolerations, volumes,\n"
		  "volumeMounts (docs/operator.md). Flags win over it. Re-read when it\n"
		  "changes (see --scheduler-settings-check-interval): drift repair then\n"
		  "applies the new settings; an invalid change is logged and ignored." },
	{ "scheduler-settings-check-interval", 0, KUBE_FLAG_DURATION, OFF(settings_interval_ms), .min = 1,
	  .help = "How often the settings file is read for changes (default 1s)." },
	{ "scheduler-v", 0, KUBE_FLAG_INT, OFF(sched_v), 0, 10, .help = "--v passed to the scheduler (default 2)." },
	{ "leader-elect", 0, KUBE_FLAG_BOOL, OFF(leader_elect), .help = "Elect a leader before reconciling (default false)." },
	{ "leader-elect-lease-duration", 0, KUBE_FLAG_DURATION, OFF(lease_duration_ms), .min = 1, .help = "(default 15s)" },
	{ "leader-elect-renew-deadline", 0, KUBE_FLAG_DURATION, OFF(renew_deadline_ms), .min = 1, .help = "(default 10s)" },
	{ "leader-elect-retry-period", 0, KUBE_FLAG_DURATION, OFF(retry_period_ms), .min = 1, .help = "(default 2s)" },
	{ "leader-elect-resource-name", 0, KUBE_FLAG_STRING, OFF(lease_name),
	  .help = "Lease name (default \"schedkit-operator\")." },
	{ "leader-elect-resource-namespace", 0, KUBE_FLAG_STRING, OFF(lease_ns),
	  .help = "Lease namespace (default: --namespace)." },
	{ "health-probe-bind-address", 0, KUBE_FLAG_STRING, OFF(health_addr),
	  .help = "Serve /healthz /livez /readyz /metrics here; \"0\" disables\n(default \":8081\")." },
	{ "metrics-bind-address", 0, KUBE_FLAG_STRING, OFF(metrics_addr),
	  .help = "Also serve /metrics on this address; \"0\" disables (default \"0\")." },
	{ "resync", 0, KUBE_FLAG_DURATION, OFF(resync_ms), .min = 1, .help = "Informer resync period (default 10m)." },
	{ "once", 0, KUBE_FLAG_BOOL, OFF(once), .help = "Reconcile once and exit (0 on success)." },
	{ "plugin-dir", 0, KUBE_FLAG_STRING, OFF(plugin_dir), .arg = "DIR",
	  .help = "Plugin modules (*.so) SchedulerProfiles may name without a SchedulerPlugin: the\n"
		  "scheduler image's, which the scheduler always loads from " OP_IMAGE_PLUGIN_DIR ".\n"
		  "Loaded to validate profiles and args; a missing directory means none\n"
		  "(default \"" OP_IMAGE_PLUGIN_DIR "\")." },
	{ "v", 'v', KUBE_FLAG_INT, OFF(verbosity), 0, 10, .help = "Log verbosity." },
};

static const struct kube_flag_set flag_set = {
	.prog = "schedkit-operator",
	.version = SCHEDKIT_VERSION_LINE("schedkit-operator"),
	.head = "schedkit-operator: turns SchedulerProfiles (schedkit.io/v1alpha1) into the schedkit-scheduler\n"
		"configuration, Deployment, RBAC and Service, and reports each profile's status.\n"
		"\n"
		"Usage: schedkit-operator [flags]\n",
	.flags = flags,
	.nflags = sizeof flags / sizeof flags[0],
	.column = 43,
	.help_help = "This help.",
};

/* Returns 0 run, 1 help shown, 2 usage error. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .ns = OP_DEFAULT_NAMESPACE, .health_addr = ":8081", .metrics_addr = "0",
			    .lease_name = "schedkit-operator", .plugin_dir = OP_IMAGE_PLUGIN_DIR, .replicas = 0, .sched_v = 2, .verbosity = -1,
			    .resync_ms = 600000, .settings_interval_ms = 1000, .lease_duration_ms = 15000, .renew_deadline_ms = 10000,
			    .retry_period_ms = 2000 };
	int rc = kube_flags_parse(&flag_set, argc, argv, o, stdout, stderr);
	if (rc)
		return rc;
	if (o->verbosity >= 0)
		kube_log_set_verbosity(o->verbosity);
	if (!o->lease_ns)
		o->lease_ns = o->ns;
	return 0;
}

/* "host:port", ":port", "port"; "0" = disabled (returns 1). 0 ok, -1 bad. */
static int split_addr(const char *s, char *host, size_t hl, int *port)
{
	if (!strcmp(s, "0") || !*s)
		return 1;
	const char *colon = strrchr(s, ':');
	const char *p = colon ? colon + 1 : s;
	size_t n = colon ? (size_t)(colon - s) : 0;
	if (n >= hl)
		return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	if (host[0] == '[' && n >= 2 && host[n - 1] == ']') {
		memmove(host, host + 1, n - 2);
		host[n - 2] = '\0';
	}
	int64_t v;
	if (kube_parse_int(p, 0, 65535, &v) != 0)
		return -1;
	*port = (int)v;
	return 0;
}

/* The modules of --plugin-dir, loaded once at start: the scheduler image's plugins, so profiles
 * naming them are validated (args included) by the plugins' own code. A missing directory is an
 * operator image without modules; a module that does not load is a broken image: exit. */
static int load_modules(const char *dir, struct sk_module_set **out)
{
	*out = NULL;
	struct stat st;
	if (!dir || !*dir || (stat(dir, &st) != 0 && errno == ENOENT)) {
		klog_info(0, "No plugin directory; profiles may name in-tree and SchedulerPlugin plugins",
			  " dir=%s", dir ? dir : "");
		return 0;
	}
	char *err = NULL;
	if (sk_module_set_load(&dir, 1, out, &err) != 0) {
		klog_error("Cannot load the plugin modules", " dir=%s err=\"%s\"", dir, err ? err : "");
		free(err);
		return -1;
	}
	klog_info(0, "Loaded plugin modules", " dir=%s plugins=%d", dir, sk_module_set_nplugins(*out));
	return 0;
}

static struct op_controller *g_ctrl;
static struct op_settings g_settings = { .replicas = -1 }; /* outlives the controller */
static atomic_bool g_lost, g_shutting_down;

static int check_synced(void *ctx, char *reason, size_t len)
{
	(void)ctx;
	if (g_ctrl && op_controller_synced(g_ctrl))
		return 0;
	snprintf(reason, len, "informers not synced");
	return 1;
}

/* The flags --scheduler-image / --scheduler-replicas as given (NULL / 0: not given): they win
 * over the settings file, which wins over the defaults, at start and at every reload. */
static const char *g_flag_image;
static int g_flag_replicas;

static const char *resolved_image(const struct op_settings *s)
{
	return g_flag_image ? g_flag_image : s->image ? s->image : OP_DEFAULT_IMAGE;
}

static int resolved_replicas(const struct op_settings *s)
{
	return g_flag_replicas ? g_flag_replicas : s->replicas > 0 ? s->replicas : 2;
}

/* op_settings_watch: the file changed and parses; the controller applies it on its next pass. */
static void on_settings_changed(void *ctx, struct op_settings *s)
{
	(void)ctx;
	const char *image = resolved_image(s);
	int replicas = resolved_replicas(s);
	if (!g_ctrl || op_controller_set_settings(g_ctrl, s, image, replicas) != 0)
		klog_error("Cannot apply the new scheduler settings", " err=\"out of memory\"");
}

static void on_started_leading(void *ctx)
{
	(void)ctx;
	klog_info(0, "Started leading; reconciling");
	op_controller_run(g_ctrl);
}

static void on_stopped_leading(void *ctx)
{
	(void)ctx;
	if (atomic_load(&g_shutting_down))
		return; /* released on purpose */
	klog_error("leaderelection lost");
	atomic_store(&g_lost, true);
	kill(getpid(), SIGTERM);
}

static int start_server(const char *addr, const char *what, bool health, struct kube_metrics_registry *reg,
			struct kube_http_server **out)
{
	*out = NULL;
	char host[128];
	int port;
	int r = split_addr(addr, host, sizeof host, &port);
	if (r == 1)
		return 0;
	if (r < 0) {
		klog_error("Invalid bind address", " flag=%s value=%s", what, addr);
		return -1;
	}
	struct kube_http_server_opts ho = { .bind_address = host[0] ? host : NULL, .port = port, .name = "operator" };
	char *err = NULL;
	struct kube_http_server *srv = NULL;
	if (kube_http_server_new(&ho, &srv, &err) != 0) {
		klog_error("Cannot listen", " flag=%s address=%s err=\"%s\"", what, addr, err ? err : "");
		free(err);
		return -1;
	}
	if ((health && (kube_http_add_check(srv, KUBE_HEALTHZ | KUBE_LIVEZ, "ping", NULL, NULL) != 0 ||
			kube_http_add_check(srv, KUBE_READYZ, "informer-sync", check_synced, NULL) != 0)) ||
	    kube_http_add_metrics(srv, reg) != 0 || kube_http_server_start(srv, &err) != 0) {
		klog_error("Cannot serve", " flag=%s err=\"%s\"", what, err ? err : "");
		free(err);
		kube_http_server_free(srv);
		return -1;
	}
	klog_info(0, "Serving", " flag=%s port=%d", what, kube_http_server_port(srv));
	*out = srv;
	return 0;
}

static int run_once(struct kube_client *client, const struct op_controller_opts *co)
{
	for (int attempt = 0; attempt < 5; attempt++) {
		struct op_snapshot s;
		struct kube_error e = { 0 };
		if (op_snapshot_fetch(client, co->res.namespace, &s, &e) != 0) {
			klog_error("Cannot read the cluster", " err=\"%s\"", e.message);
		} else {
			struct op_reconcile_result res;
			char *err = NULL;
			int rc = op_reconcile(client, co, &s, &res, &err);
			op_snapshot_free(&s);
			if (rc == 0) {
				klog_info(0, "Reconciled once", " profiles=%d accepted=%d invalid=%d conflict=%d writes=%d config-hash=%s",
					  res.profiles, res.accepted, res.invalid, res.conflict, res.writes, res.config_hash);
				return 0;
			}
			klog_warning("Reconcile failed", " attempt=%d err=\"%s\"", attempt + 1, err ? err : "");
			free(err);
		}
		struct timespec ts = { 0, 200 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc == 1 ? 0 : 2;

	/* Signals are taken synchronously by the main thread; every thread inherits the mask. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct kube_config *kc = NULL;
	struct kube_client *client = NULL;
	char *err = NULL;
	if (o.settings && op_settings_load(o.settings, &g_settings, &err) != 0) {
		fprintf(stderr, "Error: --scheduler-settings %s\n", err ? err : "out of memory");
		free(err);
		return 2;
	}
	/* flags win over the settings file, which wins over the defaults */
	g_flag_image = o.image;
	g_flag_replicas = o.replicas;
	const char *image = resolved_image(&g_settings);
	o.replicas = resolved_replicas(&g_settings);
	if (kube_config_load(o.kubeconfig, NULL, &kc, &err) != 0 || kube_client_new(kc, &client, &err) != 0) {
		fprintf(stderr, "Error: %s\n", err ? err : "cannot build a client");
		free(err);
		kube_config_free(kc);
		return 1;
	}
	kube_config_free(kc);
	struct sk_module_set *modules = NULL;
	if (load_modules(o.plugin_dir, &modules) != 0) {
		kube_client_free(client);
		return 1;
	}

	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	struct kube_event_recorder *events = NULL;
	char host[128] = "", instance[200];
	gethostname(host, sizeof host - 1);
	snprintf(instance, sizeof instance, "schedkit-operator-%s", host);
	if (!o.once && kube_event_recorder_new(client, "schedkit-operator", instance, &events) != 0)
		events = NULL; /* events are best effort */
	struct op_controller_opts co = {
		.res = { .namespace = o.ns, .scheduler_image = image, .replicas = o.replicas, .scheduler_verbosity = o.sched_v,
			 .settings = &g_settings },
		.resync_seconds = o.resync_ms / 1000 > 0 ? (int)(o.resync_ms / 1000) : 1,
		.metrics = reg,
		.events = events,
		.modules = modules,
	};
	klog_info(0, "Starting schedkit-operator", " namespace=%s image=%s leader-elect=%s once=%s", o.ns,
		  image, o.leader_elect ? "true" : "false", o.once ? "true" : "false");
	if (o.once) {
		rc = run_once(client, &co);
		kube_client_free(client);
		kube_metrics_registry_free(reg);
		sk_module_set_unref(modules);
		return rc;
	}

	struct kube_http_server *health = NULL, *metrics = NULL;
	struct kube_leader *leader = NULL;
	struct op_settings_watch *watch = NULL;
	rc = 1;
	if (!reg || op_controller_new(client, &co, &g_ctrl, &err) != 0) {
		klog_error("Cannot create the controller", " err=\"%s\"", err ? err : "out of memory");
		goto out;
	}
	/* the settings file is re-read when it changes (a mounted ConfigMap: kubelet's sync) */
	if (o.settings && op_settings_watch_start(o.settings, o.settings_interval_ms / 1000.0, on_settings_changed, NULL,
						  &watch, &err) != 0) {
		klog_error("Cannot watch the scheduler settings", " file=%s err=\"%s\"", o.settings, err ? err : "");
		goto out;
	}
	if (start_server(o.health_addr, "--health-probe-bind-address", true, reg, &health) != 0 ||
	    start_server(o.metrics_addr, "--metrics-bind-address", false, reg, &metrics) != 0)
		goto out;
	if (op_controller_start_informers(g_ctrl, &err) != 0) {
		klog_error("Cannot start informers", " err=\"%s\"", err ? err : "");
		goto out;
	}
	if (o.leader_elect) {
		char id[256];
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		srand((unsigned)(ts.tv_nsec ^ getpid()));
		snprintf(id, sizeof id, "%s_%08x-%04x-%04x", host, (unsigned)rand(), (unsigned)rand() & 0xffff,
			 (unsigned)rand() & 0xffff);
		struct kube_leader_config lc = {
			.ns = o.lease_ns, .name = o.lease_name, .identity = id,
			.lease_duration_s = o.lease_duration_ms / 1000.0, .renew_deadline_s = o.renew_deadline_ms / 1000.0,
			.retry_period_s = o.retry_period_ms / 1000.0, .release_on_cancel = true,
			.on_started_leading = on_started_leading, .on_stopped_leading = on_stopped_leading,
		};
		if (kube_leader_new(client, &lc, &leader, &err) != 0 || kube_leader_start(leader) != 0) {
			klog_error("Cannot start leader election", " err=\"%s\"", err ? err : "");
			goto out;
		}
		klog_info(0, "Waiting for leadership", " lease=%s/%s identity=%s", o.lease_ns, o.lease_name, id);
	} else if (op_controller_run(g_ctrl) != 0) {
		klog_error("Cannot start the worker");
		goto out;
	}
	int sig = 0;
	sigwait(&sigs, &sig);
	klog_info(0, "Shutting down", " signal=%d", sig);
	rc = atomic_load(&g_lost) ? 1 : 0;
	atomic_store(&g_shutting_down, true);
out:
	free(err);
	op_settings_watch_stop(watch);
	op_controller_stop(g_ctrl);
	kube_leader_free(leader);
	kube_http_server_free(health);
	kube_http_server_free(metrics);
	op_controller_free(g_ctrl);
	g_ctrl = NULL;
	kube_event_recorder_free(events);
	kube_client_free(client);
	kube_metrics_registry_free(reg);
	sk_module_set_unref(modules);
	return rc;
}
