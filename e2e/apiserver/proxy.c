/* The services/proxy subresource: /api/v1/namespaces/NS/services/[SCHEME:]NAME[:PORT]/proxy/PATH
 * forwards the request to one endpoint of the Service, as kube-apiserver does (its
 * pkg/registry/core/service/proxy.go and the endpoint resolution of ResourceLocation): the
 * Service's port is chosen by name or number (PORT; the only port when omitted), its targetPort
 * (a number, or a port name looked up in the Endpoints) gives the endpoint port, and one ready
 * address of the Endpoints object of the same name is picked at random. HTTPS endpoints are not
 * verified, as upstream's proxy transport does not verify them. In the demo and the e2e suites,
 * the Endpoints name the scheduler processes (127.0.0.1:PORT). */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "e2e/apiserver/internal.h"
#include "e2e/apiserver/proxy_upgrade.h"
#include "kube/rest.h"

#define PROXY_MAX_BODY (64u << 20)

struct target {
	char scheme[8];
	char host[256];
	int port;
};

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The Service's port for `want` (name or number; NULL: the only one): its targetPort as a number
 * (*tport) or a name (*tname, borrowed from svc). -1 when there is no such port. */
static int service_port(const cJSON *svc, const char *want, int *tport, const char **tname)
{
	const cJSON *ports = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(svc, "spec"), "ports");
	const cJSON *p, *hit = NULL;
	int n = 0;
	cJSON_ArrayForEach(p, ports) {
		n++;
		const char *name = jstr(p, "name");
		const cJSON *num = cJSON_GetObjectItemCaseSensitive(p, "port");
		char buf[16] = "";
		if (cJSON_IsNumber(num))
			snprintf(buf, sizeof buf, "%d", num->valueint);
		if (!want || (name && !strcmp(name, want)) || !strcmp(buf, want))
			hit = hit ? hit : p;
	}
	if (!hit || (!want && n != 1))
		return -1;
	const cJSON *tp = cJSON_GetObjectItemCaseSensitive(hit, "targetPort");
	const cJSON *num = cJSON_GetObjectItemCaseSensitive(hit, "port");
	*tname = NULL;
	*tport = cJSON_IsNumber(num) ? num->valueint : 0;
	if (cJSON_IsNumber(tp))
		*tport = tp->valueint;
	else if (cJSON_IsString(tp))
		*tname = tp->valuestring;
	return 0;
}

/* A random ready address of the Endpoints with the port (by number, or the named port). */
static int pick_endpoint(const cJSON *ep, int tport, const char *tname, struct target *t)
{
	int total = 0;
	const cJSON *ss, *a, *p;
	/* two passes: count, then take the chosen one */
	for (int pass = 0, pick = -1; pass < 2; pass++) {
		int i = 0;
		cJSON_ArrayForEach(ss, cJSON_GetObjectItemCaseSensitive(ep, "subsets")) {
			int port = -1;
			cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(ss, "ports")) {
				const cJSON *num = cJSON_GetObjectItemCaseSensitive(p, "port");
				const char *name = jstr(p, "name");
				if (!cJSON_IsNumber(num))
					continue;
				if ((tname && name && !strcmp(name, tname)) || (!tname && num->valueint == tport))
					port = num->valueint;
			}
			if (port < 0)
				continue;
			cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ss, "addresses")) {
				const char *ip = jstr(a, "ip");
				if (!ip)
					continue;
				if (pass == 1 && i == pick) {
					snprintf(t->host, sizeof t->host, "%s", ip);
					t->port = port;
					return 0;
				}
				i++;
			}
		}
		total = i;
		if (total == 0)
			return -1;
		pick = rand() % total;
	}
	return -1;
}

struct sink {
	char *p;
	size_t len, cap;
	bool too_big;
	char ctype[128];
};

static size_t on_body(char *data, size_t sz, size_t n, void *u)
{
	struct sink *s = u;
	size_t k = sz * n;
	if (s->len + k + 1 > PROXY_MAX_BODY) {
		s->too_big = true;
		return 0;
	}
	if (s->len + k + 1 > s->cap) {
		size_t c = s->cap ? s->cap * 2 : 4096;
		while (c < s->len + k + 1)
			c *= 2;
		char *x = realloc(s->p, c);
		if (!x)
			return 0;
		s->p = x;
		s->cap = c;
	}
	memcpy(s->p + s->len, data, k);
	s->len += k;
	s->p[s->len] = '\0';
	return k;
}

static size_t on_header(char *data, size_t sz, size_t n, void *u)
{
	struct sink *s = u;
	size_t k = sz * n;
	if (k > 13 && !strncasecmp(data, "content-type:", 13)) {
		const char *v = data + 13;
		while (*v == ' ')
			v++;
		size_t l = (size_t)(data + k - v);
		while (l && (v[l - 1] == '\r' || v[l - 1] == '\n'))
			l--;
		snprintf(s->ctype, sizeof s->ctype, "%.*s", (int)l, v);
	}
	return k;
}

/* The request's query, encoded again (the server decoded it). Caller frees. */
static char *encode_query(const struct apis_req *r)
{
	struct apis_buf b = { 0 };
	for (int i = 0; i < r->nquery; i++) {
		char *k = kube_urlencode(r->query[i].k), *v = kube_urlencode(r->query[i].v ? r->query[i].v : "");
		apis_buf_printf(&b, "%s%s=%s", i ? "&" : "", k ? k : "", v ? v : "");
		free(k);
		free(v);
	}
	if (b.oom) {
		apis_buf_free(&b);
		return NULL;
	}
	return b.p ? b.p : strdup("");
}

static void forward(struct apis_conn *c, const struct apis_req *r, const struct target *t, const char *rest)
{
	char *q = encode_query(r);
	char *url = NULL;
	if (!q || asprintf(&url, "%s://%s:%d%s%s%s", t->scheme, t->host, t->port, rest, *q ? "?" : "", q) < 0) {
		free(q);
		apis_respond_status(c, 500, "InternalError", "out of memory", NULL);
		return;
	}
	if (r->upgrade) { /* a WebSocket: passed through (proxy_upgrade.c) */
		char *target = NULL;
		if (asprintf(&target, "%s%s%s", rest, *q ? "?" : "", q) < 0)
			target = NULL;
		if (target)
			apis_proxy_upgrade(c, r, t->scheme, t->host, t->port, target);
		else
			apis_respond_status(c, 500, "InternalError", "out of memory", NULL);
		free(target);
		free(q);
		free(url);
		return;
	}
	free(q);
	CURL *h = curl_easy_init();
	struct sink s = { 0 };
	struct curl_slist *hdr = NULL;
	if (r->content_type) {
		char ct[300];
		snprintf(ct, sizeof ct, "Content-Type: %s", r->content_type);
		hdr = curl_slist_append(hdr, ct);
	}
	if (r->accept) {
		char a[512];
		snprintf(a, sizeof a, "Accept: %s", r->accept);
		hdr = curl_slist_append(hdr, a);
	}
	CURLcode rc = CURLE_FAILED_INIT;
	long code = 0;
	if (h) {
		curl_easy_setopt(h, CURLOPT_URL, url);
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
		if (r->body_len) {
			curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
			curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)r->body_len);
		}
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
		curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(h, CURLOPT_HEADERDATA, &s);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
		curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
		curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
		rc = curl_easy_perform(h);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	}
	if (rc != CURLE_OK) {
		/* upstream answers 503 with the dial error */
		char msg[700];
		snprintf(msg, sizeof msg, "error trying to reach service: %s", s.too_big ? "response too large"
										     : curl_easy_strerror(rc));
		apis_respond_status(c, 503, "ServiceUnavailable", msg, NULL);
	} else {
		apis_respond(c, (int)code, *s.ctype ? s.ctype : "application/octet-stream", s.p ? s.p : "", s.len, NULL);
	}
	free(s.p);
	free(url);
	curl_slist_free_all(hdr);
	if (h)
		curl_easy_cleanup(h);
}

/* RBAC of a proxy request: the verb of the method (get, create, update, patch, delete) on the
 * services/proxy subresource of the Service. True when allowed (or RBAC is off); else answered. */
static bool proxy_allowed(struct apis_server *s, struct apis_conn *c, const struct apis_req *r,
			  const struct apis_user *u, const char *ns, const char *name)
{
	if (!s->opts.rbac)
		return true;
	static const struct {
		const char *method, *verb;
	} verbs[] = { { "GET", "get" }, { "HEAD", "get" }, { "POST", "create" }, { "PUT", "update" },
		      { "PATCH", "patch" }, { "DELETE", "delete" }, { "OPTIONS", "get" } };
	const char *verb = "get";
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (!strcmp(r->method, verbs[i].method))
			verb = verbs[i].verb;
	struct apis_attrs a = { .resource_request = true, .verb = verb, .group = "", .resource = "services",
				.sub = "proxy", .ns = ns, .name = name };
	char why[300], msg[1200];
	if (apis_authorize(s, u, &a, why, sizeof why))
		return true;
	apis_forbidden_message(u, &a, msg, sizeof msg);
	apis_respond_status(c, 403, "Forbidden", msg, NULL);
	return false;
}

/* segs: "api" "v1" "namespaces" NS "services" ID "proxy" ... */
bool apis_service_proxy(struct apis_server *s, struct apis_conn *c, const struct apis_req *r,
			const struct apis_user *u)
{
	static const char prefix[] = "/api/v1/namespaces/";
	if (strncmp(r->path, prefix, sizeof prefix - 1))
		return false;
	const char *ns = r->path + sizeof prefix - 1, *p = strchr(ns, '/');
	if (!p || strncmp(p, "/services/", 10))
		return false;
	const char *id = p + 10, *q = strchr(id, '/');
	if (!q || strncmp(q, "/proxy", 6) || (q[6] && q[6] != '/'))
		return false;
	const char *rest = q[6] ? q + 6 : "/";
	char nsb[256], idb[512];
	snprintf(nsb, sizeof nsb, "%.*s", (int)(p - ns), ns);
	snprintf(idb, sizeof idb, "%.*s", (int)(q - id), id);
	/* [scheme:]name[:port] (pkg/util/net SplitSchemeNamePort) */
	struct target t = { .scheme = "http" };
	char *parts[3] = { idb, NULL, NULL };
	int np = 1;
	for (char *x = idb; *x && np < 3; x++)
		if (*x == ':') {
			*x = '\0';
			parts[np++] = x + 1;
		}
	const char *name = parts[0], *port = NULL;
	if (np == 3) {
		if (strcmp(parts[0], "http") && strcmp(parts[0], "https")) {
			apis_respond_status(c, 400, "BadRequest", "invalid service request: unsupported scheme", NULL);
			return true;
		}
		strcpy(t.scheme, parts[0][4] == 's' ? "https" : "http");
		name = parts[1];
		port = *parts[2] ? parts[2] : NULL;
	} else if (np == 2) {
		port = *parts[1] ? parts[1] : NULL;
	}
	if (!proxy_allowed(s, c, r, u, nsb, name))
		return true;
	struct apis_rdef *svcs = apis_registry_find(s, "", "v1", "services");
	struct apis_rdef *eps = apis_registry_find(s, "", "v1", "endpoints");
	cJSON *svc = NULL, *ep = NULL;
	pthread_rwlock_rdlock(&s->lock);
	struct apis_obj *so = svcs ? apis_store_get(svcs, nsb, name) : NULL;
	struct apis_obj *eo = eps ? apis_store_get(eps, nsb, name) : NULL;
	if (so)
		svc = apis_obj_parse(so);
	if (eo)
		ep = apis_obj_parse(eo);
	pthread_rwlock_unlock(&s->lock);
	char msg[700];
	int tport = 0;
	const char *tname = NULL;
	if (!svc) {
		snprintf(msg, sizeof msg, "services \"%s\" not found", name);
		apis_respond_status(c, 404, "NotFound", msg, NULL);
	} else if (service_port(svc, port, &tport, &tname) != 0) {
		snprintf(msg, sizeof msg, "no service port %s found for service \"%s\"", port ? port : "\"\"", name);
		apis_respond_status(c, 503, "ServiceUnavailable", msg, NULL);
	} else if (!ep || pick_endpoint(ep, tport, tname, &t) != 0) {
		snprintf(msg, sizeof msg, "no endpoints available for service \"%s\"", name);
		apis_respond_status(c, 503, "ServiceUnavailable", msg, NULL);
	} else {
		forward(c, r, &t, rest);
	}
	cJSON_Delete(svc);
	cJSON_Delete(ep);
	return true;
}
