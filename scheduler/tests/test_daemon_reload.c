/* Tests for the configuration reload of scheduler/daemon/daemon.c, against the in-process local API
 * server: the --config file lives in a kubelet-style ConfigMap volume (`..data` symlink swapped
 * atomically). Adding a profile schedules its pending pods and moves the Lease's config hash; an
 * invalid file, or one changing what needs a restart, keeps the running configuration and hash;
 * a removed profile's queued pods are left alone; reloads while hundreds of pods are scheduled
 * bind every pod exactly once (binding POSTs counted by their HTTP codes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <pthread.h>

#include "e2e/apiserver/server.h"
#include "kube/config.h"
#include "kube/log.h"
#include "kube/object.h"
#include "kube/rest.h"
#include "scheduler/daemon/daemon.h"
#include "schedkit/types.h"
#include "scheduler/tests/https_get.h"

#define NPODS_MAX 1024

struct env {
	struct apis_server *api;
	struct kube_client *c;
	char dir[64];      /* the "volume": dir/config.yaml -> ..data/config.yaml */
	char path[96];
	int version;
	struct sk_daemon *d;
	/* binding POSTs by pod index (names "p-NNNN") and by code */
	atomic_int bound[NPODS_MAX], refused[NPODS_MAX];
	atomic_int other_bindings;
};

/* Polls (up to ~20 s) until cond holds; the deadline only bounds a hang. */
#define WAIT_FOR(cond)                                                                                                 \
	do {                                                                                                           \
		int tries_ = 0;                                                                                        \
		while (!(cond) && tries_++ < 400)                                                                      \
			usleep(50000);                                                                                 \
		assert_true(cond);                                                                                     \
	} while (0)

static void on_binding(void *ctx, const struct sk_pod *pod, const char *node, int code)
{
	(void)node;
	struct env *e = ctx;
	int i;
	if (sscanf(pod->name, "p-%d", &i) == 1 && i >= 0 && i < NPODS_MAX) {
		if (code == 201)
			atomic_fetch_add(&e->bound[i], 1);
		else
			atomic_fetch_add(&e->refused[i], 1);
	} else {
		atomic_fetch_add(&e->other_bindings, 1);
	}
}

static void sha256_hex(const char *s, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	assert_int_equal(EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL), 1);
	for (unsigned int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* Writes a new version of the config the way kubelet updates a ConfigMap volume: a fresh
 * timestamped directory, then an atomic rename of the `..data` symlink onto it. */
static void write_config(struct env *e, const char *text)
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

static void create(struct env *e, const char *resource, const char *ns, const char *yaml)
{
	cJSON *obj = kube_yaml_parse_one(yaml, strlen(yaml), NULL);
	assert_non_null(obj);
	char *path = kube_path("", "v1", resource, ns, NULL, NULL);
	struct kube_error ke;
	if (kube_create(e->c, path, obj, NULL, &ke) != 0)
		fail_msg("create %s: %s", resource, ke.message);
	free(path);
	cJSON_Delete(obj);
}

static void create_pod(struct env *e, int i, const char *sched, const char *cpu)
{
	char y[512];
	snprintf(y, sizeof y,
		 "{apiVersion: v1, kind: Pod, metadata: {name: p-%04d}, spec: {schedulerName: %s, containers: [{name: c,"
		 " image: i, resources: {requests: {cpu: '%s'}}}]}}",
		 i, sched, cpu);
	create(e, "pods", "default", y);
}

static cJSON *get(struct env *e, const char *group, const char *resource, const char *ns, const char *name)
{
	char *path = kube_path(group, "v1", resource, ns, name, NULL);
	cJSON *out = NULL;
	struct kube_error ke;
	int rc = kube_get(e->c, path, &out, &ke);
	free(path);
	return rc == 0 ? out : NULL;
}

static bool pod_bound(struct env *e, int i)
{
	char name[32];
	snprintf(name, sizeof name, "p-%04d", i);
	cJSON *p = get(e, "", "pods", "default", name);
	bool b = p && kube_obj_get_string(p, "spec.nodeName");
	cJSON_Delete(p);
	return b;
}

static bool pod_unschedulable(struct env *e, int i)
{
	char name[32];
	snprintf(name, sizeof name, "p-%04d", i);
	cJSON *p = get(e, "", "pods", "default", name);
	const cJSON *c = p ? kube_condition_find(kube_obj_get(p, "status.conditions"), "PodScheduled") : NULL;
	const char *st = c ? kube_obj_get_string(c, "status") : NULL;
	bool r = st && !strcmp(st, "False");
	cJSON_Delete(p);
	return r;
}

/* Counts the pods p-first..p-(first+n-1) that are bound. */
static int count_bound(struct env *e, int first, int n)
{
	char *path = kube_path("", "v1", "pods", "default", NULL, NULL);
	cJSON *list = NULL;
	int cnt = 0;
	if (kube_list(e->c, path, NULL, NULL, &list, NULL) == 0) {
		const cJSON *it;
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(list, "items")) {
			int i;
			const char *name = kube_meta_name(it);
			if (name && sscanf(name, "p-%d", &i) == 1 && i >= first && i < first + n &&
			    kube_obj_get_string(it, "spec.nodeName"))
				cnt++;
		}
	}
	cJSON_Delete(list);
	free(path);
	return cnt;
}

static bool lease_hash_is(struct env *e, const char *lease, const char *want)
{
	cJSON *l = get(e, "coordination.k8s.io", "leases", "kube-system", lease);
	const char *h = l ? kube_meta_annotation(l, "schedkit.io/config-hash") : NULL;
	bool r = h && !strcmp(h, want);
	cJSON_Delete(l);
	return r;
}

#define http_get(port, path) sk_test_https_get(port, path, NULL, NULL)

#define NODE_YAML(name, cpu) "{apiVersion: v1, kind: Node, metadata: {name: " name "}, status: {allocatable: {cpu: '" cpu "', memory: 64Gi, pods: '500'}}}"

#define CFG_HEAD "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" \
		 "podInitialBackoffSeconds: 1\npodMaxBackoffSeconds: 1\n"
#define CFG_LEADER(name) "leaderElection: {leaderElect: true, resourceName: " name ", resourceNamespace: kube-system," \
			 " leaseDuration: 3s, renewDeadline: 2s, retryPeriod: 300ms}\n"
#define CFG_NO_LEADER "leaderElection: {leaderElect: false}\n"

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
	strcpy(e->dir, "/tmp/sk-reload-XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->path, sizeof e->path, "%s/config.yaml", e->dir);
	return e;
}

static void start(struct env *e, int poll_ms, int secure_port)
{
	struct sk_daemon_opts o = { .leader_elect = -1, .lease_duration_ms = -1, .renew_deadline_ms = -1,
				    .retry_period_ms = -1, .verbosity = -1, .secure_port = secure_port };
	o.config_path = e->path;
	o.master = (char *)apis_server_url(e->api);
	o.bind_address = "127.0.0.1";
	/* no delegation here (test_daemon.c has it): these paths are open to anyone */
	static char *open_paths[] = {"/configz", "/metrics", NULL};
	o.always_allow_paths = open_paths;
	o.config_poll_ms = poll_ms;
	o.on_binding = on_binding;
	o.on_binding_ctx = e;
	char *err = NULL;
	if (sk_daemon_new(&o, &e->d, &err) != 0)
		fail_msg("sk_daemon_new: %s", err ? err : "");
	assert_int_equal(sk_daemon_start(e->d, &err), 0);
}

static void teardown(struct env *e)
{
	sk_daemon_free(e->d);
	kube_client_free(e->c);
	apis_server_stop(e->api);
	rm_volume(e);
	free(e);
}

/* ---------- add a profile (the watcher notices the file) ---------- */

static void test_reload_adds_profile(void **state)
{
	(void)state;
	struct env *e = setup();
	const char *v1 = CFG_HEAD CFG_LEADER("reload-add") "profiles:\n- schedulerName: alpha\n";
	const char *v2 = CFG_HEAD CFG_LEADER("reload-add") "profiles:\n- schedulerName: alpha\n- schedulerName: beta\n"
			 "  percentageOfNodesToScore: 50\n";
	char h1[65], h2[65], running[65];
	sha256_hex(v1, h1);
	sha256_hex(v2, h2);
	write_config(e, v1);
	create(e, "nodes", NULL, NODE_YAML("node-a", "8"));
	create_pod(e, 0, "alpha", "1");
	create_pod(e, 1, "beta", "1");
	create_pod(e, 2, "beta", "1");
	start(e, 50, -1);
	int port = sk_daemon_http_port(e->d);
	WAIT_FOR(pod_bound(e, 0));
	WAIT_FOR(lease_hash_is(e, "reload-add", h1));
	assert_false(pod_bound(e, 1)); /* beta is nobody's yet */

	write_config(e, v2);
	WAIT_FOR(pod_bound(e, 1) && pod_bound(e, 2));
	WAIT_FOR(lease_hash_is(e, "reload-add", h2));
	sk_daemon_config_hash(e->d, running);
	assert_string_equal(running, h2);
	assert_int_equal(atomic_load(&e->bound[1]), 1);
	assert_int_equal(atomic_load(&e->bound[2]), 1);

	/* pods of the new profile created afterwards are picked up by the informer handlers */
	create_pod(e, 3, "beta", "1");
	WAIT_FOR(pod_bound(e, 3));

	char *body = http_get(port, "/configz");
	assert_non_null(body);
	assert_non_null(strstr(body, "\"schedulerName\":\t\"beta\""));
	free(body);
	body = http_get(port, "/metrics");
	assert_non_null(body);
	assert_non_null(strstr(body, "schedkit_config_reloads_total{result=\"success\"} 1"));
	assert_non_null(strstr(body, "schedkit_config_reloads_total{result=\"failure\"} 0"));
	assert_non_null(strstr(body, "schedkit_config_last_reload_successful 1"));
	free(body);
	teardown(e);
}

/* ---------- a bad file keeps the running config and hash ---------- */

static void test_reload_rejects_bad_config(void **state)
{
	(void)state;
	struct env *e = setup();
	const char *v1 = CFG_HEAD CFG_LEADER("reload-bad") "profiles:\n- schedulerName: alpha\n";
	const char *bad = CFG_HEAD CFG_LEADER("reload-bad") "profiles:\n- schedulerName: alpha\n- schedulerName: beta\n"
			  "  plugins: {score: {enabled: [{name: NodeResourceFit}]}}\n  percentageOfNodesToScore: 300\n";
	const char *restart = CFG_HEAD CFG_LEADER("reload-bad") "parallelism: 3\nprofiles:\n- schedulerName: alpha\n"
			      "- schedulerName: beta\n";
	const char *sort = CFG_HEAD CFG_LEADER("reload-bad") "profiles:\n- schedulerName: alpha\n"
			   "  plugins: {queueSort: {enabled: [{name: TestSort}], disabled: [{name: '*'}]}}\n";
	char h1[65], running[65];
	sha256_hex(v1, h1);
	write_config(e, v1);
	create(e, "nodes", NULL, NODE_YAML("node-a", "8"));
	create_pod(e, 1, "beta", "1");
	start(e, -1, -1); /* no watcher: reloads are driven here */
	WAIT_FOR(lease_hash_is(e, "reload-bad", h1));

	/* unchanged content: nothing to do */
	char *err = NULL;
	assert_int_equal(sk_daemon_reload(e->d, &err), 0);
	assert_null(err);

	/* invalid: every error is reported, nothing changes */
	write_config(e, bad);
	assert_int_equal(sk_daemon_reload(e->d, &err), -1);
	assert_non_null(err);
	assert_non_null(strstr(err, "profiles[1].plugins.score.enabled[0]: unknown plugin \"NodeResourceFit\""));
	assert_non_null(strstr(err, "percentageOfNodesToScore"));
	free(err);
	err = NULL;
	sk_daemon_config_hash(e->d, running);
	assert_string_equal(running, h1);
	/* the same bad content is not reported again on the next poll */
	assert_int_equal(sk_daemon_reload(e->d, &err), 0);

	/* a change that needs a restart is rejected as a whole: beta is not added either */
	write_config(e, restart);
	assert_int_equal(sk_daemon_reload(e->d, &err), -1);
	assert_non_null(err);
	assert_non_null(strstr(err, "changing parallelism needs a restart"));
	free(err);
	err = NULL;
	sk_daemon_config_hash(e->d, running);
	assert_string_equal(running, h1);

	/* the queue order too (an unknown sort plugin fails validation before that check) */
	write_config(e, sort);
	assert_int_equal(sk_daemon_reload(e->d, &err), -1);
	assert_non_null(err);
	free(err);
	err = NULL;

	/* an unreadable file (the ConfigMap key went away) */
	char target[200];
	snprintf(target, sizeof target, "%s/..v%d/config.yaml", e->dir, e->version);
	unlink(target);
	assert_int_equal(sk_daemon_reload(e->d, &err), -1);
	assert_non_null(strstr(err, "No such file or directory"));
	free(err);
	err = NULL;

	/* the running config kept scheduling: a new alpha pod is bound, beta's is not */
	create_pod(e, 0, "alpha", "1");
	WAIT_FOR(pod_bound(e, 0));
	assert_false(pod_bound(e, 1));
	/* and the Lease still carries the old hash after a few renewals */
	usleep(700000);
	assert_true(lease_hash_is(e, "reload-bad", h1));

	/* back to the running content: nothing to reload, the gauge goes back to 1 */
	write_config(e, v1);
	assert_int_equal(sk_daemon_reload(e->d, &err), 0);
	assert_null(err);
	teardown(e);
}

/* ---------- remove a profile: its queued pods are left alone ---------- */

static void test_reload_removes_profile(void **state)
{
	(void)state;
	struct env *e = setup();
	const char *v1 = CFG_HEAD CFG_NO_LEADER "profiles:\n- schedulerName: alpha\n- schedulerName: beta\n";
	const char *v2 = CFG_HEAD CFG_NO_LEADER "profiles:\n- schedulerName: alpha\n";
	write_config(e, v1);
	create(e, "nodes", NULL, NODE_YAML("node-a", "4"));
	create_pod(e, 0, "alpha", "1");
	create_pod(e, 1, "beta", "50"); /* fits nowhere yet: waits in the queue */
	create_pod(e, 2, "beta", "50");
	start(e, -1, 0);
	WAIT_FOR(pod_bound(e, 0));
	WAIT_FOR(pod_unschedulable(e, 1) && pod_unschedulable(e, 2));

	char *err = NULL;
	write_config(e, v2);
	assert_int_equal(sk_daemon_reload(e->d, &err), 1);
	assert_null(err);
	/* a node where the beta pods would fit, and an alpha pod that needs it too */
	create(e, "nodes", NULL, NODE_YAML("node-big", "200"));
	create_pod(e, 3, "alpha", "50");
	WAIT_FOR(pod_bound(e, 3));
	/* the alpha pod went through; the beta pods were not even tried (past their 1 s backoff) */
	usleep(1500000);
	assert_false(pod_bound(e, 1));
	assert_false(pod_bound(e, 2));
	assert_int_equal(atomic_load(&e->bound[1]) + atomic_load(&e->refused[1]), 0);
	assert_int_equal(atomic_load(&e->bound[2]) + atomic_load(&e->refused[2]), 0);
	/* a new beta pod is not ours either */
	create_pod(e, 4, "beta", "1");
	create_pod(e, 5, "alpha", "1");
	WAIT_FOR(pod_bound(e, 5));
	usleep(300000);
	assert_false(pod_bound(e, 4));

	/* adding it back picks the waiting pods up again */
	write_config(e, v1);
	assert_int_equal(sk_daemon_reload(e->d, &err), 1);
	WAIT_FOR(pod_bound(e, 1) && pod_bound(e, 2) && pod_bound(e, 4));
	teardown(e);
}

/* ---------- removal with bindings in flight: none lands after the reload returns ---------- */

static int beta_posts(struct env *e, int first, int n)
{
	int c = 0;
	for (int i = first; i < first + n; i++)
		c += atomic_load(&e->bound[i]) + atomic_load(&e->refused[i]);
	return c;
}

static void test_reload_removes_profile_in_flight(void **state)
{
	(void)state;
	struct env *e = calloc(1, sizeof *e);
	assert_non_null(e);
	struct apis_opts ao = APIS_OPTS_DEFAULT;
	ao.port = 0;
	ao.fault_delay_ms = 100; /* every API call is slow: bindings overlap the reload */
	assert_int_equal(apis_server_start(&ao, &e->api), 0);
	struct kube_config *kc = kube_config_new(apis_server_url(e->api));
	assert_int_equal(kube_client_new(kc, &e->c, NULL), 0);
	kube_config_free(kc);
	strcpy(e->dir, "/tmp/sk-reload-XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->path, sizeof e->path, "%s/config.yaml", e->dir);
	const char *v1 = CFG_HEAD CFG_NO_LEADER "profiles:\n- schedulerName: alpha\n- schedulerName: beta\n";
	const char *v2 = CFG_HEAD CFG_NO_LEADER "profiles:\n- schedulerName: alpha\n";
	write_config(e, v1);
	create(e, "nodes", NULL, NODE_YAML("node-a", "64"));
	for (int i = 0; i < 40; i++)
		create_pod(e, i, "beta", "10m");
	start(e, -1, 0);
	WAIT_FOR(beta_posts(e, 0, 40) > 0); /* bindings are under way */
	char *err = NULL;
	write_config(e, v2);
	assert_int_equal(sk_daemon_reload(e->d, &err), 1);
	/* every binding POST of a beta pod happened before the reload returned */
	int posts = beta_posts(e, 0, 40);
	int bound = count_bound(e, 0, 40);
	create_pod(e, 100, "alpha", "10m");
	WAIT_FOR(pod_bound(e, 100));
	usleep(1500000);
	assert_int_equal(beta_posts(e, 0, 40), posts);
	assert_int_equal(count_bound(e, 0, 40), bound);
	print_message("# %d of 40 beta pods bound before the reload removed the profile\n", bound);
	teardown(e);
}

/* ---------- a standby replica (not leading) reloads as well ---------- */

static void test_reload_standby(void **state)
{
	(void)state;
	struct env *e = setup();
	/* someone else holds the Lease for a long time */
	const char *lease = "{apiVersion: coordination.k8s.io/v1, kind: Lease, metadata: {name: reload-standby,"
			    " namespace: kube-system}, spec: {holderIdentity: other, leaseDurationSeconds: 600,"
			    " renewTime: '2100-01-01T00:00:00.000000Z', acquireTime: '2100-01-01T00:00:00.000000Z'}}";
	cJSON *obj = kube_yaml_parse_one(lease, strlen(lease), NULL);
	char *path = kube_path("coordination.k8s.io", "v1", "leases", "kube-system", NULL, NULL);
	struct kube_error ke;
	if (kube_create(e->c, path, obj, NULL, &ke) != 0)
		fail_msg("create lease: %s", ke.message);
	free(path);
	cJSON_Delete(obj);
	const char *v1 = CFG_HEAD CFG_LEADER("reload-standby") "profiles:\n- schedulerName: alpha\n";
	const char *v2 = CFG_HEAD CFG_LEADER("reload-standby") "profiles:\n- schedulerName: alpha\n- schedulerName: beta\n";
	const char *v3 = CFG_HEAD CFG_LEADER("reload-standby") "profiles:\n- schedulerName: beta\n";
	char h3[65], running[65];
	sha256_hex(v3, h3);
	write_config(e, v1);
	create_pod(e, 1, "beta", "1");
	start(e, -1, 0);
	WAIT_FOR(sk_daemon_synced(e->d));
	assert_false(sk_daemon_is_leading(e->d));
	char *err = NULL;
	/* without a scheduling loop the replaced configurations are released at once */
	write_config(e, v2);
	assert_int_equal(sk_daemon_reload(e->d, &err), 1);
	write_config(e, v3);
	assert_int_equal(sk_daemon_reload(e->d, &err), 1);
	assert_null(err);
	sk_daemon_config_hash(e->d, running);
	assert_string_equal(running, h3);
	usleep(200000);
	assert_false(pod_bound(e, 1)); /* a standby binds nothing */
	teardown(e);
}

/* ---------- reloads under load: every pod bound exactly once ---------- */

struct creator {
	struct env *e;
	int first, n;
};

static void *creator_main(void *arg)
{
	struct creator *c = arg;
	for (int i = c->first; i < c->first + c->n; i++) {
		create_pod(c->e, i, i % 3 == 0 ? "beta" : "alpha", "10m");
		if (i % 50 == 0)
			usleep(20000);
	}
	return NULL;
}

static void test_reload_under_load(void **state)
{
	(void)state;
	struct env *e = setup();
	enum { NPODS = 900 };
	static const char *const versions[] = {
		CFG_HEAD CFG_NO_LEADER "profiles:\n- schedulerName: alpha\n",
		/* beta added: its pending pods are queued */
		CFG_HEAD CFG_NO_LEADER "profiles:\n- schedulerName: alpha\n- schedulerName: beta\n",
		/* alpha changed, a third profile added */
		CFG_HEAD CFG_NO_LEADER "profiles:\n- schedulerName: alpha\n  percentageOfNodesToScore: 30\n"
				       "- schedulerName: beta\n- schedulerName: gamma\n",
		/* gamma removed, beta changed */
		CFG_HEAD CFG_NO_LEADER "profiles:\n- schedulerName: alpha\n  percentageOfNodesToScore: 30\n"
				       "- schedulerName: beta\n  plugins: {score: {disabled: [{name: ImageLocality}]}}\n",
		/* an invalid one in the middle */
		CFG_HEAD CFG_NO_LEADER "profiles:\n- schedulerName: alpha\n  plugins: {filter: {enabled: [{name: Nope}]}}\n",
		CFG_HEAD CFG_NO_LEADER "profiles:\n- schedulerName: beta\n- schedulerName: alpha\n",
		CFG_HEAD CFG_NO_LEADER "profiles:\n- schedulerName: alpha\n- schedulerName: beta\n"
				       "  percentageOfNodesToScore: 10\n",
	};
	static const int want[] = { 1, 1, 1, -1, 1, 1 };
	write_config(e, versions[0]);
	for (int i = 0; i < 8; i++) {
		char y[256];
		snprintf(y, sizeof y,
			 "{apiVersion: v1, kind: Node, metadata: {name: node-%d}, status: {allocatable: {cpu: '64',"
			 " memory: 64Gi, pods: '500'}}}",
			 i);
		create(e, "nodes", NULL, y);
	}
	start(e, -1, 0);
	struct creator c1 = { e, 0, NPODS / 2 }, c2 = { e, NPODS / 2, NPODS / 2 };
	pthread_t t1, t2;
	assert_int_equal(pthread_create(&t1, NULL, creator_main, &c1), 0);
	assert_int_equal(pthread_create(&t2, NULL, creator_main, &c2), 0);
	for (int round = 0; round < 3; round++) {
		for (size_t v = 1; v < sizeof versions / sizeof versions[0]; v++) {
			char *err = NULL;
			usleep(50000);
			write_config(e, versions[v]);
			int rc = sk_daemon_reload(e->d, &err);
			if (rc != want[v - 1])
				fail_msg("round %d version %zu: rc %d (%s)", round, v, rc, err ? err : "");
			free(err);
		}
		if (round < 2) {
			/* beta removed while its pods are in flight; the next round adds it back */
			char *err = NULL;
			write_config(e, versions[0]);
			assert_int_equal(sk_daemon_reload(e->d, &err), 1);
		}
	}
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	WAIT_FOR(count_bound(e, 0, NPODS) == NPODS);
	sk_daemon_stop(e->d);
	int twice = 0, conflicts = 0, never = 0;
	for (int i = 0; i < NPODS; i++) {
		int b = atomic_load(&e->bound[i]);
		if (b == 0)
			never++;
		if (b > 1)
			twice++;
		conflicts += atomic_load(&e->refused[i]);
	}
	if (twice || conflicts || never)
		fail_msg("%d pods bound more than once, %d refused binding POSTs, %d bound by nobody", twice, conflicts,
			 never);
	assert_int_equal(atomic_load(&e->other_bindings), 0);
	teardown(e);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_ALL);
	if (getenv("SK_TEST_V"))
		kube_log_set_verbosity(atoi(getenv("SK_TEST_V")));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reload_adds_profile),
		cmocka_unit_test(test_reload_rejects_bad_config),
		cmocka_unit_test(test_reload_removes_profile),
		cmocka_unit_test(test_reload_removes_profile_in_flight),
		cmocka_unit_test(test_reload_standby),
		cmocka_unit_test(test_reload_under_load),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
