/* Tests for e2e/apiserver/table: duration.HumanDuration (upstream's duration_test cases), RFC 3339
 * parsing, pod/node/deployment/service rows (after upstream printers_test cases), CRD printer
 * columns with simple JSONPath, includeObject handling and hostile inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e/apiserver/table.h"

#define SEC 1000LL
#define MIN (60 * SEC)
#define HOUR (60 * MIN)
#define DAY (24 * HOUR)

static void test_human_duration(void **state)
{
	(void)state;
	static const struct {
		long long ms;
		const char *want;
	} cases[] = {
		/* TestHumanDuration */
		{SEC, "1s"}, {70 * SEC, "70s"}, {190 * SEC, "3m10s"}, {70 * MIN, "70m"},
		{47 * HOUR, "47h"}, {49 * HOUR, "2d1h"}, {(8 * 24 + 2) * HOUR, "8d"},
		{367 * DAY, "367d"}, {(365 * 2 * 24 + 25) * HOUR, "2y1d"}, {(365 * 8 * 24 + 2) * HOUR, "8y"},
		/* TestHumanDurationBoundaries */
		{-2 * SEC, "<invalid>"}, {-2 * SEC + 1, "0s"}, {0, "0s"}, {SEC - 1, "0s"},
		{2 * MIN - 1, "119s"}, {2 * MIN, "2m"}, {2 * MIN + SEC, "2m1s"},
		{10 * MIN - 1, "9m59s"}, {10 * MIN, "10m"}, {10 * MIN + SEC, "10m"},
		{3 * HOUR - 1, "179m"}, {3 * HOUR, "3h"}, {3 * HOUR + MIN, "3h1m"},
		{8 * HOUR - 1, "7h59m"}, {8 * HOUR, "8h"}, {8 * HOUR + 59 * MIN, "8h"},
		{2 * DAY - 1, "47h"}, {2 * DAY, "2d"}, {2 * DAY + HOUR, "2d1h"},
		{8 * DAY - 1, "7d23h"}, {8 * DAY, "8d"}, {8 * DAY + 23 * HOUR, "8d"},
		{2 * 365 * DAY - 1, "729d"}, {2 * 365 * DAY, "2y"}, {2 * 365 * DAY + 23 * HOUR, "2y"},
		{2 * 365 * DAY + 23 * HOUR + 59 * MIN, "2y"}, {2 * 365 * DAY + DAY - 1, "2y"},
		{2 * 365 * DAY + DAY, "2y1d"}, {3 * 365 * DAY, "3y"}, {4 * 365 * DAY, "4y"},
		{5 * 365 * DAY, "5y"}, {6 * 365 * DAY, "6y"}, {7 * 365 * DAY, "7y"},
		{8 * 365 * DAY - 1, "7y364d"}, {8 * 365 * DAY, "8y"}, {8 * 365 * DAY + 364 * DAY, "8y"},
		{9 * 365 * DAY, "9y"},
	};
	char buf[32];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		apis_human_duration_ms(cases[i].ms, buf, sizeof(buf));
		if (strcmp(buf, cases[i].want) != 0)
			fail_msg("HumanDuration(%lldms) = %s, want %s", cases[i].ms, buf, cases[i].want);
	}
	assert_string_equal(apis_human_duration(300, buf, sizeof(buf)), "5m");
}

static void test_rfc3339(void **state)
{
	(void)state;
	time_t t;
	assert_int_equal(apis_parse_rfc3339("2025-01-31T10:04:05Z", &t), 0);
	assert_int_equal((long long)t, 1738317845LL);
	assert_int_equal(apis_parse_rfc3339("2025-01-31T10:04:05.123456Z", &t), 0);
	assert_int_equal((long long)t, 1738317845LL);
	assert_int_equal(apis_parse_rfc3339("2025-01-31T11:04:05+01:00", &t), 0);
	assert_int_equal((long long)t, 1738317845LL);
	const char *bad[] = {"", "2025-01-31", "2025-01-31T10:04:05", "2025-13-31T10:04:05Z",
			     "2025-01-31T10:04:05Zjunk", "xxxx-01-31T10:04:05Z", "2025-01-31T10:04:05+0100"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(apis_parse_rfc3339(bad[i], &t), -1);
	char buf[32];
	assert_string_equal(apis_age(NULL, 0, buf, sizeof(buf)), "<unknown>");
	assert_string_equal(apis_age("2025-01-31T10:00:00Z", 1738317845, buf, sizeof(buf)), "4m5s");
}

static const time_t NOW = 1738317845; /* 2025-01-31T10:04:05Z */

static cJSON *one(const char *json)
{
	cJSON *items = cJSON_CreateArray();
	cJSON *o = cJSON_Parse(json);
	if (!o)
		fail_msg("bad test JSON: %s", json);
	cJSON_AddItemToArray(items, o);
	return items;
}

static char *cells_of(const cJSON *table, int row)
{
	const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(table, "rows"), row);
	return cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "cells"));
}

static void expect_cells(const char *group, const char *resource, const char *obj, const char *want)
{
	cJSON *items = one(obj);
	cJSON *t = apis_table_build(group, resource, items, NULL, APIS_INCLUDE_METADATA, true, NULL, NOW);
	assert_non_null(t);
	char *got = cells_of(t, 0);
	if (strcmp(got, want) != 0)
		fail_msg("%s cells\n got  %s\n want %s", resource, got, want);
	free(got);
	cJSON_Delete(t);
	cJSON_Delete(items);
}

static void test_pod_rows(void **state)
{
	(void)state;
	static const struct {
		const char *pod, *cells;
	} cases[] = {
		/* pending, unscheduled */
		{"{\"metadata\":{\"name\":\"p\",\"creationTimestamp\":\"2025-01-31T10:00:00Z\"},"
		 "\"spec\":{\"containers\":[{\"name\":\"a\"}]},\"status\":{\"phase\":\"Pending\"}}",
		 "[\"p\",\"0/1\",\"Pending\",\"0\",\"4m5s\",\"<none>\",\"<none>\",\"<none>\",\"<none>\"]"},
		/* running and ready, bound, nominated, with IP */
		{"{\"metadata\":{\"name\":\"p\",\"creationTimestamp\":\"2025-01-31T09:00:00Z\"},"
		 "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]},"
		 "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.5\",\"podIPs\":[{\"ip\":\"10.0.0.5\"}],"
		 "\"containerStatuses\":[{\"name\":\"a\",\"ready\":true,\"restartCount\":0,\"state\":{\"running\":{}}},"
		 "{\"name\":\"b\",\"ready\":false,\"restartCount\":0,\"state\":{\"running\":{}}}]}}",
		 "[\"p\",\"1/2\",\"Running\",\"0\",\"64m\",\"10.0.0.5\",\"n1\",\"<none>\",\"<none>\"]"},
		/* restarts with last termination time, CrashLoopBackOff */
		{"{\"metadata\":{\"name\":\"p\",\"creationTimestamp\":\"2025-01-31T10:00:00Z\"},"
		 "\"spec\":{\"containers\":[{\"name\":\"a\"}]},\"status\":{\"phase\":\"Running\","
		 "\"containerStatuses\":[{\"name\":\"a\",\"restartCount\":3,\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},"
		 "\"lastState\":{\"terminated\":{\"exitCode\":1,\"finishedAt\":\"2025-01-31T10:03:05Z\"}}}]}}",
		 "[\"p\",\"0/1\",\"CrashLoopBackOff\",\"3 (60s ago)\",\"4m5s\",\"<none>\",\"<none>\",\"<none>\",\"<none>\"]"},
		/* terminating */
		{"{\"metadata\":{\"name\":\"p\",\"deletionTimestamp\":\"2025-01-31T10:04:00Z\"},"
		 "\"spec\":{\"containers\":[{\"name\":\"a\"}]},\"status\":{\"phase\":\"Running\"}}",
		 "[\"p\",\"0/1\",\"Terminating\",\"0\",\"<unknown>\",\"<none>\",\"<none>\",\"<none>\",\"<none>\"]"},
		/* completed */
		{"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\"}]},"
		 "\"status\":{\"phase\":\"Succeeded\",\"containerStatuses\":[{\"name\":\"a\",\"state\":"
		 "{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\"}}}]}}",
		 "[\"p\",\"0/1\",\"Completed\",\"0\",\"<unknown>\",\"<none>\",\"<none>\",\"<none>\",\"<none>\"]"},
		/* init containers: waiting on the second one */
		{"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":[{\"name\":\"i1\"},{\"name\":\"i2\"}],"
		 "\"containers\":[{\"name\":\"a\"}]},\"status\":{\"phase\":\"Pending\",\"initContainerStatuses\":["
		 "{\"name\":\"i1\",\"state\":{\"terminated\":{\"exitCode\":0}}},"
		 "{\"name\":\"i2\",\"state\":{\"running\":{}}}]}}",
		 "[\"p\",\"0/1\",\"Init:1/2\",\"0\",\"<unknown>\",\"<none>\",\"<none>\",\"<none>\",\"<none>\"]"},
		/* init container failed */
		{"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":[{\"name\":\"i1\"}],"
		 "\"containers\":[{\"name\":\"a\"}]},\"status\":{\"phase\":\"Pending\",\"initContainerStatuses\":["
		 "{\"name\":\"i1\",\"state\":{\"terminated\":{\"exitCode\":2}}}]}}",
		 "[\"p\",\"0/1\",\"Init:ExitCode:2\",\"0\",\"<unknown>\",\"<none>\",\"<none>\",\"<none>\",\"<none>\"]"},
		/* scheduling gated, readiness gates */
		{"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\"}],"
		 "\"readinessGates\":[{\"conditionType\":\"x/ok\"},{\"conditionType\":\"y/ok\"}]},"
		 "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
		 "\"reason\":\"SchedulingGated\"},{\"type\":\"x/ok\",\"status\":\"True\"}],\"nominatedNodeName\":\"n9\"}}",
		 "[\"p\",\"0/1\",\"SchedulingGated\",\"0\",\"<unknown>\",\"<none>\",\"<none>\",\"n9\",\"1/2\"]"},
		/* status.reason wins over phase (Evicted) */
		{"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\"}]},"
		 "\"status\":{\"phase\":\"Failed\",\"reason\":\"Evicted\"}}",
		 "[\"p\",\"0/1\",\"Evicted\",\"0\",\"<unknown>\",\"<none>\",\"<none>\",\"<none>\",\"<none>\"]"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_cells("", "pods", cases[i].pod, cases[i].cells);
}

static void test_pod_table_shape(void **state)
{
	(void)state;
	cJSON *items = one("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"labels\":{\"a\":\"b\"}},"
			   "\"spec\":{\"containers\":[]},\"status\":{\"phase\":\"Succeeded\"}}");
	cJSON *lm = cJSON_Parse("{\"resourceVersion\":\"42\",\"continue\":\"\"}");
	cJSON *t = apis_table_build("", "pods", items, NULL, APIS_INCLUDE_METADATA, true, lm, NOW);
	assert_non_null(t);
	assert_string_equal(cJSON_GetObjectItem(t, "kind")->valuestring, "Table");
	assert_string_equal(cJSON_GetObjectItem(t, "apiVersion")->valuestring, "meta.k8s.io/v1");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "metadata"), "resourceVersion")->valuestring, "42");
	const cJSON *defs = cJSON_GetObjectItem(t, "columnDefinitions");
	assert_int_equal(cJSON_GetArraySize(defs), 9);
	const cJSON *d0 = cJSON_GetArrayItem(defs, 0);
	assert_string_equal(cJSON_GetObjectItem(d0, "format")->valuestring, "name");
	const cJSON *d5 = cJSON_GetArrayItem(defs, 5);
	assert_string_equal(cJSON_GetObjectItem(d5, "name")->valuestring, "IP");
	assert_int_equal(cJSON_GetObjectItem(d5, "priority")->valueint, 1);
	const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0);
	const cJSON *obj = cJSON_GetObjectItem(row, "object");
	assert_string_equal(cJSON_GetObjectItem(obj, "kind")->valuestring, "PartialObjectMetadata");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "labels"), "a")->valuestring, "b");
	assert_null(cJSON_GetObjectItem(obj, "spec"));
	const cJSON *cond = cJSON_GetArrayItem(cJSON_GetObjectItem(row, "conditions"), 0);
	assert_string_equal(cJSON_GetObjectItem(cond, "type")->valuestring, "Completed");
	cJSON_Delete(t);

	t = apis_table_build("", "pods", items, NULL, APIS_INCLUDE_NONE, false, NULL, NOW);
	assert_null(cJSON_GetObjectItem(t, "columnDefinitions"));
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0), "object"));
	cJSON_Delete(t);
	t = apis_table_build("", "pods", items, NULL, APIS_INCLUDE_OBJECT, true, NULL, NOW);
	obj = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0), "object");
	assert_non_null(cJSON_GetObjectItem(obj, "spec"));
	cJSON_Delete(t);
	cJSON_Delete(items);
	cJSON_Delete(lm);
	assert_int_equal(apis_include_object_parse("None"), APIS_INCLUDE_NONE);
	assert_int_equal(apis_include_object_parse("Object"), APIS_INCLUDE_OBJECT);
	assert_int_equal(apis_include_object_parse(NULL), APIS_INCLUDE_METADATA);
}

static void test_node_rows(void **state)
{
	(void)state;
	expect_cells("", "nodes",
		     "{\"metadata\":{\"name\":\"n1\",\"creationTimestamp\":\"2025-01-29T10:04:05Z\","
		     "\"labels\":{\"node-role.kubernetes.io/worker\":\"\",\"node-role.kubernetes.io/control-plane\":\"\","
		     "\"kubernetes.io/role\":\"worker\"}},\"spec\":{\"unschedulable\":true},"
		     "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
		     "\"addresses\":[{\"type\":\"Hostname\",\"address\":\"n1\"},{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"}],"
		     "\"nodeInfo\":{\"kubeletVersion\":\"v1.32.0\",\"osImage\":\"Debian\",\"kernelVersion\":\"6.1\","
		     "\"containerRuntimeVersion\":\"containerd://1.7\"}}}",
		     "[\"n1\",\"Ready,SchedulingDisabled\",\"control-plane,worker\",\"2d\",\"v1.32.0\","
		     "\"10.0.0.1\",\"<none>\",\"Debian\",\"6.1\",\"containerd://1.7\"]");
	expect_cells("", "nodes",
		     "{\"metadata\":{\"name\":\"n2\"},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"Unknown\"}]}}",
		     "[\"n2\",\"NotReady\",\"<none>\",\"<unknown>\",\"\",\"<none>\",\"<none>\",\"<unknown>\","
		     "\"<unknown>\",\"<unknown>\"]");
	expect_cells("", "nodes", "{\"metadata\":{\"name\":\"n3\"}}",
		     "[\"n3\",\"Unknown\",\"<none>\",\"<unknown>\",\"\",\"<none>\",\"<none>\",\"<unknown>\","
		     "\"<unknown>\",\"<unknown>\"]");
}

static void test_other_builtin_rows(void **state)
{
	(void)state;
	expect_cells("apps", "deployments",
		     "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":"
		     "{\"app\":\"web\"},\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]},"
		     "{\"key\":\"env\",\"operator\":\"DoesNotExist\"}]},\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\","
		     "\"image\":\"web:1\"},{\"name\":\"side\",\"image\":\"s:2\"}]}}},\"status\":{\"readyReplicas\":2,"
		     "\"updatedReplicas\":3,\"availableReplicas\":2}}",
		     "[\"web\",\"2/3\",3,2,\"<unknown>\",\"app,side\",\"web:1,s:2\",\"app=web,!env,tier in (a,b)\"]");
	expect_cells("apps", "replicasets",
		     "{\"metadata\":{\"name\":\"web-1\"},\"spec\":{\"replicas\":2},\"status\":{\"replicas\":2,\"readyReplicas\":1}}",
		     "[\"web-1\",2,2,1,\"<unknown>\",\"\",\"\",\"\"]");
	expect_cells("", "services",
		     "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"type\":\"NodePort\",\"clusterIP\":\"10.96.0.10\","
		     "\"ports\":[{\"port\":80,\"nodePort\":30080,\"protocol\":\"TCP\"},{\"port\":53,\"protocol\":\"UDP\"}],"
		     "\"selector\":{\"b\":\"2\",\"a\":\"1\"}}}",
		     "[\"s\",\"NodePort\",\"10.96.0.10\",\"<none>\",\"80:30080/TCP,53/UDP\",\"<unknown>\",\"a=1,b=2\"]");
	expect_cells("", "services",
		     "{\"metadata\":{\"name\":\"lb\"},\"spec\":{\"type\":\"LoadBalancer\",\"clusterIPs\":[\"10.0.0.9\"]}}",
		     "[\"lb\",\"LoadBalancer\",\"10.0.0.9\",\"<pending>\",\"<none>\",\"<unknown>\",\"<none>\"]");
	expect_cells("", "configmaps",
		     "{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"1\",\"b\":\"2\"},\"binaryData\":{\"c\":\"AA==\"}}",
		     "[\"c\",3,\"<unknown>\"]");
	expect_cells("", "secrets", "{\"metadata\":{\"name\":\"s\"},\"type\":\"kubernetes.io/tls\",\"data\":{\"a\":\"\"}}",
		     "[\"s\",\"kubernetes.io/tls\",1,\"<unknown>\"]");
	expect_cells("", "namespaces", "{\"metadata\":{\"name\":\"default\"},\"status\":{\"phase\":\"Active\"}}",
		     "[\"default\",\"Active\",\"<unknown>\"]");
	expect_cells("coordination.k8s.io", "leases",
		     "{\"metadata\":{\"name\":\"kube-scheduler\"},\"spec\":{\"holderIdentity\":\"h_1\"}}",
		     "[\"kube-scheduler\",\"h_1\",\"<unknown>\"]");
	expect_cells("scheduling.k8s.io", "priorityclasses",
		     "{\"metadata\":{\"name\":\"high\"},\"value\":1000,\"globalDefault\":true}",
		     "[\"high\",1000,true,\"<unknown>\",\"PreemptLowerPriority\"]");
	expect_cells("policy", "poddisruptionbudgets",
		     "{\"metadata\":{\"name\":\"pdb\"},\"spec\":{\"minAvailable\":\"50%\"},\"status\":{\"disruptionsAllowed\":1}}",
		     "[\"pdb\",\"50%\",\"N/A\",1,\"<unknown>\"]");
	expect_cells("", "events",
		     "{\"metadata\":{\"name\":\"p.1\"},\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\"},"
		     "\"reason\":\"Scheduled\",\"message\":\"Successfully assigned ns/p to n1\",\"type\":\"Normal\","
		     "\"source\":{\"component\":\"default-scheduler\"},\"firstTimestamp\":\"2025-01-31T10:04:00Z\","
		     "\"lastTimestamp\":\"2025-01-31T10:04:00Z\",\"count\":1}",
		     "[\"5s\",\"Normal\",\"Scheduled\",\"pod/p\",\"\",\"default-scheduler\","
		     "\"Successfully assigned ns/p to n1\",\"5s\",1,\"p.1\"]");
	expect_cells("", "persistentvolumes", "{\"metadata\":{\"name\":\"pv\",\"creationTimestamp\":\"2025-01-31T10:04:00Z\"}}",
		     "[\"pv\",\"5s\"]");
	expect_cells("apiextensions.k8s.io", "customresourcedefinitions",
		     "{\"metadata\":{\"name\":\"widgets.example.com\",\"creationTimestamp\":\"2025-01-31T10:04:00Z\"}}",
		     "[\"widgets.example.com\",\"2025-01-31T10:04:00Z\"]");
}

static const char *crd_version =
	"{\"name\":\"v1\",\"additionalPrinterColumns\":["
	"{\"name\":\"Replicas\",\"type\":\"integer\",\"jsonPath\":\".spec.replicas\"},"
	"{\"name\":\"Ready\",\"type\":\"string\",\"jsonPath\":\".status.conditions[?(@.type==\\\"Ready\\\")].status\"},"
	"{\"name\":\"First\",\"type\":\"string\",\"jsonPath\":\".spec.items[0].name\",\"priority\":1},"
	"{\"name\":\"Last\",\"type\":\"string\",\"jsonPath\":\".spec.items[-1].name\",\"priority\":1},"
	"{\"name\":\"Ratio\",\"type\":\"number\",\"jsonPath\":\".spec.ratio\"},"
	"{\"name\":\"On\",\"type\":\"boolean\",\"jsonPath\":\".spec.on\"},"
	"{\"name\":\"Tags\",\"type\":\"string\",\"jsonPath\":\".spec.tags\"},"
	"{\"name\":\"Map\",\"type\":\"string\",\"jsonPath\":\".spec.map\"},"
	"{\"name\":\"Dotted\",\"type\":\"string\",\"jsonPath\":\".metadata.labels['app.kubernetes.io/name']\"},"
	"{\"name\":\"Missing\",\"type\":\"string\",\"jsonPath\":\".spec.nope\"},"
	"{\"name\":\"Started\",\"type\":\"date\",\"jsonPath\":\".status.startTime\"},"
	"{\"name\":\"Bad\",\"type\":\"date\",\"jsonPath\":\".spec.ratio\"},"
	"{\"name\":\"BadDate\",\"type\":\"date\",\"jsonPath\":\".spec.bad\"},"
	"{\"name\":\"WrongType\",\"type\":\"integer\",\"jsonPath\":\".spec.bad\"},"
	"{\"name\":\"Age\",\"type\":\"date\",\"jsonPath\":\".metadata.creationTimestamp\"}]}";

static void test_crd_columns(void **state)
{
	(void)state;
	cJSON *ver = cJSON_Parse(crd_version);
	assert_non_null(ver);
	cJSON *items = one(
		"{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\","
		"\"creationTimestamp\":\"2025-01-31T10:00:00Z\",\"labels\":{\"app.kubernetes.io/name\":\"wid\"}},"
		"\"spec\":{\"replicas\":3,\"items\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"ratio\":1.5,\"on\":true,"
		"\"tags\":[\"x\",\"y\"],\"map\":{\"b\":2,\"a\":\"s\"},\"bad\":\"notadate\"},"
		"\"status\":{\"startTime\":\"2025-01-31T09:04:05Z\",\"conditions\":[{\"type\":\"Synced\",\"status\":\"False\"},"
		"{\"type\":\"Ready\",\"status\":\"True\"}]}}");
	cJSON *t = apis_table_build("example.com", "widgets", items, ver, APIS_INCLUDE_METADATA, true, NULL, NOW);
	assert_non_null(t);
	char *got = cells_of(t, 0);
	assert_string_equal(got, "[\"w\",3,\"True\",\"a\",\"b\",1.5,true,\"[x y]\",\"map[a:s b:2]\",\"wid\",null,"
				 "\"60m\",null,\"<invalid>\",null,\"4m5s\"]");
	free(got);
	const cJSON *defs = cJSON_GetObjectItem(t, "columnDefinitions");
	assert_int_equal(cJSON_GetArraySize(defs), 16);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(defs, 0), "name")->valuestring, "Name");
	const cJSON *d3 = cJSON_GetArrayItem(defs, 3);
	assert_int_equal(cJSON_GetObjectItem(d3, "priority")->valueint, 1);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(defs, 1), "type")->valuestring, "integer");
	cJSON_Delete(t);

	/* a version without printer columns gets Name + Age (date) */
	cJSON *plain = cJSON_Parse("{\"name\":\"v1\"}");
	t = apis_table_build("example.com", "widgets", items, plain, APIS_INCLUDE_METADATA, true, NULL, NOW);
	got = cells_of(t, 0);
	assert_string_equal(got, "[\"w\",\"4m5s\"]");
	free(got);
	defs = cJSON_GetObjectItem(t, "columnDefinitions");
	assert_int_equal(cJSON_GetArraySize(defs), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(defs, 1), "type")->valuestring, "date");
	cJSON_Delete(t);
	cJSON_Delete(plain);
	cJSON_Delete(items);
	cJSON_Delete(ver);
}

static void test_hostile_inputs(void **state)
{
	(void)state;
	const char *resources[][2] = {{"", "pods"}, {"", "nodes"}, {"apps", "deployments"},
				      {"apps", "replicasets"}, {"", "services"}, {"", "events"},
				      {"policy", "poddisruptionbudgets"}, {"x", "y"}};
	const char *objs[] = {
		"null", "1", "[]", "{}", "{\"metadata\":7}", "{\"metadata\":{\"name\":5,\"labels\":[1]}}",
		/* parenthesised: one element spread over several lines */
		("{\"spec\":{\"containers\":{\"a\":1},\"selector\":{\"matchExpressions\":[1,{\"values\":7}]},"
		 "\"ports\":[1,null],\"type\":5},\"status\":{\"containerStatuses\":[null,1,{\"state\":7}],"
		 "\"initContainerStatuses\":\"x\",\"conditions\":{}}}"),
		("{\"status\":{\"addresses\":7,\"nodeInfo\":[],\"conditions\":[{\"type\":\"Ready\"}]},"
		 "\"metadata\":{\"labels\":{\"node-role.kubernetes.io/\":\"\",\"kubernetes.io/role\":1}}}"),
	};
	for (size_t r = 0; r < sizeof(resources) / sizeof(resources[0]); r++)
		for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
			cJSON *items = cJSON_CreateArray();
			cJSON_AddItemToArray(items, cJSON_Parse(objs[i]));
			cJSON *t = apis_table_build(resources[r][0], resources[r][1], items, NULL,
						    APIS_INCLUDE_OBJECT, true, NULL, NOW);
			assert_non_null(t);
			cJSON_Delete(t);
			cJSON_Delete(items);
		}
	/* hostile JSONPaths */
	const char *paths[] = {"", ".", "..a", "[", "[?(@.a==)]", "[?(@.a==\"x", ".a[99999999999]",
			       "[*]", ".*", "{.spec.replicas}", "$.spec.replicas", "spec.replicas",
			       "[?(@)]", "[?(@.a!=1)].b", "['unterminated", ".a[-9]", "[?(@.a=='x')].b"};
	cJSON *items = one("{\"metadata\":{\"name\":\"w\"},\"spec\":{\"replicas\":1},\"a\":[{\"a\":\"x\",\"b\":2}]}");
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		cJSON *ver = cJSON_CreateObject();
		cJSON *cols = cJSON_AddArrayToObject(ver, "additionalPrinterColumns");
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "name", "X");
		cJSON_AddStringToObject(c, "type", "string");
		cJSON_AddStringToObject(c, "jsonPath", paths[i]);
		cJSON_AddItemToArray(cols, c);
		cJSON *t = apis_table_build("g", "r", items, ver, APIS_INCLUDE_NONE, true, NULL, NOW);
		assert_non_null(t);
		cJSON_Delete(t);
		cJSON_Delete(ver);
	}
	cJSON_Delete(items);
	/* NULL items: empty table */
	cJSON *t = apis_table_build(NULL, NULL, NULL, NULL, APIS_INCLUDE_METADATA, true, NULL, NOW);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(t, "rows")), 0);
	cJSON_Delete(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_human_duration),  cmocka_unit_test(test_rfc3339),
		cmocka_unit_test(test_pod_rows),        cmocka_unit_test(test_pod_table_shape),
		cmocka_unit_test(test_node_rows),       cmocka_unit_test(test_other_builtin_rows),
		cmocka_unit_test(test_crd_columns),     cmocka_unit_test(test_hostile_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
