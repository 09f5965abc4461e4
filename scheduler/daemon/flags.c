/* The schedkit-scheduler command line: every flag of kube-scheduler v1.34
 * (cmd/kube-scheduler/app/options, the secure serving, delegated authentication and
 * authorization options of k8s.io/apiserver/pkg/server/options, component-base's logs, metrics
 * and feature-gate flags), parsed by kube/flags.h into struct sk_daemon_opts, and the checks
 * across flags. The flags that do not apply to schedkit are accepted and named in one warning
 * line (docs/scheduler.md has the table of every flag and its status). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kube/featuregate.h"
#include "kube/flags.h"
#include "kube/servingcert.h"
#include "kube/version.h"
#include "scheduler/daemon/daemon.h"

#define OFF(f) offsetof(struct sk_daemon_opts, f)
#define IGN(name, h) { name, 0, KUBE_FLAG_IGNORED, 0, .help = h }
#define IGNB(name, h) { name, 0, KUBE_FLAG_IGNORED_BOOL, 0, .help = h }

static const struct kube_flag flags[] = {
	/* misc */
	{ "config", 0, KUBE_FLAG_STRING, OFF(config_path), .help = "The path to the KubeSchedulerConfiguration file." },
	{ "policy-config-file", 0, KUBE_FLAG_STRING, OFF(policy_path),
	  .help = "A legacy scheduler Policy (kind Policy, v1; JSON or YAML), translated\ninto the one profile \"default-scheduler\" (docs/config.md)." },
	{ "use-legacy-policy-config", 0, KUBE_FLAG_BOOL, OFF(use_legacy_policy),
	  .help = "Accepted for old command lines; --policy-config-file is used\nwhenever it is given." },
	{ "policy-configmap", 0, KUBE_FLAG_STRING, OFF(policy_configmap),
	  .help = "A ConfigMap whose data key \"policy.cfg\" holds a legacy Policy, read\nthrough the API (at start and at every configuration check);\n--policy-config-file wins when both are given." },
	{ "policy-configmap-namespace", 0, KUBE_FLAG_STRING, OFF(policy_configmap_ns),
	  .help = "The namespace of --policy-configmap (default \"kube-system\")." },
	{ "write-config-to", 0, KUBE_FLAG_STRING, OFF(write_config_to),
	  .help = "If set, write the configuration values to this file and exit." },
	{ "config-configmap", 0, KUBE_FLAG_STRING, OFF(config_configmap), .arg = "NS/NAME",
	  .help = "Also watch this ConfigMap through the API and reload its key named\nlike the --config file at once (the file stays the start-up\nsource and the fallback; schedkit's, not upstream's)." },
	{ "master", 0, KUBE_FLAG_STRING, OFF(master),
	  .help = "The address of the Kubernetes API server (overrides the kubeconfig)." },
	{ "validate", 0, KUBE_FLAG_BOOL, OFF(validate),
	  .help = "With --config and/or --policy-config-file: check, print every\nerror, exit 0 or 1 (schedkit)." },
	{ "plugin-dir", 0, KUBE_FLAG_STRINGS, OFF(plugin_dirs), .arg = "DIR",
	  .help = "Load every *.so plugin module of DIR (repeatable; reloaded with\nthe config when a file changes) (schedkit)." },
	/* secure serving */
	{ "bind-address", 0, KUBE_FLAG_STRING, OFF(bind_address), .help = "Address to serve on (default \"0.0.0.0\")." },
	{ "secure-port", 0, KUBE_FLAG_INT, OFF(secure_port), 0, 65535,
	  .help = "The port on which to serve HTTPS with authentication and authorization;\n0 disables serving (default 10259).",
	  .note = "must be a port number between 0 and 65535" },
	{ "cert-dir", 0, KUBE_FLAG_STRING, OFF(cert_dir),
	  .help = "Keep the self-signed certificate (kube-scheduler.crt/.key) here; without it\nit is generated in memory. Ignored with --tls-cert-file." },
	{ "tls-cert-file", 0, KUBE_FLAG_STRING, OFF(tls_cert_file),
	  .help = "File containing the x509 certificate for HTTPS (CA cert, if any,\nconcatenated after server cert)." },
	{ "tls-private-key-file", 0, KUBE_FLAG_STRING, OFF(tls_key_file), .help = "The key of --tls-cert-file." },
	{ "tls-cipher-suites", 0, KUBE_FLAG_STRING, OFF(tls_cipher_suites), .arg = "strings",
	  .help = "Comma-separated list of cipher suites (Go names) for TLS 1.2 and below." },
	{ "tls-min-version", 0, KUBE_FLAG_STRING, OFF(tls_min_version),
	  .help = "Minimum TLS version: VersionTLS10, VersionTLS11, VersionTLS12 (default),\nVersionTLS13." },
	IGN("tls-sni-cert-key", "Accepted, not applied: one certificate serves every name."),
	IGN("http2-max-streams-per-connection", "Accepted, not applied."),
	IGNB("permit-address-sharing", "Accepted, not applied."),
	IGNB("permit-port-sharing", "Accepted, not applied."),
	/* authentication */
	{ "authentication-kubeconfig", 0, KUBE_FLAG_STRING, OFF(authn_kubeconfig),
	  .help = "kubeconfig with the right to create tokenreviews.authentication.k8s.io;\nempty: in-cluster, else every token request is anonymous." },
	{ "authentication-token-webhook-cache-ttl", 0, KUBE_FLAG_DURATION, OFF(authn_ttl_ms),
	  .help = "How long to cache TokenReview answers (default 10s)." },
	IGNB("authentication-skip-lookup", "Accepted, not applied (no client-CA lookup)."),
	IGNB("authentication-tolerate-lookup-failure", "Accepted, not applied (no client-CA lookup)."),
	IGN("client-ca-file", "Accepted, not applied: no client-certificate authentication."),
	IGN("requestheader-allowed-names", "Accepted, not applied: no request-header authentication."),
	IGN("requestheader-client-ca-file", "Accepted, not applied."),
	IGN("requestheader-extra-headers-prefix", "Accepted, not applied."),
	IGN("requestheader-group-headers", "Accepted, not applied."),
	IGN("requestheader-uid-headers", "Accepted, not applied."),
	IGN("requestheader-username-headers", "Accepted, not applied."),
	/* authorization */
	{ "authorization-kubeconfig", 0, KUBE_FLAG_STRING, OFF(authz_kubeconfig),
	  .help = "kubeconfig with the right to create subjectaccessreviews.authorization.k8s.io;\nempty: in-cluster, else every path not always allowed is forbidden." },
	{ "authorization-always-allow-paths", 0, KUBE_FLAG_STRINGS, OFF(always_allow_paths), .arg = "strings",
	  .help = "HTTP paths authorized without asking the API server (comma-separated,\nrepeatable; default \"/healthz,/readyz,/livez\")." },
	{ "authorization-webhook-cache-authorized-ttl", 0, KUBE_FLAG_DURATION, OFF(authz_allowed_ttl_ms),
	  .help = "How long to cache allowed SubjectAccessReviews (default 10s)." },
	{ "authorization-webhook-cache-unauthorized-ttl", 0, KUBE_FLAG_DURATION, OFF(authz_denied_ttl_ms),
	  .help = "How long to cache denied SubjectAccessReviews (default 10s)." },
	/* deprecated */
	{ "kubeconfig", 0, KUBE_FLAG_STRING, OFF(kubeconfig),
	  .help = "Path to a kubeconfig (overrides clientConnection.kubeconfig)." },
	{ "kube-api-qps", 0, KUBE_FLAG_FLOAT, OFF(kube_api_qps), 0, 1000000,
	  .help = "QPS to the API server (default 50); ignored with --config." },
	{ "kube-api-burst", 0, KUBE_FLAG_INT, OFF(kube_api_burst), 0, 1000000,
	  .help = "Burst to the API server (default 100); ignored with --config." },
	{ "kube-api-content-type", 0, KUBE_FLAG_STRING, OFF(kube_api_content_type),
	  .help = "Content type of requests (accepted: application/json,\napplication/vnd.kubernetes.protobuf; schedkit speaks JSON)." },
	{ "pod-max-in-unschedulable-pods-duration", 0, KUBE_FLAG_DURATION, OFF(pod_max_unsched_ms), .min = 1,
	  .help = "The longest a pod stays in unschedulablePods (default 5m0s)." },
	IGNB("profiling", "Accepted, not applied: no /debug/pprof."),
	IGNB("contention-profiling", "Accepted, not applied."),
	/* leader election */
	{ "leader-elect", 0, KUBE_FLAG_TRIBOOL, OFF(leader_elect),
	  .help = "Start a leader election client and gain leadership before\n"
		  "executing the main loop (default from the config: true)." },
	{ "leader-elect-lease-duration", 0, KUBE_FLAG_DURATION, OFF(lease_duration_ms), .help = "Lease duration (default 15s)." },
	{ "leader-elect-renew-deadline", 0, KUBE_FLAG_DURATION, OFF(renew_deadline_ms), .help = "Renew deadline (default 10s)." },
	{ "leader-elect-retry-period", 0, KUBE_FLAG_DURATION, OFF(retry_period_ms), .help = "Retry period (default 2s)." },
	{ "leader-elect-resource-lock", 0, KUBE_FLAG_STRING, OFF(lease_lock),
	  .help = "Only \"leases\" is supported (default \"leases\")." },
	{ "leader-elect-resource-name", 0, KUBE_FLAG_STRING, OFF(lease_name), .help = "Lease name (default \"kube-scheduler\")." },
	{ "leader-elect-resource-namespace", 0, KUBE_FLAG_STRING, OFF(lease_namespace),
	  .help = "Lease namespace (default \"kube-system\")." },
	/* feature gate */
	{ "feature-gates", 0, KUBE_FLAG_STRINGS, OFF(feature_gates), .arg = "mapStringBool",
	  .help = "Comma-separated [kube:]Name=true|false pairs of upstream's gates\n(repeatable; an unknown gate is an error)." },
	IGN("emulated-version", "Accepted, not applied."),
	/* metrics */
	IGN("allow-metric-labels", "Accepted, not applied."),
	IGN("allow-metric-labels-manifest", "Accepted, not applied."),
	IGN("disabled-metrics", "Accepted, not applied."),
	IGN("show-hidden-metrics-for-version", "Accepted, not applied."),
	/* logs */
	{ "logging-format", 0, KUBE_FLAG_STRING, OFF(logging_format),
	  .help = "Log format: \"text\" (default) or \"json\"." },
	/* decision records (docs/explain.md) */
	{ "decision-records-per-pod", 0, KUBE_FLAG_INT, OFF(decisions_per_pod), 1, 1000,
	  .help = "Decision records kept per pod, for profiles with\ndecisionRecords.enabled (default 4).",
	  .note = "must be between 1 and 1000" },
	{ "decision-records-max", 0, KUBE_FLAG_INT, OFF(decisions_max), 1, 1000000,
	  .help = "Decision records kept in all (default 2000).", .note = "must be between 1 and 1000000" },
	{ "decision-records-max-mib", 0, KUBE_FLAG_INT, OFF(decisions_max_mib), 1, 65536,
	  .help = "Memory the decision records may take, in MiB (default 64).",
	  .note = "must be between 1 and 65536" },
	{ "v", 'v', KUBE_FLAG_INT, OFF(verbosity), 0, 1000, .help = "Log verbosity." },
	IGN("vmodule", "Accepted, not applied."),
	IGN("log-flush-frequency", "Accepted, not applied (lines are written unbuffered)."),
	IGN("log-text-info-buffer-size", "Accepted, not applied."),
	IGNB("log-text-split-stream", "Accepted, not applied."),
	IGN("log-json-info-buffer-size", "Accepted, not applied."),
	IGNB("log-json-split-stream", "Accepted, not applied."),
	IGNB("logtostderr", "Accepted, not applied (always stderr)."),
};

static const struct kube_flag_set flag_set = {
	.prog = "schedkit-scheduler",
	.head = "The schedkit scheduler: a C implementation of the Kubernetes scheduling framework.\n"
		"\n"
		"Usage:\n"
		"  schedkit-scheduler [flags]\n"
		"  schedkit-scheduler simulate --config FILE --cluster FILE [--explain] [--seed N]\n"
		"                              [--plugin-dir DIR]... [--policy-config-file FILE]\n"
		"  schedkit-scheduler convert --config OLD.yaml [--policy POLICY.json] [--output NEW.yaml]\n"
		"\n"
		"Flags:\n",
	.flags = flags,
	.nflags = sizeof flags / sizeof flags[0],
	.column = 45,
	.copy_strings = true,
	.version = SCHEDKIT_VERSION_LINE("schedkit-scheduler"),
	.ignored_note = "they do not apply to schedkit",
};

const struct kube_flag *sk_daemon_flags(size_t *n)
{
	*n = flag_set.nflags;
	return flags;
}

/* Comma-separated values of a repeatable list flag become one entry each (pflag's StringSlice). */
static int split_csv(char ***v)
{
	int n = kube_flag_strings_len(*v), total = 0;
	for (int i = 0; i < n; i++)
		for (const char *p = (*v)[i]; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
			total++;
	char **out = calloc((size_t)total + 1, sizeof *out);
	if (!out)
		return -1;
	int k = 0;
	for (int i = 0; i < n; i++)
		for (const char *p = (*v)[i]; p;) {
			const char *e = strchr(p, ',');
			if (!(out[k++] = e ? strndup(p, (size_t)(e - p)) : strdup(p))) {
				kube_flag_strings_free(out);
				return -1;
			}
			p = e ? e + 1 : NULL;
		}
	kube_flag_strings_free(*v);
	*v = out;
	return 0;
}

/* The checks of the serving, logging, client and gate flags. 0, or 2 with the error printed. */
static int check_values(struct sk_daemon_opts *o, FILE *errout)
{
	char *e = NULL, *list = NULL;
	int v;
	if (o->tls_cipher_suites && kube_tls_cipher_list(o->tls_cipher_suites, &list, &e) != 0) {
		fprintf(errout, "Error: invalid argument \"%s\" for \"--tls-cipher-suites\" flag: %s\n", o->tls_cipher_suites, e);
		free(e);
		return 2;
	}
	free(list);
	if (o->tls_min_version && kube_tls_version(o->tls_min_version, &v, &e) != 0) {
		fprintf(errout, "Error: invalid argument \"%s\" for \"--tls-min-version\" flag: %s\n", o->tls_min_version, e);
		free(e);
		return 2;
	}
	for (int i = 0; o->feature_gates && o->feature_gates[i]; i++)
		if (kube_feature_gates_parse(o->feature_gates[i], NULL, &e) != 0) {
			fprintf(errout, "Error: invalid argument \"%s\" for \"--feature-gates\" flag: %s\n", o->feature_gates[i], e);
			free(e);
			return 2;
		}
	if (o->logging_format && strcmp(o->logging_format, "text") && strcmp(o->logging_format, "json")) {
		fprintf(errout, "Error: logging format: Invalid value: \"%s\": Unsupported log format\n", o->logging_format);
		return 2;
	}
	if (o->kube_api_content_type && strcmp(o->kube_api_content_type, "application/json") &&
	    strcmp(o->kube_api_content_type, "application/vnd.kubernetes.protobuf")) {
		fprintf(errout, "Error: --kube-api-content-type \"%s\": only application/json and "
				"application/vnd.kubernetes.protobuf are accepted\n", o->kube_api_content_type);
		return 2;
	}
	if (o->always_allow_paths && split_csv(&o->always_allow_paths) != 0) {
		fprintf(errout, "Error: out of memory\n");
		return 2;
	}
	return 0;
}

int sk_daemon_parse_args(int argc, char **argv, struct sk_daemon_opts *o, FILE *out, FILE *errout)
{
	*o = (struct sk_daemon_opts){ .leader_elect = -1, .lease_duration_ms = -1, .renew_deadline_ms = -1,
				      .retry_period_ms = -1, .verbosity = -1, .secure_port = 10259,
				      .authn_ttl_ms = -1, .authz_allowed_ttl_ms = -1, .authz_denied_ttl_ms = -1,
				      .kube_api_qps = -1, .kube_api_burst = -1, .pod_max_unsched_ms = -1 };
	int rc = kube_flags_parse(&flag_set, argc, argv, o, out, errout);
	if (rc)
		return rc;
	if (o->lease_lock && strcmp(o->lease_lock, "leases")) {
		fprintf(errout, "Error: invalid argument \"%s\" for \"--leader-elect-resource-lock\" flag: only \"leases\" is supported\n",
			o->lease_lock);
		return 2;
	}
	if (o->policy_configmap && o->validate && !o->policy_path) {
		const char *ns = o->policy_configmap_ns ? o->policy_configmap_ns : "kube-system";
		fprintf(errout, "Error: --validate does not read --policy-configmap (no API access): save the data key \"policy.cfg\" "
				"of ConfigMap %s/%s to a file (kubectl -n %s get configmap %s -o go-template='{{index .data \"policy.cfg\"}}') "
				"and pass --policy-config-file\n", ns, o->policy_configmap, ns, o->policy_configmap);
		return 2;
	}
	if (o->validate && !o->config_path && !o->policy_path) {
		fprintf(errout, "Error: --validate needs --config or --policy-config-file\n");
		return 2;
	}
	if ((o->tls_cert_file != NULL) != (o->tls_key_file != NULL)) {
		fprintf(errout, "Error: --tls-cert-file and --tls-private-key-file must be given together\n");
		return 2;
	}
	return check_values(o, errout);
}

void sk_daemon_opts_free(struct sk_daemon_opts *o)
{
	if (!o)
		return;
	free(o->config_path);
	free(o->policy_path);
	free(o->policy_configmap);
	free(o->policy_configmap_ns);
	free(o->config_configmap);
	free(o->kubeconfig);
	free(o->master);
	free(o->lease_name);
	free(o->lease_namespace);
	free(o->lease_lock);
	free(o->bind_address);
	free(o->tls_cert_file);
	free(o->tls_key_file);
	free(o->cert_dir);
	free(o->tls_cipher_suites);
	free(o->tls_min_version);
	free(o->authn_kubeconfig);
	free(o->authz_kubeconfig);
	free(o->write_config_to);
	free(o->kube_api_content_type);
	free(o->logging_format);
	kube_flag_strings_free(o->always_allow_paths);
	kube_flag_strings_free(o->feature_gates);
	kube_flag_strings_free(o->plugin_dirs);
	memset(o, 0, sizeof *o);
}
