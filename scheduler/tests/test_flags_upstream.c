/* schedkit-scheduler's flags against kube-scheduler v1.34's (the command-line reference of
 * cmd/kube-scheduler: options.go, deprecated.go, the apiserver secure-serving and delegating
 * authn/authz options, component-base logs/metrics/feature-gate flags): every upstream flag is
 * in the table, applied or accepted-and-ignored as docs/scheduler.md's flag table says, and the
 * only extras are schedkit's own. Then table-driven parses of the flags added for issue 13:
 * their values, and their errors worded as upstream's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/flags.h"
#include "kube/version.h"
#include "schedkit/version.h"
#include "scheduler/daemon/daemon.h"

/* 'a': applied; 'i': accepted and ignored (named in the one warning line). -h/--help and
 * --version are handled by the parser itself. */
static const struct {
	const char *name;
	char status;
} upstream[] = {
	{"allow-metric-labels", 'i'}, {"allow-metric-labels-manifest", 'i'}, {"authentication-kubeconfig", 'a'},
	{"authentication-skip-lookup", 'i'}, {"authentication-token-webhook-cache-ttl", 'a'},
	{"authentication-tolerate-lookup-failure", 'i'}, {"authorization-always-allow-paths", 'a'},
	{"authorization-kubeconfig", 'a'}, {"authorization-webhook-cache-authorized-ttl", 'a'},
	{"authorization-webhook-cache-unauthorized-ttl", 'a'}, {"bind-address", 'a'}, {"cert-dir", 'a'},
	{"client-ca-file", 'i'}, {"config", 'a'}, {"contention-profiling", 'i'}, {"disabled-metrics", 'i'},
	{"emulated-version", 'i'}, {"feature-gates", 'a'}, {"http2-max-streams-per-connection", 'i'},
	{"kube-api-burst", 'a'}, {"kube-api-content-type", 'a'}, {"kube-api-qps", 'a'}, {"kubeconfig", 'a'},
	{"leader-elect", 'a'}, {"leader-elect-lease-duration", 'a'}, {"leader-elect-renew-deadline", 'a'},
	{"leader-elect-resource-lock", 'a'}, {"leader-elect-resource-name", 'a'},
	{"leader-elect-resource-namespace", 'a'}, {"leader-elect-retry-period", 'a'}, {"log-flush-frequency", 'i'},
	{"log-json-info-buffer-size", 'i'}, {"log-json-split-stream", 'i'}, {"log-text-info-buffer-size", 'i'},
	{"log-text-split-stream", 'i'}, {"logging-format", 'a'}, {"logtostderr", 'i'}, {"master", 'a'},
	{"permit-address-sharing", 'i'}, {"permit-port-sharing", 'i'}, {"pod-max-in-unschedulable-pods-duration", 'a'},
	{"profiling", 'i'}, {"requestheader-allowed-names", 'i'}, {"requestheader-client-ca-file", 'i'},
	{"requestheader-extra-headers-prefix", 'i'}, {"requestheader-group-headers", 'i'},
	{"requestheader-uid-headers", 'i'}, {"requestheader-username-headers", 'i'}, {"secure-port", 'a'},
	{"show-hidden-metrics-for-version", 'i'}, {"tls-cert-file", 'a'}, {"tls-cipher-suites", 'a'},
	{"tls-min-version", 'a'}, {"tls-private-key-file", 'a'}, {"tls-sni-cert-key", 'i'}, {"v", 'a'},
	{"vmodule", 'i'}, {"write-config-to", 'a'},
};
/* schedkit's own (the decision-record bounds: docs/explain.md), and the legacy Policy flags
 * upstream removed in v1.23 (docs/config.md) */
static const char *const schedkit_only[] = {"validate", "plugin-dir", "policy-config-file", "use-legacy-policy-config",
					    "policy-configmap", "policy-configmap-namespace", "config-configmap",
					    "decision-records-per-pod", "decision-records-max", "decision-records-max-mib"};
#define NSCHEDKIT_ONLY (sizeof schedkit_only / sizeof schedkit_only[0])

static void test_flag_list(void **state)
{
	(void)state;
	size_t n;
	const struct kube_flag *f = sk_daemon_flags(&n);
	size_t nup = sizeof upstream / sizeof upstream[0];
	for (size_t i = 0; i < nup; i++) {
		size_t k = 0;
		while (k < n && strcmp(f[k].name, upstream[i].name))
			k++;
		if (k == n)
			fail_msg("upstream flag --%s is missing", upstream[i].name);
		bool ignored = f[k].kind == KUBE_FLAG_IGNORED || f[k].kind == KUBE_FLAG_IGNORED_BOOL;
		if (ignored != (upstream[i].status == 'i'))
			fail_msg("--%s: %s here, %s in the table", upstream[i].name, ignored ? "ignored" : "applied",
				 upstream[i].status == 'i' ? "ignored" : "applied");
	}
	for (size_t k = 0; k < n; k++) {
		bool known = false;
		for (size_t i = 0; i < nup && !known; i++)
			known = !strcmp(f[k].name, upstream[i].name);
		for (size_t i = 0; i < NSCHEDKIT_ONLY && !known; i++)
			known = !strcmp(f[k].name, schedkit_only[i]);
		if (!known)
			fail_msg("--%s is neither upstream's nor schedkit's own", f[k].name);
	}
	assert_int_equal(n, nup + NSCHEDKIT_ONLY);
	assert_string_equal(SCHEDKIT_VERSION, SK_VERSION);
}

static int parse(const char *const *args, struct sk_daemon_opts *o, char **out, char **errtext)
{
	char *argv[32];
	int n = 0;
	argv[n++] = "schedkit-scheduler";
	while (args[n - 1])
		argv[n] = (char *)args[n - 1], n++;
	char *ob = NULL, *eb = NULL;
	size_t ol = 0, el = 0;
	FILE *fo = open_memstream(&ob, &ol), *fe = open_memstream(&eb, &el);
	int rc = sk_daemon_parse_args(n, argv, o, fo, fe);
	fclose(fo);
	fclose(fe);
	*out = ob;
	*errtext = eb;
	return rc;
}

static void test_values(void **state)
{
	(void)state;
	static const char *const args[] = {
		"--cert-dir=/c", "--tls-cipher-suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256",
		"--tls-min-version=VersionTLS13", "--authorization-always-allow-paths=/healthz,/metrics",
		"--authorization-always-allow-paths", "/debug/*", "--authentication-token-webhook-cache-ttl=30s",
		"--authorization-webhook-cache-authorized-ttl=1m", "--authorization-webhook-cache-unauthorized-ttl=0s",
		"--kube-api-qps=12.5", "--kube-api-burst=7", "--kube-api-content-type=application/json",
		"--feature-gates=SchedulerAsyncPreemption=false", "--feature-gates", "kube:SchedulerPopFromBackoffQ=true",
		"--logging-format=json", "--write-config-to=/w", "--pod-max-in-unschedulable-pods-duration=90s",
		"--profiling=false", "--contention-profiling", "--vmodule=x=1", NULL,
	};
	struct sk_daemon_opts o;
	char *out, *err;
	assert_int_equal(parse(args, &o, &out, &err), 0);
	assert_string_equal(o.cert_dir, "/c");
	assert_string_equal(o.tls_min_version, "VersionTLS13");
	assert_non_null(o.always_allow_paths);
	static const char *const paths[] = {"/healthz", "/metrics", "/debug/*"};
	for (int i = 0; i < 3; i++)
		assert_string_equal(o.always_allow_paths[i], paths[i]);
	assert_null(o.always_allow_paths[3]);
	assert_int_equal(o.authn_ttl_ms, 30000);
	assert_int_equal(o.authz_allowed_ttl_ms, 60000);
	assert_int_equal(o.authz_denied_ttl_ms, 0);
	assert_true(o.kube_api_qps > 12.49 && o.kube_api_qps < 12.51);
	assert_int_equal(o.kube_api_burst, 7);
	assert_int_equal(kube_flag_strings_len(o.feature_gates), 2);
	assert_string_equal(o.logging_format, "json");
	assert_string_equal(o.write_config_to, "/w");
	assert_int_equal(o.pod_max_unsched_ms, 90000);
	/* one warning line names the ignored flags, in table order */
	assert_string_equal(err, "W: flags accepted and ignored (they do not apply to schedkit): --profiling, "
				 "--contention-profiling, --vmodule\n");
	free(out);
	free(err);
	sk_daemon_opts_free(&o);
}

static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *arg, *want;
	} cases[] = {
		{"--feature-gates=NoSuchGate=true", "Error: invalid argument \"NoSuchGate=true\" for \"--feature-gates\" flag: unrecognized feature gate: NoSuchGate\n"},
		{"--feature-gates=SchedulerAsyncPreemption=maybe",
		 "Error: invalid argument \"SchedulerAsyncPreemption=maybe\" for \"--feature-gates\" flag: invalid value of SchedulerAsyncPreemption=maybe, err: strconv.ParseBool: parsing \"maybe\": invalid syntax\n"},
		{"--feature-gates=SchedulerAsyncPreemption", "Error: invalid argument \"SchedulerAsyncPreemption\" for \"--feature-gates\" flag: missing bool value for SchedulerAsyncPreemption\n"},
		{"--feature-gates=wardle:A=true", "Error: invalid argument \"wardle:A=true\" for \"--feature-gates\" flag: unrecognized component: wardle\n"},
		{"--tls-cipher-suites=TLS_NOPE", "Error: invalid argument \"TLS_NOPE\" for \"--tls-cipher-suites\" flag: Cipher suite TLS_NOPE not supported or doesn't exist\n"},
		{"--tls-min-version=VersionSSL30", "Error: invalid argument \"VersionSSL30\" for \"--tls-min-version\" flag: unknown tls version \"VersionSSL30\"\n"},
		{"--logging-format=xml", "Error: logging format: Invalid value: \"xml\": Unsupported log format\n"},
		{"--kube-api-qps=fast", "Error: invalid argument \"fast\" for \"--kube-api-qps\" flag: strconv.ParseFloat: parsing \"fast\": invalid syntax\n"},
		{"--profiling=maybe", "Error: invalid argument \"maybe\" for \"--profiling\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax\n"},
		{"--kube-api-content-type=text/plain", "Error: --kube-api-content-type \"text/plain\": only application/json and application/vnd.kubernetes.protobuf are accepted\n"},
		{"--version=sometimes", "Error: invalid argument \"sometimes\" for \"--version\" flag: strconv.ParseBool: parsing \"sometimes\": invalid syntax\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *args[] = {cases[i].arg, NULL};
		struct sk_daemon_opts o;
		char *out, *err;
		int rc = parse(args, &o, &out, &err);
		if (rc != 2 || strcmp(err, cases[i].want))
			fail_msg("%s: rc %d, stderr \"%s\"", cases[i].arg, rc, err);
		free(out);
		free(err);
		sk_daemon_opts_free(&o);
	}
}

static void test_version(void **state)
{
	(void)state;
	static const char *const forms[][2] = {{"--version", NULL}, {"--version=true", NULL}, {"--version=raw", NULL}};
	for (int i = 0; i < 3; i++) {
		struct sk_daemon_opts o;
		char *out, *err;
		assert_int_equal(parse(forms[i], &o, &out, &err), 1);
		assert_string_equal(out, "schedkit-scheduler v" SK_VERSION " (Kubernetes " SCHEDKIT_KUBE_VERSION ")\n");
		free(out);
		free(err);
		sk_daemon_opts_free(&o);
	}
	static const char *const off[] = {"--version=false", "--secure-port=1", NULL};
	struct sk_daemon_opts o;
	char *out, *err;
	assert_int_equal(parse(off, &o, &out, &err), 0);
	assert_int_equal(o.secure_port, 1);
	free(out);
	free(err);
	sk_daemon_opts_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flag_list),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
