/* Tests for e2e/apiserver/auth.c through the REST API: the token file (valid lines, groups, a bad
 * line refusing to start), ServiceAccount tokens from TokenRequest (404 for a missing account),
 * TokenReview answers, and --authorization-mode=RBAC enforcement: each request's verb, resource,
 * subresource, name and namespace checked against the RBAC objects, denials in upstream's words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e/apiserver/server.h"
#include "kube/rest.h"

#define ADMIN "sk-auth-admin"

static char token_file[64];

static struct kube_client *client_with(struct apis_server *s, const char *token)
{
	struct kube_config *kc = kube_config_new(apis_server_url(s));
	if (token)
		kc->token = strdup(token);
	struct kube_client *c;
	assert_int_equal(kube_client_new(kc, &c, NULL), 0);
	kube_client_set_max_retries(c, 0);
	kube_config_free(kc);
	return c;
}

static int post(struct kube_client *c, const char *path, const char *json, cJSON **out, struct kube_error *e)
{
	cJSON *o = cJSON_Parse(json);
	assert_non_null(o);
	int rc = kube_create(c, path, o, out, e);
	cJSON_Delete(o);
	return rc;
}

static struct apis_server *start(bool rbac)
{
	strcpy(token_file, "/tmp/sk-tokens-XXXXXX");
	int fd = mkstemp(token_file);
	const char *csv = "# comment\n"
			  "tok-alice,alice,uid-1,\"devs,ops\"\n"
			  "tok-bob,bob,uid-2\n";
	assert_int_equal(write(fd, csv, strlen(csv)), (ssize_t)strlen(csv));
	close(fd);
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.port = 0;
	o.token = ADMIN;
	o.token_auth_file = token_file;
	o.rbac = rbac;
	struct apis_server *s;
	assert_int_equal(apis_server_start(&o, &s), 0);
	return s;
}

static void test_token_file_and_reviews(void **state)
{
	(void)state;
	struct apis_server *s = start(false);
	struct kube_client *admin = client_with(s, ADMIN);
	static const struct {
		const char *token;
		bool ok;
		const char *user, *group;
	} cases[] = {
		{"tok-alice", true, "alice", "ops"},
		{"tok-bob", true, "bob", "system:authenticated"},
		{ADMIN, true, "admin", "system:masters"},
		{"tok-carol", false, NULL, NULL},
		{"", false, NULL, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char json[300];
		snprintf(json, sizeof json, "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\",\"spec\":{\"token\":\"%s\"}}",
			 cases[i].token);
		cJSON *r = NULL;
		assert_int_equal(post(admin, "/apis/authentication.k8s.io/v1/tokenreviews", json, &r, NULL), 0);
		const cJSON *st = cJSON_GetObjectItem(r, "status");
		assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(st, "authenticated")), cases[i].ok);
		assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "spec"), "token")); /* never echoed */
		if (cases[i].ok) {
			const cJSON *u = cJSON_GetObjectItem(st, "user");
			assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(u, "username")), cases[i].user);
			bool found = false;
			const cJSON *g;
			cJSON_ArrayForEach(g, cJSON_GetObjectItem(u, "groups"))
				found |= !strcmp(g->valuestring, cases[i].group);
			assert_true(found);
		}
		cJSON_Delete(r);
	}
	/* an unknown token is 401 once the server has tokens */
	struct kube_client *nobody = client_with(s, "tok-carol");
	struct kube_error e;
	assert_int_equal(kube_get(nobody, "/api/v1/namespaces", NULL, &e), -1);
	assert_int_equal(e.http_code, 401);
	/* TokenRequest for a missing ServiceAccount: 404 */
	assert_int_equal(post(admin, "/api/v1/namespaces/default/serviceaccounts/ghost/token", "{\"spec\":{}}", NULL, &e), -1);
	assert_int_equal(e.http_code, 404);
	kube_client_free(nobody);
	kube_client_free(admin);
	apis_server_stop(s);
	unlink(token_file);
}

static void test_bad_token_file(void **state)
{
	(void)state;
	strcpy(token_file, "/tmp/sk-tokens-XXXXXX");
	int fd = mkstemp(token_file);
	assert_int_equal(write(fd, "only-a-token\n", 13), 13);
	close(fd);
	struct apis_opts o = APIS_OPTS_DEFAULT;
	o.port = 0;
	o.token_auth_file = token_file;
	struct apis_server *s = NULL;
	assert_int_equal(apis_server_start(&o, &s), -1);
	unlink(token_file);
	o.token_auth_file = "/no/such/file";
	assert_int_equal(apis_server_start(&o, &s), -1);
}

static void test_rbac_enforced(void **state)
{
	(void)state;
	struct apis_server *s = start(true);
	struct kube_client *admin = client_with(s, ADMIN);
	assert_int_equal(post(admin, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
			      "{\"metadata\":{\"name\":\"cm\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"verbs\":[\"get\",\"list\",\"create\"]},"
			      "{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"resourceNames\":[\"mine\"],\"verbs\":[\"delete\"]}]}",
			      NULL, NULL),
			 0);
	assert_int_equal(post(admin, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
			      "{\"metadata\":{\"name\":\"devs-cm\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"cm\"},"
			      "\"subjects\":[{\"kind\":\"Group\",\"name\":\"devs\"}]}",
			      NULL, NULL),
			 0);
	assert_int_equal(post(admin, "/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"theirs\"}}", NULL, NULL), 0);
	/* bob may list and watch the one ConfigMap "theirs" (resourceNames: a list or watch narrowed
	 * by fieldSelector metadata.name, as upstream's RequestInfo names it) */
	assert_int_equal(post(admin, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
			      "{\"metadata\":{\"name\":\"one\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
			      "\"resourceNames\":[\"theirs\"],\"verbs\":[\"list\",\"watch\"]}]}",
			      NULL, NULL),
			 0);
	assert_int_equal(post(admin, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
			      "{\"metadata\":{\"name\":\"bob-one\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"one\"},"
			      "\"subjects\":[{\"kind\":\"User\",\"name\":\"bob\"}]}",
			      NULL, NULL),
			 0);
	struct kube_client *alice = client_with(s, "tok-alice"), *bob = client_with(s, "tok-bob");
	struct kube_error e;
	static const struct {
		int who; /* 0 alice (group devs), 1 bob */
		const char *method, *path, *body;
		int code;
		const char *msg;
	} cases[] = {
		{0, "GET", "/api/v1/namespaces/default/configmaps", NULL, 200, NULL},
		{0, "POST", "/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"mine\"}}", 201, NULL},
		{0, "DELETE", "/api/v1/namespaces/default/configmaps/mine", NULL, 200, NULL},
		{0, "DELETE", "/api/v1/namespaces/default/configmaps/theirs", NULL, 403,
		 "configmaps \"theirs\" is forbidden: User \"alice\" cannot delete resource \"configmaps\" in API group \"\" in the namespace \"default\""},
		{0, "GET", "/api/v1/namespaces/kube-system/configmaps", NULL, 403,
		 "configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"kube-system\""},
		{0, "GET", "/api/v1/nodes", NULL, 403,
		 "nodes is forbidden: User \"alice\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"},
		{1, "GET", "/api/v1/namespaces/default/configmaps", NULL, 403,
		 "configmaps is forbidden: User \"bob\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""},
		{1, "GET", "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dtheirs", NULL, 200, NULL},
		{1, "GET", "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3D%3Dtheirs", NULL, 200, NULL},
		{1, "GET", "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dmine", NULL, 403,
		 "configmaps \"mine\" is forbidden: User \"bob\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""},
		{1, "GET", "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.namespace%3Ddefault", NULL, 403, NULL},
		{1, "GET", "/api/v1", NULL, 200, NULL},   /* discovery: system:discovery */
		{1, "GET", "/version", NULL, 200, NULL},
		{0, "GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1", NULL, 403,
		 "configmaps is forbidden: User \"alice\" cannot watch resource \"configmaps\" in API group \"\" in the namespace \"default\""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct kube_client *c = cases[i].who ? bob : alice;
		const char *q = strchr(cases[i].path, '?');
		char path[200];
		snprintf(path, sizeof path, "%.*s", q ? (int)(q - cases[i].path) : (int)strlen(cases[i].path), cases[i].path);
		memset(&e, 0, sizeof e);
		int rc = kube_request(c, cases[i].method, path, q ? q + 1 : NULL, cases[i].body, NULL, NULL, &e);
		int code = rc == 0 ? (!strcmp(cases[i].method, "POST") ? 201 : 200) : e.http_code;
		if (code != cases[i].code || (cases[i].msg && strcmp(e.message, cases[i].msg)))
			fail_msg("case %zu %s %s: %d \"%s\"", i, cases[i].method, cases[i].path, code, e.message);
	}
	kube_client_free(alice);
	kube_client_free(bob);
	kube_client_free(admin);
	apis_server_stop(s);
	unlink(token_file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_file_and_reviews),
		cmocka_unit_test(test_bad_token_file),
		cmocka_unit_test(test_rbac_enforced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
