/* The per-extender request setup: the fixed headers, and TLS (upstream makeTransport,
 * pkg/scheduler/extender.go, with tlsConfig turned into a rest.TLSClientConfig).
 *
 * tlsConfig.serverName is Go's tls.Config.ServerName: the name sent in SNI and the one the server
 * certificate must hold, while the connection still goes to the host of urlPrefix and the HTTP
 * Host header stays that host. libcurl takes both names from the URL, so the calls use urlPrefix
 * with its host replaced by serverName, CURLOPT_CONNECT_TO sends the connection to the real host
 * and port, and an explicit Host header keeps the original authority (docs/extenders.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/util.h"
#include "scheduler/framework/extender_priv.h"

/* serverName for an https urlPrefix: e->call_prefix, e->connect_to and the Host header. */
static int apply_server_name(struct sk_extender *e, const char *path, char **err)
{
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL, *url = NULL, *authority = NULL, *to = NULL;
	int rc = -1;
	if (!u)
		return kube_errf(err, "%s: out of memory", path);
	if (curl_url_set(u, CURLUPART_URL, e->url_prefix, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		rc = kube_errf(err, "%s.urlPrefix: invalid URL \"%s\"", path, e->url_prefix);
		goto out;
	}
	char *explicit_port = NULL;
	bool has_port = curl_url_get(u, CURLUPART_PORT, &explicit_port, 0) == CURLUE_OK;
	curl_free(explicit_port);
	if (asprintf(&authority, "Host: %s%s%s", host, has_port ? ":" : "", has_port ? port : "") < 0) {
		authority = NULL;
		goto oom;
	}
	if (curl_url_set(u, CURLUPART_HOST, e->server_name, 0) != CURLUE_OK) {
		rc = kube_errf(err, "%s.tlsConfig.serverName: invalid host name \"%s\"", path, e->server_name);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK)
		goto oom;
	/* "HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT" (an IPv6 host keeps its brackets) */
	if (asprintf(&to, "%s:%s:%s:%s", e->server_name, port, host, port) < 0) {
		to = NULL;
		goto oom;
	}
	free(e->call_prefix);
	if (!(e->call_prefix = strdup(url)) || !(e->connect_to = curl_slist_append(NULL, to)) ||
	    !curl_slist_append(e->headers, authority))
		goto oom;
	size_t l = strlen(e->call_prefix);
	while (l > 0 && e->call_prefix[l - 1] == '/')
		e->call_prefix[--l] = '\0';
	rc = 0;
	goto out;
oom:
	rc = kube_errf(err, "%s: out of memory", path);
out:
	free(to);
	free(authority);
	curl_free(url);
	curl_free(port);
	curl_free(host);
	curl_url_cleanup(u);
	return rc;
}

int sk_extender_request_init(struct sk_extender *e, const char *path, char **err)
{
	if (!(e->headers = curl_slist_append(NULL, "Content-Type: application/json")))
		return kube_errf(err, "%s: out of memory", path);
	if (e->server_name && strncasecmp(e->url_prefix, "https://", 8) == 0)
		return apply_server_name(e, path, err);
	return 0;
}

void sk_extender_tls_setopt(const struct sk_extender *e, CURL *c)
{
	if (e->connect_to)
		curl_easy_setopt(c, CURLOPT_CONNECT_TO, e->connect_to);
	if (e->insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (e->ca_data) {
		struct curl_blob blob = { .data = e->ca_data, .len = e->ca_len, .flags = CURL_BLOB_COPY };
		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
	} else if (e->ca_file) {
		curl_easy_setopt(c, CURLOPT_CAINFO, e->ca_file);
	}
	if (e->cert_data) {
		struct curl_blob blob = { .data = e->cert_data, .len = e->cert_len, .flags = CURL_BLOB_COPY };
		curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &blob);
		curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (e->cert_file) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, e->cert_file);
	}
	if (e->key_data) {
		struct curl_blob blob = { .data = e->key_data, .len = e->key_len, .flags = CURL_BLOB_COPY };
		curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &blob);
		curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (e->key_file) {
		curl_easy_setopt(c, CURLOPT_SSLKEY, e->key_file);
	}
}
