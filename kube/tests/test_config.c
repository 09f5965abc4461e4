/* Tests for kube/config.c: kubeconfig variants as kubectl writes them (YAML), KUBECONFIG merging,
 * precedence, in-cluster config (SK_SA_DIR) and token rotation through a client. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/config.h"
#include "kube/rest.h"
#include "kube/tests/fake_apiserver.h"

static char tmpdir[64];

static void write_file(const char *name, const char *content)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static char *tpath(const char *name)
{
	static char bufs[4][256];
	static int i;
	char *b = bufs[i++ % 4];
	snprintf(b, 256, "%s/%s", tmpdir, name);
	return b;
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sk_cfg_XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	unsetenv("SK_SA_DIR");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" */
#define CA_PEM "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

static const char KUBECTL_STYLE[] =
	"apiVersion: v1\n"
	"clusters:\n"
	"- cluster:\n"
	"    certificate-authority-data: " CA_B64 "\n"
	"    server: https://127.0.0.1:6443\n"
	"  name: local\n"
	"- cluster:\n"
	"    certificate-authority: certs/ca.crt\n"
	"    server: https://prod.example:443\n"
	"  name: prod\n"
	"- cluster:\n"
	"    insecure-skip-tls-verify: true\n"
	"    server: https://10.1.2.3:6443\n"
	"  name: lab\n"
	"contexts:\n"
	"- context:\n"
	"    cluster: local\n"
	"    namespace: team-a\n"
	"    user: alice\n"
	"  name: dev\n"
	"- context:\n"
	"    cluster: prod\n"
	"    user: bob\n"
	"  name: prod\n"
	"- context:\n"
	"    cluster: lab\n"
	"    user: carol\n"
	"  name: lab\n"
	"- context:\n"
	"    cluster: nowhere\n"
	"    user: alice\n"
	"  name: broken-cluster\n"
	"- context:\n"
	"    cluster: local\n"
	"    user: nobody\n"
	"  name: broken-user\n"
	"- context:\n"
	"    cluster: local\n"
	"    user: exec-user\n"
	"  name: exec\n"
	"- context:\n"
	"    cluster: local\n"
	"    user: bad-data\n"
	"  name: bad-data\n"
	"current-context: dev\n"
	"kind: Config\n"
	"preferences: {}\n"
	"users:\n"
	"- name: alice\n"
	"  user:\n"
	"    token: alice-token\n"
	"- name: bob\n"
	"  user:\n"
	"    client-certificate: certs/bob.crt\n"
	"    client-key: /abs/bob.key\n"
	"    tokenFile: tok\n"
	"- name: carol\n"
	"  user:\n"
	"    client-certificate-data: " CA_B64 "\n"
	"    client-key-data: " CA_B64 "\n"
	"- name: exec-user\n"
	"  user:\n"
	"    exec:\n"
	"      apiVersion: client.authentication.k8s.io/v1\n"
	"      command: helper\n"
	"      interactiveMode: Never\n"
	"- name: bad-data\n"
	"  user:\n"
	"    client-certificate-data: '!!!notbase64'\n"
	"    client-key-data: " CA_B64 "\n";

static void test_kubectl_style_contexts(void **state)
{
	(void)state;
	write_file("config", KUBECTL_STYLE);
	struct kube_config *c = NULL;
	char *err = NULL;

	/* current-context: token, CA data decoded, context namespace, defaults */
	assert_int_equal(kube_config_load(tpath("config"), NULL, &c, &err), 0);
	assert_null(err);
	assert_string_equal(c->server, "https://127.0.0.1:6443");
	assert_string_equal(c->token, "alice-token");
	assert_null(c->token_file);
	assert_string_equal(c->ca_data, CA_PEM);
	assert_null(c->ca_file);
	assert_string_equal(c->namespace, "team-a");
	assert_false(c->insecure_skip_tls_verify);
	assert_true(c->qps == 50);
	assert_int_equal(c->burst, 100);
	kube_config_free(c);

	/* relative paths resolve against the kubeconfig's directory; namespace defaults; a tokenFile
	 * without a literal token must be readable */
	assert_int_equal(kube_config_load(tpath("config"), "prod", &c, &err), -1);
	char want[512];
	snprintf(want, sizeof(want), "kubeconfig %s: users[1].user.tokenFile: %s: No such file or directory (user \"bob\")",
		 tpath("config"), tpath("tok"));
	assert_string_equal(err, want);
	free(err);
	err = NULL;
	write_file("tok", "bob-token");
	assert_int_equal(kube_config_load(tpath("config"), "prod", &c, &err), 0);
	assert_string_equal(c->server, "https://prod.example:443");
	assert_string_equal(c->ca_file, tpath("certs/ca.crt"));
	assert_string_equal(c->client_cert_file, tpath("certs/bob.crt"));
	assert_string_equal(c->client_key_file, "/abs/bob.key");
	assert_string_equal(c->token_file, tpath("tok"));
	assert_null(c->token);
	assert_string_equal(c->namespace, "default");
	struct kube_config *d = kube_config_dup(c);
	assert_string_equal(d->token_file, c->token_file);
	assert_string_equal(d->client_cert_file, c->client_cert_file);
	kube_config_free(d);
	kube_config_free(c);

	/* insecure + client cert/key data */
	assert_int_equal(kube_config_load(tpath("config"), "lab", &c, &err), 0);
	assert_true(c->insecure_skip_tls_verify);
	assert_string_equal(c->client_cert_data, CA_PEM);
	assert_string_equal(c->client_key_data, CA_PEM);
	assert_null(c->exec);
	kube_config_free(c);

	/* exec plugin user: a bare command is looked up in PATH, not resolved */
	assert_int_equal(kube_config_load(tpath("config"), "exec", &c, &err), 0);
	assert_non_null(c->exec);
	assert_string_equal(c->exec->command, "helper");
	assert_string_equal(c->exec->api_version, "client.authentication.k8s.io/v1");
	assert_int_equal(c->exec->nargs, 0);
	assert_false(c->exec->provide_cluster_info);
	assert_null(c->token);
	d = kube_config_dup(c);
	assert_string_equal(d->exec->command, "helper");
	kube_config_free(d);
	kube_config_free(c);
}

static void test_errors_name_file_and_field(void **state)
{
	(void)state;
	write_file("config", KUBECTL_STYLE);
	char want[512];
	static const struct { const char *context; const char *fmt; } cases[] = {
		{"foo", "kubeconfig %s: context \"foo\" not found"},
		{"broken-cluster", "kubeconfig %s: cluster \"nowhere\" (context \"broken-cluster\") not found"},
		{"broken-user", "kubeconfig %s: user \"nobody\" (context \"broken-user\") not found"},
		{"bad-data", "kubeconfig %s: users[4].user.client-certificate-data: invalid base64"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_config *c = (struct kube_config *)1;
		char *err = NULL;
		assert_int_equal(kube_config_load(tpath("config"), cases[i].context, &c, &err), -1);
		assert_null(c);
		snprintf(want, sizeof(want), cases[i].fmt, tpath("config"));
		assert_string_equal(err, want);
		free(err);
	}
	static const struct { const char *text; const char *want_sub; } bad_files[] = {
		{"clusters: [unclosed\n", "line "},
		{"- a\n- b\n", "top level must be a map"},
		{"apiVersion: v1\nkind: Config\n", "current-context is not set"},
		{"clusters:\n- cluster: {server: x}\n", "clusters[0].name: required"},
		{"clusters:\n- name: c\n  cluster: {}\ncontexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
		 "clusters[0].cluster.server: required (cluster \"c\")"},
		{"clusters:\n- name: c\n  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user: {client-certificate: a.crt}\n"
		 "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
		 "client certificate and client key must both be set"},
		{"clusters:\n- name: c\n  cluster: {server: 'https://h', insecure-skip-tls-verify: true, certificate-authority: ca}\n"
		 "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
		 "clusters[0].cluster: specifying a root certificates file with the insecure flag is not allowed (cluster \"c\")"},
		{"clusters:\n- name: c\n  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user: {token: lit, tokenFile: /nonexistent}\n"
		 "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
		 "SHOULD-LOAD"},
#define EXEC_USER(body) "clusters:\n- name: c\n  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user:\n    exec: " body "\n" \
	"contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
		{EXEC_USER("{apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}"),
		 "users[0].user.exec.command: required (user \"u\")"},
		{EXEC_USER("{command: x, interactiveMode: Never}"), "users[0].user.exec.apiVersion: required"},
		{EXEC_USER("{command: x, apiVersion: client.authentication.k8s.io/v1alpha1}"),
		 "users[0].user.exec.apiVersion: must be client.authentication.k8s.io/v1 or v1beta1"},
		{EXEC_USER("{command: x, apiVersion: client.authentication.k8s.io/v1}"),
		 "users[0].user.exec.interactiveMode: required for client.authentication.k8s.io/v1"},
		{EXEC_USER("{command: x, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Always}"),
		 "users[0].user.exec.interactiveMode: Always needs a terminal"},
		{EXEC_USER("{command: x, apiVersion: client.authentication.k8s.io/v1beta1, env: [{name: A}]}"),
		 "users[0].user.exec.env[0]: name and value are required"},
		{EXEC_USER("{command: x, apiVersion: client.authentication.k8s.io/v1beta1, args: [1]}"),
		 "users[0].user.exec.args[0]: must be a string"},
	};
	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		write_file("bad", bad_files[i].text);
		struct kube_config *c = NULL;
		char *err = NULL;
		if (strcmp(bad_files[i].want_sub, "SHOULD-LOAD") == 0) {
			/* literal token + tokenFile: both kept, the file is tried first per request */
			assert_int_equal(kube_config_load(tpath("bad"), NULL, &c, &err), 0);
			assert_string_equal(c->token, "lit");
			assert_string_equal(c->token_file, "/nonexistent");
			kube_config_free(c);
			continue;
		}
		assert_int_equal(kube_config_load(tpath("bad"), NULL, &c, &err), -1);
		print_message("%s\n", err);
		assert_non_null(strstr(err, tpath("bad")));
		assert_non_null(strstr(err, bad_files[i].want_sub));
		free(err);
	}
	struct kube_config *c = NULL;
	char *err = NULL;
	assert_int_equal(kube_config_load(tpath("missing"), NULL, &c, &err), -1);
	assert_non_null(strstr(err, "No such file"));
	free(err);
}

static void test_kubeconfig_env_merge_and_precedence(void **state)
{
	(void)state;
	write_file("a.yaml",
		   "apiVersion: v1\nkind: Config\n"
		   "clusters:\n- name: shared\n  cluster:\n    server: https://from-a:1\n"
		   "users:\n- name: u\n  user:\n    token: token-a\n"
		   "contexts:\n- name: ctx-a\n  context: {cluster: shared, user: u}\n");
	write_file("b.yaml",
		   "apiVersion: v1\nkind: Config\ncurrent-context: ctx-b\n"
		   "clusters:\n- name: shared\n  cluster:\n    server: https://from-b:2\n"
		   "- name: only-b\n  cluster:\n    server: https://only-b:3\n"
		   "users:\n- name: u\n  user:\n    token: token-b\n"
		   "contexts:\n- name: ctx-b\n  context: {cluster: only-b, user: u, namespace: nb}\n"
		   "- name: ctx-shared\n  context: {cluster: shared, user: u}\n");
	write_file("c.json",
		   "{\"apiVersion\":\"v1\",\"kind\":\"Config\",\"current-context\":\"j\","
		   "\"clusters\":[{\"name\":\"j\",\"cluster\":{\"server\":\"http://json:4\"}}],"
		   "\"contexts\":[{\"name\":\"j\",\"context\":{\"cluster\":\"j\"}}]}");
	char env[1024];
	snprintf(env, sizeof(env), "%s:%s:%s", tpath("a.yaml"), tpath("does-not-exist"), tpath("b.yaml"));
	setenv("KUBECONFIG", env, 1);
	struct kube_config *c = NULL;
	char *err = NULL;
	/* current-context only set in b; user "u" from a (first wins) */
	assert_int_equal(kube_config_load(NULL, NULL, &c, &err), 0);
	assert_string_equal(c->server, "https://only-b:3");
	assert_string_equal(c->token, "token-a");
	assert_string_equal(c->namespace, "nb");
	kube_config_free(c);
	/* same-named cluster: the first file wins */
	assert_int_equal(kube_config_load(NULL, "ctx-shared", &c, &err), 0);
	assert_string_equal(c->server, "https://from-a:1");
	kube_config_free(c);
	/* the explicit path wins over KUBECONFIG; JSON kubeconfigs are YAML too; no user is fine */
	assert_int_equal(kube_config_load(tpath("c.json"), NULL, &c, &err), 0);
	assert_string_equal(c->server, "http://json:4");
	assert_null(c->token);
	kube_config_free(c);
	/* error names the whole list */
	assert_int_equal(kube_config_load(NULL, "nope", &c, &err), -1);
	char want[1200];
	snprintf(want, sizeof(want), "kubeconfig %s: context \"nope\" not found", env);
	assert_string_equal(err, want);
	free(err);
	unsetenv("KUBECONFIG");

	/* ~/.kube/config when nothing else is set */
	char home[256];
	snprintf(home, sizeof(home), "%s/home", tmpdir);
	mkdir(home, 0700);
	char kdir[300];
	snprintf(kdir, sizeof(kdir), "%s/.kube", home);
	mkdir(kdir, 0700);
	write_file("home/.kube/config", KUBECTL_STYLE);
	char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	setenv("HOME", home, 1);
	assert_int_equal(kube_config_load(NULL, NULL, &c, &err), 0);
	assert_string_equal(c->token, "alice-token");
	kube_config_free(c);

	/* in-cluster beats ~/.kube/config */
	write_file("token", "sa-token\n");
	setenv("SK_SA_DIR", tmpdir, 1);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(kube_config_load(NULL, NULL, &c, &err), 0);
	assert_string_equal(c->server, "https://10.96.0.1:443");
	kube_config_free(c);
	if (old_home) {
		setenv("HOME", old_home, 1);
		free(old_home);
	}
}

static void test_in_cluster(void **state)
{
	(void)state;
	struct kube_config *c = NULL;
	char *err = NULL;
	assert_int_equal(kube_config_in_cluster(&c, &err), -1);
	assert_non_null(strstr(err, "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"));
	free(err);
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
	setenv("SK_SA_DIR", tmpdir, 1);
	assert_int_equal(kube_config_in_cluster(&c, &err), -1);   /* no token file yet */
	assert_non_null(strstr(err, tpath("token")));
	free(err);
	write_file("token", "t1");
	write_file("ca.crt", CA_PEM);
	write_file("namespace", "schedkit-system\n");
	assert_int_equal(kube_config_in_cluster(&c, &err), 0);
	assert_string_equal(c->server, "https://[fd00::1]:6443");
	assert_string_equal(c->token_file, tpath("token"));
	assert_null(c->token);
	assert_string_equal(c->ca_file, tpath("ca.crt"));
	assert_string_equal(c->namespace, "schedkit-system");
	kube_config_free(c);
	unlink(tpath("namespace"));
	assert_int_equal(kube_config_in_cluster(&c, &err), 0);
	assert_string_equal(c->namespace, "default");
	kube_config_free(c);
}

static void test_in_cluster_token_rotation(void **state)
{
	(void)state;
	struct fake_apiserver *fs = fake_apiserver_start(true);
	fake_apiserver_reply(fs, "GET", "/api", 0, 200, NULL, "{}");
	write_file("token", "first-token\n");
	write_file("ca.crt", fake_apiserver_ca_pem(fs));
	setenv("SK_SA_DIR", tmpdir, 1);
	setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
	char port[16];
	snprintf(port, sizeof(port), "%d", fake_apiserver_port(fs));
	setenv("KUBERNETES_SERVICE_PORT", port, 1);
	struct kube_config *cfg = NULL;
	assert_int_equal(kube_config_in_cluster(&cfg, NULL), 0);
	struct kube_client *c = NULL;
	assert_int_equal(kube_client_new(cfg, &c, NULL), 0);
	kube_config_free(cfg);
	assert_int_equal(kube_get(c, "/api", NULL, NULL), 0);
	char hv[128];
	struct fake_request *r = fake_apiserver_last(fs, "GET", "/api");
	assert_string_equal(fake_request_header(r, "Authorization", hv, sizeof(hv)), "Bearer first-token");
	fake_request_free(r);
	/* the kubelet rotates the projected token: new content, new mtime */
	write_file("token", "second-token\n");
	struct timespec ts[2] = {{2000, 0}, {2000, 0}};
	utimensat(AT_FDCWD, tpath("token"), ts, 0);
	assert_int_equal(kube_get(c, "/api", NULL, NULL), 0);
	r = fake_apiserver_last(fs, "GET", "/api");
	assert_string_equal(fake_request_header(r, "Authorization", hv, sizeof(hv)), "Bearer second-token");
	fake_request_free(r);
	kube_client_free(c);
	fake_apiserver_stop(fs);
}

static void test_kubeconfig_to_tls_client(void **state)
{
	(void)state;
	/* a YAML kubeconfig with CA data and client cert/key data talks to the TLS peer */
	struct fake_apiserver *fs = fake_apiserver_start(true);
	fake_apiserver_reply(fs, "GET", "/version", 0, 200, NULL, "{}");
	FILE *f = fopen(tpath("k.yaml"), "w");
	fprintf(f, "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: t\n  cluster:\n    server: %s\n",
		fake_apiserver_url(fs));
	fclose(f);
	/* base64 the PEMs with the library's inverse: write via openssl-free helper */
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *pems[3] = {fake_apiserver_ca_pem(fs), fake_apiserver_client_cert_pem(fs), fake_apiserver_client_key_pem(fs)};
	char *b64[3];
	for (int k = 0; k < 3; k++) {
		const unsigned char *s = (const unsigned char *)pems[k];
		size_t n = strlen(pems[k]), o = 0;
		b64[k] = malloc(n * 2 + 4);
		for (size_t i = 0; i < n; i += 3) {
			unsigned v = s[i] << 16 | (i + 1 < n ? s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
			b64[k][o++] = tbl[v >> 18 & 63];
			b64[k][o++] = tbl[v >> 12 & 63];
			b64[k][o++] = i + 1 < n ? tbl[v >> 6 & 63] : '=';
			b64[k][o++] = i + 2 < n ? tbl[v & 63] : '=';
		}
		b64[k][o] = 0;
	}
	f = fopen(tpath("k.yaml"), "a");
	fprintf(f, "    certificate-authority-data: %s\nusers:\n- name: u\n  user:\n    client-certificate-data: %s\n"
		   "    client-key-data: %s\ncontexts:\n- name: t\n  context: {cluster: t, user: u}\n", b64[0], b64[1], b64[2]);
	fclose(f);
	for (int k = 0; k < 3; k++)
		free(b64[k]);
	struct kube_config *cfg = NULL;
	char *err = NULL;
	assert_int_equal(kube_config_load(tpath("k.yaml"), NULL, &cfg, &err), 0);
	struct kube_client *c = NULL;
	assert_int_equal(kube_client_new(cfg, &c, NULL), 0);
	assert_string_equal(kube_client_namespace(c), "default");
	kube_config_free(cfg);
	struct kube_error e;
	assert_int_equal(kube_get(c, "/version", NULL, &e), 0);
	struct fake_request *r = fake_apiserver_last(fs, "GET", "/version");
	assert_true(r->client_cert);
	fake_request_free(r);
	kube_client_free(c);
	fake_apiserver_stop(fs);
}

/* ---------- exec credential plugins, end to end ---------- */

static const char PLUGIN[] =
	"#!/bin/sh\n"
	"n=$(cat \"$DIR/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$DIR/count\"\n"
	"printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$DIR/info\"\n"
	"[ -f \"$DIR/fail\" ] && exit 3\n"
	"[ -f \"$DIR/garbage\" ] && { echo nonsense; exit 0; }\n"
	"exp=''; [ -f \"$DIR/expired\" ] && exp=',\"expirationTimestamp\":\"2000-01-01T00:00:00Z\"'\n"
	"echo \"{\\\"apiVersion\\\":\\\"client.authentication.k8s.io/v1\\\",\\\"kind\\\":\\\"ExecCredential\\\","
	"\\\"status\\\":{\\\"token\\\":\\\"exec-$n-$1\\\"$exp}}\"\n";

static int plugin_runs(void)
{
	FILE *f = fopen(tpath("count"), "r");
	int n = 0;
	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

static char *last_auth(struct fake_apiserver *fs, char *buf, size_t len)
{
	struct fake_request *r = fake_apiserver_last(fs, "GET", "/api");
	char *v = r ? fake_request_header(r, "Authorization", buf, len) : NULL;
	fake_request_free(r);
	return v ? v : strcpy(buf, "<none>");
}

static void touch(const char *name) { write_file(name, ""); }

static void test_exec_plugin(void **state)
{
	(void)state;
	struct fake_apiserver *fs = fake_apiserver_start(false);
	write_file("plugin.sh", PLUGIN);
	chmod(tpath("plugin.sh"), 0755);
	FILE *f = fopen(tpath("kc"), "w");
	fprintf(f, "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
		   "clusters:\n- name: c\n  cluster: {server: '%s'}\n"
		   "users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
		   "      command: ./plugin.sh\n      args: [arg1]\n      env: [{name: DIR, value: '%s'}]\n"
		   "      interactiveMode: IfAvailable\n      provideClusterInfo: true\n"
		   "contexts:\n- name: x\n  context: {cluster: c, user: u}\n", fake_apiserver_url(fs), tmpdir);
	fclose(f);
	struct kube_config *cfg = NULL;
	char *err = NULL;
	assert_int_equal(kube_config_load(tpath("kc"), NULL, &cfg, &err), 0);
	assert_string_equal(cfg->exec->command, tpath("plugin.sh"));   /* relative with '/': resolved */
	struct kube_client *c = NULL;
	assert_int_equal(kube_client_new(cfg, &c, NULL), 0);
	kube_config_free(cfg);
	kube_client_set_max_retries(c, 0);
	char hv[128];
	struct kube_error e;

	/* first request runs the plugin; the token is cached for the next one */
	fake_apiserver_reply(fs, "GET", "/api", 2, 200, NULL, "{}");
	assert_int_equal(kube_get(c, "/api", NULL, &e), 0);
	assert_string_equal(last_auth(fs, hv, sizeof(hv)), "Bearer exec-1-arg1");
	assert_int_equal(kube_get(c, "/api", NULL, &e), 0);
	assert_int_equal(plugin_runs(), 1);
	FILE *in = fopen(tpath("info"), "r");
	char info[1024] = "";
	assert_non_null(fgets(info, sizeof(info), in));
	fclose(in);
	cJSON *ji = cJSON_Parse(info);
	assert_string_equal(cJSON_GetObjectItem(ji, "kind")->valuestring, "ExecCredential");
	assert_string_equal(cJSON_GetObjectItem(ji, "apiVersion")->valuestring, "client.authentication.k8s.io/v1");
	const cJSON *spec = cJSON_GetObjectItem(ji, "spec");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(spec, "interactive")));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "cluster"), "server")->valuestring,
			    fake_apiserver_url(fs));
	cJSON_Delete(ji);

	/* a 401 makes the client run the plugin again and retry once */
	fake_apiserver_reply(fs, "GET", "/api", 1, 401, NULL, "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"code\":401}");
	fake_apiserver_reply(fs, "GET", "/api", 1, 200, NULL, "{}");
	assert_int_equal(kube_get(c, "/api", NULL, &e), 0);
	assert_int_equal(plugin_runs(), 2);
	assert_string_equal(last_auth(fs, hv, sizeof(hv)), "Bearer exec-2-arg1");
	/* ... but only once: a fresh token that is refused too is an error */
	fake_apiserver_reply(fs, "GET", "/api", 2, 401, NULL, "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"code\":401}");
	assert_int_equal(kube_get(c, "/api", NULL, &e), -1);
	assert_int_equal(e.http_code, 401);
	assert_int_equal(plugin_runs(), 3);

	/* an expired credential is replaced before the request */
	touch("expired");
	fake_apiserver_reply(fs, "GET", "/api", 0, 200, NULL, "{}");
	assert_int_equal(kube_get(c, "/api", NULL, &e), 0);   /* cached token 3 is unexpired: reuse */
	assert_int_equal(plugin_runs(), 3);
	fake_apiserver_clear_routes(fs);
	fake_apiserver_reply(fs, "GET", "/api", 1, 401, NULL, "{\"kind\":\"Status\",\"code\":401}");
	fake_apiserver_reply(fs, "GET", "/api", 0, 200, NULL, "{}");
	assert_int_equal(kube_get(c, "/api", NULL, &e), 0);   /* 401 -> run 4, which comes back expired */
	assert_int_equal(kube_get(c, "/api", NULL, &e), 0);   /* expired -> run 5 */
	assert_int_equal(plugin_runs(), 5);
	assert_string_equal(last_auth(fs, hv, sizeof(hv)), "Bearer exec-5-arg1");
	unlink(tpath("expired"));

	/* failures surface as errors naming the plugin */
	touch("fail");
	assert_int_equal(kube_get(c, "/api", NULL, &e), -1);
	char want[512];
	snprintf(want, sizeof(want), "exec plugin %s: exit status 3", tpath("plugin.sh"));
	assert_string_equal(e.message, want);
	assert_int_equal(e.http_code, 0);
	unlink(tpath("fail"));
	touch("garbage");
	assert_int_equal(kube_get(c, "/api", NULL, &e), -1);
	assert_non_null(strstr(e.message, "output is not an ExecCredential"));
	unlink(tpath("garbage"));
	kube_client_free(c);
	fake_apiserver_stop(fs);
}

static void test_base64(void **state)
{
	(void)state;
	static const struct { const char *in; const char *want; } cases[] = {
		{"aGVsbG8=", "hello"}, {"aGVsbG8", "hello"}, {"aGVs\nbG8=\n", "hello"}, {"", ""},
		{"YQ==", "a"}, {"YWI=", "ab"}, {"!!", NULL}, {"YQ==YQ", NULL}, {"Y", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = kube_base64_decode(cases[i].in, NULL);
		if (cases[i].want)
			assert_string_equal(out, cases[i].want);
		else
			assert_null(out);
		free(out);
	}
	struct kube_config *c = kube_config_new("https://x");
	assert_string_equal(c->server, "https://x");
	assert_string_equal(c->namespace, "default");
	kube_config_free(c);
	kube_config_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64),
		cmocka_unit_test_setup_teardown(test_kubectl_style_contexts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_name_file_and_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kubeconfig_env_merge_and_precedence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_cluster, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_cluster_token_rotation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kubeconfig_to_tls_client, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_plugin, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
