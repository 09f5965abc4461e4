/* auth.c — who a request is and what it may do, as kube-apiserver decides it:
 *
 * Authentication: the --token (user "admin", group system:masters), the --token-auth-file (CSV
 * token,user,uid[,"group1,group2"] as upstream's static token file) and ServiceAccount tokens
 * the server mints itself (TokenRequest: POST .../serviceaccounts/NAME/token, what
 * `kubectl create token` sends; user system:serviceaccount:NS:NAME, groups
 * system:serviceaccounts and system:serviceaccounts:NS). Every authenticated user also has
 * system:authenticated. With no --token and no token file the server is open: a request with
 * no known token is "admin".
 *
 * Authorization: RBAC as pkg/registry/rbac/validation evaluates it — ClusterRoleBindings and
 * RoleBindings whose subjects name the user, a group of it or its ServiceAccount, their
 * ClusterRole/Role rules (verbs, apiGroups, resources with "res/sub" and "*" forms,
 * resourceNames, nonResourceURLs with a trailing "*"), system:masters allowed everything, and
 * the bootstrap discovery roles (system:discovery, system:basic-user, system:public-info-viewer:
 * GET of /api*, /apis*, /openapi*, /version, /healthz, /livez, /readyz, and creating
 * self-subject reviews, for everyone authenticated). It answers SubjectAccessReviews and
 * SelfSubjectAccessReviews always, and is enforced on every request with
 * --authorization-mode=RBAC. TokenReviews answer from the same token table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "kube/log.h"
#include "e2e/apiserver/internal.h"

#define RBAC "rbac.authorization.k8s.io"

struct apis_token {
	struct apis_token *next;
	char *token;
	struct apis_user u;
	char *sa_ns, *sa_name, *sa_uid; /* minted ServiceAccount tokens */
};

static void user_add_group(struct apis_user *u, const char *g)
{
	for (int i = 0; i < u->ngroups; i++)
		if (!strcmp(u->groups[i], g))
			return;
	if (u->ngroups < APIS_USER_GROUPS)
		snprintf(u->groups[u->ngroups++], sizeof u->groups[0], "%s", g);
}

static bool user_in_group(const struct apis_user *u, const char *g)
{
	for (int i = 0; i < u->ngroups; i++)
		if (!strcmp(u->groups[i], g))
			return true;
	return false;
}

static void admin_user(struct apis_user *u)
{
	memset(u, 0, sizeof *u);
	snprintf(u->name, sizeof u->name, "admin");
	user_add_group(u, "system:masters");
	user_add_group(u, "system:authenticated");
}

static int add_token(struct apis_server *s, const char *token, const struct apis_user *u, const char *ns,
		     const char *name, const char *uid)
{
	struct apis_token *t = calloc(1, sizeof *t);
	if (!t || !(t->token = strdup(token)))
		goto oom;
	t->u = *u;
	if (ns && (!(t->sa_ns = strdup(ns)) || !(t->sa_name = strdup(name)) || !(t->sa_uid = strdup(uid ? uid : ""))))
		goto oom;
	pthread_mutex_lock(&s->auth_mu);
	t->next = s->tokens;
	s->tokens = t;
	pthread_mutex_unlock(&s->auth_mu);
	return 0;
oom:
	if (t) {
		free(t->token);
		free(t->sa_ns);
		free(t->sa_name);
		free(t->sa_uid);
	}
	free(t);
	return -1;
}

/* One CSV field: quoted ("a,b", "" for a quote) or bare. Advances *p past the comma. */
static int csv_field(const char **p, char *out, size_t n)
{
	const char *q = *p;
	size_t k = 0;
	if (*q == '"') {
		for (q++; *q && !(*q == '"' && q[1] != '"'); q++) {
			if (*q == '"')
				q++;
			if (k + 1 < n)
				out[k++] = *q;
		}
		if (*q != '"')
			return -1;
		q++;
	} else {
		for (; *q && *q != ','; q++)
			if (k + 1 < n)
				out[k++] = *q;
	}
	out[k] = 0;
	if (*q == ',')
		q++;
	*p = q;
	return 0;
}

int apis_auth_load_token_file(struct apis_server *s, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		klog_error("Cannot read the token file", " file=\"%s\"", path);
		return -1;
	}
	char line[4096];
	int lineno = 0, rc = 0;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		lineno++;
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		char tok[1024], name[256], uid[128], groups[1024] = "";
		const char *p = line;
		if (csv_field(&p, tok, sizeof tok) || csv_field(&p, name, sizeof name) || csv_field(&p, uid, sizeof uid) ||
		    (*p && csv_field(&p, groups, sizeof groups)) || !tok[0] || !name[0]) {
			klog_error("Token file: a line needs token,user,uid[,\"groups\"]", " file=\"%s\" line=%d", path, lineno);
			rc = -1;
			break;
		}
		struct apis_user u = {0};
		snprintf(u.name, sizeof u.name, "%s", name);
		snprintf(u.uid, sizeof u.uid, "%s", uid);
		for (char *g = strtok(groups, ","); g; g = strtok(NULL, ","))
			user_add_group(&u, g);
		user_add_group(&u, "system:authenticated");
		rc = add_token(s, tok, &u, NULL, NULL, NULL);
	}
	fclose(f);
	return rc;
}

void apis_auth_free(struct apis_server *s)
{
	while (s->tokens) {
		struct apis_token *t = s->tokens;
		s->tokens = t->next;
		free(t->token);
		free(t->sa_ns);
		free(t->sa_name);
		free(t->sa_uid);
		free(t);
	}
}

/* The user of a token: 0, or -1 when unknown. */
static int lookup(struct apis_server *s, const char *token, struct apis_user *u)
{
	if (s->token && !strcmp(token, s->token)) {
		admin_user(u);
		return 0;
	}
	int rc = -1;
	pthread_mutex_lock(&s->auth_mu);
	for (struct apis_token *t = s->tokens; t; t = t->next)
		if (!strcmp(t->token, token)) {
			*u = t->u;
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&s->auth_mu);
	return rc;
}

static bool auth_configured(const struct apis_server *s)
{
	return s->token || s->opts.token_auth_file;
}

int apis_authenticate(struct apis_server *s, const char *authorization, struct apis_user *u)
{
	const char *tok = authorization && !strncmp(authorization, "Bearer ", 7) ? authorization + 7 : NULL;
	if (tok && lookup(s, tok, u) == 0)
		return 0;
	if (!auth_configured(s)) {
		admin_user(u);
		return 0;
	}
	return -1;
}

/* ---- RBAC ---- */

static bool list_has(const cJSON *arr, const char *v)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, arr)
		if (cJSON_IsString(x) && (!strcmp(x->valuestring, "*") || !strcmp(x->valuestring, v)))
			return true;
	return false;
}

static bool resource_matches(const cJSON *arr, const char *res, const char *sub)
{
	char combined[300];
	snprintf(combined, sizeof combined, "%s%s%s", res, sub && *sub ? "/" : "", sub ? sub : "");
	const cJSON *x;
	cJSON_ArrayForEach(x, arr) {
		if (!cJSON_IsString(x))
			continue;
		const char *r = x->valuestring;
		if (!strcmp(r, "*") || !strcmp(r, combined) || (sub && *sub && r[0] == '*' && r[1] == '/' && !strcmp(r + 2, sub)))
			return true;
	}
	return false;
}

static bool url_matches(const cJSON *arr, const char *path)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, arr) {
		if (!cJSON_IsString(x))
			continue;
		const char *r = x->valuestring;
		size_t n = strlen(r);
		if (!strcmp(r, "*") || !strcmp(r, path) || (n && r[n - 1] == '*' && !strncmp(r, path, n - 1)))
			return true;
	}
	return false;
}

/* Whether one PolicyRule allows a. Resource rules of a RoleBinding apply in its namespace only. */
static bool rule_allows(const cJSON *rule, const struct apis_attrs *a)
{
	if (!list_has(cJSON_GetObjectItemCaseSensitive(rule, "verbs"), a->verb))
		return false;
	if (!a->resource_request)
		return url_matches(cJSON_GetObjectItemCaseSensitive(rule, "nonResourceURLs"), a->path);
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(rule, "resourceNames");
	return list_has(cJSON_GetObjectItemCaseSensitive(rule, "apiGroups"), a->group) &&
	       resource_matches(cJSON_GetObjectItemCaseSensitive(rule, "resources"), a->resource, a->sub) &&
	       (cJSON_GetArraySize(names) == 0 || (a->name && *a->name && list_has(names, a->name)));
}

static bool subject_matches(const cJSON *subj, const struct apis_user *u, const char *binding_ns)
{
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(subj, "kind"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(subj, "name"));
	if (!kind || !name)
		return false;
	if (!strcmp(kind, "User"))
		return !strcmp(name, u->name);
	if (!strcmp(kind, "Group"))
		return user_in_group(u, name);
	if (!strcmp(kind, "ServiceAccount")) {
		const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(subj, "namespace"));
		char full[600];
		snprintf(full, sizeof full, "system:serviceaccount:%s:%s", ns && *ns ? ns : binding_ns, name);
		return !strcmp(full, u->name);
	}
	return false;
}

struct eval {
	struct apis_server *s;
	const struct apis_user *u;
	const struct apis_attrs *a;
	bool allowed;
	char why[300];
};

static bool role_allows(struct eval *ev, const char *kind, const char *name, const char *ns)
{
	bool cluster = !strcmp(kind, "ClusterRole");
	struct apis_rdef *rd = apis_registry_find(ev->s, RBAC, "v1", cluster ? "clusterroles" : "roles");
	struct apis_obj *o = rd ? apis_store_get(rd, cluster ? "" : ns, name) : NULL;
	cJSON *role = o ? apis_obj_parse(o) : NULL;
	bool ok = false;
	const cJSON *rule;
	cJSON_ArrayForEach(rule, cJSON_GetObjectItemCaseSensitive(role, "rules"))
		if ((ok = rule_allows(rule, ev->a)))
			break;
	cJSON_Delete(role);
	return ok;
}

static void eval_binding(void *u, struct apis_obj *o)
{
	struct eval *ev = u;
	if (ev->allowed)
		return;
	bool namespaced = o->ns && *o->ns;
	/* a RoleBinding grants resources of its namespace only, never non-resource URLs */
	if (namespaced && (!ev->a->resource_request || !ev->a->ns || strcmp(ev->a->ns, o->ns)))
		return;
	cJSON *b = apis_obj_parse(o);
	const cJSON *ref = cJSON_GetObjectItemCaseSensitive(b, "roleRef"), *subj;
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "kind"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "name"));
	bool match = false;
	cJSON_ArrayForEach(subj, cJSON_GetObjectItemCaseSensitive(b, "subjects"))
		if ((match = subject_matches(subj, ev->u, namespaced ? o->ns : "")))
			break;
	if (match && kind && name && (!strcmp(kind, "ClusterRole") || (namespaced && !strcmp(kind, "Role"))) &&
	    role_allows(ev, kind, name, o->ns)) {
		ev->allowed = true;
		snprintf(ev->why, sizeof ev->why, "RBAC: allowed by %s \"%s\" of %s \"%s\"", namespaced ? "RoleBinding" : "ClusterRoleBinding",
			 o->name, kind, name);
	}
	cJSON_Delete(b);
}

/* The bootstrap policy every cluster has (plugin/pkg/auth/authorizer/rbac/bootstrappolicy):
 * discovery and health for everyone, self-subject reviews for the authenticated. */
static bool bootstrap_allows(const struct apis_user *u, const struct apis_attrs *a)
{
	if (!a->resource_request) {
		const char *p = a->path;
		bool info = !strcmp(p, "/healthz") || !strcmp(p, "/livez") || !strcmp(p, "/readyz") || !strcmp(p, "/version") ||
			    !strcmp(p, "/version/");
		bool disc = !strcmp(p, "/api") || !strncmp(p, "/api/", 5) || !strcmp(p, "/apis") || !strncmp(p, "/apis/", 6) ||
			    !strncmp(p, "/openapi", 8);
		return !strcmp(a->verb, "get") && (info || (disc && user_in_group(u, "system:authenticated")));
	}
	return user_in_group(u, "system:authenticated") && !strcmp(a->verb, "create") &&
	       ((!strcmp(a->group, "authorization.k8s.io") &&
		 (!strcmp(a->resource, "selfsubjectaccessreviews") || !strcmp(a->resource, "selfsubjectrulesreviews"))) ||
		(!strcmp(a->group, "authentication.k8s.io") && !strcmp(a->resource, "selfsubjectreviews")));
}

bool apis_authorize(struct apis_server *s, const struct apis_user *u, const struct apis_attrs *a, char *why, size_t n)
{
	if (user_in_group(u, "system:masters")) {
		snprintf(why, n, "system:masters");
		return true;
	}
	if (bootstrap_allows(u, a)) {
		snprintf(why, n, "RBAC: allowed by the bootstrap discovery roles");
		return true;
	}
	struct eval ev = {.s = s, .u = u, .a = a};
	pthread_rwlock_rdlock(&s->lock);
	struct apis_rdef *crb = apis_registry_find(s, RBAC, "v1", "clusterrolebindings");
	struct apis_rdef *rb = apis_registry_find(s, RBAC, "v1", "rolebindings");
	if (crb)
		apis_store_each(crb, NULL, eval_binding, &ev);
	if (rb && !ev.allowed && a->resource_request && a->ns && *a->ns)
		apis_store_each(rb, a->ns, eval_binding, &ev);
	pthread_rwlock_unlock(&s->lock);
	snprintf(why, n, "%s", ev.allowed ? ev.why : "");
	return ev.allowed;
}

/* The upstream wording of a denial (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters). */
void apis_forbidden_message(const struct apis_user *u, const struct apis_attrs *a, char *msg, size_t n)
{
	if (!a->resource_request) {
		snprintf(msg, n, "forbidden: User \"%s\" cannot %s path \"%s\"", u->name, a->verb, a->path);
		return;
	}
	char res[300];
	snprintf(res, sizeof res, "%s%s%s", a->resource, a->sub && *a->sub ? "/" : "", a->sub ? a->sub : "");
	char gr[400];
	snprintf(gr, sizeof gr, "%s%s%s", a->resource, *a->group ? "." : "", a->group);
	int k = a->name && *a->name ? snprintf(msg, n, "%s \"%s\" is forbidden: ", gr, a->name) : snprintf(msg, n, "%s is forbidden: ", gr);
	if (k < 0 || (size_t)k >= n)
		return;
	int m = snprintf(msg + k, n - (size_t)k, "User \"%s\" cannot %s resource \"%s\" in API group \"%s\"", u->name, a->verb,
			 res, a->group);
	if (m > 0 && (size_t)(k + m) < n && a->ns && *a->ns)
		snprintf(msg + k + m, n - (size_t)(k + m), " in the namespace \"%s\"", a->ns);
	else if (m > 0 && (size_t)(k + m) < n)
		snprintf(msg + k + m, n - (size_t)(k + m), " at the cluster scope");
}

/* ---- the review and token endpoints ---- */

static void respond_json(struct apis_conn *c, int code, cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);
	if (s)
		apis_respond(c, code, "application/json", s, strlen(s), NULL);
	else
		apis_respond_status(c, 500, "InternalError", "out of memory", NULL);
	free(s);
	cJSON_Delete(o);
}

static cJSON *parse_body(struct apis_conn *c, const struct apis_req *r, const char *kind)
{
	cJSON *b = NULL;
	if (r->content_type && !strncmp(r->content_type, "application/vnd.kubernetes.protobuf", 35) && r->body) {
		char *perr = NULL; /* kubectl auth can-i sends protobuf */
		b = apis_proto_decode((const unsigned char *)r->body, r->body_len, &perr);
		if (!b) {
			apis_respond_status(c, 415, "UnsupportedMediaType", perr ? perr : "malformed protobuf body", NULL);
			free(perr);
			return NULL;
		}
	} else if (r->body && r->body_len) {
		b = cJSON_ParseWithLength(r->body, r->body_len);
	}
	if (!cJSON_IsObject(b) || !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(b, "spec"))) {
		char msg[200];
		snprintf(msg, sizeof msg, "%s: the body must be a %s object with a spec", kind, kind);
		apis_respond_status(c, 400, "BadRequest", msg, NULL);
		cJSON_Delete(b);
		return NULL;
	}
	return b;
}

static void add_user_json(cJSON *to, const struct apis_user *u)
{
	cJSON *usr = cJSON_AddObjectToObject(to, "user");
	cJSON_AddStringToObject(usr, "username", u->name);
	if (u->uid[0])
		cJSON_AddStringToObject(usr, "uid", u->uid);
	cJSON *g = cJSON_AddArrayToObject(usr, "groups");
	for (int i = 0; i < u->ngroups; i++)
		cJSON_AddItemToArray(g, cJSON_CreateString(u->groups[i]));
}

static void token_review(struct apis_server *s, struct apis_conn *c, const struct apis_req *r)
{
	cJSON *b = parse_body(c, r, "TokenReview");
	if (!b)
		return;
	const char *tok = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "spec"), "token"));
	struct apis_user u;
	bool ok = tok && *tok && lookup(s, tok, &u) == 0;
	cJSON_DeleteItemFromObjectCaseSensitive(b, "status");
	cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "spec"), "token", cJSON_CreateString(""));
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "spec"), "token");
	cJSON *st = cJSON_AddObjectToObject(b, "status");
	cJSON_AddBoolToObject(st, "authenticated", ok);
	if (ok)
		add_user_json(st, &u);
	else
		cJSON_AddObjectToObject(st, "user");
	respond_json(c, 201, b);
}

/* SubjectAccessReview (spec.user/groups/uid) or, self, SelfSubjectAccessReview (the caller). */
static void access_review(struct apis_server *s, struct apis_conn *c, const struct apis_req *r, const struct apis_user *caller,
			  bool self)
{
	cJSON *b = parse_body(c, r, self ? "SelfSubjectAccessReview" : "SubjectAccessReview");
	if (!b)
		return;
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(b, "spec");
	struct apis_user u = {0};
	if (self) {
		u = *caller;
	} else {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "user"));
		const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "uid"));
		snprintf(u.name, sizeof u.name, "%s", name ? name : "");
		snprintf(u.uid, sizeof u.uid, "%s", uid ? uid : "");
		const cJSON *g;
		cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(spec, "groups"))
			if (cJSON_IsString(g))
				user_add_group(&u, g->valuestring);
	}
	const cJSON *ra = cJSON_GetObjectItemCaseSensitive(spec, "resourceAttributes");
	const cJSON *na = cJSON_GetObjectItemCaseSensitive(spec, "nonResourceAttributes");
	struct apis_attrs a = {0};
#define STR(o, k) (cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k)) ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k)) : "")
	if (cJSON_IsObject(ra)) {
		a = (struct apis_attrs){.resource_request = true, .verb = STR(ra, "verb"), .group = STR(ra, "group"),
					.resource = STR(ra, "resource"), .sub = STR(ra, "subresource"),
					.ns = STR(ra, "namespace"), .name = STR(ra, "name")};
	} else if (cJSON_IsObject(na)) {
		a = (struct apis_attrs){.verb = STR(na, "verb"), .path = STR(na, "path")};
	} else {
		apis_respond_status(c, 422, "Invalid", "spec: Invalid value: one of resourceAttributes and nonResourceAttributes must be specified", NULL);
		cJSON_Delete(b);
		return;
	}
#undef STR
	char why[300] = "";
	bool ok = (u.name[0] || u.ngroups) && apis_authorize(s, &u, &a, why, sizeof why);
	cJSON_DeleteItemFromObjectCaseSensitive(b, "status");
	cJSON *st = cJSON_AddObjectToObject(b, "status");
	cJSON_AddBoolToObject(st, "allowed", ok);
	if (why[0])
		cJSON_AddStringToObject(st, "reason", why);
	respond_json(c, 201, b);
}

void apis_auth_review(struct apis_server *s, struct apis_conn *c, const struct apis_req *r, const struct apis_rdef *rd,
		      const struct apis_user *caller)
{
	if (strcmp(r->method, "POST")) {
		apis_respond_status(c, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource", NULL);
		return;
	}
	if (!strcmp(rd->plural, "tokenreviews"))
		token_review(s, c, r);
	else
		access_review(s, c, r, caller, !strcmp(rd->plural, "selfsubjectaccessreviews"));
}

void apis_token_request(struct apis_server *s, struct apis_conn *c, const struct apis_req *r, struct apis_rdef *sa_rd,
			const char *ns, const char *name)
{
	pthread_rwlock_rdlock(&s->lock);
	struct apis_obj *o = apis_store_get(sa_rd, ns, name);
	char uid[64] = "";
	if (o && o->uid)
		snprintf(uid, sizeof uid, "%s", o->uid);
	pthread_rwlock_unlock(&s->lock);
	if (!o) {
		char msg[400];
		snprintf(msg, sizeof msg, "serviceaccounts \"%.200s\" not found", name);
		apis_respond_status(c, 404, "NotFound", msg, NULL);
		return;
	}
	cJSON *b = r->body && r->body_len ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
	if (!cJSON_IsObject(b)) {
		cJSON_Delete(b);
		b = cJSON_CreateObject();
	}
	unsigned char rnd[24];
	char tok[80] = "sksa.";
	if (RAND_bytes(rnd, sizeof rnd) != 1) {
		cJSON_Delete(b);
		apis_respond_status(c, 500, "InternalError", "no randomness", NULL);
		return;
	}
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(tok + 5 + 2 * i, 3, "%02x", rnd[i]);
	struct apis_user u = {0};
	snprintf(u.name, sizeof u.name, "system:serviceaccount:%s:%s", ns, name);
	snprintf(u.uid, sizeof u.uid, "%s", uid);
	char g[300];
	snprintf(g, sizeof g, "system:serviceaccounts:%s", ns);
	user_add_group(&u, "system:serviceaccounts");
	user_add_group(&u, g);
	user_add_group(&u, "system:authenticated");
	if (add_token(s, tok, &u, ns, name, uid) != 0) {
		cJSON_Delete(b);
		apis_respond_status(c, 500, "InternalError", "out of memory", NULL);
		return;
	}
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(b, "spec");
	if (!cJSON_IsObject(spec))
		spec = cJSON_AddObjectToObject(b, "spec");
	double secs = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(spec, "expirationSeconds"));
	if (!(secs >= 600))
		secs = 3600;
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "expirationSeconds");
	cJSON_AddNumberToObject(spec, "expirationSeconds", secs);
	cJSON_DeleteItemFromObjectCaseSensitive(b, "kind");
	cJSON_DeleteItemFromObjectCaseSensitive(b, "apiVersion");
	cJSON_AddStringToObject(b, "kind", "TokenRequest");
	cJSON_AddStringToObject(b, "apiVersion", "authentication.k8s.io/v1");
	cJSON_DeleteItemFromObjectCaseSensitive(b, "metadata");
	cJSON *md = cJSON_AddObjectToObject(b, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", ns);
	char now[32];
	apis_now_rfc3339(now);
	cJSON_AddStringToObject(md, "creationTimestamp", now);
	cJSON_DeleteItemFromObjectCaseSensitive(b, "status");
	cJSON *st = cJSON_AddObjectToObject(b, "status");
	cJSON_AddStringToObject(st, "token", tok);
	time_t exp = time(NULL) + (time_t)secs;
	struct tm tm;
	gmtime_r(&exp, &tm);
	char ts[32];
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	cJSON_AddStringToObject(st, "expirationTimestamp", ts);
	klog_info(2, "Issued a ServiceAccount token", " serviceaccount=\"%s/%s\"", ns, name);
	respond_json(c, 201, b);
}
