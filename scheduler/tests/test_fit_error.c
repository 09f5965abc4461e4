/* Tests for scheduler/schedule_one.c's pure helpers: the FitError message and its reason
 * histogram, numFeasibleNodesToFind, the event message's truncation (upstream schedule_one_test.go
 * TestFitError, TestNumFeasibleNodesToFind). The attempts themselves: test_schedule_one.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/schedule_one.h"

static struct sk_node_status ns_of(const char *reason)
{
	struct sk_node_status n = { 0 };
	n.status = sk_status(SK_UNSCHEDULABLE, reason);
	return n;
}

/* The histogram's counting keeps the last reason it counted (a failing pass gives most nodes the
 * same one): reasons that alternate, equal texts at different addresses, and a status with more
 * reasons than the inline slots (the overflow block) must count as a full scan does (the items
 * sort as strings: "1 b" before "2 a"). */
static void test_fit_error_histogram_cases(void **state)
{
	(void)state;
	static char cpu_copy[] = "Insufficient cpu"; /* same text, another address */
	struct {
		const char *reasons[4]; /* one node each; NULL ends */
		const char *want;
	} cases[] = {
		{ { "a", "b", "a", NULL }, "0/3 nodes are available: 1 b, 2 a." },
		{ { "b", "a", "b", "a" }, "0/4 nodes are available: 2 a, 2 b." },
		{ { "Insufficient cpu", cpu_copy, "Insufficient cpu", NULL }, "0/3 nodes are available: 3 Insufficient cpu." },
		{ { cpu_copy, "z", "Insufficient cpu", cpu_copy }, "0/4 nodes are available: 1 z, 3 Insufficient cpu." },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct sk_node_status st[4];
		int n = 0;
		while (n < 4 && cases[c].reasons[n]) {
			st[n] = ns_of(cases[c].reasons[n]);
			n++;
		}
		char *m = sk_fit_error_message(n, st, n, NULL, NULL, NULL);
		assert_non_null(m);
		assert_string_equal(m, cases[c].want);
		free(m);
	}

	/* two nodes: one with eight reasons (two past the inline slots), one with a repeat of its last */
	struct sk_node_status many[2] = { { 0 }, { 0 } };
	many[0].status = sk_status(SK_UNSCHEDULABLE, "r1");
	const char *more[] = { "r2", "r3", "r4", "r5", "r6", "r7", "r8" };
	for (int i = 0; i < 7; i++)
		sk_status_addf(&many[0].status, "%s", more[i]);
	assert_int_equal(sk_status_reason_count(&many[0].status), 8);
	many[1].status = sk_status(SK_UNSCHEDULABLE, "r8");
	char *m = sk_fit_error_message(2, many, 2, NULL, NULL, NULL);
	assert_string_equal(m, "0/2 nodes are available: 1 r1, 1 r2, 1 r3, 1 r4, 1 r5, 1 r6, 1 r7, 2 r8.");
	free(m);
	sk_status_reset(&many[0].status);
}

static void test_fit_error_message(void **state)
{
	(void)state;
	struct sk_node_status st[12];
	for (int i = 0; i < 10; i++)
		st[i] = ns_of("x");
	st[10] = ns_of("y");
	st[11] = ns_of("y");
	char *m = sk_fit_error_message(12, st, 12, NULL, NULL, NULL);
	assert_string_equal(m, "0/12 nodes are available: 10 x, 2 y."); /* byte-wise: "10 x" < "2 y" */
	free(m);

	struct sk_node_status t[3] = { ns_of("Insufficient cpu"), ns_of("Insufficient cpu"),
				       ns_of("node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }") };
	m = sk_fit_error_message(3, t, 3, NULL, NULL,
				 "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No "
				 "preemption victims found for incoming pod.");
	assert_string_equal(m, "0/3 nodes are available: 1 node(s) had untolerated taint "
			       "{node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu. preemption: 0/3 nodes are "
			       "available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for "
			       "incoming pod.");
	free(m);

	/* several reasons on one node each count */
	struct sk_node_status two = { 0 };
	two.status = sk_status(SK_UNSCHEDULABLE, "Insufficient cpu");
	sk_status_add(&two.status, "Insufficient memory");
	m = sk_fit_error_message(1, &two, 1, NULL, "", "");
	assert_string_equal(m, "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.");
	free(m);

	/* PreFilter message replaces the histogram */
	m = sk_fit_error_message(3, t, 3, NULL, "node(s) didn't match pod topology spread constraints", NULL);
	assert_string_equal(m, "0/3 nodes are available: node(s) didn't match pod topology spread constraints.");
	free(m);

	/* absent nodes (PreFilterResult) count num_all - n times */
	struct sk_status absent = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [NodeAffinity]");
	m = sk_fit_error_message(5, t, 1, &absent, NULL, NULL);
	assert_string_equal(m, "0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't satisfy plugin(s) [NodeAffinity].");
	free(m);

	/* statuses without reasons: upstream adds no histogram piece at all */
	struct sk_node_status empty = { 0 };
	empty.status.code = SK_UNSCHEDULABLE;
	m = sk_fit_error_message(1, &empty, 1, NULL, NULL, NULL);
	assert_string_equal(m, "0/1 nodes are available:");
	free(m);
	m = sk_fit_error_message(1, &empty, 1, NULL, NULL, "no new claims to deallocate");
	assert_string_equal(m, "0/1 nodes are available: no new claims to deallocate");
	free(m);
	sk_status_reset(&two.status);
}


/* Upstream types_test TestFitError_Error, ported as values: reasons per node, the PreFilter and
 * PostFilter messages, the absent nodes' reason, and the expected text. */
struct fit_case {
	const char *name;
	int num_all;
	const char *reasons[4]; /* one per rejected node (NULL-terminated) */
	const char *absent;
	const char *prefilter, *postfilter;
	const char *want;
};

static const struct fit_case fit_cases[] = {
	{ "nodes failed Prefilter plugin", 3,
	  { "Node(s) failed PreFilter plugin FalsePreFilter", "Node(s) failed PreFilter plugin FalsePreFilter",
	    "Node(s) failed PreFilter plugin FalsePreFilter" },
	  NULL, "Node(s) failed PreFilter plugin FalsePreFilter", NULL,
	  "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter." },
	{ "nodes failed one Filter plugin with an empty PostFilterMsg", 3,
	  { "Node(s) failed Filter plugin FalseFilter-1", "Node(s) failed Filter plugin FalseFilter-1",
	    "Node(s) failed Filter plugin FalseFilter-1" },
	  NULL, NULL, "", "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1." },
	{ "nodes failed one Filter plugin with a non-empty PostFilterMsg", 3,
	  { "Node(s) failed Filter plugin FalseFilter-1", "Node(s) failed Filter plugin FalseFilter-1",
	    "Node(s) failed Filter plugin FalseFilter-1" },
	  NULL, NULL, "Error running PostFilter plugin FailedPostFilter",
	  "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1. Error running PostFilter plugin "
	  "FailedPostFilter" },
	{ "nodes failed two Filter plugins", 3,
	  { "Node(s) failed Filter plugin FalseFilter-1", "Node(s) failed Filter plugin FalseFilter-1",
	    "Node(s) failed Filter plugin FalseFilter-2" },
	  NULL, NULL, NULL,
	  "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, 2 Node(s) failed Filter plugin "
	  "FalseFilter-1." },
	{ "failed to Permit on node", 1, { "Node(s) failed Permit plugin Permit-1" }, NULL, NULL, NULL,
	  "0/1 nodes are available: 1 Node(s) failed Permit plugin Permit-1." },
	{ "failed to Reserve on node", 1, { "Node(s) failed Reserve plugin Reserve-1" }, NULL, NULL, NULL,
	  "0/1 nodes are available: 1 Node(s) failed Reserve plugin Reserve-1." },
	{ "nodes failed Prefilter plugin and the preemption also failed", 3,
	  { "Node(s) failed PreFilter plugin FalsePreFilter", "Node(s) failed PreFilter plugin FalsePreFilter",
	    "Node(s) failed PreFilter plugin FalsePreFilter" },
	  NULL, "Node(s) failed PreFilter plugin FalsePreFilter",
	  "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
	  "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter. preemption: 0/3 nodes are "
	  "available: 3 No preemption victims found for incoming pod." },
	{ "nodes failed one Filter plugin and the preemption also failed", 3,
	  { "Node(s) failed Filter plugin FalseFilter-1", "Node(s) failed Filter plugin FalseFilter-1",
	    "Node(s) failed Filter plugin FalseFilter-1" },
	  NULL, NULL, "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
	  "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1. preemption: 0/3 nodes are "
	  "available: 3 No preemption victims found for incoming pod." },
	{ "every node absent (PreFilterResult), one explicit", 4, { "Node(s) failed Filter plugin FalseFilter-1" },
	  "node(s) didn't satisfy plugin(s) [NodeAffinity]", NULL, NULL,
	  "0/4 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-1, 3 node(s) didn't satisfy "
	  "plugin(s) [NodeAffinity]." },
	{ "no rejected node and no absent reason", 2, { NULL }, NULL, NULL, "preemption: not eligible",
	  "0/2 nodes are available: preemption: not eligible" },
};

static void test_fit_error_table(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(fit_cases) / sizeof(fit_cases[0]); c++) {
		const struct fit_case *fc = &fit_cases[c];
		print_message("case: %s\n", fc->name);
		struct sk_node_status st[4];
		int n = 0;
		while (n < 4 && fc->reasons[n]) {
			st[n] = ns_of(fc->reasons[n]);
			n++;
		}
		struct sk_status absent = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, fc->absent);
		char *m = sk_fit_error_message(fc->num_all, st, n, fc->absent ? &absent : NULL, fc->prefilter,
					       fc->postfilter);
		assert_string_equal(m, fc->want);
		free(m);
	}
}

/* Upstream schedule_one_test TestNumFeasibleNodesToFind, ported as values. */
static void test_num_feasible_nodes_to_find_table(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int32_t global, profile; /* profile -1: unset */
		int32_t nodes, want;
	} cases[] = {
		{ "not set percentageOfNodesToScore and nodes number not more than 50", 0, -1, 10, 10 },
		{ "set profile percentageOfNodesToScore and nodes number not more than 50", 0, 40, 10, 10 },
		{ "not set percentageOfNodesToScore and nodes number more than 50", 0, -1, 1000, 420 },
		{ "set profile percentageOfNodesToScore and nodes number more than 50", 0, 40, 1000, 400 },
		{ "set global and profile percentageOfNodesToScore and nodes number more than 50", 100, 40, 1000, 400 },
		{ "set global percentageOfNodesToScore and nodes number more than 50", 40, -1, 1000, 400 },
		{ "not set profile percentageOfNodesToScore and nodes number more than 50*125", 0, -1, 6000, 300 },
		{ "set profile percentageOfNodesToScore and nodes number more than 50*125", 0, 40, 6000, 2400 },
		{ "fewer than minFeasibleNodesToFind from the percentage: 100", 0, 1, 500, 100 },
		{ "99 nodes are all checked", 0, 1, 99, 99 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case: %s\n", cases[i].name);
		struct sk_config c = { .percentage_of_nodes_to_score = cases[i].global };
		struct sk_profile_config p = { .percentage_of_nodes_to_score = cases[i].profile };
		assert_int_equal(sk_num_feasible_nodes_to_find(&c, &p, cases[i].nodes), cases[i].want);
	}
}

static void test_truncate_event_message(void **state)
{
	(void)state;
	char big[2000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	char *t = sk_truncate_event_message(big);
	assert_int_equal(strlen(t), 1024);
	assert_string_equal(t + 1020, " ...");
	free(t);
	big[1024] = '\0';
	t = sk_truncate_event_message(big);
	assert_int_equal(strlen(t), 1024);
	assert_int_equal(t[1023], 'a');
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_error_message),
		cmocka_unit_test(test_fit_error_histogram_cases),
		cmocka_unit_test(test_truncate_event_message),
		cmocka_unit_test(test_fit_error_table),
		cmocka_unit_test(test_num_feasible_nodes_to_find_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
