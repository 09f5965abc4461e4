/* Tests for scheduler/daemon/cmwatch.c against the in-process local API server: with
 * --config-configmap the scheduler reloads a change of its ConfigMap from the API while the
 * mounted file still holds the old content (as on a cluster before kubelet's sync), publishes the
 * new hash on its Lease, never puts the older file content back, keeps the running configuration
 * on an invalid one (noting the rejection on the Lease), falls back to the file once the ConfigMap
 * is gone; and a malformed --config-configmap is refused at start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "e2e/apiserver/server.h"
#include "kube/config.h"
#include "kube/object.h"
#include "kube/rest.h"
#include "scheduler/daemon/daemon.h"

struct env {
	struct apis_server *api;
	struct kube_client *c;
	char dir[64], path[96];
	int version;
	struct sk_daemon *d;
};

#define WAIT_FOR(cond)                                                                                                 \
	do {                                                                                                           \
		int tries_ = 0;                                                                                        \
		while (!(cond) && tries_++ < 400)                                                                      \
			usleep(50000);                                                                                 \
		assert_true(cond);                                                                                     \
	} while (0)

#define CFG(profiles) "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" \
		      "leaderElection: {leaderElect: true, resourceName: cmw, resourceNamespace: kube-system,"  \
		      " leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 5s}\nprofiles:\n" profiles

static void sha256_hex(const char *s, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	assert_int_equal(EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL), 1);
	for (unsigned int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* A kubelet-style volume update: a fresh directory, then an atomic swap of `..data`. */
static void write_file(struct env *e, const char *text)
{
	char d[160], f[200], tmp[160], link[160];
	snprintf(d, sizeof d, "%s/..v%d", e->dir, ++e->version);
	assert_int_equal(mkdir(d, 0755), 0);
	snprintf(f, sizeof f, "%s/config.yaml", d);
	FILE *fp = fopen(f, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	snprintf(tmp, sizeof tmp, "%s/..data_tmp", e->dir);
	snprintf(link, sizeof link, "..v%d", e->version);
	unlink(tmp);
	assert_int_equal(symlink(link, tmp), 0);
	snprintf(link, sizeof link, "%s/..data", e->dir);
	assert_int_equal(rename(tmp, link), 0);
	if (access(e->path, F_OK) != 0)
		assert_int_equal(symlink("..data/config.yaml", e->path), 0);
}

static void rm_volume(struct env *e)
{
	char p[200];
	for (int v = 1; v <= e->version; v++) {
		snprintf(p, sizeof p, "%s/..v%d/config.yaml", e->dir, v);
		unlink(p);
		snprintf(p, sizeof p, "%s/..v%d", e->dir, v);
		rmdir(p);
	}
	snprintf(p, sizeof p, "%s/..data", e->dir);
	unlink(p);
	unlink(e->path);
	rmdir(e->dir);
}

static cJSON *configmap(const char *text)
{
	cJSON *o = kube_yaml_parse_one("{apiVersion: v1, kind: ConfigMap, metadata: {name: sched-config, namespace: kube-system}}",
				       strlen("{apiVersion: v1, kind: ConfigMap, metadata: {name: sched-config, namespace: kube-system}}"),
				       NULL);
	cJSON *data = cJSON_AddObjectToObject(o, "data");
	cJSON_AddStringToObject(data, "config.yaml", text);
	return o;
}

static void put_configmap(struct env *e, const char *text, bool create)
{
	cJSON *o = configmap(text);
	char *path = kube_path("", "v1", "configmaps", "kube-system", create ? NULL : "sched-config", NULL);
	struct kube_error ke;
	int rc = create ? kube_create(e->c, path, o, NULL, &ke) : kube_update(e->c, path, o, NULL, &ke);
	if (rc != 0)
		fail_msg("configmap: %s", ke.message);
	free(path);
	cJSON_Delete(o);
}

static const char *lease_annotation(struct env *e, const char *key, char *buf, size_t len)
{
	char *path = kube_path("coordination.k8s.io", "v1", "leases", "kube-system", "cmw", NULL);
	cJSON *l = NULL;
	buf[0] = '\0';
	if (kube_get(e->c, path, &l, NULL) == 0 && kube_meta_annotation(l, key))
		snprintf(buf, len, "%s", kube_meta_annotation(l, key));
	free(path);
	cJSON_Delete(l);
	return buf;
}

static bool running_is(struct env *e, const char *hash)
{
	char h[65];
	sk_daemon_config_hash(e->d, h);
	return !strcmp(h, hash);
}

static struct env *setup(void)
{
	struct env *e = calloc(1, sizeof *e);
	assert_non_null(e);
	struct apis_opts ao = APIS_OPTS_DEFAULT;
	ao.port = 0;
	assert_int_equal(apis_server_start(&ao, &e->api), 0);
	struct kube_config *kc = kube_config_new(apis_server_url(e->api));
	assert_int_equal(kube_client_new(kc, &e->c, NULL), 0);
	kube_config_free(kc);
	strcpy(e->dir, "/tmp/sk-cmwatch-XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->path, sizeof e->path, "%s/config.yaml", e->dir);
	return e;
}

static int new_daemon(struct env *e, const char *cm, char **err)
{
	struct sk_daemon_opts o = { .leader_elect = -1, .lease_duration_ms = -1, .renew_deadline_ms = -1,
				    .retry_period_ms = -1, .verbosity = -1, .secure_port = 0 };
	o.config_path = e->path;
	o.config_configmap = (char *)cm;
	o.master = (char *)apis_server_url(e->api);
	o.config_poll_ms = 50;
	return sk_daemon_new(&o, &e->d, err);
}

static void teardown(struct env *e)
{
	sk_daemon_free(e->d);
	kube_client_free(e->c);
	apis_server_stop(e->api);
	rm_volume(e);
	free(e);
}

static void test_configmap_is_the_fast_source(void **state)
{
	(void)state;
	struct env *e = setup();
	const char *a = CFG("- schedulerName: alpha\n"), *b = CFG("- schedulerName: alpha\n- schedulerName: beta\n");
	const char *bad = CFG("- schedulerName: alpha\n  plugins: {score: {enabled: [{name: Nope}]}}\n");
	const char *later = CFG("- schedulerName: gamma\n");
	char ha[65], hb[65], hbad[65], hlater[65], buf[128];
	sha256_hex(a, ha);
	sha256_hex(b, hb);
	sha256_hex(bad, hbad);
	sha256_hex(later, hlater);
	write_file(e, a);
	put_configmap(e, a, true);
	char *err = NULL;
	if (new_daemon(e, "kube-system/sched-config", &err) != 0)
		fail_msg("sk_daemon_new: %s", err ? err : "");
	assert_int_equal(sk_daemon_start(e->d, &err), 0);
	WAIT_FOR(!strcmp(lease_annotation(e, "schedkit.io/config-hash", buf, sizeof buf), ha));

	/* the ConfigMap changes, the mounted file does not (yet): the API's content runs, and the
	 * Lease says so long before the 5 s renew period */
	put_configmap(e, b, false);
	WAIT_FOR(running_is(e, hb));
	WAIT_FOR(!strcmp(lease_annotation(e, "schedkit.io/config-hash", buf, sizeof buf), hb));
	/* the stale file (polled every 50 ms) does not put the old configuration back */
	usleep(600 * 1000);
	assert_true(running_is(e, hb));

	/* an invalid version keeps the running one; the rejection reaches the Lease */
	put_configmap(e, bad, false);
	WAIT_FOR(!strcmp(lease_annotation(e, "schedkit.io/rejected-config-hash", buf, sizeof buf), hbad));
	assert_true(running_is(e, hb));
	assert_non_null(strstr(lease_annotation(e, "schedkit.io/rejected-config-error", buf, sizeof buf), "Nope"));
	put_configmap(e, b, false); /* back to what runs: the rejection is cleared */
	WAIT_FOR(!lease_annotation(e, "schedkit.io/rejected-config-hash", buf, sizeof buf)[0]);

	/* the ConfigMap gone, the file is the source again: its next change is loaded */
	char *path = kube_path("", "v1", "configmaps", "kube-system", "sched-config", NULL);
	assert_int_equal(kube_delete(e->c, path, NULL), 0);
	free(path);
	usleep(300 * 1000);
	assert_true(running_is(e, hb)); /* deleting the ConfigMap changes nothing by itself */
	write_file(e, later);
	WAIT_FOR(running_is(e, hlater));
	teardown(e);
}

static void test_bad_flag(void **state)
{
	(void)state;
	static const struct {
		const char *ref, *want;
	} t[] = {
		{ "no-slash", "--config-configmap: Invalid value: \"no-slash\": want NAMESPACE/NAME" },
		{ "/name", "want NAMESPACE/NAME" },
		{ "ns/", "want NAMESPACE/NAME" },
		{ "a/b/c", "want NAMESPACE/NAME" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct env *e = setup();
		write_file(e, CFG("- schedulerName: alpha\n"));
		char *err = NULL;
		assert_int_equal(new_daemon(e, t[i].ref, &err), -1);
		assert_non_null(err);
		if (!strstr(err, t[i].want))
			fail_msg("%s: %s", t[i].ref, err);
		free(err);
		e->d = NULL;
		teardown(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_configmap_is_the_fast_source),
		cmocka_unit_test(test_bad_flag),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
