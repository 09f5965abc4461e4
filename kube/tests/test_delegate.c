/* Tests for kube/delegate.c against the local API server's auth (e2e/apiserver/auth.c):
 * anonymous, bad, admin and ServiceAccount tokens (minted by TokenRequest) on always-allowed and
 * protected paths, RBAC grants of nonResourceURLs (exact and "x*"), verbs, the upstream words of
 * a denial, the review cache (and TTL 0), delegation without clients; and the API server's
 * SubjectAccessReview of resource attributes through ClusterRoleBindings and RoleBindings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e/apiserver/server.h"
#include "kube/delegate.h"
#include "kube/rest.h"

#define ADMIN "sk-delegate-admin"

struct env {
	struct apis_server *api;
	struct kube_client *admin;
	char reader[128], nobody[128];
};

static struct kube_client *client_with(struct env *e, const char *token)
{
	struct kube_config *kc = kube_config_new(apis_server_url(e->api));
	kc->token = strdup(token);
	struct kube_client *c;
	assert_int_equal(kube_client_new(kc, &c, NULL), 0);
	kube_config_free(kc);
	return c;
}

static void create(struct env *e, const char *path, const char *json)
{
	cJSON *o = cJSON_Parse(json);
	assert_non_null(o);
	struct kube_error ke;
	if (kube_create(e->admin, path, o, NULL, &ke) != 0)
		fail_msg("create %s: %s", path, ke.message);
	cJSON_Delete(o);
}

static void mint(struct env *e, const char *sa, char *out, size_t n)
{
	char path[200];
	snprintf(path, sizeof path, "/api/v1/namespaces/default/serviceaccounts/%s/token", sa);
	cJSON *body = cJSON_Parse("{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\",\"spec\":{}}"), *resp = NULL;
	assert_int_equal(kube_create(e->admin, path, body, &resp, NULL), 0);
	const char *tok = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(resp, "status"), "token"));
	assert_non_null(tok);
	snprintf(out, n, "%s", tok);
	cJSON_Delete(body);
	cJSON_Delete(resp);
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof *e);
	struct apis_opts ao = APIS_OPTS_DEFAULT;
	ao.port = 0;
	ao.token = ADMIN;
	assert_int_equal(apis_server_start(&ao, &e->api), 0);
	e->admin = client_with(e, ADMIN);
	create(e, "/api/v1/namespaces/default/serviceaccounts", "{\"metadata\":{\"name\":\"reader\"}}");
	create(e, "/api/v1/namespaces/default/serviceaccounts", "{\"metadata\":{\"name\":\"nobody\"}}");
	create(e, "/apis/rbac.authorization.k8s.io/v1/clusterroles",
	       "{\"metadata\":{\"name\":\"metrics\"},\"rules\":[{\"nonResourceURLs\":[\"/metrics\",\"/debug/*\"],\"verbs\":[\"get\"]}]}");
	create(e, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
	       "{\"metadata\":{\"name\":\"reader-metrics\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"metrics\"},"
	       "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"reader\",\"namespace\":\"default\"}]}");
	mint(e, "reader", e->reader, sizeof e->reader);
	mint(e, "nobody", e->nobody, sizeof e->nobody);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	kube_client_free(e->admin);
	apis_server_stop(e->api);
	free(e);
	return 0;
}

static const char *const allow[] = {"/healthz", "/readyz", "/livez", NULL};

static void test_decisions(void **state)
{
	struct env *e = *state;
	struct kube_delegate_opts o = {.authn = e->admin, .authz = e->admin, .always_allow_paths = allow,
				       .authn_ttl_ms = -1, .allowed_ttl_ms = -1, .denied_ttl_ms = -1};
	struct kube_delegate *d = kube_delegate_new(&o);
	assert_non_null(d);
	char bearer_reader[200], bearer_nobody[200];
	snprintf(bearer_reader, sizeof bearer_reader, "Bearer %s", e->reader);
	snprintf(bearer_nobody, sizeof bearer_nobody, "Bearer %s", e->nobody);
	const struct {
		const char *method, *path, *authz;
		int want;
		const char *msg;
	} cases[] = {
		{"GET", "/healthz", "", 0, NULL},
		{"GET", "/metrics", "", 403, "forbidden: User \"system:anonymous\" cannot get path \"/metrics\""},
		{"GET", "/metrics", "Basic dXNlcjpwdw==", 403, "forbidden: User \"system:anonymous\" cannot get path \"/metrics\""},
		{"GET", "/healthz", "Bearer not-a-token", 401, "Unauthorized"},
		{"GET", "/metrics", "Bearer not-a-token", 401, "Unauthorized"},
		{"GET", "/configz", "Bearer " ADMIN, 0, NULL}, /* system:masters */
		{"GET", "/metrics", bearer_reader, 0, NULL},
		{"GET", "/debug/pprof/heap", bearer_reader, 0, NULL},
		{"GET", "/configz", bearer_reader, 403, "forbidden: User \"system:serviceaccount:default:reader\" cannot get path \"/configz\""},
		{"POST", "/metrics", bearer_reader, 403, "forbidden: User \"system:serviceaccount:default:reader\" cannot post path \"/metrics\""},
		{"GET", "/metrics", bearer_nobody, 403, "forbidden: User \"system:serviceaccount:default:nobody\" cannot get path \"/metrics\""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char msg[512] = "";
		int rc = kube_delegate_guard(d, cases[i].method, cases[i].path, cases[i].authz, msg, sizeof msg);
		if (rc != cases[i].want || (cases[i].msg && strcmp(msg, cases[i].msg)))
			fail_msg("case %zu (%s %s): %d \"%s\"", i, cases[i].method, cases[i].path, rc, msg);
	}
	/* the cache: the same questions again ask the API server nothing */
	uint64_t tr, sar, tr2, sar2;
	kube_delegate_calls(d, &tr, &sar);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char msg[512];
		assert_int_equal(kube_delegate_guard(d, cases[i].method, cases[i].path, cases[i].authz, msg, sizeof msg), cases[i].want);
	}
	kube_delegate_calls(d, &tr2, &sar2);
	assert_true(tr > 0 && sar > 0);
	assert_int_equal(tr2, tr);
	assert_int_equal(sar2, sar);
	kube_delegate_free(d);

	/* TTL 0: every request is reviewed */
	struct kube_delegate_opts o0 = o;
	o0.authn_ttl_ms = o0.allowed_ttl_ms = o0.denied_ttl_ms = 0;
	d = kube_delegate_new(&o0);
	char msg[512];
	for (int i = 0; i < 3; i++)
		assert_int_equal(kube_delegate_guard(d, "GET", "/metrics", bearer_reader, msg, sizeof msg), 0);
	kube_delegate_calls(d, &tr, &sar);
	assert_int_equal(tr, 3);
	assert_int_equal(sar, 3);
	kube_delegate_free(d);
}

static void test_without_clients(void **state)
{
	struct env *e = *state;
	char bearer_reader[200], msg[512];
	snprintf(bearer_reader, sizeof bearer_reader, "Bearer %s", e->reader);
	/* no authentication client: a token is ignored (anonymous) */
	struct kube_delegate_opts o = {.authz = e->admin, .always_allow_paths = allow, .authn_ttl_ms = -1,
				       .allowed_ttl_ms = -1, .denied_ttl_ms = -1};
	struct kube_delegate *d = kube_delegate_new(&o);
	assert_int_equal(kube_delegate_guard(d, "GET", "/metrics", bearer_reader, msg, sizeof msg), 403);
	assert_non_null(strstr(msg, "system:anonymous"));
	assert_int_equal(kube_delegate_guard(d, "GET", "/healthz", "Bearer whatever", msg, sizeof msg), 0);
	kube_delegate_free(d);
	/* no authorization client: only the always-allowed paths, and system:masters */
	struct kube_delegate_opts o2 = {.authn = e->admin, .always_allow_paths = allow, .authn_ttl_ms = -1,
					.allowed_ttl_ms = -1, .denied_ttl_ms = -1};
	d = kube_delegate_new(&o2);
	assert_int_equal(kube_delegate_guard(d, "GET", "/metrics", bearer_reader, msg, sizeof msg), 403);
	assert_int_equal(kube_delegate_guard(d, "GET", "/metrics", "Bearer " ADMIN, msg, sizeof msg), 0);
	assert_int_equal(kube_delegate_guard(d, "GET", "/readyz", "", msg, sizeof msg), 0);
	kube_delegate_free(d);
	/* a review the API server refuses (a token without the right to create reviews): 401 */
	char bearer_nobody[200];
	snprintf(bearer_nobody, sizeof bearer_nobody, "Bearer %s", e->nobody);
	struct kube_client *bad = client_with(e, "no-such-token");
	struct kube_delegate_opts o3 = {.authn = bad, .authz = bad, .always_allow_paths = allow, .authn_ttl_ms = -1,
					.allowed_ttl_ms = -1, .denied_ttl_ms = -1};
	kube_client_set_max_retries(bad, 0);
	d = kube_delegate_new(&o3);
	assert_int_equal(kube_delegate_guard(d, "GET", "/metrics", bearer_nobody, msg, sizeof msg), 401);
	kube_delegate_free(d);
	kube_client_free(bad);
}

/* The API server's SubjectAccessReview for resources: ClusterRoleBinding vs RoleBinding scope. */
static int sar(struct env *e, const char *user, const char *ns, const char *verb, const char *resource)
{
	char json[800];
	snprintf(json, sizeof json,
		 "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\",\"spec\":{\"user\":\"%s\","
		 "\"groups\":[\"system:authenticated\"],\"resourceAttributes\":{\"namespace\":\"%s\",\"verb\":\"%s\",\"resource\":\"%s\"}}}",
		 user, ns, verb, resource);
	cJSON *b = cJSON_Parse(json), *r = NULL;
	assert_int_equal(kube_create(e->admin, "/apis/authorization.k8s.io/v1/subjectaccessreviews", b, &r, NULL), 0);
	int allowed = cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "status"), "allowed"));
	cJSON_Delete(b);
	cJSON_Delete(r);
	return allowed;
}

static void test_resource_reviews(void **state)
{
	struct env *e = *state;
	create(e, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"team\"}}");
	create(e, "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles",
	       "{\"metadata\":{\"name\":\"pod-reader\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"pods\",\"pods/log\"],\"verbs\":[\"get\",\"list\"]}]}");
	create(e, "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings",
	       "{\"metadata\":{\"name\":\"alice-reads\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"pod-reader\"},"
	       "\"subjects\":[{\"kind\":\"User\",\"name\":\"alice\"},{\"kind\":\"ServiceAccount\",\"name\":\"bot\"}]}");
	static const struct {
		const char *user, *ns, *verb, *resource;
		int want;
	} cases[] = {
		{"alice", "team", "get", "pods", 1},
		{"alice", "team", "list", "pods", 1},
		{"alice", "team", "delete", "pods", 0},
		{"alice", "default", "get", "pods", 0},          /* a RoleBinding grants its namespace only */
		{"bob", "team", "get", "pods", 0},
		{"alice", "team", "get", "secrets", 0},
		{"system:serviceaccount:team:bot", "team", "get", "pods", 1}, /* subject namespace defaults to the binding's */
		{"system:serviceaccount:other:bot", "team", "get", "pods", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (sar(e, cases[i].user, cases[i].ns, cases[i].verb, cases[i].resource) != cases[i].want)
			fail_msg("case %zu: %s %s %s in %s", i, cases[i].user, cases[i].verb, cases[i].resource, cases[i].ns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decisions),
		cmocka_unit_test(test_without_clients),
		cmocka_unit_test(test_resource_reviews),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
