/* HTTP extender client (pkg/scheduler/extender.go and staging/src/k8s.io/kube-scheduler/extender/v1/types.go): config entry -> struct sk_extender, the JSON wire
 * types with the exact capitalised keys, and one libcurl POST per call. See extender.h. */
#include "scheduler/framework/extender.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config.h"
#include "kube/log.h"
#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/api/raw.h"
#include "scheduler/config/config.h"
#include "scheduler/framework/extender_priv.h"

#define MAX_RESPONSE_BYTES (64u << 20)

static const char *cfg_str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static bool cfg_bool(const cJSON *o, const char *k) { return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k)); }

static char *dup_or_null(const char *s) { return s && *s ? strdup(s) : NULL; }

void sk_extender_free(struct sk_extender *e)
{
	if (!e)
		return;
	sk_extender_pool_free(e->pool);
	curl_slist_free_all(e->headers);
	curl_slist_free_all(e->connect_to);
	free(e->call_prefix);
	free(e->url_prefix);
	free(e->name);
	free(e->filter_verb);
	free(e->prioritize_verb);
	free(e->bind_verb);
	free(e->preempt_verb);
	free(e->server_name);
	free(e->ca_file);
	free(e->cert_file);
	free(e->key_file);
	free(e->ca_data);
	free(e->cert_data);
	free(e->key_data);
	for (int i = 0; i < e->nmanaged; i++)
		free(e->managed[i]);
	free(e->managed);
	free(e);
}

static int decode_pem(const cJSON *tls, const char *key, const char *path, char **out, size_t *len, char **err)
{
	const char *v = cfg_str(tls, key);
	if (!*v)
		return 0;
	*out = kube_base64_decode(v, len);
	if (!*out)
		return kube_errf(err, "%s.tlsConfig.%s: invalid base64 data", path, key);
	return 0;
}

struct sk_extender *sk_extender_new(const cJSON *cfg, const char *path, char **err)
{
	if (err)
		*err = NULL; /* kube_errf frees what *err holds: never a caller's stale pointer */
	if (!path)
		path = "extender";
	if (!cJSON_IsObject(cfg)) {
		kube_errf(err, "%s: expected an object", path);
		return NULL;
	}
	struct sk_extender *e = calloc(1, sizeof(*e));
	if (!e) {
		kube_errf(err, "%s: out of memory", path);
		return NULL;
	}
	if (!(e->pool = sk_extender_pool_new())) {
		kube_errf(err, "%s: out of memory", path);
		goto fail;
	}
	const char *prefix = cfg_str(cfg, "urlPrefix");
	if (!*prefix) {
		kube_errf(err, "%s.urlPrefix: Required value", path);
		goto fail;
	}
	e->name = strdup(prefix);
	e->url_prefix = strdup(prefix);
	if (!e->name || !e->url_prefix)
		goto oom;
	size_t l = strlen(e->url_prefix);
	while (l > 0 && e->url_prefix[l - 1] == '/')
		e->url_prefix[--l] = '\0';
	e->filter_verb = dup_or_null(cfg_str(cfg, "filterVerb"));
	e->prioritize_verb = dup_or_null(cfg_str(cfg, "prioritizeVerb"));
	e->bind_verb = dup_or_null(cfg_str(cfg, "bindVerb"));
	e->preempt_verb = dup_or_null(cfg_str(cfg, "preemptVerb"));
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(cfg, "weight");
	if (w && kube_json_get_int64(w, &e->weight) != 0)
		e->weight = 0;
	e->timeout_ms = 0;
	const char *to = cfg_str(cfg, "httpTimeout");
	if (*to && kube_duration_parse_ms(to, &e->timeout_ms) < 0) {
		kube_errf(err, "%s.httpTimeout: invalid duration \"%s\"", path, to);
		goto fail;
	}
	if (e->timeout_ms <= 0)
		e->timeout_ms = SK_DEFAULT_EXTENDER_TIMEOUT_MS;
	e->enable_https = cfg_bool(cfg, "enableHTTPS");
	e->node_cache_capable = cfg_bool(cfg, "nodeCacheCapable");
	e->ignorable = cfg_bool(cfg, "ignorable");
	const cJSON *tls = cJSON_GetObjectItemCaseSensitive(cfg, "tlsConfig");
	if (cJSON_IsObject(tls)) {
		e->tls_set = true;
		e->insecure = cfg_bool(tls, "insecure");
		e->server_name = dup_or_null(cfg_str(tls, "serverName"));
		e->ca_file = dup_or_null(cfg_str(tls, "caFile"));
		e->cert_file = dup_or_null(cfg_str(tls, "certFile"));
		e->key_file = dup_or_null(cfg_str(tls, "keyFile"));
		if (decode_pem(tls, "caData", path, &e->ca_data, &e->ca_len, err) < 0 ||
		    decode_pem(tls, "certData", path, &e->cert_data, &e->cert_len, err) < 0 ||
		    decode_pem(tls, "keyData", path, &e->key_data, &e->key_len, err) < 0)
			goto fail;
	}
	/* upstream makeTransport: enableHTTPS without any CA -> no server verification */
	if (e->enable_https && !e->ca_file && !e->ca_data)
		e->insecure = true;
	if (sk_extender_request_init(e, path, err) != 0)
		goto fail;
	const cJSON *mr = cJSON_GetObjectItemCaseSensitive(cfg, "managedResources");
	if (cJSON_IsArray(mr)) {
		int n = cJSON_GetArraySize(mr);
		e->managed = calloc((size_t)(n ? n : 1), sizeof(char *));
		if (!e->managed)
			goto oom;
		for (const cJSON *r = mr->child; r; r = r->next) {
			const char *name = cfg_str(r, "name");
			if (!*name)
				continue;
			if (!(e->managed[e->nmanaged] = strdup(name)))
				goto oom;
			e->nmanaged++;
		}
	}
	return e;
oom:
	kube_errf(err, "%s: out of memory", path);
fail:
	sk_extender_free(e);
	return NULL;
}

void sk_extenders_free(struct sk_extender **list, int n)
{
	for (int i = 0; list && i < n; i++)
		sk_extender_free(list[i]);
	free(list);
}

int sk_extenders_build(const cJSON *top, const cJSON *profile, struct sk_extender ***out, char **err)
{
	if (err)
		*err = NULL; /* kube_errf frees what *err holds: never a caller's stale pointer */
	*out = NULL;
	int total = (cJSON_IsArray(top) ? cJSON_GetArraySize(top) : 0) +
		    (cJSON_IsArray(profile) ? cJSON_GetArraySize(profile) : 0);
	if (total == 0)
		return 0;
	struct sk_extender **all = calloc((size_t)total, sizeof(*all));
	struct sk_extender **sorted = calloc((size_t)total, sizeof(*sorted));
	if (!all || !sorted) {
		free(all);
		free(sorted);
		return kube_errf(err, "extenders: out of memory");
	}
	int n = 0;
	const cJSON *lists[2] = { top, profile };
	const char *names[2] = { "extenders", "profile extenders" };
	for (int l = 0; l < 2; l++) {
		if (!cJSON_IsArray(lists[l]))
			continue;
		int i = 0;
		for (const cJSON *x = lists[l]->child; x; x = x->next, i++) {
			char path[64];
			snprintf(path, sizeof(path), "%s[%d]", names[l], i);
			if (!(all[n] = sk_extender_new(x, path, err))) {
				sk_extenders_free(all, n);
				free(sorted);
				return -1;
			}
			n++;
		}
	}
	int k = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++)
			if (all[i]->ignorable == (pass == 1))
				sorted[k++] = all[i];
	free(all);
	*out = sorted;
	return n;
}

const char *sk_extender_name(const struct sk_extender *e) { return e->name; }
bool sk_extender_is_filter(const struct sk_extender *e) { return e->filter_verb != NULL; }
bool sk_extender_is_prioritizer(const struct sk_extender *e) { return e->prioritize_verb != NULL; }
bool sk_extender_is_binder(const struct sk_extender *e) { return e->bind_verb != NULL; }
bool sk_extender_is_ignorable(const struct sk_extender *e) { return e->ignorable; }
bool sk_extender_node_cache_capable(const struct sk_extender *e) { return e->node_cache_capable; }
int64_t sk_extender_weight(const struct sk_extender *e) { return e->weight; }
int64_t sk_extender_timeout_ms(const struct sk_extender *e) { return e->timeout_ms; }

bool sk_extender_is_interested(const struct sk_extender *e, const struct sk_pod *pod)
{
	if (e->nmanaged == 0)
		return true;
	for (int m = 0; m < e->nmanaged; m++) {
		for (int i = 0; i < pod->requests.nscalar; i++)
			if (strcmp(pod->requests.scalar[i].name, e->managed[m]) == 0)
				return true;
		if (sk_pod_limits_name(pod, e->managed[m]))
			return true;
	}
	return false;
}

/* ---------- HTTP ---------- */

struct buf {
	char *p;
	size_t n;
	bool too_big;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct buf *b = ud;
	size_t k = size * nmemb;
	if (b->n + k > MAX_RESPONSE_BYTES) {
		b->too_big = true;
		return 0;
	}
	char *x = realloc(b->p, b->n + k + 1);
	if (!x)
		return 0;
	memcpy(x + b->n, ptr, k);
	b->n += k;
	x[b->n] = '\0';
	b->p = x;
	return k;
}

/* The HTTP exchange: 0 and *body (NUL-terminated, caller frees), or -1 and *err. The duration
 * is recorded, and the error kind of a failed call. */
static int post_raw(const struct sk_extender *e, const char *label, const char *verb, const char *body,
		    char **resp, char **err)
{
	*resp = NULL;
	char *url = NULL, *call_url = NULL; /* the second with serverName's host (extender_tls.c) */
	if (!body || asprintf(&url, "%s/%s", e->url_prefix, verb) < 0 ||
	    asprintf(&call_url, "%s/%s", e->call_prefix ? e->call_prefix : e->url_prefix, verb) < 0) {
		free(url);
		kube_errf(err, "extender %s: out of memory", e->name);
		return -1;
	}
	int64_t t0 = kube_mono_ns();
	const char *kind = NULL;
	CURL *c = sk_extender_pool_get(e->pool);
	struct buf b = { 0 };
	int rc = -1;
	if (!c || !e->headers) {
		kube_errf(err, "extender %s: out of memory", e->name);
		goto out;
	}
	char ebuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(c, CURLOPT_URL, call_url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, e->headers);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)e->timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	sk_extender_tls_setopt(e, c);
	CURLcode cc = curl_easy_perform(c);
	if (cc != CURLE_OK) {
		kind = cc == CURLE_OPERATION_TIMEDOUT ? "timeout" : "transport";
		kube_errf(err, "%s: Post \"%s\": %s", verb, url, b.too_big ? "response too large" : *ebuf ? ebuf : curl_easy_strerror(cc));
		goto out;
	}
	long code = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200) {
		kind = "status";
		kube_errf(err, "failed %s with extender at URL %s, code %ld", verb, url, code);
		goto out;
	}
	*resp = b.p ? b.p : strdup("");
	b.p = NULL;
	if (!*resp)
		kube_errf(err, "extender %s: out of memory", e->name);
	else
		rc = 0;
out:
	sk_extender_observe(e, label, (double)(kube_mono_ns() - t0) / 1e9, kind);
	sk_extender_pool_put(e->pool, c);
	free(b.p);
	free(url);
	free(call_url);
	return rc;
}

static cJSON *parse_response(const struct sk_extender *e, const char *label, const char *verb, const char *resp,
			     char **err)
{
	const char *end = NULL;
	cJSON *res = cJSON_ParseWithOpts(resp, &end, 0);
	if (!res) {
		sk_extender_observe(e, label, -1, "decode");
		kube_errf(err, "extender %s: %s: invalid JSON response", e->name, verb);
	}
	return res;
}

cJSON *sk_extender_post(const struct sk_extender *e, const char *label, const char *verb, const char *body,
			char **err)
{
	char *resp = NULL;
	if (post_raw(e, label, verb, body, &resp, err) != 0)
		return NULL;
	cJSON *res = parse_response(e, label, verb, resp, err);
	free(resp);
	return res;
}

/* ---------- verbs ---------- */

void sk_extender_filter_result_free(struct sk_extender_filter_result *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nfailed; i++) {
		free(r->failed[i].node);
		free(r->failed[i].message);
	}
	free(r->failed);
	free(r->nodes);
	memset(r, 0, sizeof(*r));
}

int sk_extender_find_node(const struct sk_node_info *const *nodes, int n, const char *name, size_t len, int *hint)
{
	int start = *hint >= 0 && *hint < n ? *hint : 0;
	for (int k = 0; k < n; k++) {
		int i = start + k < n ? start + k : start + k - n;
		const char *nm = sk_ni_name(nodes[i]);
		if (strncmp(nm, name, len) == 0 && nm[len] == '\0') {
			*hint = i + 1;
			return i;
		}
	}
	return -1;
}

static int find_node(const struct sk_node_info *const *nodes, int n, const char *name, int *hint)
{
	return sk_extender_find_node(nodes, n, name, strlen(name), hint);
}

int sk_extender_add_failed(struct sk_extender_filter_result *r, const char *node, size_t node_len, const char *msg,
			   size_t msg_len, bool unresolvable)
{
	for (int i = 0; i < r->nfailed; i++)
		if (strncmp(r->failed[i].node, node, node_len) == 0 && r->failed[i].node[node_len] == '\0')
			return 0; /* FailedAndUnresolvable (read first) wins */
	struct sk_extender_failed *f = realloc(r->failed, (size_t)(r->nfailed + 1) * sizeof(*f));
	if (!f)
		return -1;
	r->failed = f;
	f[r->nfailed].node = strndup(node, node_len);
	f[r->nfailed].message = strndup(msg, msg_len);
	f[r->nfailed].unresolvable = unresolvable;
	r->nfailed++;
	return f[r->nfailed - 1].node && f[r->nfailed - 1].message ? 0 : -1;
}

static int add_failed(struct sk_extender_filter_result *r, const cJSON *map, bool unresolvable)
{
	if (!cJSON_IsObject(map))
		return 0;
	for (const cJSON *x = map->child; x; x = x->next) {
		if (!x->string)
			continue;
		const char *msg = cJSON_IsString(x) ? x->valuestring : "";
		if (sk_extender_add_failed(r, x->string, strlen(x->string), msg, strlen(msg), unresolvable) < 0)
			return -1;
	}
	return 0;
}

int sk_extender_filter(const struct sk_extender *e, const struct sk_pod *pod, const struct sk_node_info *const *nodes,
		       int n, struct sk_extender_filter_result *out, char **err)
{
	if (err)
		*err = NULL; /* kube_errf frees what *err holds: never a caller's stale pointer */
	memset(out, 0, sizeof(*out));
	out->nodes = malloc((size_t)(n ? n : 1) * sizeof(*out->nodes));
	if (!out->nodes)
		return kube_errf(err, "extender %s: out of memory", e->name);
	if (!e->filter_verb) {
		memcpy(out->nodes, nodes, (size_t)n * sizeof(*nodes));
		out->n = n;
		return 0;
	}
	char *body = sk_extender_args_body(e, pod, nodes, n), *resp = NULL;
	int rc = post_raw(e, "filter", e->filter_verb, body, &resp, err);
	free(body);
	if (rc == 0) {
		/* the response bytes read directly (extender_fast.c), else through cJSON */
		rc = sk_extender_filter_fast(e, resp, nodes, n, out);
		if (rc < 0) {
			kube_errf(err, "extender %s: out of memory", e->name);
		} else if (rc == 1) {
			rc = 0;
		} else {
			cJSON *res = parse_response(e, "filter", e->filter_verb, resp, err);
			rc = res ? sk_extender_filter_decode(e, res, nodes, n, out, err) : -2;
			if (rc == -1)
				sk_extender_observe(e, "filter", -1, "response");
			cJSON_Delete(res);
		}
	}
	free(resp);
	if (rc != 0) {
		sk_extender_filter_result_free(out);
		return -1;
	}
	return 0;
}

int sk_extender_filter_decode(const struct sk_extender *e, const cJSON *res, const struct sk_node_info *const *nodes,
			      int n, struct sk_extender_filter_result *out, char **err)
{
	if (!out->nodes) {
		memset(out, 0, sizeof(*out));
		out->nodes = malloc((size_t)(n ? n : 1) * sizeof(*out->nodes));
		if (!out->nodes)
			return kube_errf(err, "extender %s: out of memory", e->name);
	}
	int rc = 0, hint = 0;
	const cJSON *er = sk_extender_rget(res, "Error");
	const cJSON *names = sk_extender_rget(res, "NodeNames");
	const cJSON *list = sk_extender_rget(res, "Nodes");
	if (!cJSON_IsObject(res)) {
		rc = kube_errf(err, "extender %s: %s: expected an ExtenderFilterResult (object)", e->name,
			     e->filter_verb ? e->filter_verb : "filter");
	} else if (cJSON_IsString(er) && *er->valuestring) {
		rc = kube_errf(err, "%s", er->valuestring);
	} else if (e->node_cache_capable && cJSON_IsArray(names)) {
		for (const cJSON *x = names->child; x && rc == 0; x = x->next) {
			int k = cJSON_IsString(x) ? find_node(nodes, n, x->valuestring, &hint) : -1;
			if (k < 0)
				rc = kube_errf(err, "extender \"%s\" claims a filtered node \"%s\" which is not found in the input node list",
					     e->name, cJSON_IsString(x) ? x->valuestring : "");
			else if (out->n < n)
				out->nodes[out->n++] = nodes[k];
		}
	} else if (cJSON_IsObject(list)) {
		const cJSON *items = sk_extender_rget(list, "items");
		for (const cJSON *x = cJSON_IsArray(items) ? items->child : NULL; x && rc == 0; x = x->next) {
			const cJSON *nm = sk_extender_rget(sk_extender_rget(x, "metadata"), "name");
			int k = cJSON_IsString(nm) ? find_node(nodes, n, nm->valuestring, &hint) : -1;
			if (k < 0)
				rc = kube_errf(err, "extender \"%s\" claims a filtered node \"%s\" which is not found in the input node list",
					     e->name, cJSON_IsString(nm) ? nm->valuestring : "");
			else if (out->n < n)
				out->nodes[out->n++] = nodes[k];
		}
	} /* else: no nodes kept */
	if (rc == 0 && (add_failed(out, sk_extender_rget(res, "FailedAndUnresolvableNodes"), true) < 0 ||
			add_failed(out, sk_extender_rget(res, "FailedNodes"), false) < 0))
		rc = kube_errf(err, "extender %s: out of memory", e->name);
	if (rc < 0)
		sk_extender_filter_result_free(out);
	return rc;
}

int sk_extender_prioritize(const struct sk_extender *e, const struct sk_pod *pod,
			   const struct sk_node_info *const *nodes, int n, int64_t *add, char **err)
{
	if (err)
		*err = NULL; /* kube_errf frees what *err holds: never a caller's stale pointer */
	if (!e->prioritize_verb)
		return 0;
	char *body = sk_extender_args_body(e, pod, nodes, n), *resp = NULL;
	int rc = post_raw(e, "prioritize", e->prioritize_verb, body, &resp, err);
	free(body);
	if (rc == 0) {
		rc = sk_extender_prioritize_fast(e, resp, nodes, n, add);
		if (rc < 0) {
			kube_errf(err, "extender %s: out of memory", e->name);
		} else if (rc == 1) {
			rc = 0;
		} else {
			cJSON *res = parse_response(e, "prioritize", e->prioritize_verb, resp, err);
			rc = res ? sk_extender_prioritize_decode(e, res, nodes, n, add, err) : -2;
			if (rc == -1)
				sk_extender_observe(e, "prioritize", -1, "response");
			cJSON_Delete(res);
		}
	}
	free(resp);
	return rc == 0 ? 0 : -1;
}

int sk_extender_prioritize_decode(const struct sk_extender *e, const cJSON *res, const struct sk_node_info *const *nodes,
				  int n, int64_t *add, char **err)
{
	if (!cJSON_IsArray(res) && !cJSON_IsNull(res))
		return kube_errf(err, "extender %s: %s: expected a HostPriorityList (array)", e->name,
			       e->prioritize_verb ? e->prioritize_verb : "prioritize");
	const int64_t scale = SK_MAX_NODE_SCORE / SK_MAX_EXTENDER_PRIORITY;
	int hint = 0;
	for (const cJSON *x = cJSON_IsArray(res) ? res->child : NULL; x; x = x->next) {
		const cJSON *h = sk_extender_rget(x, "Host"), *s = sk_extender_rget(x, "Score");
		int64_t score = 0;
		if (!cJSON_IsString(h) || (s && kube_json_get_int64(s, &score) != 0))
			continue;
		int k = find_node(nodes, n, h->valuestring, &hint);
		/* Modulo 2^64, as Go's int64 arithmetic wraps (pkg/scheduler/schedule_one.go,
		 * prioritizeNodes): an extender may send any Score, and signed overflow is undefined
		 * in C (found by scheduler/fuzz/fuzz_extender.c). */
		if (k >= 0)
			add[k] = (int64_t)((uint64_t)add[k] + (uint64_t)score * (uint64_t)e->weight * (uint64_t)scale);
	}
	return 0;
}

int sk_extender_bind(const struct sk_extender *e, const struct sk_pod *pod, const char *node, char **err)
{
	if (err)
		*err = NULL; /* kube_errf frees what *err holds: never a caller's stale pointer */
	if (!e->bind_verb)
		return kube_errf(err, "extender %s: no bindVerb", e->name);
	cJSON *args = cJSON_CreateObject();
	if (!args || !cJSON_AddStringToObject(args, "PodName", pod->name ? pod->name : "") ||
	    !cJSON_AddStringToObject(args, "PodNamespace", pod->ns ? pod->ns : "") ||
	    !cJSON_AddStringToObject(args, "PodUID", pod->uid ? pod->uid : "") ||
	    !cJSON_AddStringToObject(args, "Node", node)) {
		cJSON_Delete(args);
		return kube_errf(err, "extender %s: out of memory", e->name);
	}
	char *body = cJSON_PrintUnformatted(args);
	cJSON_Delete(args);
	cJSON *res = sk_extender_post(e, "bind", e->bind_verb, body, err);
	free(body);
	if (!res)
		return -1;
	int rc = sk_extender_bind_decode(e, res, err);
	cJSON_Delete(res);
	if (rc != 0)
		sk_extender_observe(e, "bind", -1, "response");
	return rc;
}

int sk_extender_bind_decode(const struct sk_extender *e, const cJSON *res, char **err)
{
	const cJSON *er = sk_extender_rget(res, "Error");
	if (!cJSON_IsObject(res))
		return kube_errf(err, "extender %s: %s: expected an ExtenderBindingResult (object)", e->name,
			       e->bind_verb ? e->bind_verb : "bind");
	if (cJSON_IsString(er) && *er->valuestring)
		return kube_errf(err, "%s", er->valuestring);
	return 0;
}
