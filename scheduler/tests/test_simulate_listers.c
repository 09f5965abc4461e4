/* Tests for what simulate's listers hold (scheduler/simulate/simulate.c with scheduler/api/
 * workloads.c): a Service in the cluster file gives an unowned pod PodTopologySpread's default
 * constraints, with every pod it selects counted (without the Service the pod has none), and
 * Namespaces resolve InterPodAffinity's namespaceSelector. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/config/config.h"
#include "scheduler/simulate/simulate.h"

/* Hard default constraint on the hostname, so the default selector shows as a filter reason. */
static const char CONFIG[] =
	"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	"profiles:\n- schedulerName: default-scheduler\n"
	"  plugins:\n    score:\n      disabled: [{name: '*'}]\n    postFilter:\n      disabled: [{name: '*'}]\n"
	"  pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n"
	"      defaultConstraints:\n      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}\n";

#define NODE(name)                                                                                                     \
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {kubernetes.io/hostname: " name "}}\n" \
	"status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n"
#define CLUSTER_PODS                                                                                                   \
	NODE("node-a") NODE("node-b")                                                                                  \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: old, labels: {app: web}}\n"                               \
	"spec: {nodeName: node-a, containers: [{name: c, image: i}]}\n"                                              \
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: new, labels: {app: web}}\nspec: {containers: [{name: c, image: i}]}\n"

static char *run(const char *cluster)
{
	struct sk_errors errs = { 0 };
	struct sk_config *cfg = sk_config_load(CONFIG, strlen(CONFIG), &errs);
	assert_non_null(cfg);
	sk_errors_free(&errs);
	char *buf = NULL, *err = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct sk_simulate_opts opts = { .seed = 1 };
	int rc = sk_simulate(cfg, cluster, strlen(cluster), &opts, out, &err);
	fclose(out);
	sk_config_free(cfg);
	if (rc != 0)
		fail_msg("simulate: %s", err ? err : "?");
	free(err);
	return buf;
}

static void test_service_selects_unowned_pods(void **state)
{
	(void)state;
	static const struct {
		const char *name, *extra, *want;
	} cases[] = {
		{ "a Service selecting the pods spreads them",
		  "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}}\n",
		  "\"node\":\"node-b\",\"message\":\"\",\"filter\":{\"node-a\":{\"PodTopologySpread\":"
		  "\"node(s) didn't match pod topology spread constraints\"}}" },
		{ "a Service of another namespace does not",
		  "---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: other}\nspec: {selector: {app: web}}\n",
		  "\"filter\":{}" },
		{ "a ReplicaSet that does not control the pod does not",
		  "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web}\nspec: {selector: {matchLabels: {app: web}}}\n",
		  "\"filter\":{}" },
		{ "no Service: no default constraints", "", "\"filter\":{}" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char cluster[4096];
		snprintf(cluster, sizeof cluster, "%s%s", CLUSTER_PODS, cases[i].extra);
		char *out = run(cluster);
		if (!strstr(out, cases[i].want) || !strstr(out, "\"result\":\"Scheduled\""))
			fail_msg("%s: got %s, want it to contain %s", cases[i].name, out, cases[i].want);
		free(out);
	}
}

/* Namespaces of the cluster file resolve a namespaceSelector (the hostname constraint of CONFIG
 * does not apply: the pods have no Service). */
static void test_namespaces_resolve_namespace_selector(void **state)
{
	(void)state;
	static const char base[] =
		NODE("node-a") NODE("node-b")
		"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, labels: {team: a}}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: db, namespace: team-a, labels: {app: db}}\n"
		"spec: {nodeName: node-%s, containers: [{name: c, image: i}]}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: client}\nspec:\n  containers: [{name: c, image: i}]\n"
		"  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: "
		"kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}, namespaceSelector: {matchLabels: {team: %s}}}]}}\n";
	static const struct {
		const char *db_node, *team, *want;
	} cases[] = {
		{ "a", "a", "\"node\":\"node-b\"" },
		{ "b", "a", "\"node\":\"node-a\"" },
		{ "a", "b", "\"filter\":{}" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char cluster[4096];
		snprintf(cluster, sizeof cluster, base, cases[i].db_node, cases[i].team);
		char *out = run(cluster);
		if (!strstr(out, cases[i].want))
			fail_msg("db on node-%s, team %s: got %s, want %s", cases[i].db_node, cases[i].team, out, cases[i].want);
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_service_selects_unowned_pods),
		cmocka_unit_test(test_namespaces_resolve_namespace_selector),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
