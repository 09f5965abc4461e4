/* Tests for scheduler/daemon/daemon.c: upstream flag parsing (table-driven), node-update action bits,
 * and the daemon end to end against the in-process local API server (e2e/apiserver): binding,
 * other schedulerNames untouched, FailedScheduling + PodScheduled=False, a node added later,
 * the Lease with the config hash, /readyz /metrics /configz, and the lease release on stop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "e2e/apiserver/server.h"
#include "kube/config.h"
#include "kube/log.h"
#include "kube/object.h"
#include "kube/rest.h"
#include "scheduler/api/raw.h"
#include "scheduler/backend/cache.h"
#include "scheduler/daemon/daemon.h"
#include "scheduler/daemon/internal.h"
#include "schedkit/plugin.h"
#include "scheduler/tests/fixtures.h"
#include "scheduler/tests/https_get.h"

/* ---------- the event's Pod reference (env.c, sk_dm_pod_ref) ---------- */

/* The tree built without allocating prints as the cJSON object the daemon built before and reads
 * the same through cJSON's lookups; one buffer reused across pods keeps nothing of the previous
 * one (a resourceVersion, a uid). */
static void test_pod_ref(void **state)
{
	(void)state;
	static const struct { const char *name, *ns, *pod, *uid, *rv, *want; } cases[] = {
		{ "full", "default", "p1", "u1", "42",
		  "{\"metadata\":{\"namespace\":\"default\",\"name\":\"p1\",\"uid\":\"u1\",\"resourceVersion\":\"42\"},"
		  "\"kind\":\"Pod\",\"apiVersion\":\"v1\"}" },
		{ "no resourceVersion after one", "ns2", "p2", "u2", NULL,
		  "{\"metadata\":{\"namespace\":\"ns2\",\"name\":\"p2\",\"uid\":\"u2\"},\"kind\":\"Pod\",\"apiVersion\":\"v1\"}" },
		{ "no uid", "ns3", "p3", NULL, "7",
		  "{\"metadata\":{\"namespace\":\"ns3\",\"name\":\"p3\",\"uid\":\"\",\"resourceVersion\":\"7\"},"
		  "\"kind\":\"Pod\",\"apiVersion\":\"v1\"}" },
		{ "quotes escaped", "ns", "a\"b", "u", "1",
		  "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"a\\\"b\",\"uid\":\"u\",\"resourceVersion\":\"1\"},"
		  "\"kind\":\"Pod\",\"apiVersion\":\"v1\"}" },
		{ "no namespace", NULL, "p", "u", "1", NULL },
		{ "full again", "default", "p1", "u1", "42",
		  "{\"metadata\":{\"namespace\":\"default\",\"name\":\"p1\",\"uid\":\"u1\",\"resourceVersion\":\"42\"},"
		  "\"kind\":\"Pod\",\"apiVersion\":\"v1\"}" },
	};
	struct sk_dm_pod_ref r;
	memset(&r, 0x5a, sizeof(r)); /* garbage: each call must build r whole */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sk_pod pod = { .ns = (char *)cases[i].ns, .name = (char *)cases[i].pod, .uid = (char *)cases[i].uid,
				      .resource_version = (char *)cases[i].rv };
		const cJSON *ref = sk_dm_pod_ref(&r, &pod);
		if (!cases[i].want) {
			if (ref)
				fail_msg("case %s: a reference without a namespace", cases[i].name);
			continue;
		}
		assert_non_null(ref);
		char *printed = cJSON_PrintUnformatted(ref);
		if (!printed || strcmp(printed, cases[i].want) != 0)
			fail_msg("case %s: %s, want %s", cases[i].name, printed ? printed : "(null)", cases[i].want);
		free(printed);
		/* what the event recorder reads of it */
		assert_string_equal(kube_obj_get_string(ref, "metadata.name"), cases[i].pod);
		assert_string_equal(kube_obj_get_string(ref, "kind"), "Pod");
		const char *rv = kube_obj_get_string(ref, "metadata.resourceVersion");
		if (cases[i].rv)
			assert_string_equal(rv, cases[i].rv);
		else
			assert_null(rv);
		/* a duplicate owns its strings and frees cleanly */
		cJSON *dup = cJSON_Duplicate(ref, true);
		char *again = cJSON_PrintUnformatted(dup);
		assert_string_equal(again, cases[i].want);
		free(again);
		cJSON_Delete(dup);
	}
}

/* ---------- flags ---------- */

static int parse(const char *const *args, int n, struct sk_daemon_opts *o, char **errtext)
{
	char *argv[32];
	argv[0] = "schedkit-scheduler";
	for (int i = 0; i < n; i++)
		argv[i + 1] = (char *)args[i];
	char *ob = NULL, *eb = NULL;
	size_t ol = 0, el = 0;
	FILE *out = open_memstream(&ob, &ol), *err = open_memstream(&eb, &el);
	int rc = sk_daemon_parse_args(n + 1, argv, o, out, err);
	fclose(out);
	fclose(err);
	free(ob);
	if (errtext)
		*errtext = eb;
	else
		free(eb);
	return rc;
}

static void test_flags_defaults(void **state)
{
	(void)state;
	struct sk_daemon_opts o;
	assert_int_equal(parse(NULL, 0, &o, NULL), 0);
	assert_int_equal(o.secure_port, 10259);
	assert_int_equal(o.leader_elect, -1);
	assert_int_equal(o.lease_duration_ms, -1);
	assert_int_equal(o.verbosity, -1);
	assert_null(o.config_path);
	assert_false(o.validate);
	sk_daemon_opts_free(&o);
}

static void test_flags_values(void **state)
{
	(void)state;
	static const char *const args[] = {
		"--config=/etc/c.yaml", "--kubeconfig", "/k", "--master=http://x:1", "--leader-elect=false",
		"--leader-elect-lease-duration", "30s", "--leader-elect-renew-deadline=20s",
		"--leader-elect-retry-period", "500ms", "--leader-elect-resource-name=my-sched",
		"--leader-elect-resource-namespace", "sched-ns", "--v=4", "--secure-port", "0",
		"--bind-address=127.0.0.1", "--authentication-kubeconfig=/a", "--authorization-kubeconfig", "/b",
		"--leader-elect-resource-lock=leases",
	};
	struct sk_daemon_opts o;
	char *e = NULL;
	assert_int_equal(parse(args, (int)(sizeof args / sizeof args[0]), &o, &e), 0);
	assert_string_equal(o.config_path, "/etc/c.yaml");
	assert_string_equal(o.kubeconfig, "/k");
	assert_string_equal(o.master, "http://x:1");
	assert_int_equal(o.leader_elect, 0);
	assert_int_equal(o.lease_duration_ms, 30000);
	assert_int_equal(o.renew_deadline_ms, 20000);
	assert_int_equal(o.retry_period_ms, 500);
	assert_string_equal(o.lease_name, "my-sched");
	assert_string_equal(o.lease_namespace, "sched-ns");
	assert_int_equal(o.verbosity, 4);
	assert_int_equal(o.secure_port, 0);
	assert_string_equal(o.bind_address, "127.0.0.1");
	assert_string_equal(o.authn_kubeconfig, "/a");
	assert_string_equal(o.authz_kubeconfig, "/b");
	assert_string_equal(e, ""); /* every flag given applies: no warning */
	free(e);
	sk_daemon_opts_free(&o);

	static const char *const args2[] = { "--leader-elect", "-v", "2", "--config", "c", "--validate" };
	assert_int_equal(parse(args2, 6, &o, NULL), 0);
	assert_int_equal(o.leader_elect, 1);
	assert_int_equal(o.verbosity, 2);
	assert_true(o.validate);
	sk_daemon_opts_free(&o);
}

/* --validate with a legacy Policy alone (docs/config.md, "Legacy Policy and convert"). */
static void test_flags_policy(void **state)
{
	(void)state;
	struct sk_daemon_opts o;
	const char *args[] = { "--policy-config-file", "/etc/policy.json", "--use-legacy-policy-config", "--validate" };
	assert_int_equal(parse(args, 4, &o, NULL), 0);
	assert_string_equal(o.policy_path, "/etc/policy.json");
	assert_null(o.config_path);
	assert_true(o.validate);
	sk_daemon_opts_free(&o);
}

static void test_flags_errors(void **state)
{
	(void)state;
	static const struct {
		const char *args[3];
		int n;
		int rc;
		const char *msg;
	} cases[] = {
		{ { "--nope" }, 1, 2, "unknown flag: --nope" },
		{ { "--config" }, 1, 2, "flag needs an argument: --config" },
		{ { "--secure-port=70000" }, 1, 2, "must be a port number" },
		{ { "--leader-elect=maybe" }, 1, 2, "strconv.ParseBool" },
		{ { "--leader-elect-lease-duration=soon" }, 1, 2, "time: invalid duration" },
		{ { "stray" }, 1, 2, "does not take any arguments" },
		{ { "-x" }, 1, 2, "unknown shorthand flag" },
		{ { "--validate" }, 1, 2, "--validate needs --config" },
		{ { "--policy-configmap=sched-policy", "--validate" }, 2, 2, "--validate does not read --policy-configmap (no API access): save the data key \"policy.cfg\" of ConfigMap kube-system/sched-policy" },
		{ { "--leader-elect-resource-lock=endpoints" }, 1, 2, "only \"leases\"" },
		{ { "--tls-cert-file=/c" }, 1, 2, "must be given together" },
		{ { "--help" }, 1, 1, NULL },
		{ { "-h" }, 1, 1, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sk_daemon_opts o;
		char *e = NULL;
		int rc = parse(cases[i].args, cases[i].n, &o, &e);
		if (rc != cases[i].rc || (cases[i].msg && !strstr(e, cases[i].msg)))
			fail_msg("case %zu (%s): rc %d, stderr %s", i, cases[i].args[0], rc, e ? e : "");
		free(e);
		sk_daemon_opts_free(&o);
	}
}

/* ---------- node update actions ---------- */

static void test_node_update_actions(void **state)
{
	(void)state;
	struct sk_node *base = fx_node("{metadata: {name: n1, labels: {a: '1'}}, status: {allocatable: {cpu: '2', pods: '10'}}}");
	struct sk_node *same = fx_node("{metadata: {name: n1, labels: {a: '1'}, annotations: {x: y}}, status: {allocatable: {cpu: '2', pods: '10'}}}");
	struct sk_node *label = fx_node("{metadata: {name: n1, labels: {a: '2'}}, status: {allocatable: {cpu: '2', pods: '10'}}}");
	struct sk_node *alloc = fx_node("{metadata: {name: n1, labels: {a: '1'}}, status: {allocatable: {cpu: '4', pods: '10'}}}");
	struct sk_node *taint = fx_node("{metadata: {name: n1, labels: {a: '1'}}, spec: {taints: [{key: k, effect: NoSchedule}]}, status: {allocatable: {cpu: '2', pods: '10'}}}");
	struct sk_node *cordon = fx_node("{metadata: {name: n1, labels: {a: '1'}}, spec: {unschedulable: true}, status: {allocatable: {cpu: '2', pods: '10'}}}");
	struct sk_node *all = fx_node("{metadata: {name: n1, labels: {b: '1'}}, spec: {taints: [{key: k, effect: NoSchedule}]}, status: {allocatable: {cpu: '3', pods: '10'}}}");
	assert_int_equal(sk_node_update_actions(base, same), 0);
	assert_int_equal(sk_node_update_actions(base, label), SK_ACT_UPDATE_NODE_LABEL);
	assert_int_equal(sk_node_update_actions(base, alloc), SK_ACT_UPDATE_NODE_ALLOCATABLE);
	assert_int_equal(sk_node_update_actions(base, taint), SK_ACT_UPDATE_NODE_TAINT);
	assert_int_equal(sk_node_update_actions(base, cordon), SK_ACT_UPDATE_NODE_TAINT);
	assert_int_equal(sk_node_update_actions(base, all),
			 SK_ACT_UPDATE_NODE_LABEL | SK_ACT_UPDATE_NODE_ALLOCATABLE | SK_ACT_UPDATE_NODE_TAINT);
	assert_int_equal(sk_node_update_actions(NULL, base), SK_ACT_UPDATE);
	sk_node_unref(base);
	sk_node_unref(same);
	sk_node_unref(label);
	sk_node_unref(alloc);
	sk_node_unref(taint);
	sk_node_unref(cordon);
	sk_node_unref(all);
}

static void test_node_object_update_actions(void **state)
{
	(void)state;
	static const struct {
		const char *old_obj, *new_obj;
		uint32_t want;
	} cases[] = {
		{ "{metadata: {name: n}}", "{metadata: {name: n}}", 0 },
		{ "{metadata: {name: n}, status: {conditions: [{type: Ready, status: 'True', lastHeartbeatTime: a}]}}",
		  "{metadata: {name: n}, status: {conditions: [{type: Ready, status: 'True', lastHeartbeatTime: b}]}}", 0 },
		{ "{metadata: {name: n}, status: {conditions: [{type: Ready, status: 'True'}]}}",
		  "{metadata: {name: n}, status: {conditions: [{type: Ready, status: 'False'}]}}", SK_ACT_UPDATE_NODE_CONDITION },
		{ "{metadata: {name: n}, status: {conditions: [{type: Ready, status: 'True'}]}}",
		  "{metadata: {name: n}, status: {conditions: [{type: Ready, status: 'True'}, {type: DiskPressure, status: 'True'}]}}",
		  SK_ACT_UPDATE_NODE_CONDITION },
		{ "{metadata: {name: n, annotations: {a: '1'}}}", "{metadata: {name: n, annotations: {a: '2'}}}",
		  SK_ACT_UPDATE_NODE_ANNOTATION },
		{ "{metadata: {name: n}}", "{metadata: {name: n, annotations: {}}}", 0 },
		{ "{metadata: {name: n}}", "{metadata: {name: n, annotations: {a: b}}}", SK_ACT_UPDATE_NODE_ANNOTATION },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cJSON *o = fx_json(cases[i].old_obj), *n = fx_json(cases[i].new_obj);
		uint32_t got = sk_node_object_update_actions(o, n);
		if (got != cases[i].want)
			fail_msg("case %zu: got %#x want %#x", i, got, cases[i].want);
		cJSON_Delete(o);
		cJSON_Delete(n);
	}
}

/* ---------- against the local API server ---------- */

struct env {
	struct apis_server *api;
	struct kube_client *c;
	char kubeconfig[64];
};

static void create(struct env *e, const char *resource, const char *ns, const char *yaml)
{
	cJSON *obj = kube_yaml_parse_one(yaml, strlen(yaml), NULL);
	assert_non_null(obj);
	char *path = kube_path(!strcmp(resource, "leases") ? "coordination.k8s.io" : "", "v1", resource, ns, NULL, NULL);
	struct kube_error ke;
	if (kube_create(e->c, path, obj, NULL, &ke) != 0)
		fail_msg("create %s: %s", resource, ke.message);
	free(path);
	cJSON_Delete(obj);
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

static const char *pod_node(struct env *e, const char *name, char *buf, size_t n)
{
	cJSON *p = get(e, "", "pods", "default", name);
	const char *nn = p ? kube_obj_get_string(p, "spec.nodeName") : NULL;
	snprintf(buf, n, "%s", nn ? nn : "");
	cJSON_Delete(p);
	return buf;
}

/* Polls (up to ~20 s) until pred holds; the test fails if it never does. Not a timing assertion:
 * the deadline only bounds a hang. */
#define WAIT_FOR(cond)                                                                                                 \
	do {                                                                                                           \
		int tries_ = 0;                                                                                        \
		while (!(cond) && tries_++ < 400)                                                                      \
			usleep(50000);                                                                                 \
		assert_true(cond);                                                                                     \
	} while (0)

#define TEST_TOKEN "sk-daemon-test-token"

/* The API server's token: its TokenReview makes the caller a system:masters member. */
#define http_get(port, path, code) sk_test_https_get(port, path, TEST_TOKEN, code)

static bool has_event(struct env *e, const char *pod, const char *reason)
{
	char *path = kube_path("events.k8s.io", "v1", "events", "default", NULL, NULL);
	cJSON *list = NULL;
	bool found = false;
	if (kube_list(e->c, path, NULL, NULL, &list, NULL) == 0) {
		const cJSON *it;
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(list, "items")) {
			const char *r = kube_obj_get_string(it, "reason");
			const char *n = kube_obj_get_string(it, "regarding.name");
			if (r && n && !strcmp(r, reason) && !strcmp(n, pod))
				found = true;
		}
	}
	cJSON_Delete(list);
	free(path);
	return found;
}

#define NODE_YAML(name, cpu) "{apiVersion: v1, kind: Node, metadata: {name: " name "}, status: {allocatable: {cpu: '" cpu "', memory: 8Gi, pods: '110'}}}"
#define POD_YAML(name, cpu, sched) "{apiVersion: v1, kind: Pod, metadata: {name: " name "}, spec: {schedulerName: " sched ", containers: [{name: c, image: i, resources: {requests: {cpu: '" cpu "'}}}]}}"

/* The binding's echo confirms the assumed pod: bound in the cache, with the object's new
 * resourceVersion, its node and the served text (scheduler/daemon/handlers.c, on_pod_update_text). */
static void assert_echo_confirmed(struct env *e, struct sk_daemon *d, const char *name)
{
	cJSON *pod = get(e, "", "pods", "default", name);
	assert_non_null(pod);
	const char *uid = kube_obj_get_string(pod, "metadata.uid");
	const char *rv = kube_obj_get_string(pod, "metadata.resourceVersion");
	assert_non_null(uid);
	WAIT_FOR(sk_cache_pod_state(d->cache, uid) == SK_POD_BOUND);
	struct sk_pod *cached = NULL;
	for (int i = 0; i < 400; i++) {
		sk_pod_unref(cached);
		cached = sk_cache_get_pod(d->cache, uid);
		if (cached && !strcmp(cached->resource_version, rv))
			break;
		usleep(50000);
	}
	assert_non_null(cached);
	assert_string_equal(cached->resource_version, rv);
	assert_string_equal(cached->node_name, kube_obj_get_string(pod, "spec.nodeName"));
	const struct sk_obj_raw *raw = sk_pod_raw(cached);
	assert_non_null(raw->json);
	assert_non_null(strstr(raw->json, "\"nodeName\""));
	sk_pod_unref(cached);
	cJSON_Delete(pod);
}

static void test_daemon_end_to_end(void **state)
{
	(void)state;
	struct env e = { 0 };
	struct apis_opts ao = APIS_OPTS_DEFAULT;
	ao.port = 0;
	ao.token = TEST_TOKEN;
	assert_int_equal(apis_server_start(&ao, &e.api), 0);
	strcpy(e.kubeconfig, "/tmp/sk-daemon-kc-XXXXXX");
	int fd = mkstemp(e.kubeconfig);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(apis_server_write_kubeconfig(e.api, e.kubeconfig), 0);
	struct kube_config *kc = kube_config_new(apis_server_url(e.api));
	kc->token = strdup(TEST_TOKEN);
	assert_int_equal(kube_client_new(kc, &e.c, NULL), 0);
	kube_config_free(kc);

	create(&e, "nodes", NULL, NODE_YAML("node-a", "2"));
	create(&e, "nodes", NULL, NODE_YAML("node-b", "2"));
	create(&e, "pods", "default", POD_YAML("small", "1", "default-scheduler"));
	create(&e, "pods", "default", POD_YAML("big", "3", "default-scheduler"));
	create(&e, "pods", "default", POD_YAML("theirs", "1", "other-scheduler"));

	char cfgpath[] = "/tmp/sk-daemon-cfg-XXXXXX";
	fd = mkstemp(cfgpath);
	assert_true(fd >= 0);
	const char *cfg = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
			  "leaderElection: {leaderElect: true, resourceName: test-sched, resourceNamespace: kube-system,"
			  " leaseDuration: 3s, renewDeadline: 2s, retryPeriod: 500ms}\n"
			  "podInitialBackoffSeconds: 1\npodMaxBackoffSeconds: 1\n";
	assert_int_equal(write(fd, cfg, strlen(cfg)), (ssize_t)strlen(cfg));
	close(fd);

	struct sk_daemon_opts o = { .leader_elect = -1, .lease_duration_ms = -1, .renew_deadline_ms = -1,
				    .retry_period_ms = -1, .verbosity = -1, .secure_port = -1 };
	o.config_path = cfgpath;
	o.kubeconfig = e.kubeconfig;
	o.authn_kubeconfig = o.authz_kubeconfig = e.kubeconfig;
	o.bind_address = "127.0.0.1";
	struct sk_daemon *d = NULL;
	char *err = NULL;
	if (sk_daemon_new(&o, &d, &err) != 0)
		fail_msg("sk_daemon_new: %s", err ? err : "");
	assert_int_equal(sk_daemon_start(d, &err), 0);
	int port = sk_daemon_http_port(d);
	assert_true(port > 0);

	char buf[128];
	WAIT_FOR(*pod_node(&e, "small", buf, sizeof buf) != '\0');
	assert_true(sk_daemon_is_leading(d));
	assert_echo_confirmed(&e, d, "small");
	/* the unschedulable pod gets PodScheduled=False with the FitError message and an event */
	const char *want = "0/2 nodes are available: 2 Insufficient cpu.";
	bool cond_ok = false;
	for (int i = 0; i < 400 && !cond_ok; i++) {
		cJSON *p = get(&e, "", "pods", "default", "big");
		const cJSON *c = kube_condition_find(kube_obj_get(p, "status.conditions"), "PodScheduled");
		const char *st = c ? kube_obj_get_string(c, "status") : NULL, *re = c ? kube_obj_get_string(c, "reason") : NULL;
		const char *msg = c ? kube_obj_get_string(c, "message") : NULL;
		/* the FitError text (a preemption suffix may follow once DefaultPreemption is built) */
		cond_ok = st && !strcmp(st, "False") && re && !strcmp(re, "Unschedulable") && msg &&
			  !strncmp(msg, want, strlen(want));
		cJSON_Delete(p);
		if (!cond_ok)
			usleep(50000);
	}
	assert_true(cond_ok);
	WAIT_FOR(has_event(&e, "big", "FailedScheduling"));
	WAIT_FOR(has_event(&e, "small", "Scheduled"));
	assert_string_equal(pod_node(&e, "theirs", buf, sizeof buf), "");

	/* the Lease: held by us, with the config hash annotation */
	cJSON *lease = NULL;
	const char *hash = NULL;
	for (int i = 0; i < 400 && !hash; i++) {
		cJSON_Delete(lease);
		lease = get(&e, "coordination.k8s.io", "leases", "kube-system", "test-sched");
		hash = lease ? kube_meta_annotation(lease, "schedkit.io/config-hash") : NULL;
		if (!hash)
			usleep(50000);
	}
	assert_non_null(hash);
	assert_int_equal(strlen(hash), 64);
	const char *holder = kube_obj_get_string(lease, "spec.holderIdentity");
	assert_non_null(holder);
	assert_true(strlen(holder) > 0);
	cJSON_Delete(lease);

	/* endpoints */
	long code;
	char *body = http_get(port, "/readyz", &code);
	assert_int_equal(code, 200);
	free(body);
	body = http_get(port, "/healthz", &code);
	assert_int_equal(code, 200);
	free(body);
	body = http_get(port, "/metrics", &code);
	assert_int_equal(code, 200);
	assert_non_null(strstr(body, "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"} 1"));
	assert_non_null(strstr(body, "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"unschedulable\"}"));
	assert_non_null(strstr(body, "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"PreFilter\""));
	assert_non_null(strstr(body, "scheduler_pending_pods{queue=\"active\"}"));
	assert_non_null(strstr(body, "leader_election_master_status{name=\"test-sched\"} 1"));
	free(body);
	body = http_get(port, "/metrics?x", &code); /* the token review is cached: same answer */
	assert_int_equal(code, 200);
	free(body);
	body = http_get(port, "/configz", &code);
	assert_int_equal(code, 200);
	cJSON *cz = cJSON_Parse(body);
	assert_non_null(cJSON_GetObjectItem(cz, "componentconfig"));
	assert_true(cJSON_IsArray(cJSON_GetObjectItem(cz, "unavailableDefaultPlugins")));
	cJSON_Delete(cz);
	free(body);

	/* a node added later makes the waiting pod schedule */
	create(&e, "nodes", NULL, NODE_YAML("node-c", "4"));
	WAIT_FOR(!strcmp(pod_node(&e, "big", buf, sizeof buf), "node-c"));
	assert_string_equal(pod_node(&e, "theirs", buf, sizeof buf), "");

	/* stop releases the lease */
	sk_daemon_stop(d);
	lease = get(&e, "coordination.k8s.io", "leases", "kube-system", "test-sched");
	holder = lease ? kube_obj_get_string(lease, "spec.holderIdentity") : NULL;
	assert_true(!holder || !*holder);
	cJSON_Delete(lease);
	sk_daemon_free(d);

	kube_client_free(e.c);
	apis_server_stop(e.api);
	unlink(e.kubeconfig);
	unlink(cfgpath);
}

/* Another holder takes the Lease: the daemon stops scheduling and reports failure (the process
 * then exits 1, as kube-scheduler does on "leaderelection lost"). */
static void test_daemon_loses_leadership(void **state)
{
	(void)state;
	struct env e = { 0 };
	struct apis_opts ao = APIS_OPTS_DEFAULT;
	ao.port = 0;
	assert_int_equal(apis_server_start(&ao, &e.api), 0);
	struct kube_config *kc = kube_config_new(apis_server_url(e.api));
	assert_int_equal(kube_client_new(kc, &e.c, NULL), 0);
	kube_config_free(kc);
	create(&e, "nodes", NULL, NODE_YAML("node-a", "2"));
	char cfgpath[] = "/tmp/sk-daemon-le-XXXXXX";
	int fd = mkstemp(cfgpath);
	assert_true(fd >= 0);
	const char *cfg = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
			  "leaderElection: {leaderElect: true, resourceName: steal-me, resourceNamespace: kube-system,"
			  " leaseDuration: 3s, renewDeadline: 2s, retryPeriod: 500ms}\n";
	assert_int_equal(write(fd, cfg, strlen(cfg)), (ssize_t)strlen(cfg));
	close(fd);
	struct sk_daemon_opts o = { .leader_elect = -1, .lease_duration_ms = -1, .renew_deadline_ms = -1,
				    .retry_period_ms = -1, .verbosity = -1, .secure_port = 0 };
	o.config_path = cfgpath;
	o.master = (char *)apis_server_url(e.api);
	struct sk_daemon *d = NULL;
	char *err = NULL;
	if (sk_daemon_new(&o, &d, &err) != 0)
		fail_msg("sk_daemon_new: %s", err ? err : "");
	assert_int_equal(sk_daemon_start(d, &err), 0);
	WAIT_FOR(sk_daemon_is_leading(d));
	assert_false(sk_daemon_failed(d));

	/* The daemon renews concurrently: retry the read-modify-write on 409 Conflict. */
	char *path = kube_path("coordination.k8s.io", "v1", "leases", "kube-system", "steal-me", NULL);
	struct kube_error ke = { 0 };
	int rc = -1;
	for (int attempt = 0; attempt < 50 && rc != 0; attempt++) {
		cJSON *lease = get(&e, "coordination.k8s.io", "leases", "kube-system", "steal-me");
		assert_non_null(lease);
		cJSON *spec = cJSON_GetObjectItem(lease, "spec");
		cJSON_ReplaceItemInObject(spec, "holderIdentity", cJSON_CreateString("thief"));
		cJSON_ReplaceItemInObject(spec, "leaseDurationSeconds", cJSON_CreateNumber(600));
		rc = kube_update(e.c, path, lease, NULL, &ke);
		cJSON_Delete(lease);
		if (rc != 0 && ke.http_code != 409)
			break;
	}
	if (rc != 0)
		fail_msg("steal the lease: %s", ke.message);
	free(path);

	WAIT_FOR(sk_daemon_failed(d));
	assert_false(sk_daemon_is_leading(d));
	/* no longer scheduling */
	create(&e, "pods", "default", POD_YAML("late", "1", "default-scheduler"));
	usleep(500000);
	char buf[64];
	assert_string_equal(pod_node(&e, "late", buf, sizeof buf), "");
	/* stopping a daemon that lost the lease must not release the thief's lease */
	sk_daemon_free(d);
	cJSON *lease = get(&e, "coordination.k8s.io", "leases", "kube-system", "steal-me");
	assert_string_equal(kube_obj_get_string(lease, "spec.holderIdentity"), "thief");
	cJSON_Delete(lease);
	kube_client_free(e.c);
	apis_server_stop(e.api);
	unlink(cfgpath);
}

static void test_daemon_bad_config(void **state)
{
	(void)state;
	char cfgpath[] = "/tmp/sk-daemon-bad-XXXXXX";
	int fd = mkstemp(cfgpath);
	assert_true(fd >= 0);
	const char *cfg = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 0\n";
	assert_int_equal(write(fd, cfg, strlen(cfg)), (ssize_t)strlen(cfg));
	close(fd);
	struct sk_daemon_opts o = { .leader_elect = -1, .verbosity = -1, .secure_port = 0, .config_path = cfgpath,
				    .master = "http://127.0.0.1:1" };
	struct sk_daemon *d = NULL;
	char *err = NULL;
	assert_int_equal(sk_daemon_new(&o, &d, &err), -1);
	assert_null(d);
	assert_non_null(strstr(err, "parallelism"));
	free(err);
	unlink(cfgpath);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_ALL);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_ref),
		cmocka_unit_test(test_flags_defaults),
		cmocka_unit_test(test_flags_values),
		cmocka_unit_test(test_flags_policy),
		cmocka_unit_test(test_flags_errors),
		cmocka_unit_test(test_node_update_actions),
		cmocka_unit_test(test_node_object_update_actions),
		cmocka_unit_test(test_daemon_bad_config),
		cmocka_unit_test(test_daemon_end_to_end),
		cmocka_unit_test(test_daemon_loses_leadership),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
