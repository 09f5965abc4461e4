/* The schedkit-scheduler command line: upstream kube-scheduler's flags (the subset we serve),
 * parsed by kube/flags.h into struct sk_daemon_opts, and the checks across flags. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kube/flags.h"
#include "scheduler/daemon/daemon.h"

#define OFF(f) offsetof(struct sk_daemon_opts, f)
#define NOT_DELEGATED "schedkit does not delegate authentication or authorization"

static const struct kube_flag flags[] = {
	{ "config", 0, KUBE_FLAG_STRING, OFF(config_path), .help = "The path to the KubeSchedulerConfiguration file." },
	{ "validate", 0, KUBE_FLAG_BOOL, OFF(validate),
	  .help = "With --config: check the file, print every error, exit 0 or 1." },
	{ "plugin-dir", 0, KUBE_FLAG_STRINGS, OFF(plugin_dirs), .arg = "DIR",
	  .help = "Load every *.so plugin module of DIR (repeatable; reloaded with\nthe config when a file changes)." },
	{ "kubeconfig", 0, KUBE_FLAG_STRING, OFF(kubeconfig),
	  .help = "Path to a kubeconfig (overrides clientConnection.kubeconfig)." },
	{ "master", 0, KUBE_FLAG_STRING, OFF(master),
	  .help = "The address of the Kubernetes API server (overrides the kubeconfig)." },
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
	{ "secure-port", 0, KUBE_FLAG_INT, OFF(secure_port), 0, 65535,
	  .help = "Port of /healthz, /livez, /readyz, /metrics, /configz;\n0 disables serving (default 10259).",
	  .note = "must be a port number between 0 and 65535" },
	{ "bind-address", 0, KUBE_FLAG_STRING, OFF(bind_address), .help = "Address to serve on (default \"0.0.0.0\")." },
	{ "tls-cert-file", 0, KUBE_FLAG_STRING, OFF(tls_cert_file),
	  .help = "Serve HTTPS with this certificate (PEM); plain HTTP without." },
	{ "tls-private-key-file", 0, KUBE_FLAG_STRING, OFF(tls_key_file), .help = "The key of --tls-cert-file." },
	{ "authentication-kubeconfig", 0, KUBE_FLAG_IGNORED, 0,
	  .help = "Accepted and ignored (no delegated authentication).", .note = NOT_DELEGATED },
	{ "authorization-kubeconfig", 0, KUBE_FLAG_IGNORED, 0,
	  .help = "Accepted and ignored (no delegated authorization).", .note = NOT_DELEGATED },
	{ "decision-records-per-pod", 0, KUBE_FLAG_INT, OFF(decisions_per_pod), 1, 1000,
	  .help = "Decision records kept per pod, for profiles with\ndecisionRecords.enabled (default 4).",
	  .note = "must be between 1 and 1000" },
	{ "decision-records-max", 0, KUBE_FLAG_INT, OFF(decisions_max), 1, 1000000,
	  .help = "Decision records kept in all (default 2000).", .note = "must be between 1 and 1000000" },
	{ "decision-records-max-mib", 0, KUBE_FLAG_INT, OFF(decisions_max_mib), 1, 65536,
	  .help = "Memory the decision records may take, in MiB (default 64).",
	  .note = "must be between 1 and 65536" },
	{ "v", 'v', KUBE_FLAG_INT, OFF(verbosity), 0, 1000, .help = "Log verbosity." },
};

static const struct kube_flag_set flag_set = {
	.prog = "schedkit-scheduler",
	.head = "The schedkit scheduler: a C implementation of the Kubernetes scheduling framework.\n"
		"\n"
		"Usage:\n"
		"  schedkit-scheduler [flags]\n"
		"  schedkit-scheduler simulate --config FILE --cluster FILE [--explain] [--seed N]\n"
		"                              [--plugin-dir DIR]...\n"
		"\n"
		"Flags:\n",
	.flags = flags,
	.nflags = sizeof flags / sizeof flags[0],
	.column = 43,
	.copy_strings = true,
};

int sk_daemon_parse_args(int argc, char **argv, struct sk_daemon_opts *o, FILE *out, FILE *errout)
{
	*o = (struct sk_daemon_opts){ .leader_elect = -1, .lease_duration_ms = -1, .renew_deadline_ms = -1,
				      .retry_period_ms = -1, .verbosity = -1, .secure_port = 10259 };
	int rc = kube_flags_parse(&flag_set, argc, argv, o, out, errout);
	if (rc)
		return rc;
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
	kube_flag_strings_free(o->plugin_dirs);
	memset(o, 0, sizeof *o);
}
