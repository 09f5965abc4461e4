/* GET /debug/schedkit/v1/decisions (docs/explain.md): the decision records of one pod
 * (?namespace=&name=) or the recent ones (?profile=&result=&namespace=&limit=&latest=&full=).
 * Served like /configz (same server, same rules); the body is rendered per request. */
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kube/util.h"
#include "scheduler/daemon/internal.h"

#define MAX_PARAM 256

struct params {
	char ns[MAX_PARAM], name[MAX_PARAM], profile[MAX_PARAM], result[MAX_PARAM];
	int limit;
	bool latest, full, has_ns, has_name;
};

/* One `key=value` of the (already decoded) query into out; returns -1 with *bad naming the
 * parameter when its value does not fit or is invalid. */
static int take(struct params *p, const char *key, size_t klen, const char *val, size_t vlen, const char **bad)
{
#define IS(k) (klen == strlen(k) && !strncmp(key, k, klen))
	char *dst = NULL;
	if (IS("namespace")) {
		dst = p->ns;
		p->has_ns = true;
	} else if (IS("name")) {
		dst = p->name;
		p->has_name = true;
	} else if (IS("profile")) {
		dst = p->profile;
	} else if (IS("result")) {
		dst = p->result;
	} else if (IS("limit")) {
		char buf[16];
		if (vlen == 0 || vlen >= sizeof buf)
			return *bad = "limit", -1;
		memcpy(buf, val, vlen);
		buf[vlen] = '\0';
		char *end;
		long v = strtol(buf, &end, 10);
		if (*end || v < 1 || v > 10000)
			return *bad = "limit", -1;
		p->limit = (int)v;
		return 0;
	} else if (IS("latest") || IS("full")) {
		bool v = vlen == 0 || (vlen == 4 && !strncmp(val, "true", 4)) || (vlen == 1 && val[0] == '1');
		if (!v && !(vlen == 5 && !strncmp(val, "false", 5)) && !(vlen == 1 && val[0] == '0'))
			return *bad = IS("latest") ? "latest" : "full", -1;
		if (IS("latest"))
			p->latest = v;
		else
			p->full = v;
		return 0;
	} else {
		return 0; /* unknown parameters are ignored, as the API server does */
	}
	if (vlen >= MAX_PARAM)
		return *bad = key, -1;
	memcpy(dst, val, vlen);
	dst[vlen] = '\0';
	return 0;
#undef IS
}

static int parse(const char *q, struct params *p, const char **bad)
{
	memset(p, 0, sizeof *p);
	for (const char *s = q ? q : ""; *s;) {
		const char *amp = strchr(s, '&');
		size_t len = amp ? (size_t)(amp - s) : strlen(s);
		const char *eq = memchr(s, '=', len);
		size_t klen = eq ? (size_t)(eq - s) : len;
		if (klen && take(p, s, klen, eq ? eq + 1 : "", eq ? len - klen - 1 : 0, bad) != 0)
			return -1;
		s += len + (amp ? 1 : 0);
	}
	if (*p->result && strcmp(p->result, "Scheduled") && strcmp(p->result, "Unschedulable") &&
	    strcmp(p->result, "Error"))
		return *bad = "result", -1;
	return 0;
}

static void respond_json(struct kube_http_response *resp, int code, cJSON *j)
{
	char *body = j ? cJSON_PrintUnformatted(j) : NULL;
	cJSON_Delete(j);
	if (!body) {
		kube_http_respond(resp, 500, "text/plain; charset=utf-8", "out of memory\n");
		return;
	}
	resp->status = code;
	resp->content_type = "application/json";
	resp->body = body;
	resp->body_len = strlen(body);
	resp->body_owned = true;
}

/* A metav1.Status-shaped error, as the API server would write it. */
static void respond_status(struct kube_http_response *resp, int code, const char *reason, const char *msg)
{
	cJSON *j = cJSON_CreateObject();
	if (j) {
		cJSON_AddStringToObject(j, "kind", "Status");
		cJSON_AddStringToObject(j, "apiVersion", "v1");
		cJSON_AddStringToObject(j, "status", "Failure");
		cJSON_AddStringToObject(j, "message", msg);
		cJSON_AddStringToObject(j, "reason", reason);
		cJSON_AddNumberToObject(j, "code", code);
	}
	respond_json(resp, code, j);
}

static cJSON *items_json(struct sk_decision **v, int n, bool full)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; a && i < n; i++) {
		cJSON *e = full ? sk_decision_json(v[i]) : sk_decision_summary_json(v[i]);
		if (!e || !cJSON_AddItemToArray(a, e)) {
			cJSON_Delete(e);
			cJSON_Delete(a);
			a = NULL;
		}
	}
	for (int i = 0; i < n; i++)
		sk_decision_unref(v[i]);
	free(v);
	return a;
}

/* "leading": whether this instance runs the scheduling loop (only the leader has fresh records;
 * kubectl schedkit retries through the service proxy until it reaches it). */
static cJSON *envelope(struct sk_daemon *d, const char *kind)
{
	cJSON *j = cJSON_CreateObject();
	if (j && (!cJSON_AddStringToObject(j, "apiVersion", "schedkit.io/v1") || !cJSON_AddStringToObject(j, "kind", kind) ||
		  !cJSON_AddBoolToObject(j, "leading", !d->leader || sk_daemon_is_leading(d)))) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

#define NOT_LEADING "not the leading scheduler: only the leader schedules and keeps decision records"

static bool not_leading(struct sk_daemon *d, struct kube_http_response *resp)
{
	if (!d->leader || sk_daemon_is_leading(d))
		return false;
	respond_status(resp, 503, "ServiceUnavailable", NOT_LEADING);
	return true;
}

void sk_dm_decisions_handler(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	struct sk_daemon *d = ctx;
	if (not_leading(d, resp))
		return;
	struct params p;
	const char *bad = NULL;
	if (parse(req->query, &p, &bad) != 0) {
		char msg[128];
		snprintf(msg, sizeof msg, "invalid query parameter %s", bad ? bad : "");
		respond_status(resp, 400, "BadRequest", msg);
		return;
	}
	struct sk_decision **v = NULL;
	if (p.has_name) {
		const char *ns = p.has_ns && *p.ns ? p.ns : "default";
		int n = sk_decisions_pod(d->decisions, ns, p.name, &v);
		if (n <= 0) {
			char msg[700];
			snprintf(msg, sizeof msg, "no decision recorded for pod %s/%s", ns, p.name);
			respond_status(resp, n < 0 ? 500 : 404, n < 0 ? "InternalError" : "NotFound",
				       n < 0 ? "out of memory" : msg);
			return;
		}
		cJSON *j = envelope(d, "PodDecisions");
		cJSON *items = items_json(v, n, true);
		if (j && items && cJSON_AddStringToObject(j, "namespace", ns) && cJSON_AddStringToObject(j, "name", p.name)) {
			cJSON_AddItemToObject(j, "items", items);
			items = NULL;
		} else {
			cJSON_Delete(j);
			j = NULL;
		}
		cJSON_Delete(items);
		respond_json(resp, 200, j);
		return;
	}
	struct sk_decisions_filter f = { .profile = p.profile, .result = p.result, .ns = p.has_ns ? p.ns : NULL,
					 .limit = p.limit, .latest_per_pod = p.latest };
	int n = sk_decisions_recent(d->decisions, &f, &v);
	if (n < 0) {
		respond_status(resp, 500, "InternalError", "out of memory");
		return;
	}
	struct sk_decisions_stats st;
	sk_decisions_stats(d->decisions, &st);
	cJSON *j = envelope(d, "DecisionList");
	cJSON *items = items_json(v, n, p.full);
	cJSON *sj = sk_decisions_stats_json(&st);
	if (j && items && sj) {
		cJSON_AddItemToObject(j, "store", sj);
		cJSON_AddItemToObject(j, "items", items);
	} else {
		cJSON_Delete(j);
		cJSON_Delete(items);
		cJSON_Delete(sj);
		j = NULL;
	}
	respond_json(resp, 200, j);
}

/* ---------- the profile summary ---------- */

void sk_dm_summary_handler(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	(void)req;
	struct sk_daemon *d = ctx;
	if (not_leading(d, resp))
		return;
	cJSON *j = envelope(d, "DecisionSummary");
	cJSON *p = sk_summary_json(d->summary, kube_mono_ns() / 1000000000LL, SK_SUMMARY_TOP);
	if (j && p) {
		cJSON_AddItemToObject(j, "profiles", p);
		p = NULL;
	} else {
		cJSON_Delete(j);
		j = NULL;
	}
	cJSON_Delete(p);
	respond_json(resp, 200, j);
}

/* The leader puts the summary on its Lease (written with the next renewal) when it changed, at
 * most every SUMMARY_PUBLISH_S, so the operator can copy it into SchedulerProfile status. */
#define SUMMARY_PUBLISH_S 10

void sk_dm_publish_summary(struct sk_daemon *d)
{
	if (!d->leader || !sk_daemon_is_leading(d))
		return;
	int64_t now = kube_mono_ns();
	if (d->summary_published && now - d->summary_published_ns < SUMMARY_PUBLISH_S * 1000000000LL)
		return;
	cJSON *p = sk_summary_json(d->summary, now / 1000000000LL, SK_SUMMARY_TOP);
	char *s = p ? cJSON_PrintUnformatted(p) : NULL;
	cJSON_Delete(p);
	if (!s)
		return;
	if (d->summary_published && !strcmp(s, d->summary_published)) {
		free(s);
		return;
	}
	if (kube_leader_set_annotation(d->leader, SK_SUMMARY_ANNOTATION, s) != 0) {
		free(s);
		return;
	}
	free(d->summary_published);
	d->summary_published = s;
	d->summary_published_ns = now;
}

/* ---------- the running configuration, under the debug prefix ---------- */

/* GET /debug/schedkit/v1/config: the body of /configz (extender secrets redacted), for
 * `kubectl schedkit simulate`: it is opened with the other /debug/schedkit paths, where /configz
 * stays as guarded as upstream's. */
void sk_dm_config_handler(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	(void)req;
	struct sk_daemon *d = ctx;
	if (not_leading(d, resp))
		return;
	pthread_rwlock_rdlock(&d->names_lock);
	/* copied: the body is sent after the handler returns, maybe after a reload */
	kube_http_respondf(resp, 200, "application/json", "%s", d->gen && d->gen->configz ? d->gen->configz : "{}");
	pthread_rwlock_unlock(&d->names_lock);
}
