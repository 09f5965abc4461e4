/* The daemon's HTTPS endpoints: /healthz /livez /readyz (ping, leaderElection, informer sync),
 * /metrics and /configz (the running generation's configuration, swapped by reloads), served as
 * kube-scheduler serves them (cmd/kube-scheduler/app/server.go, k8s.io/apiserver/pkg/server/
 * options/serving.go): always HTTPS, with --tls-cert-file/--tls-private-key-file or a
 * self-signed certificate (in memory, or kept in --cert-dir), and every request authenticated
 * and authorized by delegation to the API server (kube/delegate.h). */
#include <stdlib.h>
#include <string.h>

#include "scheduler/daemon/internal.h"
#include "kube/config.h"
#include "kube/delegate.h"
#include "kube/log.h"
#include "kube/servingcert.h"
#include "kube/util.h"

#define REDACTED "--- REDACTED ---"

struct sk_serving {
	char *cert_pem, *key_pem;     /* generated in memory */
	char *cert_path, *key_path;   /* --cert-dir */
	char *cipher_list;
	struct kube_client *authn, *authz;
	struct kube_delegate *delegate;
};

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

/* The secrets an extender's tlsConfig may carry (pkg/scheduler/apis/config ExtenderTLSConfig). */
static void redact(cJSON *cc)
{
	static const char *const keys[] = {"keyData", "certData", "caData"};
	const cJSON *ext;
	cJSON_ArrayForEach(ext, cJSON_GetObjectItemCaseSensitive(cc, "extenders")) {
		cJSON *tls = cJSON_GetObjectItemCaseSensitive(ext, "tlsConfig");
		for (size_t i = 0; tls && i < sizeof keys / sizeof keys[0]; i++)
			if (cJSON_GetObjectItemCaseSensitive(tls, keys[i]))
				cJSON_ReplaceItemInObjectCaseSensitive(tls, keys[i], cJSON_CreateString(REDACTED));
	}
}

char *sk_dm_build_configz(const struct sk_config *cfg)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *cc = sk_config_to_json(cfg);
	sk_config_redact_secrets(cc); /* extender tlsConfig keyData/certData */
	cJSON *un = cJSON_CreateArray();
	bool ok = root && cc && un;
	if (ok) {
		redact(cc);
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

/* The certificate: the files given, or the self-signed pair (in --cert-dir or in memory) for
 * localhost and 127.0.0.1, as MaybeDefaultWithSelfSignedCerts("localhost", nil, [127.0.0.1]). */
static int serving_cert(const struct sk_daemon_opts *o, struct sk_serving *sv, struct kube_http_server_opts *ho,
			char **err)
{
	static const char *const ips[] = {"127.0.0.1", NULL};
	if (o->tls_cert_file) {
		ho->tls_cert_file = o->tls_cert_file;
		ho->tls_key_file = o->tls_key_file;
	} else if (o->cert_dir && *o->cert_dir) {
		if (kube_selfsigned_in_dir(o->cert_dir, "kube-scheduler", "localhost", ips, &sv->cert_path, &sv->key_path,
					   err) != 0)
			return -1;
		ho->tls_cert_file = sv->cert_path;
		ho->tls_key_file = sv->key_path;
	} else {
		if (kube_selfsigned_generate("localhost", ips, &sv->cert_pem, &sv->key_pem, err) != 0)
			return -1;
		ho->tls_cert_pem = sv->cert_pem;
		ho->tls_key_pem = sv->key_pem;
		klog_info(1, "Generated self signed cert", " in-memory=true");
	}
	if (o->tls_cipher_suites && kube_tls_cipher_list(o->tls_cipher_suites, &sv->cipher_list, err) != 0)
		return -1;
	ho->tls_cipher_list = sv->cipher_list;
	return o->tls_min_version ? kube_tls_version(o->tls_min_version, &ho->tls_min_version, err) : 0;
}

/* A client for TokenReview or SubjectAccessReview: the kubeconfig given, else in-cluster, else
 * none (a warning, as upstream's RemoteKubeConfigFileOptional). */
static int review_client(const char *path, const char *what, struct kube_client **out, char **err)
{
	struct kube_config *kc = NULL;
	char *e = NULL;
	*out = NULL;
	if (path && *path ? kube_config_load(path, NULL, &kc, &e) != 0 : kube_config_in_cluster(&kc, &e) != 0) {
		if (path && *path) {
			kube_errf(err, "--%s-kubeconfig %s: %s", what, path, e ? e : "cannot load");
			free(e);
			return -1;
		}
		free(e);
		if (!strcmp(what, "authentication"))
			klog_warning("No authentication-kubeconfig provided and not in a cluster: every bearer token is taken as anonymous");
		else
			klog_warning("No authorization-kubeconfig provided and not in a cluster: every path but --authorization-always-allow-paths is forbidden");
		return 0;
	}
	int rc = kube_client_new(kc, out, &e);
	kube_config_free(kc);
	if (rc != 0) {
		kube_errf(err, "%s client: %s", what, e ? e : "cannot create");
		free(e);
		return -1;
	}
	kube_client_set_max_retries(*out, 1);
	kube_client_set_timeout(*out, 10);
	return 0;
}

static int delegation(const struct sk_daemon_opts *o, struct sk_serving *sv, char **err)
{
	static const char *const def_paths[] = {"/healthz", "/readyz", "/livez", NULL};
	if (review_client(o->authn_kubeconfig, "authentication", &sv->authn, err) != 0 ||
	    review_client(o->authz_kubeconfig, "authorization", &sv->authz, err) != 0)
		return -1;
	struct kube_delegate_opts dopts = {
		.authn = sv->authn, .authz = sv->authz,
		.always_allow_paths = o->always_allow_paths ? (const char *const *)o->always_allow_paths : def_paths,
		.authn_ttl_ms = o->authn_ttl_ms, .allowed_ttl_ms = o->authz_allowed_ttl_ms,
		.denied_ttl_ms = o->authz_denied_ttl_ms,
	};
	if (!(sv->delegate = kube_delegate_new(&dopts)))
		return kube_errf(err, "out of memory");
	return 0;
}

int sk_dm_serve_new(struct sk_daemon *d, char **err)
{
	const struct sk_daemon_opts *opts = &d->opts;
	struct kube_http_server_opts ho = {
		.bind_address = opts->bind_address ? opts->bind_address : "0.0.0.0",
		.port = opts->secure_port > 0 ? opts->secure_port : 0, .name = "scheduler",
	};
	if (!(d->serving = calloc(1, sizeof *d->serving)))
		return kube_errf(err, "out of memory");
	if (serving_cert(opts, d->serving, &ho, err) != 0 || delegation(opts, d->serving, err) != 0)
		return -1;
	char *e = NULL;
	if (kube_http_server_new(&ho, &d->http, &e) != 0) {
		kube_errf(err, "serving on %s:%d: %s", ho.bind_address, ho.port, e ? e : "cannot listen");
		free(e);
		return -1;
	}
	const char *const *open = opts->always_allow_paths ? (const char *const *)opts->always_allow_paths
							   : (const char *const[]){"/healthz", "/readyz", "/livez", NULL};
	if (kube_http_set_guard(d->http, kube_delegate_guard, d->serving->delegate, open) != 0 ||
	    kube_http_add_check(d->http, KUBE_HEALTHZ | KUBE_LIVEZ, "ping", NULL, NULL) != 0 ||
	    (d->leader && kube_http_add_check(d->http, KUBE_HEALTHZ, "leaderElection", check_leader, d) != 0) ||
	    kube_http_add_check(d->http, KUBE_READYZ, "ping", NULL, NULL) != 0 ||
	    kube_http_add_check(d->http, KUBE_READYZ, "sched-handler-sync", check_synced, d) != 0 ||
	    kube_http_add_metrics(d->http, d->registry) != 0 ||
	    kube_http_route(d->http, "GET", "/configz", configz_handler, d) != 0 ||
	    kube_http_route(d->http, "GET", "/debug/schedkit/v1/decisions", sk_dm_decisions_handler, d) != 0 ||
	    kube_http_route(d->http, "GET", "/debug/schedkit/v1/summary", sk_dm_summary_handler, d) != 0 ||
	    kube_http_route(d->http, "GET", "/debug/schedkit/v1/config", sk_dm_config_handler, d) != 0 ||
	    sk_dm_dashboard_new(d) != 0)
		return kube_errf(err, "HTTP routes: out of memory");
	return 0;
}

void sk_dm_serve_free(struct sk_daemon *d)
{
	struct sk_serving *sv = d->serving;
	if (!sv)
		return;
	kube_delegate_free(sv->delegate);
	kube_client_free(sv->authn);
	kube_client_free(sv->authz);
	if (sv->key_pem)
		memset(sv->key_pem, 0, strlen(sv->key_pem));
	free(sv->cert_pem);
	free(sv->key_pem);
	free(sv->cert_path);
	free(sv->key_path);
	free(sv->cipher_list);
	free(sv);
	d->serving = NULL;
}
