/* Tests for the daemon's legacy Policy sources (scheduler/daemon/policy_source.c) and their
 * reload (reload.c), against the in-process local API server: sk_dm_policy_read's table (the
 * file, the ConfigMap's policy.cfg, the file winning over the ConfigMap, upstream's error
 * messages), then a daemon started with --policy-configmap (no --config): a changed policy.cfg
 * alone reloads (sk_daemon_reload returns 1, /configz shows the new plugins), the same content
 * again does nothing, a bad Policy is rejected and the running one stays; and with
 * --policy-config-file: a changed file alone reloads. */
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
#include "kube/config.h"
#include "kube/object.h"
#include "kube/rest.h"
#include "scheduler/daemon/daemon.h"
#include "scheduler/daemon/internal.h"
#include "scheduler/tests/https_get.h"

#define PACK "{\"kind\":\"Policy\",\"apiVersion\":\"v1\",\"priorities\":[{\"name\":\"MostRequestedPriority\",\"weight\":5}]}"
#define SPREAD "{\"kind\":\"Policy\",\"apiVersion\":\"v1\",\"priorities\":[{\"name\":\"LeastRequestedPriority\",\"weight\":3}]}"
#define BAD "{\"kind\":\"Policy\",\"apiVersion\":\"v1\",\"predicates\":[{\"name\":\"NoSuchPredicate\"}]}"

static struct apis_server *api;
static struct kube_client *c;
static char dir[64];

static int setup(void **state)
{
	(void)state;
	struct apis_opts ao = APIS_OPTS_DEFAULT;
	ao.port = 0;
	if (apis_server_start(&ao, &api) != 0)
		return -1;
	struct kube_config *kc = kube_config_new(apis_server_url(api));
	int rc = kube_client_new(kc, &c, NULL);
	kube_config_free(kc);
	strcpy(dir, "/tmp/sk-policy-XXXXXX");
	return rc == 0 && mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	kube_client_free(c);
	apis_server_stop(api);
	char p[128];
	snprintf(p, sizeof p, "%s/policy.json", dir);
	unlink(p);
	rmdir(dir);
	return 0;
}

/* The ConfigMap ns/name with data {policy.cfg: text} (text NULL: no such key), created or replaced. */
static void put_cm(const char *ns, const char *name, const char *text)
{
	cJSON *cm = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(cm, "metadata"), *data = cJSON_AddObjectToObject(cm, "data");
	cJSON_AddStringToObject(cm, "apiVersion", "v1");
	cJSON_AddStringToObject(cm, "kind", "ConfigMap");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", ns);
	cJSON_AddStringToObject(data, text ? "policy.cfg" : "other", text ? text : "x");
	char *one = kube_path(NULL, "v1", "configmaps", ns, name, NULL), *all = kube_path(NULL, "v1", "configmaps", ns, NULL, NULL);
	struct kube_error ke;
	if (kube_update(c, one, cm, NULL, &ke) != 0 && kube_create(c, all, cm, NULL, &ke) != 0)
		fail_msg("configmap %s/%s: %s", ns, name, ke.message);
	free(one);
	free(all);
	cJSON_Delete(cm);
}

static void write_file(const char *path, const char *text)
{
	char tmp[160];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(rename(tmp, path), 0);
}

struct rcase {
	const char *name;
	const char *file;     /* --policy-config-file content (NULL: flag not given; "-": a missing file) */
	const char *cm;       /* --policy-configmap name (NULL: not given) */
	const char *cm_ns;    /* --policy-configmap-namespace (NULL: default) */
	int rc;
	const char *want;     /* rc 0: the text; else a piece of the error */
	const char *where;    /* rc 0: */
};

static const struct rcase READS[] = {
	{ "nothing configured", NULL, NULL, NULL, 0, NULL, "" },
	{ "the file", PACK, NULL, NULL, 0, PACK, "policy file" },
	{ "a missing file", "-", NULL, NULL, -1, "failed to read policy file", NULL },
	{ "the ConfigMap, default namespace kube-system", NULL, "sched-policy", NULL, 0, SPREAD,
	  "policy config map kube-system/sched-policy" },
	{ "the ConfigMap in another namespace", NULL, "sched-policy", "team", 0, PACK, "policy config map team/sched-policy" },
	{ "the file wins over the ConfigMap", PACK, "sched-policy", NULL, 0, PACK, "policy file" },
	{ "a missing ConfigMap", NULL, "nope", NULL, -1, "failed to get policy config map kube-system/nope", NULL },
	{ "a ConfigMap without policy.cfg", NULL, "no-key", NULL, -1,
	  "policy config map kube-system/no-key: missing policy config map value at key \"policy.cfg\"", NULL },
};

static void test_policy_read(void **state)
{
	(void)state;
	cJSON *ns = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team\"}}");
	char *nspath = kube_path(NULL, "v1", "namespaces", NULL, NULL, NULL);
	kube_create(c, nspath, ns, NULL, NULL);
	free(nspath);
	cJSON_Delete(ns);
	put_cm("kube-system", "sched-policy", SPREAD);
	put_cm("team", "sched-policy", PACK);
	put_cm("kube-system", "no-key", NULL);
	char path[128];
	snprintf(path, sizeof path, "%s/policy.json", dir);
	for (size_t i = 0; i < sizeof READS / sizeof READS[0]; i++) {
		const struct rcase *tc = &READS[i];
		struct sk_daemon_opts o = { 0 };
		if (tc->file && strcmp(tc->file, "-")) {
			write_file(path, tc->file);
			o.policy_path = path;
		} else if (tc->file) {
			o.policy_path = "/nonexistent/policy.json";
		}
		o.policy_configmap = (char *)tc->cm;
		o.policy_configmap_ns = (char *)tc->cm_ns;
		assert_int_equal(sk_dm_policy_configured(&o), tc->file || tc->cm);
		char *text = NULL, *err = NULL, where[SK_DM_POLICY_WHERE];
		size_t len = 0;
		int rc = sk_dm_policy_read(&o, c, &text, &len, where, &err);
		if (rc != tc->rc)
			fail_msg("%s: rc %d (%s)", tc->name, rc, err ? err : "");
		if (rc == 0 && tc->want) {
			assert_non_null(text);
			assert_string_equal(text, tc->want);
			assert_int_equal(len, strlen(tc->want));
		}
		if (rc == 0 && !tc->want)
			assert_null(text);
		if (rc == 0 && !strstr(where, tc->where))
			fail_msg("%s: where \"%s\"", tc->name, where);
		if (rc != 0 && (!err || !strstr(err, tc->want)))
			fail_msg("%s: error \"%s\", want \"%s\"", tc->name, err ? err : "", tc->want);
		free(text);
		free(err);
	}
}

static char *configz(struct sk_daemon *d) { return sk_test_https_get(sk_daemon_http_port(d), "/configz", NULL, NULL); }

/* The NodeResourcesFit scoring strategy /configz shows ("MostAllocated", ...). */
static bool strategy_is(struct sk_daemon *d, const char *want)
{
	char *body = configz(d);
	bool r = body && strstr(body, want);
	free(body);
	return r;
}

static struct sk_daemon *start(const char *policy_path, const char *cm)
{
	struct sk_daemon_opts o = { .leader_elect = 0, .lease_duration_ms = -1, .renew_deadline_ms = -1,
				    .retry_period_ms = -1, .verbosity = -1, .secure_port = -1 };
	o.master = (char *)apis_server_url(api);
	o.bind_address = "127.0.0.1";
	static char *open_paths[] = { "/configz", NULL };
	o.always_allow_paths = open_paths;
	o.config_poll_ms = -1; /* sk_daemon_reload by hand */
	o.policy_path = (char *)policy_path;
	o.policy_configmap = (char *)cm;
	struct sk_daemon *d = NULL;
	char *err = NULL;
	if (sk_daemon_new(&o, &d, &err) != 0)
		fail_msg("sk_daemon_new: %s", err ? err : "");
	assert_int_equal(sk_daemon_start(d, &err), 0);
	return d;
}

static void expect_reload(struct sk_daemon *d, int want, const char *err_piece)
{
	char *err = NULL;
	int rc = sk_daemon_reload(d, &err);
	if (rc != want)
		fail_msg("sk_daemon_reload: %d, want %d (%s)", rc, want, err ? err : "");
	if (err_piece && (!err || !strstr(err, err_piece)))
		fail_msg("reload error \"%s\" does not name \"%s\"", err ? err : "", err_piece);
	free(err);
}

/* put_cm, then waits (bounded, not timed) until the daemon's policy informer has delivered it. */
static void put_cm_seen(struct sk_daemon *d, const char *ns, const char *name, const char *text)
{
	unsigned long before = sk_dm_policy_watch_events(d);
	if (text == (const char *)-1) { /* delete */
		char *one = kube_path(NULL, "v1", "configmaps", ns, name, NULL);
		struct kube_error ke;
		if (kube_delete(c, one, &ke) != 0)
			fail_msg("delete configmap %s/%s: %s", ns, name, ke.message);
		free(one);
	} else {
		put_cm(ns, name, text);
	}
	for (int i = 0; i < 400 && sk_dm_policy_watch_events(d) == before; i++)
		usleep(25000);
	assert_true(sk_dm_policy_watch_events(d) > before);
}

static uint64_t gets(struct sk_daemon *d) { return kube_client_request_count(d->client, "GET", -1); }

static void test_configmap_policy_reloads(void **state)
{
	(void)state;
	put_cm("kube-system", "live-policy", PACK);
	struct sk_daemon *d = start(NULL, "live-policy");
	assert_true(strategy_is(d, "MostAllocated"));
	for (int i = 0; i < 400 && sk_dm_policy_watch_events(d) == 0; i++) /* the informer's first list */
		usleep(25000);
	assert_true(sk_dm_policy_watch_events(d) > 0);
	/* Every other informer's list is done too (their GETs are counted by the same client). */
	for (int i = 0; i < 400 && !(sk_daemon_synced(d) && kube_informer_has_synced(d->pdbs)); i++)
		usleep(25000);
	assert_true(sk_daemon_synced(d) && kube_informer_has_synced(d->pdbs));
	expect_reload(d, 0, NULL); /* nothing changed */
	/* The informer keeps the ConfigMap: a check makes no request. */
	uint64_t g = gets(d);
	for (int i = 0; i < 5; i++)
		expect_reload(d, 0, NULL);
	assert_int_equal(gets(d), g);
	put_cm_seen(d, "kube-system", "live-policy", SPREAD);
	expect_reload(d, 1, NULL); /* the Policy alone changed: applied */
	assert_true(strategy_is(d, "LeastAllocated"));
	assert_false(strategy_is(d, "MostAllocated"));
	expect_reload(d, 0, NULL);
	put_cm_seen(d, "kube-system", "live-policy", BAD);
	expect_reload(d, -1, "NoSuchPredicate");
	assert_true(strategy_is(d, "LeastAllocated")); /* the good one stays */
	expect_reload(d, 0, NULL);                    /* rejected once, not every check */
	put_cm_seen(d, "kube-system", "live-policy", NULL);
	expect_reload(d, -1, "missing policy config map value at key \"policy.cfg\"");
	assert_true(strategy_is(d, "LeastAllocated"));
	put_cm_seen(d, "kube-system", "live-policy", PACK);
	expect_reload(d, 1, NULL);
	assert_true(strategy_is(d, "MostAllocated"));
	/* Deleted: the GET's words, and the running configuration stays. */
	put_cm_seen(d, "kube-system", "live-policy", (const char *)-1);
	expect_reload(d, -1, "failed to get policy config map kube-system/live-policy: configmaps \"live-policy\" not found");
	assert_true(strategy_is(d, "MostAllocated"));
	put_cm_seen(d, "kube-system", "live-policy", SPREAD);
	expect_reload(d, 1, NULL);
	assert_true(strategy_is(d, "LeastAllocated"));
	assert_int_equal(gets(d), g);
	sk_daemon_free(d);
}

static void test_file_policy_reloads(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof path, "%s/policy.json", dir);
	write_file(path, SPREAD);
	struct sk_daemon *d = start(path, NULL);
	assert_true(strategy_is(d, "LeastAllocated"));
	expect_reload(d, 0, NULL);
	write_file(path, PACK);
	expect_reload(d, 1, NULL);
	assert_true(strategy_is(d, "MostAllocated"));
	write_file(path, BAD);
	expect_reload(d, -1, "NoSuchPredicate");
	assert_true(strategy_is(d, "MostAllocated"));
	sk_daemon_free(d);
}

/* A missing ConfigMap at start: the daemon does not start, with upstream's message. */
static void test_missing_configmap_at_start(void **state)
{
	(void)state;
	struct sk_daemon_opts o = { .leader_elect = 0, .lease_duration_ms = -1, .renew_deadline_ms = -1,
				    .retry_period_ms = -1, .verbosity = -1, .secure_port = 0 };
	o.master = (char *)apis_server_url(api);
	o.policy_configmap = "absent";
	o.policy_configmap_ns = "team";
	o.config_poll_ms = -1;
	struct sk_daemon *d = NULL;
	char *err = NULL;
	assert_int_not_equal(sk_daemon_new(&o, &d, &err), 0);
	assert_non_null(err);
	assert_non_null(strstr(err, "failed to get policy config map team/absent"));
	free(err);
	sk_daemon_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_read),
		cmocka_unit_test(test_configmap_policy_reloads),
		cmocka_unit_test(test_file_policy_reloads),
		cmocka_unit_test(test_missing_configmap_at_start),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
