/* The daemon's HTTP endpoints: /healthz /livez (ping, leaderElection), /readyz (informer sync),
 * /metrics and /configz (the running generation's configuration, swapped by reloads). */
#include <stdlib.h>

#include "scheduler/daemon/internal.h"
#include "kube/util.h"

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

char *sk_dm_build_configz(const struct sk_config *cfg)
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

int sk_dm_serve_new(struct sk_daemon *d, char **err)
{
	const struct sk_daemon_opts *opts = &d->opts;
	struct kube_http_server_opts ho = {
		.bind_address = opts->bind_address ? opts->bind_address : "0.0.0.0",
		.port = opts->secure_port > 0 ? opts->secure_port : 0, .tls_cert_file = opts->tls_cert_file,
		.tls_key_file = opts->tls_key_file, .name = "scheduler",
	};
	char *e = NULL;
	if (kube_http_server_new(&ho, &d->http, &e) != 0) {
		kube_errf(err, "serving on %s:%d: %s", ho.bind_address, ho.port, e ? e : "cannot listen");
		free(e);
		return -1;
	}
	if (kube_http_add_check(d->http, KUBE_HEALTHZ | KUBE_LIVEZ, "ping", NULL, NULL) != 0 ||
	    (d->leader && kube_http_add_check(d->http, KUBE_HEALTHZ, "leaderElection", check_leader, d) != 0) ||
	    kube_http_add_check(d->http, KUBE_READYZ, "ping", NULL, NULL) != 0 ||
	    kube_http_add_check(d->http, KUBE_READYZ, "sched-handler-sync", check_synced, d) != 0 ||
	    kube_http_add_metrics(d->http, d->registry) != 0 ||
	    kube_http_route(d->http, "GET", "/configz", configz_handler, d) != 0 ||
	    kube_http_route(d->http, "GET", "/debug/schedkit/v1/decisions", sk_dm_decisions_handler, d) != 0 ||
	    kube_http_route(d->http, "GET", "/debug/schedkit/v1/summary", sk_dm_summary_handler, d) != 0)
		return kube_errf(err, "HTTP routes: out of memory");
	return 0;
}
