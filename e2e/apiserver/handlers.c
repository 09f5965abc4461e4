/* Long file: every verb and subresource shares the response, context and admission helpers. */
/* handlers.c — schedkit-apiserver's REST semantics: routing of /api and /apis paths, get, list
 * (selectors, limit/continue, Table), watch streams, create (generateName, uid, admission),
 * update with optimistic concurrency, patch (merge/json/strategic/apply), delete (finalizers,
 * propagation, graceful pods), deletecollection and the subresources status, scale, binding,
 * eviction and namespaces/finalize. Writes hold s->lock exclusively from read to commit;
 * responses are built under the lock and sent after it is released. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "kube/jsonspan.h"
#include "kube/log.h"
#include "kube/util.h"
#include "kube/object.h"
#include "kube/selector.h"
#include "e2e/apiserver/internal.h"
#include "e2e/apiserver/patch.h"
#include "e2e/apiserver/schema.h"
#include "e2e/apiserver/table.h"

/* A response computed under the lock, sent after it. */
struct res {
	int code;
	char *body;     /* JSON, malloc'd */
	char extra[64]; /* extra headers */
};

static void res_json(struct res *x, int code, const cJSON *obj)
{
	x->code = code;
	free(x->body);
	x->body = cJSON_PrintUnformatted(obj);
	if (!x->body)
		x->code = 500;
}

static void res_obj(struct res *x, int code, const struct apis_obj *o)
{
	x->code = code;
	free(x->body);
	x->body = strndup(o->json, o->json_len);
	if (!x->body)
		x->code = 500;
}

static cJSON *details_of(const struct apis_rdef *rd, const char *name, const char *kind)
{
	cJSON *d = cJSON_CreateObject();
	if (!d)
		return NULL;
	if (name)
		cJSON_AddStringToObject(d, "name", name);
	if (rd && *rd->group)
		cJSON_AddStringToObject(d, "group", rd->group);
	if (kind)
		cJSON_AddStringToObject(d, "kind", kind);
	else if (rd)
		cJSON_AddStringToObject(d, "kind", rd->plural);
	return d;
}

static void res_status(struct res *x, int code, const char *reason, cJSON *details, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void res_status(struct res *x, int code, const char *reason, cJSON *details, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	x->code = code;
	free(x->body);
	x->body = NULL;
	if (!*msg && !(reason && *reason) && !details && code < 400) {
		/* a bare success (every binding): the bytes cJSON would print for the object below */
		if (asprintf(&x->body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\",\"code\":%d}",
			     code) < 0)
			x->body = NULL;
		return;
	}
	cJSON *st = cJSON_CreateObject();
	if (!st) {
		cJSON_Delete(details);
		return;
	}
	cJSON_AddStringToObject(st, "kind", "Status");
	cJSON_AddStringToObject(st, "apiVersion", "v1");
	cJSON_AddItemToObject(st, "metadata", cJSON_CreateObject());
	cJSON_AddStringToObject(st, "status", code < 400 ? "Success" : "Failure");
	if (*msg)
		cJSON_AddStringToObject(st, "message", msg);
	if (reason && *reason)
		cJSON_AddStringToObject(st, "reason", reason);
	if (details)
		cJSON_AddItemToObject(st, "details", details);
	cJSON_AddNumberToObject(st, "code", code);
	x->body = cJSON_PrintUnformatted(st);
	cJSON_Delete(st);
	if (code == 429)
		snprintf(x->extra, sizeof x->extra, "Retry-After: 1\r\n");
}

static void res_not_found(struct res *x, const struct apis_rdef *rd, const char *name)
{
	res_status(x, 404, "NotFound", details_of(rd, name, NULL), "%s \"%s\" not found", rd->group_resource, name);
}

static void res_conflict(struct res *x, const struct apis_rdef *rd, const char *name)
{
	res_status(x, 409, "Conflict", details_of(rd, name, NULL),
		   "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please apply your "
		   "changes to the latest version and try again",
		   rd->group_resource, name);
}

static void qualified_kind(const struct apis_rdef *rd, char *buf, size_t n)
{
	if (*rd->group)
		snprintf(buf, n, "%s.%s", rd->kind, rd->group);
	else
		snprintf(buf, n, "%s", rd->kind);
}

/* 422 Invalid from causes (consumed): [{"reason","message","field"}]. */
static void res_invalid(struct res *x, const struct apis_rdef *rd, const char *name, cJSON *causes)
{
	char qk[300];
	qualified_kind(rd, qk, sizeof qk);
	struct apis_buf b = {0};
	int n = cJSON_GetArraySize(causes);
	if (n > 1)
		apis_buf_str(&b, "[");
	int i = 0;
	cJSON *c;
	cJSON_ArrayForEach(c, causes)
	{
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "message"));
		const char *f = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "field"));
		if (i++)
			apis_buf_str(&b, ", ");
		if (m && f && *f && strncmp(m, f, strlen(f)) != 0)
			apis_buf_printf(&b, "%s: %s", f, m);
		else if (m)
			apis_buf_str(&b, m);
	}
	if (n > 1)
		apis_buf_str(&b, "]");
	/* upstream causes carry the message without the "field: " prefix */
	cJSON_ArrayForEach(c, causes)
	{
		cJSON *m = cJSON_GetObjectItemCaseSensitive(c, "message");
		const char *f = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "field"));
		if (cJSON_IsString(m) && f && *f) {
			size_t fl = strlen(f);
			if (!strncmp(m->valuestring, f, fl) && m->valuestring[fl] == ':' && m->valuestring[fl + 1] == ' ') {
				char *rest = strdup(m->valuestring + fl + 2);
				if (rest)
					cJSON_SetValuestring(m, rest);
				free(rest);
			}
		}
	}
	cJSON *d = details_of(rd, name, rd->kind);
	if (d)
		cJSON_AddItemToObject(d, "causes", causes);
	else
		cJSON_Delete(causes);
	res_status(x, 422, "Invalid", d, "%s \"%s\" is invalid: %s", qk, name ? name : "", b.p ? b.p : "");
	apis_buf_free(&b);
}

static void res_invalid1(struct res *x, const struct apis_rdef *rd, const char *name, const char *reason,
			 const char *field, const char *message)
{
	cJSON *causes = cJSON_CreateArray();
	cJSON *c = cJSON_CreateObject();
	if (!causes || !c) {
		cJSON_Delete(causes);
		cJSON_Delete(c);
		res_status(x, 500, "InternalError", NULL, "out of memory");
		return;
	}
	cJSON_AddStringToObject(c, "reason", reason);
	char *m = NULL;
	if (asprintf(&m, "%s: %s", field, message) < 0)
		m = NULL;
	cJSON_AddStringToObject(c, "message", m ? m : message);
	free(m);
	cJSON_AddStringToObject(c, "field", field);
	cJSON_AddItemToArray(causes, c);
	res_invalid(x, rd, name, causes);
}

static void send_res(struct apis_conn *c, struct res *x)
{
	if (!x->body) {
		apis_respond_status(c, x->code >= 400 ? x->code : 500, "InternalError", "out of memory", NULL);
		return;
	}
	apis_respond(c, x->code, "application/json", x->body, strlen(x->body), x->extra);
	free(x->body);
	x->body = NULL;
}

/* ---------------- small JSON helpers ---------------- */

static const char *jstr(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static cJSON *jobj(cJSON *o, const char *k)
{
	cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
	if (cJSON_IsObject(it))
		return it;
	if (it)
		cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	return cJSON_AddObjectToObject(o, k);
}

static void jset(cJSON *o, const char *k, cJSON *v)
{
	if (!o || !v) {
		cJSON_Delete(v);
		return;
	}
	if (cJSON_GetObjectItemCaseSensitive(o, k))
		cJSON_ReplaceItemInObjectCaseSensitive(o, k, v);
	else
		cJSON_AddItemToObject(o, k, v);
}

static void jset_str(cJSON *o, const char *k, const char *v) { jset(o, k, cJSON_CreateString(v)); }

/* Sets apiVersion and kind as the first two keys (the order kubectl and client-go print). */
static void set_type_meta(cJSON *o, const struct apis_rdef *rd)
{
	const char *keys[2] = { "kind", "apiVersion" };
	const char *vals[2] = { rd->kind, rd->api_version };
	for (int i = 0; i < 2; i++) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, keys[i]);
		cJSON *it = cJSON_CreateString(vals[i]);
		if (!it)
			continue;
		it->string = strdup(keys[i]);
		if (!it->string || !cJSON_InsertItemInArray(o, 0, it)) {
			cJSON_Delete(it);
			jset_str(o, keys[i], vals[i]);
		}
	}
}

static void jdel(cJSON *o, const char *k) { cJSON_DeleteItemFromObjectCaseSensitive(o, k); }

static bool has_prefix(const char *s, const char *p) { return s && !strncmp(s, p, strlen(p)); }

static bool accept_table(const struct apis_req *r)
{
	return r->accept && strstr(r->accept, "as=Table");
}

/* ---------------- routing ---------------- */

struct route {
	struct apis_rdef *rd;
	char *ns, *name, *sub; /* borrowed from segs */
	bool watch_path;
};

static int split_path(char *path, char **segs, int max)
{
	int n = 0;
	char *save = NULL;
	for (char *p = strtok_r(path, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
		if (n == max)
			return -1;
		segs[n++] = p;
	}
	return n;
}

/* ---------------- objects: create ---------------- */

static const char GEN_CHARS[] = "bcdfghjklmnpqrstvwxz2456789";

static bool valid_dns_subdomain(const char *n)
{
	size_t l = strlen(n);
	if (l == 0 || l > 253)
		return false;
	for (size_t i = 0; i < l; i++) {
		char ch = n[i];
		if (!(islower((unsigned char)ch) || isdigit((unsigned char)ch) || ch == '-' || ch == '.'))
			return false;
	}
	return isalnum((unsigned char)n[0]) && isalnum((unsigned char)n[l - 1]);
}

static bool valid_path_segment(const char *n)
{
	return *n && strlen(n) <= 253 && strcmp(n, ".") && strcmp(n, "..") && !strchr(n, '/') && !strchr(n, '%');
}

static bool resource_allows_any_name(const struct apis_rdef *rd)
{
	/* RBAC objects and a few others allow path-segment names ("system:controller:x") */
	return !strcmp(rd->group, "rbac.authorization.k8s.io");
}

struct wctx {
	struct apis_server *s;
	struct apis_rdef *rd;
	const char *ns;
	bool dry_run;
	bool strict;
};

static long long jint(const cJSON *o, const char *k, long long dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? (long long)v->valuedouble : dflt;
}

struct pc_scan {
	const char *name;
	struct apis_obj *found;
};

static void find_default_pc(void *u, struct apis_obj *o)
{
	struct pc_scan *ps = u;
	if (ps->found || strcmp(o->name, ps->name ? ps->name : "") == 0)
		return;
	if (strstr(o->json, "\"globalDefault\":true"))
		ps->found = o;
}

static bool pod_ready_resources(const cJSON *containers, bool *any_req, bool *guaranteed)
{
	const cJSON *ct;
	*any_req = false;
	*guaranteed = true;
	int n = 0;
	cJSON_ArrayForEach(ct, containers)
	{
		n++;
		const cJSON *res = cJSON_GetObjectItemCaseSensitive(ct, "resources");
		const cJSON *req = cJSON_GetObjectItemCaseSensitive(res, "requests");
		const cJSON *lim = cJSON_GetObjectItemCaseSensitive(res, "limits");
		if ((req && req->child) || (lim && lim->child))
			*any_req = true;
		const char *keys[] = { "cpu", "memory" };
		for (int i = 0; i < 2; i++) {
			const cJSON *l = cJSON_GetObjectItemCaseSensitive(lim, keys[i]);
			const cJSON *r = cJSON_GetObjectItemCaseSensitive(req, keys[i]);
			if (!l || (r && !cJSON_Compare(l, r, true)))
				*guaranteed = false;
		}
	}
	return n > 0;
}

/* Pod defaults and priority admission. Returns 0 or fills x. */
static int admit_pod(struct wctx *w, cJSON *pod, const char *name, struct res *x)
{
	struct apis_server *s = w->s;
	cJSON *spec = jobj(pod, "spec");
	if (!spec)
		return -1;
	cJSON *containers = cJSON_GetObjectItemCaseSensitive(spec, "containers");
	if (!cJSON_IsArray(containers) || !containers->child) {
		res_invalid1(x, w->rd, name, "FieldValueRequired", "spec.containers", "Required value");
		return -1;
	}
	int i = 0;
	cJSON *ct;
	cJSON_ArrayForEach(ct, containers)
	{
		char f[64];
		if (!jstr(ct, "name") || !*jstr(ct, "name")) {
			snprintf(f, sizeof f, "spec.containers[%d].name", i);
			res_invalid1(x, w->rd, name, "FieldValueRequired", f, "Required value");
			return -1;
		}
		if (!jstr(ct, "image") || !*jstr(ct, "image")) {
			snprintf(f, sizeof f, "spec.containers[%d].image", i);
			res_invalid1(x, w->rd, name, "FieldValueRequired", f, "Required value");
			return -1;
		}
		i++;
	}
	apis_default_pod_requests(spec);
	if (!jstr(spec, "schedulerName") || !*jstr(spec, "schedulerName"))
		jset_str(spec, "schedulerName", "default-scheduler");
	if (!jstr(spec, "restartPolicy"))
		jset_str(spec, "restartPolicy", "Always");
	if (!jstr(spec, "dnsPolicy"))
		jset_str(spec, "dnsPolicy", "ClusterFirst");
	if (!cJSON_GetObjectItemCaseSensitive(spec, "terminationGracePeriodSeconds"))
		jset(spec, "terminationGracePeriodSeconds", cJSON_CreateNumber(30));
	/* priority admission */
	const char *pcname = jstr(spec, "priorityClassName");
	struct apis_obj *pc = NULL;
	if (pcname && *pcname) {
		pc = apis_store_get(s->rd_pcs, NULL, pcname);
		if (!pc) {
			res_status(x, 403, "Forbidden", details_of(w->rd, name, NULL),
				   "pods \"%s\" is forbidden: no PriorityClass with name %s was found", name, pcname);
			return -1;
		}
	} else {
		struct pc_scan ps = { NULL, NULL };
		apis_store_each(s->rd_pcs, NULL, find_default_pc, &ps);
		pc = ps.found;
		if (pc)
			jset_str(spec, "priorityClassName", pc->name);
	}
	long long value = 0;
	char *policy = strdup("PreemptLowerPriority");
	if (!policy)
		return -1;
	if (pc) {
		cJSON *pco = apis_obj_parse(pc);
		value = jint(pco, "value", 0);
		const char *pp = jstr(pco, "preemptionPolicy");
		if (pp) {
			free(policy);
			policy = strdup(pp);
		}
		cJSON_Delete(pco);
		if (!policy)
			return -1;
	}
	const cJSON *given = cJSON_GetObjectItemCaseSensitive(spec, "priority");
	if (cJSON_IsNumber(given) && (long long)given->valuedouble != value) {
		res_status(x, 403, "Forbidden", details_of(w->rd, name, NULL),
			   "pods \"%s\" is forbidden: the integer value of priority (%lld) must not be provided in pod "
			   "spec; priority admission controller computed %lld from the given PriorityClass name",
			   name, (long long)given->valuedouble, value);
		free(policy);
		return -1;
	}
	jset(spec, "priority", cJSON_CreateNumber((double)value));
	const char *given_pp = jstr(spec, "preemptionPolicy");
	if (!given_pp || !pc)
		jset_str(spec, "preemptionPolicy", policy);
	free(policy);
	/* status */
	cJSON *status = jobj(pod, "status");
	jset_str(status, "phase", "Pending");
	bool any_req, guaranteed;
	pod_ready_resources(containers, &any_req, &guaranteed);
	jset_str(status, "qosClass", !any_req ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable");
	return 0;
}

static int admit_priority_class(struct wctx *w, cJSON *obj, const char *name, struct apis_obj *cur, struct res *x)
{
	if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(obj, "value"))) {
		res_invalid1(x, w->rd, name, "FieldValueRequired", "value", "Required value");
		return -1;
	}
	if (!jstr(obj, "preemptionPolicy"))
		jset_str(obj, "preemptionPolicy", "PreemptLowerPriority");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, "globalDefault"))) {
		struct pc_scan ps = { name, NULL };
		apis_store_each(w->rd, NULL, find_default_pc, &ps);
		if (ps.found && ps.found != cur) {
			char m[512];
			snprintf(m, sizeof m,
				 "Forbidden: PriorityClass %s is already marked as default. Only one default can exist",
				 ps.found->name);
			res_invalid1(x, w->rd, name, "FieldValueForbidden", "globalDefault", m);
			return -1;
		}
	}
	return 0;
}

/* Validates a custom resource against its schema (prunes, defaults). unknown: strict list. */
static int validate_custom(struct wctx *w, cJSON *obj, const char *name, struct res *x)
{
	if (!w->rd->schema)
		return 0;
	cJSON *unknown = w->strict ? cJSON_CreateArray() : NULL;
	cJSON *causes = apis_schema_apply(w->rd->schema, obj, unknown);
	if (unknown && cJSON_GetArraySize(unknown) > 0) {
		char *m = apis_strict_error_message(unknown);
		res_status(x, 400, "BadRequest", NULL, "%s", m ? m : "strict decoding error");
		free(m);
		cJSON_Delete(unknown);
		cJSON_Delete(causes);
		return -1;
	}
	cJSON_Delete(unknown);
	if (causes) {
		res_invalid(x, w->rd, name, causes);
		return -1;
	}
	return 0;
}

/* First duplicated key in obj (cJSON keeps both copies), as a dotted path; false if none. */
static bool find_duplicate(const cJSON *obj, char *path, size_t n, size_t len)
{
	if (!cJSON_IsObject(obj) && !cJSON_IsArray(obj))
		return false;
	for (const cJSON *a = obj->child; a; a = a->next) {
		if (cJSON_IsObject(obj) && a->string) {
			for (const cJSON *b = a->next; b; b = b->next)
				if (b->string && !strcmp(a->string, b->string)) {
					snprintf(path + len, n - len, "%s%s", len ? "." : "", a->string);
					return true;
				}
		}
		size_t l2 = len;
		if (cJSON_IsObject(obj) && a->string) {
			int k = snprintf(path + len, n - len, "%s%s", len ? "." : "", a->string);
			if (k < 0 || (size_t)k >= n - len)
				return false;
			l2 = len + (size_t)k;
		}
		if (find_duplicate(a, path, n, l2))
			return true;
		path[len] = 0;
	}
	return false;
}

static int strict_builtin(struct wctx *w, const cJSON *obj, struct res *x)
{
	if (w->strict) {
		char path[512] = "";
		if (find_duplicate(obj, path, sizeof path, 0)) {
			res_status(x, 400, "BadRequest", NULL, "strict decoding error: duplicate field \"%s\"", path);
			return -1;
		}
	}
	if (!w->strict || (w->rd->flags & APIS_RD_CUSTOM))
		return 0;
	cJSON *unknown = cJSON_CreateArray();
	if (!unknown)
		return 0;
	if (apis_builtin_unknown_fields(w->rd->group, w->rd->kind, obj, unknown) > 0) {
		char *m = apis_strict_error_message(unknown);
		res_status(x, 400, "BadRequest", NULL, "%s", m ? m : "strict decoding error");
		free(m);
		cJSON_Delete(unknown);
		return -1;
	}
	cJSON_Delete(unknown);
	return 0;
}

static void crd_set_status(cJSON *crd)
{
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(crd, "spec");
	cJSON *status = jobj(crd, "status");
	if (!status)
		return;
	cJSON *names = cJSON_GetObjectItemCaseSensitive(spec, "names");
	cJSON *acc = names ? cJSON_Duplicate(names, true) : cJSON_CreateObject();
	if (acc && !jstr(acc, "singular") && jstr(acc, "kind")) {
		char lower[256];
		const char *k = jstr(acc, "kind");
		size_t i = 0;
		for (; k[i] && i + 1 < sizeof lower; i++)
			lower[i] = (char)tolower((unsigned char)k[i]);
		lower[i] = 0;
		jset_str(acc, "singular", lower);
	}
	if (acc && !jstr(acc, "listKind") && jstr(acc, "kind")) {
		char lk[300];
		snprintf(lk, sizeof lk, "%sList", jstr(acc, "kind"));
		jset_str(acc, "listKind", lk);
	}
	jset(status, "acceptedNames", acc);
	char now[32];
	apis_now_rfc3339(now);
	cJSON *conds = cJSON_CreateArray();
	const char *types[] = { "NamesAccepted", "Established" };
	const char *reasons[] = { "NoConflicts", "InitialNamesAccepted" };
	const char *msgs[] = { "no conflicts found", "the initial names have been accepted" };
	for (int i = 0; conds && i < 2; i++) {
		cJSON *c = cJSON_CreateObject();
		if (!c)
			continue;
		cJSON_AddStringToObject(c, "type", types[i]);
		cJSON_AddStringToObject(c, "status", "True");
		cJSON_AddStringToObject(c, "lastTransitionTime", now);
		cJSON_AddStringToObject(c, "reason", reasons[i]);
		cJSON_AddStringToObject(c, "message", msgs[i]);
		cJSON_AddItemToArray(conds, c);
	}
	jset(status, "conditions", conds);
	cJSON *stored = cJSON_CreateArray();
	const cJSON *v;
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(spec, "versions"))
	{
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage")) && jstr(v, "name"))
			cJSON_AddItemToArray(stored, cJSON_CreateString(jstr(v, "name")));
	}
	jset(status, "storedVersions", stored);
}

/* Kind-specific admission shared by create and update. cur = NULL on create. */
static int admit(struct wctx *w, cJSON *obj, const char *name, struct apis_obj *cur, struct res *x)
{
	struct apis_server *s = w->s;
	struct apis_rdef *rd = w->rd;
	if (strict_builtin(w, obj, x) < 0)
		return -1;
	if (rd->flags & APIS_RD_CUSTOM)
		return validate_custom(w, obj, name, x);
	if (rd == s->rd_pods && !cur)
		return admit_pod(w, obj, name, x);
	if (rd == s->rd_pcs)
		return admit_priority_class(w, obj, name, cur, x);
	/* StorageClass defaults (pkg/apis/storage/v1/defaults.go) */
	if (rd == s->rd_scs && !cur) {
		if (!jstr(obj, "volumeBindingMode"))
			jset_str(obj, "volumeBindingMode", "Immediate");
		if (!jstr(obj, "reclaimPolicy"))
			jset_str(obj, "reclaimPolicy", "Delete");
	}
	if (rd == s->rd_namespaces && !cur) {
		cJSON *st = jobj(obj, "status");
		jset_str(st, "phase", "Active");
		cJSON *spec = jobj(obj, "spec");
		cJSON *fin = cJSON_CreateArray();
		cJSON_AddItemToArray(fin, cJSON_CreateString("kubernetes"));
		jset(spec, "finalizers", fin);
	}
	if (rd == s->rd_crds) {
		char *err = NULL;
		/* validate by applying to a scratch registry entry only when committing */
		const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
		if (!spec) {
			res_invalid1(x, rd, name, "FieldValueRequired", "spec", "Required value");
			return -1;
		}
		if (!w->dry_run) {
			if (apis_registry_crd_apply(s, obj, &err) < 0) {
				const char *colon = err ? strstr(err, ": ") : NULL;
				char field[256] = "spec";
				if (colon && (size_t)(colon - err) < sizeof field) {
					memcpy(field, err, (size_t)(colon - err));
					field[colon - err] = 0;
				}
				res_invalid1(x, rd, name, "FieldValueInvalid", field, colon ? colon + 2 : err ? err : "invalid");
				free(err);
				return -1;
			}
			crd_set_status(obj);
		}
	}
	if (!strcmp(rd->plural, "deployments") || !strcmp(rd->plural, "replicasets")) {
		cJSON *spec = jobj(obj, "spec");
		if (!cJSON_GetObjectItemCaseSensitive(spec, "replicas"))
			jset(spec, "replicas", cJSON_CreateNumber(1));
	}
	return 0;
}

static void gen_name(struct apis_server *s, const char *prefix, char *out, size_t n)
{
	char pre[300];
	snprintf(pre, sizeof pre, "%s", prefix);
	if (strlen(pre) > 58)
		pre[58] = 0;
	char suf[6];
	pthread_mutex_lock(&s->fault_mu);
	static uint64_t st;
	if (!st)
		st = (uint64_t)time(NULL) * 2654435761u;
	for (int i = 0; i < 5; i++)
		suf[i] = GEN_CHARS[apis_rand_next(&st) % (sizeof GEN_CHARS - 1)];
	pthread_mutex_unlock(&s->fault_mu);
	suf[5] = 0;
	snprintf(out, n, "%s%s", pre, suf);
}

/* Creates obj (consumed) in w->rd. Caller holds the write lock. */
static struct apis_obj *do_create(struct wctx *w, cJSON *obj, struct res *x)
{
	struct apis_server *s = w->s;
	struct apis_rdef *rd = w->rd;
	cJSON *md = jobj(obj, "metadata");
	if (!md) {
		cJSON_Delete(obj);
		res_status(x, 500, "InternalError", NULL, "out of memory");
		return NULL;
	}
	set_type_meta(obj, rd);
	const char *name = jstr(md, "name");
	const char *gen = jstr(md, "generateName");
	char namebuf[320];
	if (rd->namespaced) {
		const char *bns = jstr(md, "namespace");
		if (bns && *bns && strcmp(bns, w->ns)) {
			res_status(x, 400, "BadRequest", NULL,
				   "the namespace of the provided object does not match the namespace sent on the request");
			cJSON_Delete(obj);
			return NULL;
		}
		jset_str(md, "namespace", w->ns);
		struct apis_obj *nso = apis_store_get(s->rd_namespaces, NULL, w->ns);
		if (!nso) {
			res_status(x, 404, "NotFound", details_of(s->rd_namespaces, w->ns, NULL),
				   "namespaces \"%s\" not found", w->ns);
			cJSON_Delete(obj);
			return NULL;
		}
		if (nso->deleting) {
			res_status(x, 403, "Forbidden", details_of(rd, name, NULL),
				   "%s \"%s\" is forbidden: unable to create new content in namespace %s because it is "
				   "being terminated",
				   rd->group_resource, name ? name : "", w->ns);
			cJSON_Delete(obj);
			return NULL;
		}
	} else {
		jdel(md, "namespace");
	}
	if ((!name || !*name) && gen && *gen) {
		for (int tries = 0; tries < 8; tries++) {
			gen_name(s, gen, namebuf, sizeof namebuf);
			if (!apis_store_get(rd, w->ns, namebuf))
				break;
		}
		jset_str(md, "name", namebuf);
		name = jstr(md, "name");
	}
	if (!name || !*name) {
		res_invalid1(x, rd, "", "FieldValueRequired", "metadata.name", "Required value: name or generateName is required");
		cJSON_Delete(obj);
		return NULL;
	}
	if (!(resource_allows_any_name(rd) ? valid_path_segment(name) : valid_dns_subdomain(name))) {
		char m[600];
		snprintf(m, sizeof m,
			 "Invalid value: \"%.300s\": a lowercase RFC 1123 subdomain must consist of lower case "
			 "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
			 name);
		res_invalid1(x, rd, name, "FieldValueInvalid", "metadata.name", m);
		cJSON_Delete(obj);
		return NULL;
	}
	snprintf(namebuf, sizeof namebuf, "%s", name);
	name = namebuf;
	if (apis_store_get(rd, w->ns, name)) {
		res_status(x, 409, "AlreadyExists", details_of(rd, name, NULL), "%s \"%s\" already exists",
			   rd->group_resource, name);
		cJSON_Delete(obj);
		return NULL;
	}
	char uid[37], now[32];
	apis_uuid(uid);
	apis_now_rfc3339(now);
	jset_str(md, "uid", uid);
	jset_str(md, "creationTimestamp", now);
	jdel(md, "deletionTimestamp");
	jdel(md, "deletionGracePeriodSeconds");
	jdel(md, "resourceVersion");
	jdel(md, "generation");
	jdel(md, "selfLink");
	if (rd->flags & APIS_RD_GENERATION)
		jset(md, "generation", cJSON_CreateNumber(1));
	if (rd->flags & APIS_RD_RESET_STATUS)
		jdel(obj, "status");
	if (admit(w, obj, name, NULL, x) < 0) {
		cJSON_Delete(obj);
		return NULL;
	}
	if (w->dry_run) {
		res_json(x, 201, obj);
		cJSON_Delete(obj);
		return NULL;
	}
	struct apis_obj *o = apis_store_commit(s, rd, obj, NULL);
	if (!o) {
		res_status(x, 500, "InternalError", NULL, "out of memory storing %s \"%s\"", rd->group_resource, name);
		return NULL;
	}
	res_obj(x, 201, o);
	return o;
}

/* ---------------- update ---------------- */

enum upd_mode { UPD_MAIN, UPD_STATUS, UPD_INTERNAL };

static bool content_differs(const cJSON *a, const cJSON *b, bool skip_status, bool spec_only)
{
	if (spec_only)
		return !cJSON_Compare(cJSON_GetObjectItemCaseSensitive(a, "spec"), cJSON_GetObjectItemCaseSensitive(b, "spec"),
				      true) &&
		       (cJSON_GetObjectItemCaseSensitive(a, "spec") || cJSON_GetObjectItemCaseSensitive(b, "spec"));
	const cJSON *pairs[2][2] = { { a, b }, { b, a } };
	for (int p = 0; p < 2; p++) {
		const cJSON *it;
		cJSON_ArrayForEach(it, pairs[p][0])
		{
			const char *k = it->string;
			if (!k || !strcmp(k, "metadata") || !strcmp(k, "kind") || !strcmp(k, "apiVersion") ||
			    (skip_status && !strcmp(k, "status")))
				continue;
			const cJSON *o = cJSON_GetObjectItemCaseSensitive(pairs[p][1], k);
			if (!o || !cJSON_Compare(it, o, true))
				return true;
		}
	}
	return false;
}

static bool str_in_array(const cJSON *arr, const char *s)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
	{
		if (cJSON_IsString(it) && !strcmp(it->valuestring, s))
			return true;
	}
	return false;
}

static bool pod_awaits_kubelet(struct apis_server *s, struct apis_rdef *rd, const cJSON *obj)
{
	if (rd != s->rd_pods || !s->opts.simulate_kubelet)
		return false;
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	return jint(md, "deletionGracePeriodSeconds", 0) > 0 &&
	       jstr(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "nodeName") != NULL;
}

/* The tail of a write whose new content nobj (consumed, admitted) differs from cur's: the
 * dry-run answer, the removal of a deleting object that lost its last finalizer, or the commit. */
static struct apis_obj *write_changed(struct wctx *w, struct apis_obj *cur, cJSON *nobj, struct res *x)
{
	struct apis_server *s = w->s;
	struct apis_rdef *rd = w->rd;
	if (w->dry_run) {
		res_json(x, 200, nobj);
		cJSON_Delete(nobj);
		return NULL;
	}
	const cJSON *fins = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nobj, "metadata"), "finalizers");
	bool no_fins = !cJSON_IsArray(fins) || !fins->child;
	bool removed = cur->deleting && no_fins && !pod_awaits_kubelet(s, rd, nobj) && rd != s->rd_namespaces;
	struct apis_obj *o = removed ? apis_store_remove(s, rd, cur, nobj) : apis_store_commit(s, rd, nobj, cur);
	if (!o) {
		res_status(x, 500, "InternalError", NULL, "out of memory");
		return NULL;
	}
	res_obj(x, 200, o);
	return o;
}

/* The common tail of update, patch and controller writes. nobj consumed. */
static struct apis_obj *write_update(struct wctx *w, struct apis_obj *cur, cJSON *nobj, enum upd_mode mode,
				     struct res *x)
{
	struct apis_rdef *rd = w->rd;
	cJSON *old = apis_obj_parse(cur);
	if (!old || !cJSON_IsObject(nobj)) {
		cJSON_Delete(old);
		cJSON_Delete(nobj);
		res_status(x, 500, "InternalError", NULL, "cannot decode stored %s \"%s\"", rd->group_resource, cur->name);
		return NULL;
	}
	cJSON *omd = cJSON_GetObjectItemCaseSensitive(old, "metadata");
	if (mode == UPD_STATUS) {
		/* only .status changes */
		cJSON *ns = cJSON_DetachItemFromObjectCaseSensitive(nobj, "status");
		cJSON_Delete(nobj);
		nobj = cJSON_Duplicate(old, true);
		if (!nobj) {
			cJSON_Delete(ns);
			cJSON_Delete(old);
			res_status(x, 500, "InternalError", NULL, "out of memory");
			return NULL;
		}
		jdel(nobj, "status");
		if (ns)
			cJSON_AddItemToObject(nobj, "status", ns);
	} else if (mode == UPD_MAIN && (rd->flags & APIS_RD_STATUS)) {
		jdel(nobj, "status");
		cJSON *os = cJSON_GetObjectItemCaseSensitive(old, "status");
		if (os)
			cJSON_AddItemToObject(nobj, "status", cJSON_Duplicate(os, true));
	}
	set_type_meta(nobj, rd);
	cJSON *md = jobj(nobj, "metadata");
	const char *keep[] = { "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
			       "generation", "namespace", "name", "resourceVersion" };
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
		cJSON *ov = cJSON_GetObjectItemCaseSensitive(omd, keep[i]);
		if (ov)
			jset(md, keep[i], cJSON_Duplicate(ov, true));
		else
			jdel(md, keep[i]);
	}
	/* no new finalizers once deleting */
	if (cur->deleting && mode != UPD_INTERNAL) {
		const cJSON *nf = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
		const cJSON *of = cJSON_GetObjectItemCaseSensitive(omd, "finalizers");
		const cJSON *f;
		cJSON_ArrayForEach(f, nf)
		{
			if (cJSON_IsString(f) && !str_in_array(of, f->valuestring)) {
				char m[512];
				snprintf(m, sizeof m,
					 "Forbidden: no new finalizers can be added if the object is being deleted, found "
					 "new finalizers []string{\"%s\"}",
					 f->valuestring);
				res_invalid1(x, rd, cur->name, "FieldValueForbidden", "metadata.finalizers", m);
				cJSON_Delete(old);
				cJSON_Delete(nobj);
				return NULL;
			}
		}
	}
	if (mode != UPD_INTERNAL && admit(w, nobj, cur->name, cur, x) < 0) {
		cJSON_Delete(old);
		cJSON_Delete(nobj);
		return NULL;
	}
	/* generation */
	if (rd->flags & APIS_RD_GENERATION) {
		bool custom = rd->flags & APIS_RD_CUSTOM;
		bool changed = content_differs(old, nobj, (rd->flags & APIS_RD_STATUS) != 0, !custom);
		if (changed)
			jset(md, "generation", cJSON_CreateNumber((double)(jint(omd, "generation", 0) + 1)));
	}
	if (cJSON_Compare(old, nobj, true)) {
		cJSON_Delete(old);
		cJSON_Delete(nobj);
		res_obj(x, 200, cur);
		return cur;
	}
	cJSON_Delete(old);
	return write_changed(w, cur, nobj, x);
}

struct apis_obj *apis_create_internal(struct apis_server *s, struct apis_rdef *rd, const char *ns, cJSON *obj)
{
	struct wctx w = { .s = s, .rd = rd, .ns = ns };
	struct res x = {0};
	struct apis_obj *o = do_create(&w, obj, &x);
	free(x.body);
	return o;
}

struct apis_obj *apis_update_internal(struct apis_server *s, struct apis_rdef *rd, struct apis_obj *cur, cJSON *obj)
{
	struct wctx w = { .s = s, .rd = rd, .ns = cur->ns };
	struct res x = {0};
	struct apis_obj *o = write_update(&w, cur, obj, UPD_INTERNAL, &x);
	free(x.body);
	return o;
}

/* ---------------- delete ---------------- */

static void delete_custom_resources(struct apis_server *s, const char *crd_name);

bool apis_delete_splice = true;

struct apis_obj *apis_delete_object(struct apis_server *s, struct apis_rdef *rd, struct apis_obj *cur,
				    const char *propagation, long long grace, bool *removed)
{
	*removed = false;
	const char *extra_fin = NULL;
	if (propagation && !strcmp(propagation, "Orphan"))
		extra_fin = "orphan";
	else if (propagation && !strcmp(propagation, "Foreground"))
		extra_fin = "foregroundDeletion";
	bool is_ns = rd == s->rd_namespaces;
	size_t md_at, md_len, at, len, sp_at, sp_len;
	/* The common removal (no finalizers, no propagation finalizer to add, no grace to wait) is
	 * prev's bytes with a new resourceVersion: found in the JSON, without a tree (a victim's
	 * DELETE parsed and printed the whole pod). Under the simulated kubelet only pods without
	 * spec.nodeName (no grace then) take this path. */
	bool kubelet_grace = rd == s->rd_pods && s->opts.simulate_kubelet &&
			     (!apis_json_member(cur->json, cur->json_len, "spec", &sp_at, &sp_len) ||
			      apis_json_member(cur->json + sp_at, sp_len, "nodeName", &at, &len));
	if (apis_delete_splice && cur->rd == rd && !extra_fin && !is_ns && !kubelet_grace &&
	    apis_json_member(cur->json, cur->json_len, "metadata", &md_at, &md_len) &&
	    !apis_json_member(cur->json + md_at, md_len, "finalizers", &at, &len) &&
	    apis_json_member(cur->json + md_at, md_len, "resourceVersion", &at, &len) && cur->json[md_at + at] == '"') {
		struct apis_obj *o = apis_store_remove_spliced(s, cur, md_at + at, len);
		*removed = o != NULL;
		if (o && rd == s->rd_crds)
			delete_custom_resources(s, o->name);
		return o;
	}
	cJSON *obj = apis_obj_parse(cur);
	if (!obj)
		return NULL;
	cJSON *md = jobj(obj, "metadata");
	cJSON *fins = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
	bool has_fins = cJSON_IsArray(fins) && fins->child;
	bool graceful = false;
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	if (rd == s->rd_pods && s->opts.simulate_kubelet && jstr(spec, "nodeName")) {
		const char *phase = jstr(cJSON_GetObjectItemCaseSensitive(obj, "status"), "phase");
		if (grace < 0)
			grace = jint(spec, "terminationGracePeriodSeconds", 30);
		graceful = grace > 0 && !(phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")));
	}
	if (!has_fins && !extra_fin && !graceful && !is_ns) {
		/* obj is cur's content (jobj above only adds a metadata the store's objects always
		 * have): the DELETED state without parsing cur a second time */
		struct apis_obj *o = apis_store_remove(s, rd, cur, obj);
		*removed = o != NULL;
		if (o && rd == s->rd_crds)
			delete_custom_resources(s, o->name);
		return o;
	}
	if (cur->deleting) {
		/* already terminating: only a new propagation finalizer is recorded */
		if (!extra_fin || str_in_array(fins, extra_fin)) {
			cJSON_Delete(obj);
			return cur;
		}
	}
	if (extra_fin && !str_in_array(fins, extra_fin)) {
		if (!cJSON_IsArray(fins)) {
			jdel(md, "finalizers");
			fins = cJSON_AddArrayToObject(md, "finalizers");
		}
		cJSON_AddItemToArray(fins, cJSON_CreateString(extra_fin));
	}
	if (!cur->deleting) {
		char ts[32];
		time_t t = time(NULL) + (graceful ? grace : 0);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
		jset_str(md, "deletionTimestamp", ts);
		jset(md, "deletionGracePeriodSeconds", cJSON_CreateNumber(graceful ? (double)grace : 0));
		if ((rd->flags & APIS_RD_GENERATION) && jint(md, "generation", 0) > 0)
			jset(md, "generation", cJSON_CreateNumber((double)(jint(md, "generation", 0) + 1)));
		if (is_ns) {
			cJSON *st = jobj(obj, "status");
			jset_str(st, "phase", "Terminating");
		}
	}
	return apis_store_commit(s, rd, obj, cur);
}

struct cr_collect {
	struct apis_obj **v;
	size_t n, cap;
};

static void collect_obj(void *u, struct apis_obj *o)
{
	struct cr_collect *c = u;
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 64;
		struct apis_obj **nv = realloc(c->v, nc * sizeof *nv);
		if (!nv)
			return;
		c->v = nv;
		c->cap = nc;
	}
	apis_obj_ref(o);
	c->v[c->n++] = o;
}

static void delete_custom_resources(struct apis_server *s, const char *crd_name)
{
	for (struct apis_rdef *rd = s->rdefs; rd; rd = rd->next) {
		if (!(rd->flags & APIS_RD_CUSTOM) || !rd->crd_name || strcmp(rd->crd_name, crd_name) || !rd->served)
			continue;
		struct cr_collect c = {0};
		apis_store_each(rd, NULL, collect_obj, &c);
		for (size_t i = 0; i < c.n; i++) {
			apis_store_remove(s, rd, c.v[i], NULL);
			apis_obj_unref(c.v[i]);
		}
		free(c.v);
	}
	apis_registry_crd_remove(s, crd_name);
}

/* ---------------- request context ---------------- */

struct ctx {
	struct apis_server *s;
	struct apis_conn *c;
	struct apis_req *r;
	struct apis_rdef *rd;
	struct apis_rdef *alias; /* the CRD version requested when it is not the stored one */
	const char *ns;   /* "" for cluster scope / all namespaces */
	const char *name; /* NULL for collection */
	const char *sub;
};

/* Decodes the request body as JSON (or YAML). Responds 400 and returns NULL on failure. */
static cJSON *decode_body(struct ctx *q)
{
	struct apis_req *r = q->r;
	if (!r->body || !r->body_len) {
		apis_respond_status(q->c, 400, "BadRequest", "the request body is empty", NULL);
		return NULL;
	}
	cJSON *obj = NULL;
	const char *ct = r->content_type ? r->content_type : "application/json";
	if (strstr(ct, "protobuf")) {
		/* kubectl's create generators send protobuf for built-in kinds */
		char *err = NULL;
		obj = apis_proto_decode((const unsigned char *)r->body, r->body_len, &err);
		if (!obj) {
			char m[400];
			snprintf(m, sizeof m, "the body of the request was in an unknown format: %.300s", err ? err : "protobuf");
			free(err);
			apis_respond_status(q->c, 415, "UnsupportedMediaType", m, NULL);
			return NULL;
		}
	} else if (strstr(ct, "yaml")) {
		char *err = NULL;
		obj = kube_yaml_parse_one(r->body, r->body_len, &err);
		if (!obj) {
			char m[600];
			snprintf(m, sizeof m, "the body of the request was in an unknown format: %.500s", err ? err : "invalid YAML");
			free(err);
			apis_respond_status(q->c, 400, "BadRequest", m, NULL);
			return NULL;
		}
		free(err);
	} else {
		obj = cJSON_ParseWithLength(r->body, r->body_len);
		if (!obj) {
			apis_respond_status(q->c, 400, "BadRequest",
					    "the object provided is unrecognized: invalid JSON in the request body", NULL);
			return NULL;
		}
	}
	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		apis_respond_status(q->c, 400, "BadRequest", "the object provided is unrecognized: not a JSON object", NULL);
		return NULL;
	}
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	if (md && !cJSON_IsObject(md)) {
		cJSON_Delete(obj);
		apis_respond_status(q->c, 400, "BadRequest",
				    "the object provided is unrecognized: metadata must be an object", NULL);
		return NULL;
	}
	const char *kind = jstr(obj, "kind");
	if (kind && *kind && q->rd && strcmp(kind, q->rd->kind) && !q->sub && !(q->rd->flags & APIS_RD_VIRTUAL) &&
	    strcmp(kind, "DeleteOptions")) {
		char m[600];
		snprintf(m, sizeof m, "the kind in the data (%.200s) does not match the expected kind (%.200s)", kind,
			 q->rd->kind);
		cJSON_Delete(obj);
		apis_respond_status(q->c, 400, "BadRequest", m, NULL);
		return NULL;
	}
	return obj;
}

static bool dry_run(const struct apis_req *r)
{
	const char *d = apis_query(r, "dryRun");
	return d && !strcmp(d, "All");
}

static bool strict(const struct apis_req *r)
{
	const char *f = apis_query(r, "fieldValidation");
	return f && !strcmp(f, "Strict");
}

/* ---------------- get / list ---------------- */

struct matcher {
	struct kube_label_selector *ls;
	struct kube_field_selector *fs;
	const char *ns;
};

struct field_check {
	const struct apis_rdef *rd;
	const char *bad;
};

static int check_field(void *u, const char *field)
{
	struct field_check *fc = u;
	if (!strcmp(field, "metadata.name") || !strcmp(field, "metadata.namespace"))
		return 0;
	if (!strcmp(field, "spec.host") && fc->rd->fields == NULL)
		goto bad;
	if (!strcmp(field, "spec.host"))
		field = "spec.nodeName";
	for (int i = 0; i < fc->rd->nfields; i++)
		if (!strcmp(fc->rd->fields[i], field))
			return 0;
bad:
	fc->bad = field;
	return 1;
}

/* Parses selectors; responds 400 and returns -1 on error. */
static int matcher_init(struct ctx *q, struct matcher *m)
{
	memset(m, 0, sizeof *m);
	m->ns = q->ns;
	const char *ls = apis_query(q->r, "labelSelector");
	const char *fs = apis_query(q->r, "fieldSelector");
	char *err = NULL;
	if (ls && *ls && kube_label_selector_parse(ls, &m->ls, &err) < 0) {
		char msg[600];
		snprintf(msg, sizeof msg, "unable to parse requirement: %.500s", err ? err : "invalid label selector");
		free(err);
		apis_respond_status(q->c, 400, "BadRequest", msg, NULL);
		return -1;
	}
	if (fs && *fs) {
		if (kube_field_selector_parse(fs, &m->fs, &err) < 0) {
			char msg[600];
			snprintf(msg, sizeof msg, "invalid field selector: %.500s", err ? err : "parse error");
			free(err);
			kube_label_selector_free(m->ls);
			apis_respond_status(q->c, 400, "BadRequest", msg, NULL);
			return -1;
		}
		struct field_check fc = { q->rd, NULL };
		if (kube_field_selector_each_field(m->fs, check_field, &fc) != 0) {
			char msg[600];
			snprintf(msg, sizeof msg, "field label not supported: %.500s", fc.bad);
			kube_label_selector_free(m->ls);
			kube_field_selector_free(m->fs);
			apis_respond_status(q->c, 400, "BadRequest", msg, NULL);
			return -1;
		}
	}
	return 0;
}

static void matcher_free(struct matcher *m)
{
	kube_label_selector_free(m->ls);
	kube_field_selector_free(m->fs);
}

static bool matcher_match(const struct matcher *m, const struct apis_obj *o)
{
	if (m->ns && *m->ns && strcmp(o->ns, m->ns))
		return false;
	if (m->ls && !kube_label_selector_matches_json(m->ls, o->labels))
		return false;
	if (m->fs && !kube_field_selector_matches(m->fs, apis_obj_field, o))
		return false;
	return true;
}

struct list_collect {
	const struct matcher *m;
	struct cr_collect c;
};

static void list_collect_fn(void *u, struct apis_obj *o)
{
	struct list_collect *lc = u;
	if (matcher_match(lc->m, o))
		collect_obj(&lc->c, o);
}

static int cmp_key(const void *a, const void *b)
{
	const struct apis_obj *x = *(struct apis_obj *const *)a, *y = *(struct apis_obj *const *)b;
	return strcmp(x->key, y->key);
}

static enum apis_include_object include_object(const struct apis_req *r)
{
	const char *v = apis_query(r, "includeObject");
	return v ? apis_include_object_parse(v) : APIS_INCLUDE_METADATA;
}

static void respond_table(struct ctx *q, struct apis_obj **objs, size_t n, const char *rv, const char *cont)
{
	cJSON *items = cJSON_CreateArray();
	for (size_t i = 0; items && i < n; i++) {
		cJSON *it = apis_obj_parse(objs[i]);
		if (it)
			cJSON_AddItemToArray(items, it);
	}
	cJSON *lm = cJSON_CreateObject();
	if (lm && rv)
		cJSON_AddStringToObject(lm, "resourceVersion", rv);
	if (lm && cont)
		cJSON_AddStringToObject(lm, "continue", cont);
	cJSON *t = apis_table_build(q->rd->group, q->rd->plural, items, q->alias ? q->alias->crd_version : q->rd->crd_version,
				    include_object(q->r), true, lm,
				    time(NULL));
	cJSON_Delete(items);
	cJSON_Delete(lm);
	if (!t) {
		apis_respond_status(q->c, 500, "InternalError", "cannot build table", NULL);
		return;
	}
	char *txt = cJSON_PrintUnformatted(t);
	cJSON_Delete(t);
	if (!txt) {
		apis_respond_status(q->c, 500, "InternalError", "out of memory", NULL);
		return;
	}
	apis_respond(q->c, 200, "application/json;as=Table;v=v1;g=meta.k8s.io", txt, strlen(txt), NULL);
	free(txt);
}

static void handle_get(struct ctx *q)
{
	struct apis_server *s = q->s;
	pthread_rwlock_rdlock(&s->lock);
	struct apis_obj *o = apis_store_get(q->rd, q->ns, q->name);
	apis_obj_ref(o);
	pthread_rwlock_unlock(&s->lock);
	if (!o) {
		struct res x = {0};
		res_not_found(&x, q->rd, q->name);
		send_res(q->c, &x);
		return;
	}
	if (accept_table(q->r)) {
		char rv[32];
		snprintf(rv, sizeof rv, "%llu", (unsigned long long)o->rv);
		respond_table(q, &o, 1, rv, NULL);
	} else {
		apis_respond(q->c, 200, "application/json", o->json, o->json_len, NULL);
	}
	apis_obj_unref(o);
}

static char *continue_token(uint64_t rv, const char *key)
{
	cJSON *t = cJSON_CreateObject();
	if (!t)
		return NULL;
	cJSON_AddStringToObject(t, "v", "meta.k8s.io/v1");
	cJSON_AddNumberToObject(t, "rv", (double)rv);
	cJSON_AddStringToObject(t, "start", key);
	char *txt = cJSON_PrintUnformatted(t);
	cJSON_Delete(t);
	if (!txt)
		return NULL;
	char *b = apis_b64((unsigned char *)txt, strlen(txt));
	free(txt);
	return b;
}

static void handle_watch(struct ctx *q, struct matcher *m);

struct snap_ev {
	struct apis_event *e;
};

static int cmp_snap(const void *a, const void *b)
{
	const struct apis_event *x = ((const struct snap_ev *)a)->e, *y = ((const struct snap_ev *)b)->e;
	int c = strcmp(x->obj->key, y->obj->key);
	return c ? c : (x->rv < y->rv ? -1 : x->rv > y->rv);
}

static const struct snap_ev *snap_find(const struct snap_ev *v, size_t n, const char *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* first entry with this key (entries sorted by key, rv) */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(v[mid].e->obj->key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(v[lo].e->obj->key, key) ? &v[lo] : NULL;
}

struct snap_cur {
	struct list_collect *lc;
	const struct snap_ev *v;
	size_t n;
};

static void snap_cur_fn(void *u, struct apis_obj *o)
{
	struct snap_cur *sc = u;
	if (!snap_find(sc->v, sc->n, o->key))
		list_collect_fn(sc->lc, o);
}

/* The objects of rd matching lc->m as they were at resourceVersion at, from the current state
 * and the events after it. Caller holds s->lock. -1 when the history no longer reaches back. */
static int snapshot_collect(struct apis_server *s, struct apis_rdef *rd, uint64_t at, struct list_collect *lc)
{
	struct snap_ev *v = NULL;
	size_t n = 0, cap = 0;
	pthread_mutex_lock(&s->ring_mu);
	uint64_t oldest = s->ring_head > s->ring_cap ? s->ring_head - s->ring_cap : 0;
	if (oldest > 0 && s->ring[oldest % s->ring_cap]->rv > at + 1) {
		pthread_mutex_unlock(&s->ring_mu);
		return -1;
	}
	for (uint64_t seq = oldest; seq < s->ring_head; seq++) {
		struct apis_event *e = s->ring[seq % s->ring_cap];
		if (e->rv <= at || e->obj->rd != rd)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct snap_ev *nv = realloc(v, nc * sizeof *nv);
			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		atomic_fetch_add(&e->refs, 1);
		v[n++].e = e;
	}
	pthread_mutex_unlock(&s->ring_mu);
	if (n)
		qsort(v, n, sizeof *v, cmp_snap);
	struct snap_cur sc = { lc, v, n };
	apis_store_each(rd, lc->m->ns, snap_cur_fn, &sc);
	for (size_t i = 0; i < n; i++) {
		/* the first change after the snapshot carries the state at the snapshot */
		if ((i == 0 || strcmp(v[i - 1].e->obj->key, v[i].e->obj->key)) && v[i].e->prev)
			list_collect_fn(lc, v[i].e->prev);
	}
	for (size_t i = 0; i < n; i++)
		apis_event_unref(v[i].e);
	free(v);
	return 0;
}

static void handle_list(struct ctx *q)
{
	struct apis_server *s = q->s;
	struct apis_req *r = q->r;
	struct matcher m;
	if (matcher_init(q, &m) < 0)
		return;
	bool w;
	if (apis_query_bool(q->c, r, "watch", &w) < 0) {
		matcher_free(&m);
		return;
	}
	if (w) {
		handle_watch(q, &m);
		matcher_free(&m);
		return;
	}
	long long limit = 0;
	const char *ls = apis_query(r, "limit");
	if (ls && *ls) {
		char *end;
		limit = strtoll(ls, &end, 10);
		if (*end || limit < 0)
			limit = 0;
	}
	char *start = NULL;
	uint64_t snap_rv = 0;
	const char *cont = apis_query(r, "continue");
	if (cont && *cont) {
		size_t n;
		unsigned char *raw = apis_unb64(cont, &n);
		cJSON *t = raw ? cJSON_ParseWithLength((char *)raw, n) : NULL;
		free(raw);
		const char *st = jstr(t, "start");
		if (!st) {
			cJSON_Delete(t);
			matcher_free(&m);
			apis_respond_status(q->c, 400, "BadRequest", "continue key is not valid: malformed token", NULL);
			return;
		}
		start = strdup(st);
		const cJSON *trv = cJSON_GetObjectItemCaseSensitive(t, "rv");
		if (cJSON_IsNumber(trv) && trv->valuedouble > 0)
			snap_rv = (uint64_t)trv->valuedouble;
		cJSON_Delete(t);
	}
	const char *rvm = apis_query(r, "resourceVersionMatch");
	const char *rvq = apis_query(r, "resourceVersion");
	if (!snap_rv && rvm && !strcmp(rvm, "Exact") && rvq && *rvq) {
		char *end;
		unsigned long long v = strtoull(rvq, &end, 10);
		if (*end || v == 0) {
			matcher_free(&m);
			free(start);
			apis_respond_status(q->c, 400, "BadRequest", "resourceVersionMatch=Exact needs a non-zero resourceVersion", NULL);
			return;
		}
		snap_rv = v;
	}
	struct list_collect lc = { .m = &m };
	pthread_rwlock_rdlock(&s->lock);
	uint64_t rv = s->rv;
	bool expired = false;
	if (snap_rv && snap_rv < rv) {
		/* later pages come from the first page's snapshot, rebuilt from the watch history */
		expired = snapshot_collect(s, q->rd, snap_rv, &lc) < 0;
		rv = snap_rv;
	} else {
		apis_store_each(q->rd, q->ns, list_collect_fn, &lc);
	}
	pthread_rwlock_unlock(&s->lock);
	if (expired) {
		for (size_t i = 0; i < lc.c.n; i++)
			apis_obj_unref(lc.c.v[i]);
		free(lc.c.v);
		free(start);
		matcher_free(&m);
		char msg[256];
		if (cont && *cont)
			snprintf(msg, sizeof msg, "The provided continue parameter is too old to display a consistent list "
						  "result. You can start a new list without the continue parameter.");
		else
			snprintf(msg, sizeof msg, "too old resource version: %llu", (unsigned long long)snap_rv);
		apis_respond_status(q->c, 410, "Expired", msg, NULL);
		return;
	}
	if (lc.c.n)
		qsort(lc.c.v, lc.c.n, sizeof *lc.c.v, cmp_key);
	size_t from = 0;
	if (start)
		while (from < lc.c.n && strcmp(lc.c.v[from]->key, start) <= 0)
			from++;
	size_t to = lc.c.n;
	char *next = NULL;
	if (limit > 0 && (size_t)limit < to - from) {
		to = from + (size_t)limit;
		next = continue_token(rv, lc.c.v[to - 1]->key);
	}
	char rvs[32];
	snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)rv);
	if (accept_table(r)) {
		respond_table(q, lc.c.v + from, to - from, rvs, next);
	} else {
		struct apis_buf b = {0};
		apis_buf_printf(&b, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%s\"",
				q->rd->list_kind, q->c->av_to ? q->c->av_to : q->rd->api_version, rvs);
		if (next)
			apis_buf_printf(&b, ",\"continue\":\"%s\",\"remainingItemCount\":%zu", next, lc.c.n - to);
		apis_buf_str(&b, "},\"items\":[");
		for (size_t i = from; i < to; i++) {
			if (i > from)
				apis_buf_add(&b, ",", 1);
			apis_buf_add_object(&b, q->c, lc.c.v[i]->json, lc.c.v[i]->json_len);
		}
		apis_buf_str(&b, "]}");
		if (b.oom)
			apis_respond_status(q->c, 500, "InternalError", "out of memory", NULL);
		else
			apis_respond(q->c, 200, "application/json", b.p, b.len, NULL);
		apis_buf_free(&b);
	}
	for (size_t i = 0; i < lc.c.n; i++)
		apis_obj_unref(lc.c.v[i]);
	free(lc.c.v);
	free(next);
	free(start);
	matcher_free(&m);
}

/* ---------------- watch ---------------- */

struct watcher {
	struct ctx *q;
	struct matcher *m;
	bool table;
	bool table_cols_sent;
	enum apis_include_object inc;
	struct apis_buf out;
};

static void watch_encode(struct watcher *wt, const char *type, const struct apis_obj *o)
{
	if (!wt->table) {
		apis_buf_printf(&wt->out, "{\"type\":\"%s\",\"object\":", type);
		apis_buf_add_object(&wt->out, wt->q->c, o->json, o->json_len);
		apis_buf_add(&wt->out, "}\n", 2);
		return;
	}
	cJSON *items = cJSON_CreateArray();
	cJSON *it = apis_obj_parse(o);
	if (!items || !it) {
		cJSON_Delete(items);
		cJSON_Delete(it);
		return;
	}
	cJSON_AddItemToArray(items, it);
	cJSON *lm = cJSON_CreateObject();
	char rv[32];
	snprintf(rv, sizeof rv, "%llu", (unsigned long long)o->rv);
	if (lm)
		cJSON_AddStringToObject(lm, "resourceVersion", rv);
	cJSON *t = apis_table_build(wt->q->rd->group, wt->q->rd->plural, items,
				    wt->q->alias ? wt->q->alias->crd_version : wt->q->rd->crd_version, wt->inc,
				    !wt->table_cols_sent, lm, time(NULL));
	cJSON_Delete(items);
	cJSON_Delete(lm);
	if (!t)
		return;
	wt->table_cols_sent = true;
	char *txt = cJSON_PrintUnformatted(t);
	cJSON_Delete(t);
	if (!txt)
		return;
	apis_buf_printf(&wt->out, "{\"type\":\"%s\",\"object\":", type);
	apis_buf_str(&wt->out, txt);
	apis_buf_add(&wt->out, "}\n", 2);
	free(txt);
}

static void watch_event(struct watcher *wt, const struct apis_event *e)
{
	if (e->obj->rd != wt->q->rd)
		return;
	bool now = matcher_match(wt->m, e->obj);
	bool before = e->prev && matcher_match(wt->m, e->prev);
	switch (e->type) {
	case APIS_EV_ADDED:
		if (now)
			watch_encode(wt, "ADDED", e->obj);
		break;
	case APIS_EV_MODIFIED:
		if (now && before)
			watch_encode(wt, "MODIFIED", e->obj);
		else if (now)
			watch_encode(wt, "ADDED", e->obj);
		else if (before)
			watch_encode(wt, "DELETED", e->obj);
		break;
	case APIS_EV_DELETED:
		if (now || before)
			watch_encode(wt, "DELETED", e->obj);
		break;
	}
}

static void watch_bookmark(struct watcher *wt, uint64_t rv, bool initial_end)
{
	apis_buf_printf(&wt->out,
			"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{"
			"\"resourceVersion\":\"%llu\"%s}}}\n",
			wt->q->rd->kind, wt->q->c->av_to ? wt->q->c->av_to : wt->q->rd->api_version, (unsigned long long)rv,
			initial_end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" : "");
}

static int watch_flush(struct watcher *wt)
{
	if (wt->out.oom)
		return -1;
	int rc = apis_stream_chunk(wt->q->c, wt->out.p, wt->out.len);
	wt->out.len = 0;
	if (wt->out.cap > (1 << 20)) {
		apis_buf_free(&wt->out);
	}
	return rc;
}

static void ts_add_ms(struct timespec *t, long ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

#define WATCH_BATCH 1024
#define WATCH_COALESCE 64      /* fewer pending events than this: wait a moment for more */
#define WATCH_COALESCE_US 500
#define WATCH_COALESCE_MIN_HISTORY 4096 /* a tiny history must not overflow while we wait */

/* A watch request's query: where to start (resourceVersion, sendInitialEvents), bookmarks and the
 * timeout (capped by the close-watch fault). */
struct watch_opts {
	uint64_t from_rv;
	bool from_given, initial_events, bookmarks;
	long timeout_ms;
};

/* Parses the watch query; responds 400 and returns -1 on an invalid resourceVersion or boolean. */
static int parse_watch_opts(struct ctx *q, struct watch_opts *o)
{
	struct apis_req *r = q->r;
	const char *rvq = apis_query(r, "resourceVersion");
	memset(o, 0, sizeof *o);
	if (rvq && *rvq && strcmp(rvq, "0")) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(rvq, &end, 10);
		if (*end || errno) {
			char msg[300];
			snprintf(msg, sizeof msg, "invalid resource version: %.200s", rvq);
			apis_respond_status(q->c, 400, "BadRequest", msg, NULL);
			return -1;
		}
		o->from_rv = v;
		o->from_given = true;
	}
	if (apis_query_bool(q->c, r, "sendInitialEvents", &o->initial_events) < 0)
		return -1;
	if (o->initial_events)
		o->from_given = false;
	if (apis_query_bool(q->c, r, "allowWatchBookmarks", &o->bookmarks) < 0)
		return -1;
	o->timeout_ms = 1800 * 1000L;
	const char *ts = apis_query(r, "timeoutSeconds");
	if (ts && *ts) {
		long v = strtol(ts, NULL, 10);
		if (v > 0 && v < 86400)
			o->timeout_ms = v * 1000L;
	}
	long fault = q->s->opts.fault_close_watch_every;
	if (fault > 0 && fault * 1000L < o->timeout_ms)
		o->timeout_ms = fault * 1000L;
	return 0;
}

/* 504 ResourceVersionTooLarge: only this server issues resourceVersions, so one from the future
 * never arrives. */
static void respond_rv_too_large(struct ctx *q, uint64_t from_rv, uint64_t cur)
{
	cJSON *d = cJSON_CreateObject();
	cJSON *causes = d ? cJSON_AddArrayToObject(d, "causes") : NULL;
	cJSON *c1 = cJSON_CreateObject();
	if (c1) {
		cJSON_AddStringToObject(c1, "reason", "ResourceVersionTooLarge");
		cJSON_AddStringToObject(c1, "message", "Too large resource version");
		if (causes)
			cJSON_AddItemToArray(causes, c1);
		else
			cJSON_Delete(c1);
	}
	if (d)
		cJSON_AddNumberToObject(d, "retryAfterSeconds", 1);
	char msg[200];
	snprintf(msg, sizeof msg, "Timeout: Too large resource version: %llu, current: %llu", (unsigned long long)from_rv,
		 (unsigned long long)cur);
	apis_respond_status(q->c, 504, "Timeout", msg, d);
}

/* Where a watch starts in the event ring. Called with s->ring_mu held: from a resourceVersion,
 * the first event after it (or *oldest_rv and true when it fell out of the history); without
 * one, the current objects go to init as the initial ADDED events. */
static bool watch_start_locked(struct ctx *q, const struct watch_opts *o, struct list_collect *init, uint64_t *cursor,
			       uint64_t *oldest_rv)
{
	struct apis_server *s = q->s;
	*cursor = s->ring_head;
	if (!o->from_given) {
		apis_store_each(q->rd, q->ns, list_collect_fn, init);
		return false;
	}
	uint64_t oldest = s->ring_head > s->ring_cap ? s->ring_head - s->ring_cap : 0;
	if (oldest > 0) {
		*oldest_rv = s->ring[oldest % s->ring_cap]->rv;
		if (o->from_rv + 1 < *oldest_rv)
			return true;
	}
	uint64_t lo = oldest, hi = s->ring_head;
	while (lo < hi) { /* first event with rv > from_rv */
		uint64_t mid = lo + (hi - lo) / 2;
		if (s->ring[mid % s->ring_cap]->rv <= o->from_rv)
			lo = mid + 1;
		else
			hi = mid;
	}
	*cursor = lo;
	return false;
}

/* The initial ADDED events in key order, then the initial-events-end bookmark when asked for.
 * -1 when the client is gone. */
static int watch_send_initial(struct watcher *wt, struct list_collect *init, bool initial_events, uint64_t last_rv)
{
	if (init->c.n) {
		qsort(init->c.v, init->c.n, sizeof *init->c.v, cmp_key);
		for (size_t i = 0; i < init->c.n; i++) {
			watch_encode(wt, "ADDED", init->c.v[i]);
			if (wt->out.len > 256 * 1024 && watch_flush(wt) < 0)
				return -1;
		}
	}
	if (initial_events)
		watch_bookmark(wt, last_rv, true);
	if (wt->out.len && watch_flush(wt) < 0)
		return -1;
	return 0;
}

/* Waits (s->ring_mu held) until events of the watcher's resource follow *cursor, the deadline
 * passes, a bookmark is due or a second went by (so the caller checks the peer). Other
 * resources' events are skipped (*cursor moves past them); only an event of ww->rd wakes it. */
static void watch_wait_locked(struct apis_server *s, struct apis_watch_wait *ww, uint64_t *cursor,
			      const struct timespec *deadline, const struct timespec *next_bookmark, bool bookmarks)
{
	struct timespec now;
	while (!apis_ring_pending_locked(ww->rd, *cursor) && !atomic_load(&s->stopping)) {
		*cursor = s->ring_head; /* nothing of ww->rd in between */
		clock_gettime(CLOCK_REALTIME, &now);
		if (!ts_before(&now, deadline))
			break;
		struct timespec wake = now;
		ts_add_ms(&wake, 1000);
		if (ts_before(deadline, &wake))
			wake = *deadline;
		if (bookmarks && ts_before(next_bookmark, &wake))
			wake = *next_bookmark;
		if (bookmarks && !ts_before(&now, next_bookmark))
			break;
		ww->waiting = true;
		int rc = pthread_cond_timedwait(&ww->cond, &s->ring_mu, &wake);
		ww->waiting = false;
		if (rc != 0)
			break; /* timeout: check the peer, bookmarks, deadline */
		if (s->ring_cap >= WATCH_COALESCE_MIN_HISTORY && s->ring_head - *cursor < WATCH_COALESCE &&
		    !atomic_load(&s->stopping)) {
			/* let a burst of writes accumulate: one chunk (one syscall) for many events */
			pthread_mutex_unlock(&s->ring_mu);
			usleep(WATCH_COALESCE_US);
			pthread_mutex_lock(&s->ring_mu);
		}
	}
}

#define WATCH_SCAN (64 * WATCH_BATCH) /* events looked at per take, most of them another resource's */

/* Takes up to WATCH_BATCH events of rd from *cursor (s->ring_mu held; each gets a reference) and
 * moves *last_rv to what this watcher has been sent (or skipped as another resource's). Returns
 * -1 when the watcher fell behind the history: an event of rd it did not take was dropped. */
static int watch_take_locked(struct apis_server *s, const struct apis_rdef *rd, uint64_t *cursor,
			     struct apis_event **batch, size_t *n, uint64_t *last_rv)
{
	uint64_t oldest = s->ring_head > s->ring_cap ? s->ring_head - s->ring_cap : 0;
	*n = 0;
	if (*cursor < oldest) {
		if (apis_ring_lost_locked(s, rd, *cursor))
			return -1;
		*cursor = oldest; /* only other resources' events were dropped */
	}
	const struct apis_event *seen = NULL;
	for (size_t scanned = 0; *cursor < s->ring_head && *n < WATCH_BATCH && scanned < WATCH_SCAN; scanned++) {
		struct apis_event *e = s->ring[*cursor % s->ring_cap];
		(*cursor)++;
		seen = e;
		if (e->obj->rd != rd)
			continue;
		atomic_fetch_add(&e->refs, 1);
		batch[(*n)++] = e;
	}
	/* a bookmark may only claim what this watcher has been sent */
	if (seen)
		*last_rv = seen->rv;
	else if (*cursor == s->ring_head && s->ring_head > 0)
		*last_rv = s->ring[(s->ring_head - 1) % s->ring_cap]->rv;
	return 0;
}

/* Streams events from cursor until the timeout, the server stops or the client goes away, with
 * periodic bookmarks when asked for. Returns true when the stream failed (closed without the
 * terminating chunk: the client re-watches). */
static bool watch_serve(struct watcher *wt, struct apis_watch_wait *ww, const struct watch_opts *o, uint64_t cursor,
			uint64_t last_rv)
{
	struct ctx *q = wt->q;
	struct apis_server *s = q->s;
	struct timespec deadline, next_bookmark, now;
	clock_gettime(CLOCK_REALTIME, &deadline);
	next_bookmark = deadline;
	ts_add_ms(&deadline, o->timeout_ms);
	ts_add_ms(&next_bookmark, s->opts.bookmark_interval_ms);
	struct apis_event *batch[WATCH_BATCH];
	while (!atomic_load(&s->stopping)) {
		size_t n = 0;
		pthread_mutex_lock(&s->ring_mu);
		watch_wait_locked(s, ww, &cursor, &deadline, &next_bookmark, o->bookmarks);
		int rc = watch_take_locked(s, q->rd, &cursor, batch, &n, &last_rv);
		pthread_mutex_unlock(&s->ring_mu);
		if (rc < 0) {
			klog_info(2, "Closing slow watcher", " resource=%s", q->rd->plural);
			return true;
		}
		for (size_t i = 0; i < n; i++) {
			watch_event(wt, batch[i]);
			apis_event_unref(batch[i]);
		}
		clock_gettime(CLOCK_REALTIME, &now);
		if (o->bookmarks && !ts_before(&now, &next_bookmark)) {
			if (!wt->out.len)
				watch_bookmark(wt, last_rv, false);
			next_bookmark = now;
			ts_add_ms(&next_bookmark, s->opts.bookmark_interval_ms);
		}
		if (wt->out.len) {
			if (watch_flush(wt) < 0)
				return true;
		} else if (n == 0 && apis_conn_peer_gone(q->c)) {
			return true;
		}
		if (!ts_before(&now, &deadline))
			break;
	}
	return false;
}

static void handle_watch(struct ctx *q, struct matcher *m)
{
	struct apis_server *s = q->s;
	struct watch_opts o;
	if (parse_watch_opts(q, &o) < 0)
		return;
	struct watcher wt = { .q = q, .m = m, .table = accept_table(q->r), .inc = include_object(q->r) };
	struct list_collect init = { .m = m };
	struct apis_watch_wait ww = { .rd = q->rd };
	uint64_t cursor, last_rv, oldest_rv = 0;
	bool expired, failed = false;
	pthread_rwlock_rdlock(&s->lock);
	if (o.from_given && o.from_rv > s->rv) {
		uint64_t cur = s->rv;
		pthread_rwlock_unlock(&s->lock);
		respond_rv_too_large(q, o.from_rv, cur);
		return;
	}
	pthread_mutex_lock(&s->ring_mu);
	last_rv = s->rv;
	expired = watch_start_locked(q, &o, &init, &cursor, &oldest_rv);
	apis_watch_wait_add_locked(s, &ww);
	pthread_mutex_unlock(&s->ring_mu);
	pthread_rwlock_unlock(&s->lock);

	const char *ctype = wt.table ? "application/json;as=Table;v=v1;g=meta.k8s.io" : "application/json";
	if (apis_stream_begin(q->c, ctype) < 0)
		goto done;
	if (expired) {
		apis_buf_printf(&wt.out,
				"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
				"\"status\":\"Failure\",\"message\":\"too old resource version: %llu (%llu)\","
				"\"reason\":\"Expired\",\"code\":410}}\n",
				(unsigned long long)o.from_rv, (unsigned long long)(oldest_rv ? oldest_rv - 1 : 0));
		watch_flush(&wt);
		apis_stream_end(q->c);
		goto done;
	}
	if (watch_send_initial(&wt, &init, o.initial_events, last_rv) < 0)
		goto done;
	failed = watch_serve(&wt, &ww, &o, cursor, last_rv);
	if (!failed)
		apis_stream_end(q->c);
	else
		q->c->close_after = true;
done:
	pthread_mutex_lock(&s->ring_mu);
	apis_watch_wait_remove_locked(s, &ww);
	pthread_mutex_unlock(&s->ring_mu);
	q->c->streaming = false;
	for (size_t i = 0; i < init.c.n; i++)
		apis_obj_unref(init.c.v[i]);
	free(init.c.v);
	apis_buf_free(&wt.out);
	if (failed || atomic_load(&s->stopping))
		q->c->close_after = true;
}

/* ---------------- create / update / patch / delete handlers ---------------- */

static void handle_create(struct ctx *q)
{
	struct apis_server *s = q->s;
	cJSON *obj = decode_body(q);
	if (!obj)
		return;
	struct wctx w = { .s = s, .rd = q->rd, .ns = q->ns, .dry_run = dry_run(q->r), .strict = strict(q->r) };
	struct res x = {0};
	pthread_rwlock_wrlock(&s->lock);
	do_create(&w, obj, &x);
	pthread_rwlock_unlock(&s->lock);
	send_res(q->c, &x);
}

static void handle_update(struct ctx *q, enum upd_mode mode)
{
	struct apis_server *s = q->s;
	cJSON *obj = decode_body(q);
	if (!obj)
		return;
	struct res x = {0};
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *bname = jstr(md, "name"), *bns = jstr(md, "namespace");
	if (bname && strcmp(bname, q->name)) {
		cJSON_Delete(obj);
		res_status(&x, 400, "BadRequest", NULL, "the name of the object (%s) does not match the name on the URL (%s)",
			   bname, q->name);
		send_res(q->c, &x);
		return;
	}
	if (q->rd->namespaced && bns && *bns && strcmp(bns, q->ns)) {
		cJSON_Delete(obj);
		res_status(&x, 400, "BadRequest", NULL,
			   "the namespace of the provided object does not match the namespace sent on the request");
		send_res(q->c, &x);
		return;
	}
	const char *rv = jstr(md, "resourceVersion");
	struct wctx w = { .s = s, .rd = q->rd, .ns = q->ns, .dry_run = dry_run(q->r), .strict = strict(q->r) };
	pthread_rwlock_wrlock(&s->lock);
	struct apis_obj *cur = apis_store_get(q->rd, q->ns, q->name);
	if (!cur) {
		res_not_found(&x, q->rd, q->name);
		cJSON_Delete(obj);
	} else if (rv && *rv && strtoull(rv, NULL, 10) != cur->rv) {
		res_conflict(&x, q->rd, q->name);
		cJSON_Delete(obj);
	} else if ((!rv || !*rv) && (q->rd->flags & APIS_RD_CUSTOM)) {
		res_invalid1(&x, q->rd, q->name, "FieldValueInvalid", "metadata.resourceVersion",
			     "Invalid value: 0x0: must be specified for an update");
		cJSON_Delete(obj);
	} else {
		write_update(&w, cur, obj, mode, &x);
	}
	pthread_rwlock_unlock(&s->lock);
	send_res(q->c, &x);
}

static const char *base_ctype(const char *ct, char *buf, size_t n)
{
	if (!ct)
		return "";
	size_t i = 0;
	while (ct[i] && ct[i] != ';' && ct[i] != ' ' && i + 1 < n) {
		buf[i] = ct[i];
		i++;
	}
	buf[i] = 0;
	return buf;
}

bool apis_status_patch_fast = true;

/* True for a PATCH of pods/status whose body is {"status": ...} and nothing else: what the
 * scheduler sends (a victim's DisruptionTarget condition, a pod's PodScheduled condition and
 * nominatedNodeName; pkg/scheduler/util/utils.go PatchPodStatus). */
static bool pod_status_only_patch(const struct ctx *q, enum upd_mode mode, const cJSON *patch)
{
	const cJSON *m = patch ? patch->child : NULL;
	return apis_status_patch_fast && mode == UPD_STATUS && q->rd == q->s->rd_pods && cJSON_IsObject(patch) && m &&
	       !m->next && m->string && !strcmp(m->string, "status");
}

/* Where a status patch of cur may edit the stored bytes instead of printing a tree: a plain
 * write (not strict, not a dry run, not of a deleting pod: their paths need the tree) of an
 * object printed as set_type_meta leaves it, with status its last member. Sets the spans of
 * status's value and of metadata.resourceVersion's (quoted). */
static bool status_spliceable(const struct wctx *w, const struct apis_obj *cur, struct apis_splice *st,
			      struct apis_splice *rv)
{
	const struct apis_rdef *rd = w->rd;
	char head[256];
	int hl = snprintf(head, sizeof head, "{\"apiVersion\":\"%s\",\"kind\":\"%s\",", rd->api_version, rd->kind);
	static const char *const keys[] = { "status", "metadata" }; /* one pass over the pod */
	size_t at[2], len[2];
	if (w->strict || w->dry_run || cur->deleting || hl <= 0 || (size_t)hl >= sizeof head ||
	    cur->json_len < (size_t)hl || memcmp(cur->json, head, (size_t)hl) ||
	    !apis_json_members(cur->json, cur->json_len, keys, 2, at, len) || !len[0] || !len[1] ||
	    at[0] + len[0] + 1 != cur->json_len ||
	    !apis_json_member(cur->json + at[1], len[1], "resourceVersion", &rv->at, &rv->del) ||
	    cur->json[at[1] + rv->at] != '"')
		return false;
	st->at = at[0];
	st->del = len[0];
	rv->at += at[1];
	rv->ins = NULL;
	return true;
}

/* A status-only patch (pod_status_only_patch) of cur, merge (smp false) or strategic: it can
 * change nothing outside status, and a status write keeps the rest of the stored object. So the
 * patch is applied to a copy of the stored status alone and only the two statuses are compared,
 * where handle_patch and write_update would parse the pod twice, copy it whole twice (the
 * strategic patch's copy, the status write's) and compare the whole trees. The new object is the
 * stored one with the patched status at the end (as write_update's UPD_STATUS builds it): when
 * status is already last (status_spliceable), the stored bytes with the status value and the
 * resourceVersion replaced, which is what printing that tree gives, without parsing or printing
 * the rest of the pod. The same bytes, answers and errors (test_server.c compares). */
static void patch_pod_status_only(struct wctx *w, struct apis_obj *cur, const cJSON *patch, bool smp, struct res *x)
{
	struct apis_rdef *rd = w->rd;
	struct apis_splice sp[2];
	bool bytes = status_spliceable(w, cur, &sp[1], &sp[0]);
	cJSON *nobj = NULL, *old_status = NULL;
	if (bytes) {
		old_status = cJSON_ParseWithLength(cur->json + sp[1].at, sp[1].del);
		bytes = old_status != NULL;
	}
	if (!bytes) {
		nobj = apis_obj_parse(cur);
		if (!cJSON_IsObject(nobj)) {
			cJSON_Delete(nobj);
			res_status(x, 500, "InternalError", NULL, "cannot decode stored object");
			return;
		}
		old_status = cJSON_DetachItemFromObjectCaseSensitive(nobj, "status");
	}
	cJSON *wrap = cJSON_CreateObject();
	cJSON *copy = old_status ? cJSON_Duplicate(old_status, true) : NULL;
	bool ok = wrap && (!old_status || copy);
	if (ok && copy && !cJSON_AddItemToObject(wrap, "status", copy))
		ok = false;
	else if (ok)
		copy = NULL; /* wrap's now */
	if (!ok) {
		cJSON_Delete(copy);
		cJSON_Delete(wrap);
		cJSON_Delete(old_status);
		cJSON_Delete(nobj);
		res_status(x, 500, "InternalError", NULL, "out of memory");
		return;
	}
	char *err = NULL;
	int rc = smp ? apis_strategic_merge_patch(&wrap, patch, rd->kind, &err) : apis_merge_patch(&wrap, patch);
	if (rc < 0 || !cJSON_IsObject(wrap)) {
		res_status(x, 422, "Invalid", NULL, "the server rejected our request due to an error in our request: %s",
			   err ? err : "patch failed");
		free(err);
		cJSON_Delete(wrap);
		cJSON_Delete(old_status);
		cJSON_Delete(nobj);
		return;
	}
	free(err);
	cJSON *new_status = cJSON_DetachItemFromObjectCaseSensitive(wrap, "status");
	cJSON_Delete(wrap);
	/* write_update compares the whole trees after set_type_meta: the stored kind and apiVersion
	 * take part in that comparison (status_spliceable found them as set_type_meta sets them) */
	const char *kind = bytes ? rd->kind : jstr(nobj, "kind"), *av = bytes ? rd->api_version : jstr(nobj, "apiVersion");
	bool same = kind && av && !strcmp(kind, rd->kind) && !strcmp(av, rd->api_version) &&
		    (old_status ? new_status && cJSON_Compare(old_status, new_status, true) : !new_status);
	cJSON_Delete(old_status);
	if (bytes && (same || new_status)) {
		/* admit is a no-op here (a pod update that is not strict) */
		if (same) {
			cJSON_Delete(new_status);
			res_obj(x, 200, cur);
			return;
		}
		char *txt = cJSON_PrintUnformatted(new_status);
		sp[1].ins = txt;
		sp[1].ins_len = txt ? strlen(txt) : 0;
		struct apis_obj *o = txt ? apis_store_commit_member_spliced(w->s, cur, sp, 2, "status", new_status) : NULL;
		free(txt);
		cJSON_Delete(new_status);
		if (!o) {
			res_status(x, 500, "InternalError", NULL, "out of memory");
			return;
		}
		res_obj(x, 200, o);
		return;
	}
	if (bytes) { /* status removed: the tree path */
		nobj = apis_obj_parse(cur);
		if (!cJSON_IsObject(nobj)) {
			cJSON_Delete(nobj);
			res_status(x, 500, "InternalError", NULL, "cannot decode stored object");
			return;
		}
		jdel(nobj, "status");
	}
	if (new_status)
		cJSON_AddItemToObject(nobj, "status", new_status);
	set_type_meta(nobj, rd);
	if (admit(w, nobj, cur->name, cur, x) < 0) {
		cJSON_Delete(nobj);
		return;
	}
	if (same) {
		cJSON_Delete(nobj);
		res_obj(x, 200, cur);
		return;
	}
	write_changed(w, cur, nobj, x);
}

static void handle_patch(struct ctx *q, enum upd_mode mode)
{
	struct apis_server *s = q->s;
	char ctb[128];
	const char *ct = base_ctype(q->r->content_type, ctb, sizeof ctb);
	enum { P_MERGE, P_JSON, P_SMP, P_APPLY } kind;
	if (!strcmp(ct, "application/merge-patch+json"))
		kind = P_MERGE;
	else if (!strcmp(ct, "application/json-patch+json"))
		kind = P_JSON;
	else if (!strcmp(ct, "application/strategic-merge-patch+json"))
		kind = P_SMP;
	else if (!strcmp(ct, "application/apply-patch+yaml") || !strcmp(ct, "application/apply-patch+json"))
		kind = P_APPLY;
	else {
		char m[300];
		snprintf(m, sizeof m, "the body of the request was in an unknown format - accepted media types include: "
				      "application/json-patch+json, application/merge-patch+json, "
				      "application/apply-patch+yaml, application/strategic-merge-patch+json");
		apis_respond_status(q->c, 415, "UnsupportedMediaType", m, NULL);
		return;
	}
	if (kind == P_SMP && (q->rd->flags & APIS_RD_CUSTOM)) {
		apis_respond_status(q->c, 415, "UnsupportedMediaType",
				    "the body of the request was in an unknown format - accepted media types include: "
				    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
				    NULL);
		return;
	}
	if (!q->r->body || !q->r->body_len) {
		apis_respond_status(q->c, 400, "BadRequest", "the request body is empty", NULL);
		return;
	}
	cJSON *patch = NULL;
	if (kind == P_APPLY) {
		char *err = NULL;
		patch = kube_yaml_parse_one(q->r->body, q->r->body_len, &err);
		free(err);
	} else {
		patch = cJSON_ParseWithLength(q->r->body, q->r->body_len);
	}
	if (!patch || (kind == P_JSON ? !cJSON_IsArray(patch) : !cJSON_IsObject(patch))) {
		cJSON_Delete(patch);
		apis_respond_status(q->c, 400, "BadRequest",
				    kind == P_JSON ? "the server rejected our request due to an error in our request: "
						     "invalid JSON patch document"
						   : "the server rejected our request due to an error in our request: "
						     "invalid patch document",
				    NULL);
		return;
	}
	struct wctx w = { .s = s, .rd = q->rd, .ns = q->ns, .dry_run = dry_run(q->r), .strict = strict(q->r) };
	struct res x = {0};
	pthread_rwlock_wrlock(&s->lock);
	struct apis_obj *cur = apis_store_get(q->rd, q->ns, q->name);
	if (!cur) {
		if (kind == P_APPLY && mode == UPD_MAIN) {
			cJSON *md = jobj(patch, "metadata");
			jset_str(md, "name", q->name);
			do_create(&w, patch, &x);
			patch = NULL;
			if (x.code == 201)
				x.code = 201;
		} else {
			res_not_found(&x, q->rd, q->name);
		}
		goto out;
	}
	if ((kind == P_MERGE || kind == P_SMP) && pod_status_only_patch(q, mode, patch)) {
		patch_pod_status_only(&w, cur, patch, kind == P_SMP, &x);
		goto out;
	}
	cJSON *obj = apis_obj_parse(cur);
	if (!obj) {
		res_status(&x, 500, "InternalError", NULL, "cannot decode stored object");
		goto out;
	}
	char *err = NULL;
	int rc = 0;
	switch (kind) {
	case P_MERGE:
	case P_APPLY:
		rc = apis_merge_patch(&obj, patch);
		break;
	case P_JSON:
		rc = apis_json_patch(&obj, patch, &err);
		break;
	case P_SMP:
		rc = apis_strategic_merge_patch(&obj, patch, q->rd->kind, &err);
		break;
	}
	if (rc < 0 || !cJSON_IsObject(obj)) {
		res_status(&x, 422, "Invalid", NULL, "the server rejected our request due to an error in our request: %s",
			   err ? err : "patch failed");
		free(err);
		cJSON_Delete(obj);
		goto out;
	}
	free(err);
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *rv = jstr(md, "resourceVersion");
	const char *pname = jstr(md, "name");
	if (rv && *rv && strtoull(rv, NULL, 10) != cur->rv) {
		res_conflict(&x, q->rd, q->name);
		cJSON_Delete(obj);
	} else if (pname && strcmp(pname, q->name)) {
		res_status(&x, 400, "BadRequest", NULL, "the name of the object (%s) does not match the name on the URL (%s)",
			   pname, q->name);
		cJSON_Delete(obj);
	} else {
		write_update(&w, cur, obj, mode, &x);
	}
out:
	pthread_rwlock_unlock(&s->lock);
	cJSON_Delete(patch);
	send_res(q->c, &x);
}

struct del_opts {
	char *propagation;
	long long grace;
	char *pre_uid, *pre_rv;
};

static int parse_delete_opts(struct ctx *q, struct del_opts *d)
{
	memset(d, 0, sizeof *d);
	d->grace = -1;
	const char *pp = apis_query(q->r, "propagationPolicy");
	if (pp)
		d->propagation = strdup(pp);
	const char *gp = apis_query(q->r, "gracePeriodSeconds");
	if (gp && *gp)
		d->grace = strtoll(gp, NULL, 10);
	if (q->r->body && q->r->body_len) {
		cJSON *b = cJSON_ParseWithLength(q->r->body, q->r->body_len);
		if (!cJSON_IsObject(b)) {
			cJSON_Delete(b);
			free(d->propagation);
			apis_respond_status(q->c, 400, "BadRequest", "the DeleteOptions in the request body are malformed", NULL);
			return -1;
		}
		const char *p = jstr(b, "propagationPolicy");
		if (p) {
			free(d->propagation);
			d->propagation = strdup(p);
		}
		const cJSON *orphan = cJSON_GetObjectItemCaseSensitive(b, "orphanDependents");
		if (cJSON_IsTrue(orphan) && !p) {
			free(d->propagation);
			d->propagation = strdup("Orphan");
		}
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(b, "gracePeriodSeconds");
		if (cJSON_IsNumber(g))
			d->grace = (long long)g->valuedouble;
		const cJSON *pre = cJSON_GetObjectItemCaseSensitive(b, "preconditions");
		if (jstr(pre, "uid"))
			d->pre_uid = strdup(jstr(pre, "uid"));
		if (jstr(pre, "resourceVersion"))
			d->pre_rv = strdup(jstr(pre, "resourceVersion"));
		cJSON_Delete(b);
	}
	if (d->propagation && strcmp(d->propagation, "Orphan") && strcmp(d->propagation, "Foreground") &&
	    strcmp(d->propagation, "Background")) {
		char m[300];
		snprintf(m, sizeof m, "propagationPolicy: Unsupported value: \"%.100s\"", d->propagation);
		free(d->propagation);
		free(d->pre_uid);
		free(d->pre_rv);
		apis_respond_status(q->c, 400, "BadRequest", m, NULL);
		return -1;
	}
	return 0;
}

static void del_opts_free(struct del_opts *d)
{
	free(d->propagation);
	free(d->pre_uid);
	free(d->pre_rv);
}

static void handle_delete(struct ctx *q)
{
	struct apis_server *s = q->s;
	struct del_opts d;
	if (parse_delete_opts(q, &d) < 0)
		return;
	struct res x = {0};
	pthread_rwlock_wrlock(&s->lock);
	struct apis_obj *cur = apis_store_get(q->rd, q->ns, q->name);
	if (!cur) {
		res_not_found(&x, q->rd, q->name);
	} else if ((d.pre_uid && strcmp(d.pre_uid, cur->uid)) ||
		   (d.pre_rv && strtoull(d.pre_rv, NULL, 10) != cur->rv)) {
		res_status(&x, 409, "Conflict", details_of(q->rd, q->name, NULL),
			   "Operation cannot be fulfilled on %s \"%s\": Precondition failed: %s", q->rd->group_resource,
			   q->name, d.pre_uid && strcmp(d.pre_uid, cur->uid) ? "UID in precondition does not match" : "ResourceVersion in precondition does not match");
	} else if (dry_run(q->r)) {
		res_obj(&x, 200, cur);
	} else {
		bool removed;
		struct apis_obj *o = apis_delete_object(s, q->rd, cur, d.propagation, d.grace, &removed);
		if (!o)
			res_status(&x, 500, "InternalError", NULL, "out of memory");
		else
			res_obj(&x, 200, o);
	}
	pthread_rwlock_unlock(&s->lock);
	del_opts_free(&d);
	send_res(q->c, &x);
}

static void handle_delete_collection(struct ctx *q)
{
	struct apis_server *s = q->s;
	struct matcher m;
	if (matcher_init(q, &m) < 0)
		return;
	struct del_opts d;
	if (parse_delete_opts(q, &d) < 0) {
		matcher_free(&m);
		return;
	}
	struct apis_buf b = {0};
	struct list_collect lc = { .m = &m };
	pthread_rwlock_wrlock(&s->lock);
	apis_store_each(q->rd, q->ns, list_collect_fn, &lc);
	if (lc.c.n)
		qsort(lc.c.v, lc.c.n, sizeof *lc.c.v, cmp_key);
	apis_buf_printf(&b, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{},\"items\":[", q->rd->list_kind,
			q->rd->api_version);
	for (size_t i = 0; i < lc.c.n; i++) {
		bool removed;
		struct apis_obj *o = dry_run(q->r) ? lc.c.v[i]
						   : apis_delete_object(s, q->rd, lc.c.v[i], d.propagation, d.grace, &removed);
		if (!o)
			continue;
		if (i)
			apis_buf_add(&b, ",", 1);
		apis_buf_add(&b, o->json, o->json_len);
	}
	apis_buf_str(&b, "]}");
	pthread_rwlock_unlock(&s->lock);
	for (size_t i = 0; i < lc.c.n; i++)
		apis_obj_unref(lc.c.v[i]);
	free(lc.c.v);
	if (b.oom)
		apis_respond_status(q->c, 500, "InternalError", "out of memory", NULL);
	else
		apis_respond(q->c, 200, "application/json", b.p, b.len, NULL);
	apis_buf_free(&b);
	del_opts_free(&d);
	matcher_free(&m);
}

/* ---------------- pods/binding, pods/eviction ---------------- */

bool apis_binding_splice = true;

static int cmp_splice(const void *a, const void *b)
{
	const struct apis_splice *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* A binding of the usual shape without the pod's tree (parsing and printing the whole pod was
 * most of a binding's cost): no nodeName or schedulingGates in spec, no PodScheduled condition
 * yet, a node name printed as is. The edits are the bytes do_bind's tree edits would print: spec
 * gains nodeName at its end, status.conditions (or a new conditions member at the end of status)
 * gains the PodScheduled condition at its end, and the resourceVersion is the new one. Returns 0
 * (committed), 1 (another shape: the caller edits the tree) or -1 (out of memory). */
static int bind_spliced(struct apis_server *s, struct apis_obj *cur, const char *node)
{
	if (!apis_binding_splice)
		return 1;
	for (const unsigned char *p = (const unsigned char *)node; *p; p++)
		if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
			return 1; /* cJSON would escape it (or we would have to check UTF-8): the tree path */
	const char *j = cur->json;
	/* each object's members in one pass (a lookup per member rescanned metadata and spec) */
	static const char *const top_keys[] = { "metadata", "spec", "status" };
	static const char *const spec_keys[] = { "nodeName", "schedulingGates" };
	size_t at[3], len[3], sat[2], slens[2], rvat, rvlen, cat, clen;
	if (!apis_json_members(j, cur->json_len, top_keys, 3, at, len) || !len[0] || !len[1] || !len[2])
		return 1;
	const char *md = j + at[0], *spec = j + at[1], *st = j + at[2];
	size_t mlen = len[0], slen = len[1], stlen = len[2];
	if (*md != '{' || *spec != '{' || *st != '{')
		return 1;
	if (!apis_json_member(md, mlen, "resourceVersion", &rvat, &rvlen) || md[rvat] != '"' ||
	    !apis_json_members(spec, slen, spec_keys, 2, sat, slens) || slens[0] || slens[1])
		return 1;
	const char *rv = md + rvat;
	const char *conds = apis_json_member(st, stlen, "conditions", &cat, &clen) ? st + cat : NULL;
	if (conds) {
		if (*conds != '[')
			return 1;
		cJSON *arr = cJSON_ParseWithLength(conds, clen);
		bool usual = cJSON_IsArray(arr);
		const cJSON *it;
		cJSON_ArrayForEach(it, arr)
		{
			const char *t = jstr(it, "type");
			if (t && !strcmp(t, "PodScheduled"))
				usual = false;
		}
		cJSON_Delete(arr);
		if (!usual)
			return 1;
	}
	char now[32], cond[1024], nodeins[600];
	apis_now_rfc3339(now);
	int cn = snprintf(cond, sizeof cond, "%s%s{\"type\":\"PodScheduled\",\"lastTransitionTime\":\"%s\",\"status\":\"True\","
			  "\"lastProbeTime\":null}%s",
			  conds ? (clen > 2 ? "," : "") : (stlen > 2 ? "," : ""), conds ? "" : "\"conditions\":[", now,
			  conds ? "" : "]");
	int nn = snprintf(nodeins, sizeof nodeins, "%s\"nodeName\":\"%s\"", slen > 2 ? "," : "", node);
	if (cn < 0 || (size_t)cn >= sizeof cond || nn < 0 || (size_t)nn >= sizeof nodeins)
		return 1;
	struct apis_splice sp[3] = {
		{ .at = (size_t)(rv - j), .del = rvlen, .ins = NULL },
		{ .at = (size_t)(spec + slen - 1 - j), .ins = nodeins, .ins_len = (size_t)nn },
		{ .at = (size_t)((conds ? conds + clen : st + stlen) - 1 - j), .ins = cond, .ins_len = (size_t)cn },
	};
	qsort(sp, 3, sizeof sp[0], cmp_splice);
	return apis_store_commit_spliced(s, cur, sp, 3, "spec.nodeName", node) ? 0 : -1;
}

static void do_bind(struct ctx *q, const char *pod_name, cJSON *binding, struct res *x)
{
	struct apis_server *s = q->s;
	struct apis_rdef *rd = s->rd_pods;
	const cJSON *target = cJSON_GetObjectItemCaseSensitive(binding, "target");
	const char *node = jstr(target, "name");
	cJSON *bmd = cJSON_GetObjectItemCaseSensitive(binding, "metadata");
	if (!node || !*node) {
		res_invalid1(x, rd, pod_name, "FieldValueRequired", "target.name", "Required value");
		return;
	}
	struct apis_obj *cur = apis_store_get(rd, q->ns, pod_name);
	if (!cur) {
		res_not_found(x, rd, pod_name);
		return;
	}
	const char *uid = jstr(bmd, "uid");
	if (uid && *uid && strcmp(uid, cur->uid)) {
		res_status(x, 409, "Conflict", details_of(rd, pod_name, "pods/binding"),
			   "Operation cannot be fulfilled on pods/binding \"%s\": Precondition failed: UID in precondition: "
			   "%s, UID in object meta: %s",
			   pod_name, uid, cur->uid);
		return;
	}
	const char *brv = jstr(bmd, "resourceVersion");
	if (brv && *brv && strtoull(brv, NULL, 10) != cur->rv) {
		res_conflict(x, rd, pod_name);
		return;
	}
	if (cur->deleting) {
		res_status(x, 409, "Conflict", details_of(rd, pod_name, "pods/binding"),
			   "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is being deleted, cannot be "
			   "assigned to a host",
			   pod_name, pod_name);
		return;
	}
	const char *bound = apis_obj_field(cur, "spec.nodeName");
	if (bound && *bound) {
		res_status(x, 409, "Conflict", details_of(rd, pod_name, "pods/binding"),
			   "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already assigned to node \"%s\"",
			   pod_name, pod_name, bound);
		return;
	}
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(bmd, "annotations");
	if (!(cJSON_IsObject(ann) && ann->child) && !(q->r && dry_run(q->r))) {
		int rc = bind_spliced(s, cur, node);
		if (rc < 0) {
			res_status(x, 500, "InternalError", NULL, "out of memory");
			return;
		}
		if (rc == 0) {
			res_status(x, 201, "", NULL, "%s", "");
			return;
		}
	}
	cJSON *pod = apis_obj_parse(cur);
	if (!pod) {
		res_status(x, 500, "InternalError", NULL, "cannot decode pod");
		return;
	}
	cJSON *spec = jobj(pod, "spec");
	const cJSON *gates = cJSON_GetObjectItemCaseSensitive(spec, "schedulingGates");
	if (cJSON_IsArray(gates) && gates->child) {
		cJSON_Delete(pod);
		res_status(x, 409, "Conflict", details_of(rd, pod_name, "pods/binding"),
			   "Operation cannot be fulfilled on pods/binding \"%s\": pod %s has non-empty .spec.schedulingGates",
			   pod_name, pod_name);
		return;
	}
	jset_str(spec, "nodeName", node);
	if (cJSON_IsObject(ann) && ann->child) {
		cJSON *pann = jobj(jobj(pod, "metadata"), "annotations");
		const cJSON *a;
		cJSON_ArrayForEach(a, ann)
		{
			if (cJSON_IsString(a))
				jset_str(pann, a->string, a->valuestring);
		}
	}
	cJSON *status = jobj(pod, "status");
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	if (!cJSON_IsArray(conds)) {
		jdel(status, "conditions");
		conds = cJSON_AddArrayToObject(status, "conditions");
	}
	char now[32];
	apis_now_rfc3339(now);
	cJSON *c = NULL, *it;
	cJSON_ArrayForEach(it, conds)
	{
		const char *t = jstr(it, "type");
		if (t && !strcmp(t, "PodScheduled"))
			c = it;
	}
	if (!c) {
		c = cJSON_CreateObject();
		cJSON_AddItemToArray(conds, c);
	}
	if (c) {
		jset_str(c, "type", "PodScheduled");
		const char *old = jstr(c, "status");
		if (!old || strcmp(old, "True"))
			jset_str(c, "lastTransitionTime", now);
		jset_str(c, "status", "True");
		jset(c, "lastProbeTime", cJSON_CreateNull());
		jdel(c, "reason");
		jdel(c, "message");
	}
	if (q->r && dry_run(q->r)) {
		cJSON_Delete(pod);
	} else if (!apis_store_commit(s, rd, pod, cur)) {
		res_status(x, 500, "InternalError", NULL, "out of memory");
		return;
	}
	res_status(x, 201, "", NULL, "%s", "");
}

static void handle_binding(struct ctx *q, const char *pod_name)
{
	struct apis_server *s = q->s;
	cJSON *b = decode_body(q);
	if (!b)
		return;
	if (!pod_name)
		pod_name = jstr(cJSON_GetObjectItemCaseSensitive(b, "metadata"), "name");
	struct res x = {0};
	if (!pod_name || !*pod_name) {
		res_invalid1(&x, s->rd_bindings, "", "FieldValueRequired", "metadata.name", "Required value");
	} else {
		pthread_rwlock_wrlock(&s->lock);
		do_bind(q, pod_name, b, &x);
		pthread_rwlock_unlock(&s->lock);
	}
	cJSON_Delete(b);
	send_res(q->c, &x);
}

struct pdb_scan {
	const struct apis_obj *pod;
	struct apis_obj *found[2];
	int n;
	const struct kube_label_selector *sel;
	int expected, healthy;
};

static void pdb_match(void *u, struct apis_obj *o)
{
	struct pdb_scan *ps = u;
	cJSON *pdb = apis_obj_parse(o);
	const cJSON *sel = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pdb, "spec"), "selector");
	struct kube_label_selector *ls = NULL;
	char *err = NULL;
	if (sel && kube_label_selector_from_json(sel, &ls, &err) == 0 && !kube_label_selector_is_empty(ls) &&
	    kube_label_selector_matches_json(ls, ps->pod->labels)) {
		if (ps->n < 2)
			ps->found[ps->n] = o;
		ps->n++;
	}
	free(err);
	kube_label_selector_free(ls);
	cJSON_Delete(pdb);
}

static bool pod_is_ready(const cJSON *pod)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(pod, "status");
	const char *phase = jstr(st, "phase");
	if (!phase || strcmp(phase, "Running"))
		return false;
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(st, "conditions"))
	{
		const char *t = jstr(c, "type");
		if (t && !strcmp(t, "Ready"))
			return jstr(c, "status") && !strcmp(jstr(c, "status"), "True");
	}
	return false;
}

static void pdb_count(void *u, struct apis_obj *o)
{
	struct pdb_scan *ps = u;
	if (!kube_label_selector_matches_json(ps->sel, o->labels) || o->deleting)
		return;
	ps->expected++;
	cJSON *pod = apis_obj_parse(o);
	if (pod && pod_is_ready(pod))
		ps->healthy++;
	cJSON_Delete(pod);
}

static int int_or_percent(const cJSON *v, int total, bool round_up, bool *ok)
{
	*ok = true;
	if (cJSON_IsNumber(v))
		return (int)v->valuedouble;
	if (cJSON_IsString(v)) {
		char *end;
		long p = strtol(v->valuestring, &end, 10);
		if (*end == '%') {
			long long x = (long long)p * total;
			return (int)(round_up ? (x + 99) / 100 : x / 100);
		}
		if (!*end)
			return (int)p;
	}
	*ok = false;
	return 0;
}

static void handle_eviction(struct ctx *q)
{
	struct apis_server *s = q->s;
	cJSON *ev = decode_body(q);
	if (!ev)
		return;
	struct res x = {0};
	const cJSON *dopts = cJSON_GetObjectItemCaseSensitive(ev, "deleteOptions");
	long long grace = -1;
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(dopts, "gracePeriodSeconds")))
		grace = (long long)cJSON_GetObjectItemCaseSensitive(dopts, "gracePeriodSeconds")->valuedouble;
	pthread_rwlock_wrlock(&s->lock);
	struct apis_obj *cur = apis_store_get(s->rd_pods, q->ns, q->name);
	if (!cur) {
		res_not_found(&x, s->rd_pods, q->name);
		goto out;
	}
	const char *phase = apis_obj_field(cur, "status.phase");
	bool consult = !cur->deleting && phase && strcmp(phase, "Succeeded") && strcmp(phase, "Failed") &&
		       strcmp(phase, "Pending");
	if (consult) {
		struct pdb_scan ps = { .pod = cur };
		apis_store_each(s->rd_pdbs, q->ns, pdb_match, &ps);
		if (ps.n > 1) {
			res_status(&x, 500, "InternalError", NULL,
				   "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
				   "support.");
			goto out;
		}
		if (ps.n == 1) {
			struct apis_obj *pdbo = ps.found[0];
			cJSON *pdb = apis_obj_parse(pdbo);
			cJSON *spec = cJSON_GetObjectItemCaseSensitive(pdb, "spec");
			struct kube_label_selector *ls = NULL;
			char *err = NULL;
			kube_label_selector_from_json(cJSON_GetObjectItemCaseSensitive(spec, "selector"), &ls, &err);
			free(err);
			ps.sel = ls;
			if (ls)
				apis_store_each(s->rd_pods, q->ns, pdb_count, &ps);
			kube_label_selector_free(ls);
			bool ok;
			int desired = 0;
			const cJSON *minav = cJSON_GetObjectItemCaseSensitive(spec, "minAvailable");
			const cJSON *maxun = cJSON_GetObjectItemCaseSensitive(spec, "maxUnavailable");
			if (maxun) {
				int mu = int_or_percent(maxun, ps.expected, true, &ok);
				desired = ps.expected - mu;
				if (desired < 0)
					desired = 0;
			} else if (minav) {
				desired = int_or_percent(minav, ps.expected, true, &ok);
			}
			int allowed = ps.healthy - desired;
			if (allowed <= 0) {
				cJSON *d = details_of(s->rd_pods, q->name, "pods/eviction");
				cJSON *causes = cJSON_CreateArray();
				cJSON *c = cJSON_CreateObject();
				char m[512];
				snprintf(m, sizeof m, "The disruption budget %s needs %d healthy pods and has %d currently",
					 pdbo->name, desired, ps.healthy);
				if (c) {
					cJSON_AddStringToObject(c, "reason", "DisruptionBudget");
					cJSON_AddStringToObject(c, "message", m);
					cJSON_AddItemToArray(causes, c);
				}
				if (d)
					cJSON_AddItemToObject(d, "causes", causes);
				else
					cJSON_Delete(causes);
				res_status(&x, 429, "TooManyRequests", d,
					   "Cannot evict pod as it would violate the pod's disruption budget.");
				cJSON_Delete(pdb);
				goto out;
			}
			/* record the disruption in the PDB status */
			cJSON *st = jobj(pdb, "status");
			jset(st, "disruptionsAllowed", cJSON_CreateNumber(allowed - 1));
			jset(st, "currentHealthy", cJSON_CreateNumber(ps.healthy));
			jset(st, "desiredHealthy", cJSON_CreateNumber(desired));
			jset(st, "expectedPods", cJSON_CreateNumber(ps.expected));
			char now[32];
			apis_now_rfc3339(now);
			jset_str(jobj(st, "disruptedPods"), q->name, now);
			apis_store_commit(s, s->rd_pdbs, pdb, pdbo);
		}
	}
	bool removed;
	if (!dry_run(q->r) && !apis_delete_object(s, s->rd_pods, cur, NULL, grace, &removed)) {
		res_status(&x, 500, "InternalError", NULL, "out of memory");
		goto out;
	}
	res_status(&x, 201, "", NULL, "%s", "");
out:
	pthread_rwlock_unlock(&s->lock);
	cJSON_Delete(ev);
	send_res(q->c, &x);
}

/* ---------------- scale ---------------- */

static cJSON *scale_of(const struct apis_obj *o)
{
	cJSON *d = apis_obj_parse(o);
	if (!d)
		return NULL;
	cJSON *sc = cJSON_CreateObject();
	if (!sc) {
		cJSON_Delete(d);
		return NULL;
	}
	cJSON_AddStringToObject(sc, "kind", "Scale");
	cJSON_AddStringToObject(sc, "apiVersion", "autoscaling/v1");
	cJSON *md = cJSON_AddObjectToObject(sc, "metadata");
	cJSON *dmd = cJSON_GetObjectItemCaseSensitive(d, "metadata");
	const char *keys[] = { "name", "namespace", "uid", "resourceVersion", "creationTimestamp" };
	for (size_t i = 0; i < 5; i++)
		if (jstr(dmd, keys[i]))
			cJSON_AddStringToObject(md, keys[i], jstr(dmd, keys[i]));
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(d, "spec");
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(sc, "spec"), "replicas", (double)jint(spec, "replicas", 1));
	cJSON *st = cJSON_AddObjectToObject(sc, "status");
	cJSON_AddNumberToObject(st, "replicas", (double)jint(cJSON_GetObjectItemCaseSensitive(d, "status"), "replicas", 0));
	const cJSON *ml = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(spec, "selector"), "matchLabels");
	struct apis_buf b = {0};
	const cJSON *l;
	cJSON_ArrayForEach(l, ml)
	{
		if (cJSON_IsString(l))
			apis_buf_printf(&b, "%s%s=%s", b.len ? "," : "", l->string, l->valuestring);
	}
	if (b.p)
		cJSON_AddStringToObject(st, "selector", b.p);
	apis_buf_free(&b);
	cJSON_Delete(d);
	return sc;
}

static void handle_scale(struct ctx *q, const char *method)
{
	struct apis_server *s = q->s;
	struct res x = {0};
	cJSON *body = NULL, *patch = NULL;
	if (strcmp(method, "GET")) {
		if (!strcmp(method, "PATCH")) {
			patch = q->r->body ? cJSON_ParseWithLength(q->r->body, q->r->body_len) : NULL;
			if (!patch) {
				apis_respond_status(q->c, 400, "BadRequest", "invalid patch document", NULL);
				return;
			}
		} else if (!(body = decode_body(q))) {
			return;
		}
	}
	pthread_rwlock_wrlock(&s->lock);
	struct apis_obj *cur = apis_store_get(q->rd, q->ns, q->name);
	if (!cur) {
		res_not_found(&x, q->rd, q->name);
		goto out;
	}
	cJSON *sc = scale_of(cur);
	if (!sc) {
		res_status(&x, 500, "InternalError", NULL, "out of memory");
		goto out;
	}
	if (!strcmp(method, "GET")) {
		res_json(&x, 200, sc);
		cJSON_Delete(sc);
		goto out;
	}
	if (patch) {
		char *err = NULL;
		char ctb[128];
		const char *ct = base_ctype(q->r->content_type, ctb, sizeof ctb);
		int rc = !strcmp(ct, "application/json-patch+json") ? apis_json_patch(&sc, patch, &err)
								     : apis_merge_patch(&sc, patch);
		free(err);
		if (rc < 0) {
			cJSON_Delete(sc);
			res_status(&x, 422, "Invalid", NULL, "the server rejected our request: patch failed");
			goto out;
		}
		body = sc;
		sc = NULL;
	}
	cJSON_Delete(sc);
	const char *rv = jstr(cJSON_GetObjectItemCaseSensitive(body, "metadata"), "resourceVersion");
	if (rv && *rv && strtoull(rv, NULL, 10) != cur->rv) {
		res_conflict(&x, q->rd, q->name);
		goto out;
	}
	const cJSON *rep = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "spec"), "replicas");
	if (!cJSON_IsNumber(rep) || rep->valuedouble < 0) {
		res_invalid1(&x, q->rd, q->name, "FieldValueInvalid", "spec.replicas", "Invalid value: must be greater than or equal to 0");
		goto out;
	}
	cJSON *obj = apis_obj_parse(cur);
	if (!obj) {
		res_status(&x, 500, "InternalError", NULL, "out of memory");
		goto out;
	}
	jset(jobj(obj, "spec"), "replicas", cJSON_CreateNumber(rep->valuedouble));
	struct wctx w = { .s = s, .rd = q->rd, .ns = q->ns, .dry_run = dry_run(q->r) };
	struct apis_obj *o = write_update(&w, cur, obj, UPD_MAIN, &x);
	if (o) {
		cJSON *nsc = scale_of(o);
		if (nsc)
			res_json(&x, 200, nsc);
		cJSON_Delete(nsc);
	}
out:
	pthread_rwlock_unlock(&s->lock);
	cJSON_Delete(body);
	cJSON_Delete(patch);
	send_res(q->c, &x);
}

/* namespaces/{name}/finalize: replaces spec.finalizers; the namespace goes once both lists are empty */
static void handle_finalize(struct ctx *q)
{
	struct apis_server *s = q->s;
	cJSON *obj = decode_body(q);
	if (!obj)
		return;
	struct res x = {0};
	pthread_rwlock_wrlock(&s->lock);
	struct apis_obj *cur = apis_store_get(q->rd, NULL, q->name);
	if (!cur) {
		res_not_found(&x, q->rd, q->name);
	} else {
		cJSON *nobj = apis_obj_parse(cur);
		cJSON *fin = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "finalizers");
		cJSON *spec = jobj(nobj, "spec");
		jset(spec, "finalizers", fin ? cJSON_Duplicate(fin, true) : cJSON_CreateArray());
		struct apis_obj *o = apis_update_internal(s, q->rd, cur, nobj);
		if (o)
			res_obj(&x, 200, o);
		else
			res_status(&x, 500, "InternalError", NULL, "finalize failed");
		pthread_mutex_lock(&s->ctl_mu);
		s->ns_dirty = true;
		pthread_cond_signal(&s->ctl_cond);
		pthread_mutex_unlock(&s->ctl_mu);
	}
	pthread_rwlock_unlock(&s->lock);
	cJSON_Delete(obj);
	send_res(q->c, &x);
}

/* ---------------- dispatch ---------------- */

static bool fault_inject(struct apis_server *s, struct apis_conn *c)
{
	if (s->opts.fault_delay_ms > 0)
		usleep((useconds_t)s->opts.fault_delay_ms * 1000);
	if (s->opts.fault_error_rate <= 0)
		return false;
	pthread_mutex_lock(&s->fault_mu);
	uint64_t a = apis_rand_next(&s->fault_rng), b = apis_rand_next(&s->fault_rng);
	pthread_mutex_unlock(&s->fault_mu);
	double p = (double)(a >> 11) / (double)(1ULL << 53);
	if (p >= s->opts.fault_error_rate)
		return false;
	if (b & 1) {
		cJSON *d = cJSON_CreateObject();
		if (d)
			cJSON_AddNumberToObject(d, "retryAfterSeconds", 1);
		apis_respond_status(c, 429, "TooManyRequests", "fault injected: too many requests, please try again later", d);
	} else {
		apis_respond_status(c, 500, "InternalError", "fault injected: an error on the server has prevented the request from succeeding", NULL);
	}
	return true;
}

static void method_not_allowed(struct apis_conn *c)
{
	apis_respond_status(c, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource",
			    NULL);
}

static void not_found_path(struct apis_conn *c)
{
	apis_respond_status(c, 404, "NotFound", "the server could not find the requested resource", NULL);
}

static void handle_version(struct apis_conn *c)
{
	static const char v[] =
		"{\"major\":\"1\",\"minor\":\"32\",\"gitVersion\":\"v1.32.0-schedkit\",\"gitCommit\":\"0000000000000000000000000000000000000000\","
		"\"gitTreeState\":\"clean\",\"buildDate\":\"2024-12-11T00:00:00Z\",\"goVersion\":\"go1.23.4\","
		"\"compiler\":\"gc\",\"platform\":\"linux/amd64\"}";
	apis_respond(c, 200, "application/json", v, sizeof v - 1, NULL);
}

static bool is_resource_path(const char *p)
{
	return !strcmp(p, "/api") || !strcmp(p, "/apis") || has_prefix(p, "/api/") || has_prefix(p, "/apis/");
}

/* /api, /api/v1, /apis, /apis/<g>, /apis/<g>/<v> (with or without a trailing slash). */
static bool is_discovery_path(const char *p)
{
	int segs = 0;
	for (const char *x = p; *x; x++)
		if (*x == '/' && x[1])
			segs++;
	return (has_prefix(p, "/api") && (p[4] == 0 || p[4] == '/') && segs <= 2) ||
	       (has_prefix(p, "/apis") && (p[5] == 0 || p[5] == '/') && segs <= 3);
}

/* The paths that are no resource: health, (after the token check) version and OpenAPI, the
 * discovery documents; anything outside /api and /apis is 404; then fault injection. True when
 * the request was answered. */
static bool serve_non_resource(struct apis_server *s, struct apis_conn *c, struct apis_req *r, struct apis_user *u)
{
	const char *path = r->path;
	if (!strcmp(path, "/healthz") || !strcmp(path, "/livez") || !strcmp(path, "/readyz")) {
		apis_respond(c, 200, "text/plain; charset=utf-8", "ok", 2, NULL);
		return true;
	}
	if (apis_authenticate(s, r->authorization, u) != 0) {
		apis_respond_status(c, 401, "Unauthorized", "Unauthorized", NULL);
		return true;
	}
	if (s->opts.rbac && (!is_resource_path(path) || is_discovery_path(path))) {
		/* non-resource paths, and the discovery documents under /api and /apis */
		struct apis_attrs a = {.verb = "get", .path = path};
		char why[300], msg[600];
		char verb[16];
		if (strcmp(r->method, "GET") && strcmp(r->method, "HEAD")) {
			size_t i = 0;
			for (; r->method[i] && i + 1 < sizeof verb; i++)
				verb[i] = (char)(r->method[i] >= 'A' && r->method[i] <= 'Z' ? r->method[i] + 32 : r->method[i]);
			verb[i] = 0;
			a.verb = verb;
		}
		if (!apis_authorize(s, u, &a, why, sizeof why)) {
			apis_forbidden_message(u, &a, msg, sizeof msg);
			apis_respond_status(c, 403, "Forbidden", msg, NULL);
			return true;
		}
	}
	if (!strcmp(path, "/version") || !strcmp(path, "/version/")) {
		handle_version(c);
		return true;
	}
	if (has_prefix(path, "/openapi/v3")) {
		apis_openapi_serve(s, c, path);
		return true;
	}
	if (!strcmp(path, "/openapi/v2")) {
		/* An empty (valid) protobuf OpenAPI v2 document: kubectl only falls back to v2 for
		 * group-versions missing from its cached v3 index (a CRD created by the same apply);
		 * with no v2 models it skips client-side validation and reports the unmapped kind as
		 * upstream does. */
		apis_respond(c, 200, "application/octet-stream", "", 0, NULL);
		return true;
	}
	if (strcmp(path, "/api") && strcmp(path, "/apis") && !has_prefix(path, "/api/") && !has_prefix(path, "/apis/")) {
		not_found_path(c);
		return true;
	}
	if (!strcmp(r->method, "GET") && apis_discovery(s, c, path))
		return true;
	return fault_inject(s, c);
}

/* Resolves /api/{v}/... or /apis/{g}/{v}/... (segs, n of them) into q: resource, namespace, name,
 * subresource; *watch_path for the /watch/ prefix. Another served version of a CRD is stored
 * (and validated) as the storage version and served back with the requested apiVersion.
 * -1 when no resource matches. */
static int resolve_resource(struct ctx *q, char **segs, int n, bool *watch_path)
{
	struct apis_server *s = q->s;
	const char *group = "", *version;
	int i;
	if (n >= 2 && !strcmp(segs[0], "api")) {
		version = segs[1];
		i = 2;
	} else if (n >= 3 && !strcmp(segs[0], "apis")) {
		group = segs[1];
		version = segs[2];
		i = 3;
	} else {
		return -1;
	}
	*watch_path = false;
	if (i < n && !strcmp(segs[i], "watch")) {
		*watch_path = true;
		i++;
	}
	int rest = n - i;
	pthread_rwlock_rdlock(&s->lock);
	if (rest >= 3 && !strcmp(segs[i], "namespaces")) {
		struct apis_rdef *rd = apis_registry_find(s, group, version, segs[i + 2]);
		if (rd && rd->namespaced && rest <= 5) {
			q->rd = rd;
			q->ns = segs[i + 1];
			q->name = rest >= 4 ? segs[i + 3] : NULL;
			q->sub = rest >= 5 ? segs[i + 4] : NULL;
		}
	}
	if (!q->rd && rest >= 1 && rest <= 3) {
		q->rd = apis_registry_find(s, group, version, segs[i]);
		q->name = rest >= 2 ? segs[i + 1] : NULL;
		q->sub = rest >= 3 ? segs[i + 2] : NULL;
		if (q->rd && q->rd->namespaced && q->name) /* namespaced resource needs /namespaces/{ns}/ for objects */
			q->rd = NULL;
	}
	if (q->rd && q->rd->storage) {
		q->alias = q->rd;
		q->rd = q->rd->storage;
		q->c->av_from = q->rd->api_version;
		q->c->av_to = q->alias->api_version;
	}
	pthread_rwlock_unlock(&s->lock);
	return q->rd ? 0 : -1;
}

/* status, scale, binding, eviction and finalize, each where the resource has it. */
static void dispatch_subresource(struct ctx *q, const char *m)
{
	struct apis_rdef *rd = q->rd;
	const char *sub = q->sub;
	struct apis_conn *c = q->c;
	if (!strcmp(sub, "status") && (rd->flags & APIS_RD_STATUS)) {
		if (!strcmp(m, "GET"))
			handle_get(q);
		else if (!strcmp(m, "PUT"))
			handle_update(q, UPD_STATUS);
		else if (!strcmp(m, "PATCH"))
			handle_patch(q, UPD_STATUS);
		else
			method_not_allowed(c);
	} else if (!strcmp(sub, "scale") && (rd->flags & APIS_RD_SCALE)) {
		if (!strcmp(m, "GET") || !strcmp(m, "PUT") || !strcmp(m, "PATCH"))
			handle_scale(q, m);
		else
			method_not_allowed(c);
	} else if (!strcmp(sub, "binding") && (rd->flags & APIS_RD_POD_SUBS)) {
		if (!strcmp(m, "POST"))
			handle_binding(q, q->name);
		else
			method_not_allowed(c);
	} else if (!strcmp(sub, "eviction") && (rd->flags & APIS_RD_POD_SUBS)) {
		if (!strcmp(m, "POST"))
			handle_eviction(q);
		else
			method_not_allowed(c);
	} else if (!strcmp(sub, "finalize") && (rd->flags & APIS_RD_NS_FINALIZE)) {
		if (!strcmp(m, "PUT"))
			handle_finalize(q);
		else
			method_not_allowed(c);
	} else {
		not_found_path(c);
	}
}

/* A watch of the collection, or (/watch/.../name) of one object: a field selector on its name
 * replaces the request's. */
static void dispatch_watch(struct ctx *q)
{
	struct matcher mt;
	if (matcher_init(q, &mt) != 0)
		return;
	char *fsel = NULL;
	if (q->name && asprintf(&fsel, "metadata.name=%s", q->name) >= 0) {
		char *err = NULL;
		kube_field_selector_free(mt.fs);
		mt.fs = NULL;
		kube_field_selector_parse(fsel, &mt.fs, &err);
		free(err);
		free(fsel);
	}
	handle_watch(q, &mt);
	matcher_free(&mt);
}

/* The verbs on a collection (list, watch, create, deletecollection) or on one object (get,
 * watch, update, patch, delete). */
static void dispatch_verb(struct ctx *q, const char *m, bool watch_path)
{
	struct apis_conn *c = q->c;
	if (!strcmp(m, "GET")) {
		if (watch_path)
			dispatch_watch(q);
		else if (q->name)
			handle_get(q);
		else
			handle_list(q);
	} else if (!q->name) {
		if (!strcmp(m, "POST")) {
			if (q->rd->namespaced && !*q->ns)
				method_not_allowed(c);
			else
				handle_create(q);
		} else if (!strcmp(m, "DELETE")) {
			handle_delete_collection(q);
		} else {
			method_not_allowed(c);
		}
	} else if (!strcmp(m, "PUT")) {
		handle_update(q, UPD_MAIN);
	} else if (!strcmp(m, "PATCH")) {
		handle_patch(q, UPD_MAIN);
	} else if (!strcmp(m, "DELETE")) {
		handle_delete(q);
	} else {
		method_not_allowed(c);
	}
}

/* The RBAC verb of a resource request (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go). */
static const char *request_verb(const struct ctx *q, const char *m, bool watch_path)
{
	bool w = false;
	if (!strcmp(m, "GET")) {
		const char *wq = apis_query(q->r, "watch");
		bool b;
		w = watch_path || (wq && kube_parse_bool(wq, &b) == 0 && b);
		return w ? "watch" : q->name ? "get" : "list";
	}
	if (!strcmp(m, "POST"))
		return "create";
	if (!strcmp(m, "PUT"))
		return "update";
	if (!strcmp(m, "PATCH"))
		return "patch";
	if (!strcmp(m, "DELETE"))
		return q->name ? "delete" : "deletecollection";
	return "unknown";
}

/* The name a list or watch is narrowed to by fieldSelector "metadata.name=X" (or "=="), as
 * k8s.io/apiserver's RequestInfoFactory sets requestInfo.Name, so that RBAC resourceNames grant
 * a list/watch of one object. Writes "" when there is none. */
static void field_selector_name(const char *fs, char *out, size_t len)
{
	*out = 0;
	for (const char *p = fs; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		static const char key[] = "metadata.name=";
		if (n > sizeof key - 1 && !strncmp(p, key, sizeof key - 1)) {
			const char *v = p + sizeof key - 1;
			if (*v == '=')
				v++;
			size_t vl = n - (size_t)(v - p);
			if (vl < len && vl > 0 && *v != '=') {
				memcpy(out, v, vl);
				out[vl] = 0;
			}
			return;
		}
		p = end ? end + 1 : NULL;
	}
}

/* --authorization-mode=RBAC: true when the request was refused (403 sent). */
static bool rbac_refuses(struct ctx *q, const struct apis_user *u, const char *m, bool watch_path)
{
	if (!q->s->opts.rbac)
		return false;
	const struct apis_rdef *rd = q->alias ? q->alias : q->rd;
	struct apis_attrs a = {.resource_request = true, .verb = request_verb(q, m, watch_path), .group = rd->group,
			       .resource = rd->plural, .sub = q->sub ? q->sub : "", .ns = q->ns, .name = q->name ? q->name : ""};
	char fs_name[256];
	if (!q->name && (!strcmp(a.verb, "list") || !strcmp(a.verb, "watch"))) {
		field_selector_name(apis_query(q->r, "fieldSelector"), fs_name, sizeof fs_name);
		a.name = fs_name;
	}
	char why[300], msg[1200];
	if (apis_authorize(q->s, u, &a, why, sizeof why))
		return false;
	apis_forbidden_message(u, &a, msg, sizeof msg);
	cJSON *d = cJSON_CreateObject();
	if (d) {
		if (q->name)
			cJSON_AddStringToObject(d, "name", q->name);
		if (*rd->group)
			cJSON_AddStringToObject(d, "group", rd->group);
		cJSON_AddStringToObject(d, "kind", rd->plural);
	}
	apis_respond_status(q->c, 403, "Forbidden", msg, d);
	return true;
}

void apis_handle(struct apis_server *s, struct apis_conn *c, struct apis_req *r)
{
	const char *m = r->method;
	c->av_from = c->av_to = NULL;
	struct apis_user user;
	if (serve_non_resource(s, c, r, &user) || apis_service_proxy(s, c, r, &user))
		return;
	char *copy = strdup(r->path);
	if (!copy) {
		apis_respond_status(c, 500, "InternalError", "out of memory", NULL);
		return;
	}
	char *segs[16];
	int n = split_path(copy, segs, 16);
	struct ctx q = { .s = s, .c = c, .r = r, .ns = "" };
	bool watch_path = false;
	int resolved = resolve_resource(&q, segs, n, &watch_path);
	if (resolved == 0)
		apis_audit(r, q.rd->group, q.rd->plural, q.sub, q.ns, q.name, watch_path);
	if (resolved != 0 || (watch_path && (q.sub || strcmp(m, "GET"))))
		not_found_path(c);
	else if (rbac_refuses(&q, &user, m, watch_path))
		; /* answered */
	else if (q.rd->flags & APIS_RD_REVIEW)
		apis_auth_review(s, c, r, q.rd, &user);
	else if (q.sub && !strcmp(q.sub, "token") && !strcmp(q.rd->plural, "serviceaccounts") && !*q.rd->group &&
		 q.name && !strcmp(m, "POST"))
		apis_token_request(s, c, r, q.rd, q.ns, q.name);
	else if ((q.rd->flags & APIS_RD_METRICS) && !strcmp(m, "GET") && !watch_path && !q.sub)
		apis_metrics_serve(s, c, r, q.rd, q.ns, q.name);
	else if ((q.rd->flags & APIS_RD_VIRTUAL) && !strcmp(m, "POST") && !q.name && !(q.rd->flags & APIS_RD_METRICS))
		handle_binding(&q, NULL); /* the virtual bindings resource: POST only */
	else if (q.rd->flags & APIS_RD_VIRTUAL)
		method_not_allowed(c);
	else if (q.sub)
		dispatch_subresource(&q, m);
	else
		dispatch_verb(&q, m, watch_path);
	free(copy);
}

/* Objects every cluster starts with: the four standard namespaces and the two system
 * priority classes. Called once before the server listens. */
void apis_bootstrap(struct apis_server *s)
{
	static const char *const nss[] = { "default", "kube-system", "kube-public", "kube-node-lease" };
	pthread_rwlock_wrlock(&s->lock);
	for (size_t i = 0; i < sizeof nss / sizeof nss[0]; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON *md = cJSON_AddObjectToObject(o, "metadata");
		cJSON_AddStringToObject(md, "name", nss[i]);
		struct wctx w = { .s = s, .rd = s->rd_namespaces, .ns = "" };
		struct res x = {0};
		do_create(&w, o, &x);
		free(x.body);
	}
	static const struct {
		const char *name;
		double value;
		const char *desc;
	} pcs[] = { { "system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary." },
		    { "system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their current node." } };
	for (size_t i = 0; i < 2; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON *md = cJSON_AddObjectToObject(o, "metadata");
		cJSON_AddStringToObject(md, "name", pcs[i].name);
		cJSON_AddNumberToObject(o, "value", pcs[i].value);
		cJSON_AddStringToObject(o, "description", pcs[i].desc);
		struct wctx w = { .s = s, .rd = s->rd_pcs, .ns = "" };
		struct res x = {0};
		do_create(&w, o, &x);
		free(x.body);
	}
	pthread_rwlock_unlock(&s->lock);
}
