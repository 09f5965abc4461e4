/* Delegated authentication and authorization (kube/delegate.h). */
#include "kube/delegate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/sha.h>

#include "kube/httpserver.h"
#include "kube/log.h"
#include "kube/rest.h"
#include "kube/util.h"

#define DEFAULT_TTL_MS 10000
#define CACHE_MAX 512
#define NAME_MAX_LEN 256
#define GROUPS_MAX_LEN 1024

/* A cached answer: a token review (key = sha256 of the token) or an access review (key = sha256
 * of user, groups, verb and path). */
struct entry {
	unsigned char key[SHA256_DIGEST_LENGTH];
	int64_t expires_ns;
	bool ok;                      /* authenticated / allowed */
	char user[NAME_MAX_LEN], uid[NAME_MAX_LEN];
	char groups[GROUPS_MAX_LEN];  /* NUL-separated, ends with an empty string */
};

struct cache {
	struct entry *v;
	int n;
};

struct kube_delegate {
	struct kube_client *authn, *authz;
	char **allow;
	int64_t authn_ttl_ns, allowed_ttl_ns, denied_ttl_ns;
	pthread_mutex_t mu; /* guards the caches */
	struct cache tokens, access;
	atomic_uint_fast64_t ntr, nsar;
};

struct user {
	char name[NAME_MAX_LEN], uid[NAME_MAX_LEN];
	char groups[GROUPS_MAX_LEN];
};

static int64_t ttl_ns(int64_t ms)
{
	return (ms < 0 ? DEFAULT_TTL_MS : ms) * 1000000LL;
}

struct kube_delegate *kube_delegate_new(const struct kube_delegate_opts *o)
{
	struct kube_delegate *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	int n = 0;
	while (o->always_allow_paths && o->always_allow_paths[n])
		n++;
	d->allow = calloc((size_t)n + 1, sizeof *d->allow);
	for (int i = 0; d->allow && i < n; i++)
		if (!(d->allow[i] = strdup(o->always_allow_paths[i]))) {
			kube_delegate_free(d);
			return NULL;
		}
	if (!d->allow) {
		free(d);
		return NULL;
	}
	d->authn = o->authn;
	d->authz = o->authz;
	d->authn_ttl_ns = ttl_ns(o->authn_ttl_ms);
	d->allowed_ttl_ns = ttl_ns(o->allowed_ttl_ms);
	d->denied_ttl_ns = ttl_ns(o->denied_ttl_ms);
	pthread_mutex_init(&d->mu, NULL);
	return d;
}

void kube_delegate_free(struct kube_delegate *d)
{
	if (!d)
		return;
	for (int i = 0; d->allow && d->allow[i]; i++)
		free(d->allow[i]);
	free(d->allow);
	free(d->tokens.v);
	free(d->access.v);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

void kube_delegate_calls(struct kube_delegate *d, uint64_t *token_reviews, uint64_t *access_reviews)
{
	*token_reviews = atomic_load(&d->ntr);
	*access_reviews = atomic_load(&d->nsar);
}

/* ---- the cache ---- */

static bool cache_get(struct kube_delegate *d, struct cache *c, const unsigned char *key, struct entry *out)
{
	int64_t now = kube_mono_ns();
	bool hit = false;
	pthread_mutex_lock(&d->mu);
	for (int i = 0; i < c->n; i++)
		if (!memcmp(c->v[i].key, key, SHA256_DIGEST_LENGTH) && c->v[i].expires_ns > now) {
			*out = c->v[i];
			hit = true;
			break;
		}
	pthread_mutex_unlock(&d->mu);
	return hit;
}

static void cache_put(struct kube_delegate *d, struct cache *c, const struct entry *e, int64_t ttl)
{
	if (ttl <= 0)
		return;
	int64_t now = kube_mono_ns();
	pthread_mutex_lock(&d->mu);
	if (!c->v)
		c->v = calloc(CACHE_MAX, sizeof *c->v);
	if (c->v) {
		int slot = -1, oldest = 0;
		for (int i = 0; i < c->n && slot < 0; i++)
			if (!memcmp(c->v[i].key, e->key, SHA256_DIGEST_LENGTH) || c->v[i].expires_ns <= now)
				slot = i;
		for (int i = 1; slot < 0 && i < c->n; i++)
			if (c->v[i].expires_ns < c->v[oldest].expires_ns)
				oldest = i;
		if (slot < 0)
			slot = c->n < CACHE_MAX ? c->n++ : oldest;
		c->v[slot] = *e;
		c->v[slot].expires_ns = now + ttl;
	}
	pthread_mutex_unlock(&d->mu);
}

/* ---- authentication ---- */

static void groups_add(char *groups, const char *g)
{
	size_t off = 0;
	while (groups[off]) {
		if (!strcmp(groups + off, g))
			return;
		off += strlen(groups + off) + 1;
	}
	size_t n = strlen(g);
	if (off + n + 2 <= GROUPS_MAX_LEN) {
		memcpy(groups + off, g, n + 1);
		groups[off + n + 1] = 0;
	}
}

static bool groups_has(const char *groups, const char *g)
{
	for (size_t off = 0; groups[off]; off += strlen(groups + off) + 1)
		if (!strcmp(groups + off, g))
			return true;
	return false;
}

/* 0 authenticated, 1 rejected, -1 the review failed. */
static int token_review(struct kube_delegate *d, const char *token, struct user *u)
{
	cJSON *body = cJSON_CreateObject(), *resp = NULL;
	cJSON *spec = cJSON_AddObjectToObject(body, "spec");
	cJSON_AddStringToObject(body, "apiVersion", "authentication.k8s.io/v1");
	cJSON_AddStringToObject(body, "kind", "TokenReview");
	cJSON_AddStringToObject(spec, "token", token);
	struct kube_error e;
	atomic_fetch_add(&d->ntr, 1);
	int rc = kube_create(d->authn, "/apis/authentication.k8s.io/v1/tokenreviews", body, &resp, &e);
	cJSON_Delete(body);
	if (rc != 0) {
		klog_error("Unable to authenticate the request due to an error", " err=\"TokenReview: %s (HTTP %d)\"",
			   e.message, e.http_code);
		return -1;
	}
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(resp, "status");
	const cJSON *usr = cJSON_GetObjectItemCaseSensitive(st, "user");
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(usr, "username"));
	int out = 1;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "authenticated")) && name && *name) {
		const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(usr, "uid"));
		snprintf(u->name, sizeof u->name, "%s", name);
		snprintf(u->uid, sizeof u->uid, "%s", uid ? uid : "");
		memset(u->groups, 0, sizeof u->groups);
		const cJSON *g;
		cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(usr, "groups"))
			if (cJSON_IsString(g))
				groups_add(u->groups, g->valuestring);
		out = 0;
	}
	cJSON_Delete(resp);
	return out;
}

/* 0 and *u, or 401 (msg set). */
static int authenticate(struct kube_delegate *d, const char *authorization, struct user *u, char *msg, size_t len)
{
	memset(u, 0, sizeof *u);
	const char *tok = NULL;
	if (authorization && !strncasecmp(authorization, "Bearer ", 7)) {
		tok = authorization + 7;
		while (*tok == ' ')
			tok++;
	}
	if (!tok || !*tok || !d->authn) {
		snprintf(u->name, sizeof u->name, "system:anonymous");
		groups_add(u->groups, "system:unauthenticated");
		return 0;
	}
	struct entry e = {0};
	SHA256((const unsigned char *)tok, strlen(tok), e.key);
	struct entry hit;
	int rc;
	if (cache_get(d, &d->tokens, e.key, &hit)) {
		rc = hit.ok ? 0 : 1;
		snprintf(u->name, sizeof u->name, "%s", hit.user);
		snprintf(u->uid, sizeof u->uid, "%s", hit.uid);
		memcpy(u->groups, hit.groups, sizeof u->groups);
	} else {
		rc = token_review(d, tok, u);
		if (rc >= 0) {
			e.ok = rc == 0;
			memcpy(e.user, u->name, sizeof e.user);
			memcpy(e.uid, u->uid, sizeof e.uid);
			memcpy(e.groups, u->groups, sizeof e.groups);
			cache_put(d, &d->tokens, &e, d->authn_ttl_ns);
		}
	}
	if (rc != 0) {
		snprintf(msg, len, "Unauthorized");
		return 401;
	}
	groups_add(u->groups, "system:authenticated");
	return 0;
}

/* ---- authorization ---- */

/* 0 allowed, 1 denied (reason set), -1 failed. */
static int access_review(struct kube_delegate *d, const struct user *u, const char *verb, const char *path,
			 char *reason, size_t rlen)
{
	cJSON *body = cJSON_CreateObject(), *resp = NULL;
	cJSON_AddStringToObject(body, "apiVersion", "authorization.k8s.io/v1");
	cJSON_AddStringToObject(body, "kind", "SubjectAccessReview");
	cJSON *spec = cJSON_AddObjectToObject(body, "spec");
	cJSON_AddStringToObject(spec, "user", u->name);
	if (u->uid[0])
		cJSON_AddStringToObject(spec, "uid", u->uid);
	cJSON *groups = cJSON_AddArrayToObject(spec, "groups");
	for (size_t off = 0; u->groups[off]; off += strlen(u->groups + off) + 1)
		cJSON_AddItemToArray(groups, cJSON_CreateString(u->groups + off));
	cJSON *nra = cJSON_AddObjectToObject(spec, "nonResourceAttributes");
	cJSON_AddStringToObject(nra, "path", path);
	cJSON_AddStringToObject(nra, "verb", verb);
	struct kube_error e;
	atomic_fetch_add(&d->nsar, 1);
	int rc = kube_create(d->authz, "/apis/authorization.k8s.io/v1/subjectaccessreviews", body, &resp, &e);
	cJSON_Delete(body);
	if (rc != 0) {
		klog_error("Authorization error", " user=\"%s\" verb=\"%s\" path=\"%s\" err=\"SubjectAccessReview: %s (HTTP %d)\"",
			   u->name, verb, path, e.message, e.http_code);
		snprintf(reason, rlen, "%.200s", e.message);
		return -1;
	}
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(resp, "status");
	int out = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "allowed")) &&
			  !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "denied"))
		      ? 0
		      : 1;
	const char *r = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(st, "reason"));
	snprintf(reason, rlen, "%s", r ? r : "");
	cJSON_Delete(resp);
	return out;
}

static int authorize(struct kube_delegate *d, const struct user *u, const char *method, const char *path, char *msg,
		     size_t len)
{
	if (kube_http_path_matches((const char *const *)d->allow, path) || groups_has(u->groups, "system:masters"))
		return 0;
	char verb[32];
	size_t i = 0;
	for (; method[i] && i + 1 < sizeof verb; i++)
		verb[i] = (char)(method[i] >= 'A' && method[i] <= 'Z' ? method[i] + 32 : method[i]);
	verb[i] = 0;
	char reason[256] = "";
	int rc = 1;
	if (d->authz) {
		struct entry e = {0};
		char buf[2 * NAME_MAX_LEN + GROUPS_MAX_LEN + 64 + SHA256_DIGEST_LENGTH];
		size_t off = 0;
		memcpy(buf + off, u->name, strlen(u->name) + 1), off += strlen(u->name) + 1;
		memcpy(buf + off, u->uid, strlen(u->uid) + 1), off += strlen(u->uid) + 1;
		memcpy(buf + off, u->groups, sizeof u->groups), off += sizeof u->groups;
		memcpy(buf + off, verb, strlen(verb) + 1), off += strlen(verb) + 1;
		SHA256((const unsigned char *)path, strlen(path), (unsigned char *)buf + off), off += SHA256_DIGEST_LENGTH;
		SHA256((const unsigned char *)buf, off, e.key);
		struct entry hit;
		if (cache_get(d, &d->access, e.key, &hit)) {
			rc = hit.ok ? 0 : 1;
			snprintf(reason, sizeof reason, "%s", hit.user); /* the cached reason */
		} else {
			rc = access_review(d, u, verb, path, reason, sizeof reason);
			if (rc >= 0) {
				e.ok = rc == 0;
				snprintf(e.user, sizeof e.user, "%s", reason);
				cache_put(d, &d->access, &e, rc == 0 ? d->allowed_ttl_ns : d->denied_ttl_ns);
			}
		}
	}
	if (rc == 0)
		return 0;
	snprintf(msg, len, "forbidden: User \"%s\" cannot %s path \"%s\"%s%s", u->name, verb, path, reason[0] ? ": " : "",
		 reason);
	return 403;
}

int kube_delegate_guard(void *ctx, const char *method, const char *path, const char *authorization, char *msg,
			size_t msg_len)
{
	struct kube_delegate *d = ctx;
	struct user u;
	int rc = authenticate(d, authorization, &u, msg, msg_len);
	if (rc != 0)
		return rc;
	rc = authorize(d, &u, method, path, msg, msg_len);
	if (rc != 0)
		klog_info(2, "Forbidden", " user=\"%s\" method=\"%s\" path=\"%s\"", u.name, method, path);
	return rc;
}
