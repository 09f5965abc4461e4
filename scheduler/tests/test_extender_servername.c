/* Tests for tlsConfig.serverName (scheduler/framework/extender_tls.c; Go's tls.Config.ServerName
 * through upstream makeTransport, pkg/scheduler/extender.go): the extender is reached at
 * https://127.0.0.1:<port> while its certificate names another host. Table cases: the name sent in
 * SNI, the name the certificate is checked against, the Host header (still the urlPrefix's
 * authority), and the refusals (a certificate for another name, serverName not on the
 * certificate, a malformed name). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "scheduler/backend/cache.h"
#include "scheduler/framework/extender.h"
#include "scheduler/tests/fake_extender.h"
#include "scheduler/tests/fixtures.h"

static struct sk_node_info *nodes[1];

static int setup(void **state)
{
	(void)state;
	struct sk_node *n = fx_node("{\"metadata\":{\"name\":\"n1\"}}");
	nodes[0] = n ? sk_node_info_new(n) : NULL;
	sk_node_unref(n);
	return nodes[0] ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	sk_node_info_free(nodes[0]);
	return 0;
}

/* One filter call with tlsConfig `tls`; 0 on success, else -1 and *err. */
static int call(const char *url, const char *tls, char **err)
{
	char text[4096];
	snprintf(text, sizeof(text), "{\"urlPrefix\":\"%s/x\",\"filterVerb\":\"filter\",\"nodeCacheCapable\":true,\"tlsConfig\":%s}",
		 url, tls);
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	*err = NULL;
	struct sk_extender *e = sk_extender_new(j, "extenders[0]", err);
	cJSON_Delete(j);
	if (!e)
		return -2;
	struct sk_pod *pod = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	struct sk_extender_filter_result r;
	int rc = sk_extender_filter(e, pod, (const struct sk_node_info *const *)nodes, 1, &r, err);
	if (rc == 0) {
		assert_int_equal(r.n, 1);
		sk_extender_filter_result_free(&r);
	}
	sk_pod_unref(pod);
	sk_extender_free(e);
	return rc;
}

struct tcase {
	const char *name;
	int cert;                /* 0: the certificate for extender.example, 1: for 127.0.0.1 */
	const char *server_name; /* NULL: none */
	int want;                /* 0 ok, -1 the call fails, -2 the config is refused */
	const char *want_sni;    /* ok cases */
	const char *want_err;    /* a piece of the error */
};

static const struct tcase CASES[] = {
	{ "serverName matches the certificate", 0, "extender.example", 0, "extender.example", NULL },
	{ "no serverName: the certificate is for another name", 0, NULL, -1, NULL, "127.0.0.1" },
	{ "serverName not on the certificate", 0, "other.example", -1, NULL, "other.example" },
	{ "serverName while the certificate holds the address", 1, "extender.example", -1, NULL, "extender.example" },
	{ "the address's own certificate without serverName", 1, NULL, 0, "", NULL },
	{ "a malformed serverName", 0, "bad name/x", -2, NULL, "tlsConfig.serverName" },
};

static void test_server_name(void **state)
{
	(void)state;
	char dir[] = "/tmp/sk-servername-test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char crt[2][160], key[2][160];
	for (int i = 0; i < 2; i++) {
		snprintf(crt[i], sizeof(crt[i]), "%s/srv%d.crt", dir, i);
		snprintf(key[i], sizeof(key[i]), "%s/srv%d.key", dir, i);
	}
	assert_int_equal(fe_make_cert_san(crt[0], key[0], "extender", "DNS:extender.example"), 0);
	assert_int_equal(fe_make_cert(crt[1], key[1], "extender"), 0);
	for (size_t c = 0; c < sizeof(CASES) / sizeof(CASES[0]); c++) {
		const struct tcase *tc = &CASES[c];
		struct fe_server *srv = fe_start_tls(crt[tc->cert], key[tc->cert], NULL);
		assert_non_null(srv);
		fe_respond(srv, "/x/filter", 200, "{\"NodeNames\":[\"n1\"]}", 0);
		char tls[512];
		if (tc->server_name)
			snprintf(tls, sizeof(tls), "{\"caFile\":\"%s\",\"serverName\":\"%s\"}", crt[tc->cert], tc->server_name);
		else
			snprintf(tls, sizeof(tls), "{\"caFile\":\"%s\"}", crt[tc->cert]);
		char *err = NULL;
		int rc = call(fe_url(srv), tls, &err);
		if (rc != tc->want)
			fail_msg("%s: rc %d, want %d (%s)", tc->name, rc, tc->want, err ? err : "");
		if (tc->want_err && (!err || !strstr(err, tc->want_err)))
			fail_msg("%s: error \"%s\" does not name \"%s\"", tc->name, err ? err : "", tc->want_err);
		if (rc == 0) {
			char *sni = fe_last_sni(srv), *host = fe_last_host(srv);
			assert_string_equal(sni, tc->want_sni);
			/* the Host header stays the urlPrefix's authority */
			assert_string_equal(host, fe_url(srv) + strlen("https://"));
			free(sni);
			free(host);
		}
		free(err);
		fe_stop(srv);
	}
	for (int i = 0; i < 2; i++) {
		unlink(crt[i]);
		unlink(key[i]);
	}
	rmdir(dir);
}

/* serverName on an http:// urlPrefix changes nothing (Go applies it to TLS only). */
static void test_server_name_plain_http(void **state)
{
	(void)state;
	struct fe_server *srv = fe_start();
	assert_non_null(srv);
	fe_respond(srv, "/x/filter", 200, "{\"NodeNames\":[\"n1\"]}", 0);
	char *err = NULL;
	assert_int_equal(call(fe_url(srv), "{\"serverName\":\"extender.example\"}", &err), 0);
	char *host = fe_last_host(srv);
	assert_string_equal(host, fe_url(srv) + strlen("http://"));
	free(host);
	free(err);
	fe_stop(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_name),
		cmocka_unit_test(test_server_name_plain_http),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
