/* Tests for scheduler/framework/framework.c (+ waiting.c, nominator.c): profile build, every extension point
 * with every status code and upstream's effects, cycle state, handle, queueing hints. The test
 * plugins TestA..TestD come from scheduler/tests/testkit.c. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "scheduler/backend/cache.h"
#include "scheduler/framework/runtime.h"
#include "scheduler/tests/fixtures.h"
#include "scheduler/tests/testkit.h"

static struct sk_config cfg = { .parallelism = 16, .percentage_of_nodes_to_score = 0 };
static const struct sk_snapshot *cur_snap;
static int observed_points, observed_plugins;
static char last_point[64];

static const struct sk_snapshot *env_snapshot(void *ctx)
{
	(void)ctx;
	return cur_snap;
}

static void env_observe(void *ctx, const char *profile, const char *point, const char *plugin, enum sk_code code,
			double seconds)
{
	(void)ctx;
	(void)profile;
	(void)code;
	assert_true(seconds >= 0);
	if (plugin) {
		__atomic_add_fetch(&observed_plugins, 1, __ATOMIC_RELAXED);
	} else {
		observed_points++;
		snprintf(last_point, sizeof(last_point), "%s", point);
	}
}

static struct sk_framework *mkfw(struct tk_profile *tp, struct sk_nominator *nom)
{
	struct sk_framework_env env = { .pool = tk_pool, .nominator = nom, .snapshot = env_snapshot,
					.observe = env_observe };
	char *err = NULL;
	struct sk_framework *fw = sk_framework_new(&cfg, &tp->p, &env, &err);
	if (!fw)
		fail_msg("sk_framework_new: %s", err ? err : "?");
	return fw;
}

static char *build_error(struct tk_profile *tp)
{
	struct sk_framework_env env = { 0 };
	char *err = NULL;
	struct sk_framework *fw = sk_framework_new(&cfg, &tp->p, &env, &err);
	assert_null(fw);
	assert_non_null(err);
	return err;
}

static int setup(void **state)
{
	(void)state;
	tk_reset();
	observed_points = observed_plugins = 0;
	last_point[0] = '\0';
	return 0;
}




/* ---------- build ---------- */

static void test_build_instances_and_weights(void **state)
{
	(void)state;
	struct tk_profile tp;
	tk_profile_minimal(&tp, "p1");
	tk_profile_add(&tp, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&tp, SK_EP_SCORE, TK_A, 3);
	tk_profile_add(&tp, SK_EP_SCORE, TK_B, 0);
	tk_profile_add(&tp, SK_EP_RESERVE, TK_B, 0);
	struct sk_framework *fw = mkfw(&tp, NULL);
	assert_int_equal(sk_framework_nplugins(fw), 3); /* D, A, B: one instance each */
	assert_int_equal(tk_beh[TK_A].init_calls, 1);
	assert_int_equal(tk_beh[TK_D].init_calls, 1);
	assert_string_equal(sk_framework_profile_name(fw), "p1");
	assert_int_equal(sk_framework_point_len(fw, SK_EP_SCORE), 2);
	assert_int_equal(sk_framework_score_weight(fw, 0), 3);
	assert_int_equal(sk_framework_score_weight(fw, 1), 1); /* unset weight becomes 1 */
	assert_ptr_equal(sk_framework_point_plugin(fw, SK_EP_FILTER, 0), sk_framework_point_plugin(fw, SK_EP_SCORE, 0));
	for (int i = 0; i < sk_framework_nplugins(fw); i++)
		assert_int_equal(sk_framework_instance(fw, i)->slot, i);
	assert_true(sk_framework_has(fw, SK_EP_RESERVE));
	assert_false(sk_framework_has(fw, SK_EP_PERMIT));
	assert_ptr_equal(tk_beh[TK_A].instance->handle, sk_framework_handle(fw));
	assert_string_equal(sk_handle_profile_name(sk_framework_handle(fw)), "p1");
	assert_int_equal(sk_handle_parallelism(sk_framework_handle(fw)), 16);
	/* refcount: the second unref frees and finalizes every plugin */
	sk_framework_ref(fw);
	assert_false(sk_framework_unref(fw));
	assert_int_equal(tk_beh[TK_A].fini_calls, 0);
	assert_true(sk_framework_unref(fw));
	assert_int_equal(tk_beh[TK_A].fini_calls, 1);
	assert_int_equal(tk_beh[TK_B].fini_calls, 1);
	assert_false(sk_framework_unref(NULL));
}

static void test_build_errors(void **state)
{
	(void)state;
	struct tk_profile tp;
	char *err;

	tk_profile_init(&tp, "p");
	tk_profile_add(&tp, SK_EP_BIND, TK_D, 0);
	err = build_error(&tp);
	assert_string_equal(err, "only one queue sort plugin required for profile with scheduler name \"p\", but got 0");
	free(err);

	tk_profile_init(&tp, "p");
	tk_profile_add(&tp, SK_EP_QUEUE_SORT, TK_D, 0);
	err = build_error(&tp);
	assert_string_equal(err, "at least one bind plugin is needed for profile with scheduler name \"p\"");
	free(err);

	tk_profile_minimal(&tp, "p");
	tk_profile_add(&tp, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&tp, SK_EP_FILTER, TK_A, 0);
	err = build_error(&tp);
	assert_string_equal(err, "profile p: plugin \"TestA\" already registered as \"FilterPlugin\"");
	free(err);
	assert_int_equal(tk_beh[TK_A].init_calls, 0); /* no plugin initialized for a bad profile */

	/* a descriptor without the point's callback */
	static struct sk_plugin_desc nofilter = { SK_PLUGIN_HEADER, .name = "NoFilter" };
	tk_profile_minimal(&tp, "p");
	tp.p.points[SK_EP_FILTER].items[0].desc = &nofilter;
	tp.p.points[SK_EP_FILTER].n = 1;
	err = build_error(&tp);
	assert_string_equal(err, "profile p: plugin \"NoFilter\" does not extend FilterPlugin plugin");
	free(err);
}

/* ---------- PreEnqueue, QueueSort ---------- */

static void test_pre_enqueue_and_less(void **state)
{
	(void)state;
	struct tk_profile tp;
	tk_profile_minimal(&tp, "p");
	tk_profile_add(&tp, SK_EP_PRE_ENQUEUE, TK_A, 0);
	tk_profile_add(&tp, SK_EP_PRE_ENQUEUE, TK_B, 0);
	struct sk_framework *fw = mkfw(&tp, NULL);
	struct sk_pod *p = tk_pod_prio("p", 1), *q = tk_pod_prio("q", 5);
	struct sk_status s = sk_fw_run_pre_enqueue(fw, p);
	assert_int_equal(s.code, SK_SUCCESS);
	tk_beh[TK_B].pre_enqueue = SK_UNSCHEDULABLE_AND_UNRESOLVABLE;
	s = sk_fw_run_pre_enqueue(fw, p);
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	assert_string_equal(s.plugin, "TestB");
	sk_status_reset(&s);
	tk_beh[TK_A].pre_enqueue = SK_ERROR;
	s = sk_fw_run_pre_enqueue(fw, p);
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "running PreEnqueue plugin \"TestA\": gated");
	sk_status_reset(&s);
	struct sk_queued_pod a = { .pod = p, .timestamp_ns = 1 }, b = { .pod = q, .timestamp_ns = 2 };
	assert_true(sk_fw_less(fw, &b, &a));
	assert_false(sk_fw_less(fw, &a, &b));
	sk_pod_unref(p);
	sk_pod_unref(q);
	sk_framework_unref(fw);
}

/* ---------- PreFilter ---------- */

static struct sk_framework *prefilter_fw(struct tk_profile *tp)
{
	tk_profile_minimal(tp, "p");
	tk_profile_add(tp, SK_EP_PRE_FILTER, TK_A, 0);
	tk_profile_add(tp, SK_EP_PRE_FILTER, TK_B, 0);
	tk_profile_add(tp, SK_EP_PRE_FILTER, TK_C, 0);
	tk_profile_add(tp, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(tp, SK_EP_FILTER, TK_B, 0);
	return mkfw(tp, NULL);
}

static void test_prefilter_statuses(void **state)
{
	(void)state;
	struct tk_profile tp;
	struct sk_framework *fw = prefilter_fw(&tp);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	struct sk_prefilter_result r;
	const char *narrowing[4];
	int nn;

	/* Skip: recorded, that plugin's Filter is not run */
	tk_beh[TK_A].pre_filter = SK_SKIP;
	tk_beh[TK_A].filter_all = true;
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
	struct sk_status s = sk_fw_run_pre_filter(fw, cs, pod, &r, narrowing, 4, &nn);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_true(r.all);
	assert_int_equal(nn, 0);
	assert_string_equal(tk_log, "A.prefilter B.prefilter C.prefilter ");
	int slot_a = tk_beh[TK_A].instance->slot, slot_b = tk_beh[TK_B].instance->slot;
	assert_true(sk_cycle_state_skip_filter(cs, slot_a));
	assert_false(sk_cycle_state_skip_filter(cs, slot_b));
	struct sk_node_info *ni = tk_node_named("n1");
	s = sk_fw_run_filter(fw, cs, pod, ni);
	assert_int_equal(s.code, SK_SUCCESS); /* A's rejecting Filter was skipped */
	assert_int_equal(atomic_load(&tk_beh[TK_A].filter_calls), 0);
	assert_int_equal(atomic_load(&tk_beh[TK_B].filter_calls), 1);
	sk_cycle_state_free(cs);
	free(r.names);

	/* UU returns at once */
	tk_reset();
	tk_beh[TK_B].pre_filter = SK_UNSCHEDULABLE_AND_UNRESOLVABLE;
	tk_beh[TK_B].pre_filter_reason = "never";
	cs = sk_cycle_state_new(fw, false);
	s = sk_fw_run_pre_filter(fw, cs, pod, &r, narrowing, 4, &nn);
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	assert_string_equal(s.plugin, "TestB");
	assert_string_equal(tk_status_msg(&s), "never");
	assert_string_equal(tk_log, "A.prefilter B.prefilter ");
	sk_status_reset(&s);
	sk_cycle_state_free(cs);
	free(r.names);

	/* Unschedulable is remembered, the others still run */
	tk_reset();
	tk_beh[TK_A].pre_filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].pre_filter_reason = "not now";
	cs = sk_cycle_state_new(fw, false);
	s = sk_fw_run_pre_filter(fw, cs, pod, &r, narrowing, 4, &nn);
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	assert_string_equal(s.plugin, "TestA");
	assert_string_equal(tk_status_msg(&s), "not now");
	assert_string_equal(tk_log, "A.prefilter B.prefilter C.prefilter ");
	sk_status_reset(&s);
	sk_cycle_state_free(cs);
	free(r.names);

	/* Error is wrapped and stops */
	tk_reset();
	tk_beh[TK_B].pre_filter = SK_ERROR;
	tk_beh[TK_B].pre_filter_reason = "boom";
	cs = sk_cycle_state_new(fw, false);
	s = sk_fw_run_pre_filter(fw, cs, pod, &r, narrowing, 4, &nn);
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "running PreFilter plugin \"TestB\": boom");
	assert_string_equal(s.plugin, "TestB");
	assert_string_equal(tk_log, "A.prefilter B.prefilter ");
	sk_status_reset(&s);
	sk_cycle_state_free(cs);
	free(r.names);

	sk_node_info_free(ni);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
	assert_true(observed_points > 0);
}

static void test_prefilter_result_intersection(void **state)
{
	(void)state;
	struct tk_profile tp;
	struct sk_framework *fw = prefilter_fw(&tp);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	struct sk_prefilter_result r;
	const char *narrowing[4];
	int nn;

	tk_beh[TK_A].narrow = true;
	tk_beh[TK_A].narrow_nodes[0] = "n1";
	tk_beh[TK_A].narrow_nodes[1] = "n2";
	tk_beh[TK_A].narrow_nodes[2] = "n2";
	tk_beh[TK_C].narrow = true;
	tk_beh[TK_C].narrow_nodes[0] = "n3";
	tk_beh[TK_C].narrow_nodes[1] = "n2";
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
	struct sk_status s = sk_fw_run_pre_filter(fw, cs, pod, &r, narrowing, 4, &nn);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_false(r.all);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.names[0], "n2");
	assert_int_equal(nn, 2);
	assert_string_equal(narrowing[0], "TestA");
	assert_string_equal(narrowing[1], "TestC");
	free(r.names);
	sk_cycle_state_free(cs);

	/* disjoint: UU naming both plugins */
	tk_beh[TK_C].narrow_nodes[1] = NULL;
	cs = sk_cycle_state_new(fw, false);
	s = sk_fw_run_pre_filter(fw, cs, pod, &r, narrowing, 4, &nn);
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	assert_string_equal(tk_status_msg(&s), "node(s) didn't satisfy plugin(s) [TestA TestC] simultaneously");
	assert_null(s.plugin);
	sk_status_reset(&s);
	free(r.names);
	sk_cycle_state_free(cs);

	/* one plugin returning an empty set */
	tk_reset();
	tk_beh[TK_B].narrow = true;
	cs = sk_cycle_state_new(fw, false);
	s = sk_fw_run_pre_filter(fw, cs, pod, &r, narrowing, 4, &nn);
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	assert_string_equal(tk_status_msg(&s), "node(s) didn't satisfy plugin TestB");
	assert_string_equal(tk_log, "A.prefilter B.prefilter "); /* C never ran */
	sk_status_reset(&s);
	free(r.names);
	sk_cycle_state_free(cs);

	sk_framework_unref(fw);

	/* the names are listed sorted (upstream prints sets.List), whatever the plugin order */
	tk_reset();
	tk_profile_minimal(&tp, "p");
	tk_profile_add(&tp, SK_EP_PRE_FILTER, TK_C, 0);
	tk_profile_add(&tp, SK_EP_PRE_FILTER, TK_A, 0);
	fw = mkfw(&tp, NULL);
	tk_beh[TK_C].narrow = true;
	tk_beh[TK_C].narrow_nodes[0] = "n1";
	tk_beh[TK_A].narrow = true;
	tk_beh[TK_A].narrow_nodes[0] = "n2";
	cs = sk_cycle_state_new(fw, false);
	s = sk_fw_run_pre_filter(fw, cs, pod, &r, narrowing, 4, &nn);
	assert_string_equal(tk_status_msg(&s), "node(s) didn't satisfy plugin(s) [TestA TestC] simultaneously");
	assert_string_equal(narrowing[0], "TestC"); /* in plugin order */
	sk_status_reset(&s);
	free(r.names);
	sk_cycle_state_free(cs);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
}

/* ---------- Filter ---------- */

static void test_filter_first_failure_and_errors(void **state)
{
	(void)state;
	struct tk_profile tp;
	struct sk_framework *fw = prefilter_fw(&tp);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	struct sk_node_info *ni = tk_node_named("n1");
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, true);

	tk_beh[TK_A].filter_nodes[0] = "n1";
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].filter_reason = "A rejects";
	tk_beh[TK_B].filter_all = true;
	tk_beh[TK_B].filter = SK_UNSCHEDULABLE_AND_UNRESOLVABLE;
	struct sk_status s = sk_fw_run_filter(fw, cs, pod, ni);
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	assert_string_equal(s.plugin, "TestA");
	assert_string_equal(tk_status_msg(&s), "A rejects");
	assert_int_equal(atomic_load(&tk_beh[TK_B].filter_calls), 0); /* stopped at the first failure */
	sk_status_reset(&s);

	tk_beh[TK_A].filter = SK_PENDING;
	s = sk_fw_run_filter(fw, cs, pod, ni);
	assert_int_equal(s.code, SK_PENDING); /* Pending is a rejection, kept as is */
	sk_status_reset(&s);

	tk_beh[TK_A].filter = SK_WAIT; /* illegal at Filter: becomes an Error */
	s = sk_fw_run_filter(fw, cs, pod, ni);
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "running \"TestA\" filter plugin: A rejects");
	assert_string_equal(s.plugin, "TestA");
	sk_status_reset(&s);
	assert_true(observed_plugins > 0); /* per-plugin samples recorded in a sampled cycle */

	sk_cycle_state_free(cs);
	sk_node_info_free(ni);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
}

/* sk_fw_run_filter decides per node whether to time plugins and how to count evaluations; every
 * combination must run the same plugins in the same order and return the same status, and count
 * each plugin call once. Filter A, B, C; PreFilter of B may Skip. */
static void test_filter_runner_modes(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		bool prefilter;      /* PreFilter ran: the runner has its list of Filter plugins */
		bool sampled;        /* a cycle sampled for per-plugin metrics (observe hook set) */
		bool evaluated_hook; /* env.evaluated set */
		bool chunk;          /* inside sk_fw_filter_chunk_begin/end */
		bool clone;          /* run on a clone of the cycle state (preemption's dry run) */
	} modes[] = {
		{ "plain", true, false, false, false, false },
		{ "counted per chunk", true, false, true, true, false },
		{ "counted per call", true, false, true, false, false },
		{ "sampled", true, true, true, true, false },
		{ "no PreFilter list", false, false, true, true, false },
		{ "no PreFilter list, sampled", false, true, false, false, false },
		{ "plain, on a clone", true, false, false, false, true },
		{ "counted per chunk, on a clone", true, false, true, true, true },
		{ "no PreFilter list, on a clone", false, false, true, true, true },
	};
	static const struct {
		const char *name;
		enum sk_code a, c;     /* Filter codes of A (on n1) and C (everywhere); B passes */
		bool skip_b;           /* B Skips at PreFilter (only when PreFilter runs) */
		enum sk_code want;
		const char *want_plugin, *want_msg;
		int calls_a, calls_b, calls_c;
	} cases[] = {
		{ "all pass", SK_SUCCESS, SK_SUCCESS, false, SK_SUCCESS, NULL, "", 1, 1, 1 },
		{ "first rejects", SK_UNSCHEDULABLE, SK_SUCCESS, false, SK_UNSCHEDULABLE, "TestA", "rejects", 1, 0, 0 },
		{ "last rejects", SK_SUCCESS, SK_UNSCHEDULABLE_AND_UNRESOLVABLE, false, SK_UNSCHEDULABLE_AND_UNRESOLVABLE,
		  "TestC", "rejects", 1, 1, 1 },
		{ "illegal code is an Error", SK_SUCCESS, SK_WAIT, false, SK_ERROR, "TestC",
		  "running \"TestC\" filter plugin: rejects", 1, 1, 1 },
		{ "skipped plugin not called", SK_SUCCESS, SK_SUCCESS, true, SK_SUCCESS, NULL, "", 1, 0, 1 },
	};
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
			if (cases[k].skip_b && !modes[m].prefilter)
				continue;
			tk_reset();
			memset(tk_filter_evals, 0, sizeof(tk_filter_evals));
			struct tk_profile tp;
			tk_profile_minimal(&tp, "p");
			tk_profile_add(&tp, SK_EP_PRE_FILTER, TK_B, 0);
			tk_profile_add(&tp, SK_EP_FILTER, TK_A, 0);
			tk_profile_add(&tp, SK_EP_FILTER, TK_B, 0);
			tk_profile_add(&tp, SK_EP_FILTER, TK_C, 0);
			struct sk_framework_env env = { .pool = tk_pool, .snapshot = env_snapshot,
							.observe = modes[m].sampled ? env_observe : NULL,
							.evaluated = modes[m].evaluated_hook ? tk_env_evaluated : NULL };
			char *err = NULL;
			struct sk_framework *fw = sk_framework_new(&cfg, &tp.p, &env, &err);
			if (!fw)
				fail_msg("sk_framework_new: %s", err ? err : "?");
			struct sk_pod *pod = tk_pod_prio("p", 0);
			struct sk_node_info *ni = tk_node_named("n1");
			struct sk_cycle_state *cs = sk_cycle_state_new(fw, modes[m].sampled);
			if (modes[m].prefilter) {
				struct sk_prefilter_result r;
				tk_beh[TK_B].pre_filter = cases[k].skip_b ? SK_SKIP : SK_SUCCESS;
				struct sk_status ps = sk_fw_run_pre_filter(fw, cs, pod, &r, NULL, 0, NULL);
				assert_int_equal(ps.code, SK_SUCCESS);
				free(r.names);
			}
			tk_beh[TK_A].filter_nodes[0] = "n1";
			tk_beh[TK_A].filter = cases[k].a;
			tk_beh[TK_A].filter_reason = "rejects";
			tk_beh[TK_C].filter_all = true;
			tk_beh[TK_C].filter = cases[k].c;
			tk_beh[TK_C].filter_reason = "rejects";
			struct sk_cycle_state *run = modes[m].clone ? sk_cycle_state_clone(cs) : cs;
			assert_non_null(run);
			if (modes[m].chunk)
				sk_fw_filter_chunk_begin(fw);
			struct sk_status s = sk_fw_run_filter(fw, run, pod, ni);
			if (modes[m].chunk)
				sk_fw_filter_chunk_end(fw);
			if (run != cs)
				sk_cycle_state_free(run);
			const char *got_msg = tk_status_msg(&s);
			if (s.code != cases[k].want || strcmp(got_msg, cases[k].want_msg) != 0 ||
			    (cases[k].want_plugin ? !s.plugin || strcmp(s.plugin, cases[k].want_plugin) : s.plugin != NULL) ||
			    atomic_load(&tk_beh[TK_A].filter_calls) != cases[k].calls_a ||
			    atomic_load(&tk_beh[TK_B].filter_calls) != cases[k].calls_b ||
			    atomic_load(&tk_beh[TK_C].filter_calls) != cases[k].calls_c)
				fail_msg("mode %s, case %s: got %s plugin=%s \"%s\", calls %d %d %d", modes[m].name,
					 cases[k].name, sk_code_string(s.code), s.plugin ? s.plugin : "-", got_msg,
					 atomic_load(&tk_beh[TK_A].filter_calls), atomic_load(&tk_beh[TK_B].filter_calls),
					 atomic_load(&tk_beh[TK_C].filter_calls));
			if (modes[m].evaluated_hook &&
			    (tk_filter_evals[TK_A] != cases[k].calls_a || tk_filter_evals[TK_B] != cases[k].calls_b ||
			     tk_filter_evals[TK_C] != cases[k].calls_c))
				fail_msg("mode %s, case %s: evaluations %g %g %g", modes[m].name, cases[k].name,
					 tk_filter_evals[TK_A], tk_filter_evals[TK_B], tk_filter_evals[TK_C]);
			sk_status_reset(&s);
			sk_cycle_state_free(cs);
			sk_node_info_free(ni);
			sk_pod_unref(pod);
			sk_framework_unref(fw);
		}
	}
}

static void test_filter_with_nominated_pods(void **state)
{
	(void)state;
	struct sk_nominator *nom = sk_nominator_new();
	struct tk_profile tp;
	tk_profile_minimal(&tp, "p");
	tk_profile_add(&tp, SK_EP_FILTER, TK_A, 0);
	struct sk_framework *fw = mkfw(&tp, nom);
	tk_beh[TK_A].max_pods = 1; /* any pod on the node makes it unfit */
	struct sk_pod *pod = tk_pod_prio("p", 10);
	struct sk_node_info *ni = tk_node_named("n1");
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);

	struct sk_status s = sk_fw_run_filter_with_nominated(fw, cs, pod, ni);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_int_equal(atomic_load(&tk_beh[TK_A].filter_calls), 1);

	/* a lower-priority nominated pod is ignored */
	struct sk_pod *low = tk_pod_prio("low", 5);
	sk_nominator_add(nom, low, "n1");
	s = sk_fw_run_filter_with_nominated(fw, cs, pod, ni);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_int_equal(atomic_load(&tk_beh[TK_A].filter_calls), 2);

	/* the pod itself is ignored */
	sk_nominator_add(nom, pod, "n1");
	s = sk_fw_run_filter_with_nominated(fw, cs, pod, ni);
	assert_int_equal(s.code, SK_SUCCESS);

	/* an equal-priority nominated pod occupies the node in pass 1 */
	struct sk_pod *eq = tk_pod_prio("eq", 10);
	sk_nominator_add(nom, eq, "n1");
	s = sk_fw_run_filter_with_nominated(fw, cs, pod, ni);
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	assert_string_equal(tk_status_msg(&s), "too many pods");
	sk_status_reset(&s);
	assert_int_equal(ni->npods, 0); /* the snapshot's node info was not touched */

	/* two passes when pass 1 succeeds: a filter that only fails without the pods still fails */
	tk_beh[TK_A].max_pods = 3;
	int before = atomic_load(&tk_beh[TK_A].filter_calls);
	s = sk_fw_run_filter_with_nominated(fw, cs, pod, ni);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_int_equal(atomic_load(&tk_beh[TK_A].filter_calls) - before, 2);

	/* another node has no nominated pods */
	assert_int_equal(sk_nominator_count(nom), 3);
	struct sk_pod **pods;
	assert_int_equal(sk_handle_nominated_pods(sk_framework_handle(fw), "n2", &pods), 0);
	int n = sk_handle_nominated_pods(sk_framework_handle(fw), "n1", &pods);
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++)
		sk_pod_unref(pods[i]);
	free(pods);
	assert_string_equal(sk_nominator_node_of(nom, eq->uid), "n1");
	sk_nominator_delete(nom, eq->uid);
	assert_null(sk_nominator_node_of(nom, eq->uid));

	/* UpdateNominatedPod keeps an in-memory nomination when neither copy carries one */
	sk_nominator_update(nom, low, low);
	assert_string_equal(sk_nominator_node_of(nom, low->uid), "n1");

	sk_cycle_state_free(cs);
	sk_node_info_free(ni);
	sk_pod_unref(low);
	sk_pod_unref(eq);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
	sk_nominator_free(nom);
}

/* ---------- PostFilter ---------- */

static void test_post_filter(void **state)
{
	(void)state;
	struct tk_profile tp;
	tk_profile_minimal(&tp, "p");
	tk_profile_add(&tp, SK_EP_POST_FILTER, TK_A, 0);
	tk_profile_add(&tp, SK_EP_POST_FILTER, TK_B, 0);
	struct sk_framework *fw = mkfw(&tp, NULL);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
	struct sk_filter_diagnosis diag = { 0 };
	struct sk_postfilter_result r;
	bool have;

	tk_beh[TK_A].post_filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].post_filter_reason = "no new claims to deallocate";
	tk_beh[TK_B].post_filter = SK_UNSCHEDULABLE;
	tk_beh[TK_B].post_filter_reason = "preemption: nothing";
	struct sk_status s = sk_fw_run_post_filter(fw, cs, pod, &diag, &r, &have);
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	assert_string_equal(tk_status_msg(&s), "no new claims to deallocate, preemption: nothing");
	assert_string_equal(s.plugin, "TestA");
	assert_false(have);
	sk_status_reset(&s);

	tk_reset();
	tk_beh[TK_A].post_filter = SK_SUCCESS;
	tk_beh[TK_A].nominate = "n7";
	s = sk_fw_run_post_filter(fw, cs, pod, &diag, &r, &have);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_true(have);
	assert_string_equal(r.nominated_node, "n7");
	assert_string_equal(tk_log, "A.postfilter ");

	tk_reset();
	tk_beh[TK_A].post_filter = SK_UNSCHEDULABLE_AND_UNRESOLVABLE;
	s = sk_fw_run_post_filter(fw, cs, pod, &diag, &r, &have);
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	assert_string_equal(s.plugin, "TestA");
	assert_string_equal(tk_log, "A.postfilter ");
	sk_status_reset(&s);

	tk_reset();
	tk_beh[TK_A].post_filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].nominate = "n3";
	tk_beh[TK_B].post_filter = SK_ERROR;
	tk_beh[TK_B].post_filter_reason = "broken";
	s = sk_fw_run_post_filter(fw, cs, pod, &diag, &r, &have);
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "broken");
	assert_string_equal(s.plugin, "TestB");
	sk_status_reset(&s);

	sk_cycle_state_free(cs);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
}

/* ---------- PreScore / Score ---------- */

static struct sk_framework *score_fw(struct tk_profile *tp)
{
	tk_profile_minimal(tp, "p");
	tk_profile_add(tp, SK_EP_PRE_SCORE, TK_A, 0);
	tk_profile_add(tp, SK_EP_PRE_SCORE, TK_B, 0);
	tk_profile_add(tp, SK_EP_SCORE, TK_A, 2);
	tk_profile_add(tp, SK_EP_SCORE, TK_B, 3);
	return mkfw(tp, NULL);
}

static void test_score_weights_and_normalize(void **state)
{
	(void)state;
	struct tk_profile tp;
	struct sk_framework *fw = score_fw(&tp);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	struct sk_node_info *nis[3] = { tk_node_named("n1"), tk_node_named("n2"), tk_node_named("n3") };
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);

	tk_beh[TK_A].score_nodes[0] = "n1";
	tk_beh[TK_A].score_of[0] = 10;
	tk_beh[TK_A].score_nodes[1] = "n2";
	tk_beh[TK_A].score_of[1] = 20;
	tk_beh[TK_A].score_default = 5;
	tk_beh[TK_A].normalize = true; /* 10,20,5 -> 50,100,25 */
	tk_beh[TK_B].score_default = 7;
	struct sk_status s = sk_fw_run_pre_score(fw, cs, pod, (const struct sk_node_info *const *)nis, 3);
	assert_int_equal(s.code, SK_SUCCESS);
	struct sk_score_table t = { 0 };
	s = sk_fw_run_score(fw, cs, pod, (const struct sk_node_info *const *)nis, 3, &t);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_int_equal(t.nplugins, 2);
	assert_string_equal(t.plugin[0], "TestA");
	assert_int_equal(t.weight[1], 3);
	assert_int_equal(t.scores[0], 50);
	assert_int_equal(t.scores[1], 100);
	assert_int_equal(t.scores[2], 25);
	assert_int_equal(t.scores[3 + 0], 7);
	assert_int_equal(t.total[0], 50 * 2 + 7 * 3);
	assert_int_equal(t.total[1], 100 * 2 + 7 * 3);
	assert_int_equal(t.total[2], 25 * 2 + 7 * 3);
	sk_score_table_free(&t);
	sk_cycle_state_free(cs);

	/* PreScore Skip: that plugin adds nothing */
	tk_beh[TK_B].pre_score = SK_SKIP;
	cs = sk_cycle_state_new(fw, false);
	s = sk_fw_run_pre_score(fw, cs, pod, (const struct sk_node_info *const *)nis, 3);
	assert_int_equal(s.code, SK_SUCCESS);
	atomic_store(&tk_beh[TK_B].score_calls, 0);
	s = sk_fw_run_score(fw, cs, pod, (const struct sk_node_info *const *)nis, 3, &t);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_int_equal(t.nplugins, 1);
	assert_int_equal(t.total[1], 200);
	assert_int_equal(atomic_load(&tk_beh[TK_B].score_calls), 0);
	sk_score_table_free(&t);
	sk_cycle_state_free(cs);

	/* PreScore Error */
	tk_beh[TK_A].pre_score = SK_ERROR;
	cs = sk_cycle_state_new(fw, false);
	s = sk_fw_run_pre_score(fw, cs, pod, (const struct sk_node_info *const *)nis, 3);
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "running PreScore plugin \"TestA\": prescore failed");
	sk_status_reset(&s);
	sk_cycle_state_free(cs);

	for (int i = 0; i < 3; i++)
		sk_node_info_free(nis[i]);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
}

/* score_batch (ABI 1.1): TestE scores through batches, TestA per node, in one table; the totals
 * are those per-node scoring gives, every node is covered exactly once, in fewer calls than nodes
 * (one per chunk a worker takes), and a failing node is reported as a per-node Score error is. */
static void test_score_batch(void **state)
{
	(void)state;
	enum { N = 40 };
	struct tk_profile tp;
	tk_profile_minimal(&tp, "p");
	tk_profile_add(&tp, SK_EP_SCORE, TK_A, 2);
	tk_profile_add(&tp, SK_EP_SCORE, TK_E, 3);
	struct sk_framework *fw = mkfw(&tp, NULL);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	struct sk_node_info *nis[N];
	for (int i = 0; i < N; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i % 100);
		nis[i] = tk_node_named(name);
	}
	tk_beh[TK_A].score_default = 10;
	tk_beh[TK_E].score_default = 4;
	tk_beh[TK_E].score_nodes[0] = "n7";
	tk_beh[TK_E].score_of[0] = 90;
	tk_beh[TK_E].score_nodes[1] = "n33";
	tk_beh[TK_E].score_of[1] = 60;
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, true);
	struct sk_score_table t = { 0 };
	struct sk_status s = sk_fw_run_score(fw, cs, pod, (const struct sk_node_info *const *)nis, N, &t);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_int_equal(t.nplugins, 2);
	assert_string_equal(t.plugin[1], "TestE");
	for (int i = 0; i < N; i++) {
		int64_t e = i == 7 ? 90 : i == 33 ? 60 : 4;
		assert_int_equal(t.scores[N + i], e);
		assert_int_equal(t.total[i], 10 * 2 + e * 3);
	}
	int calls = atomic_load(&tk_beh[TK_E].batch_calls);
	assert_int_equal(atomic_load(&tk_beh[TK_E].batch_nodes), N);
	assert_int_equal(atomic_load(&tk_beh[TK_E].score_calls), N); /* the batch's own per-node work */
	assert_true(calls >= 1 && calls < N);
	assert_int_equal(atomic_load(&tk_beh[TK_A].batch_calls), 0);
	assert_int_equal(atomic_load(&tk_beh[TK_A].score_calls), N);
	sk_score_table_free(&t);
	sk_cycle_state_free(cs);

	/* an error inside a batch */
	tk_beh[TK_E].score = SK_ERROR;
	cs = sk_cycle_state_new(fw, false);
	s = sk_fw_run_score(fw, cs, pod, (const struct sk_node_info *const *)nis, N, &t);
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "running Score plugins: plugin \"TestE\" failed with: score failed");
	assert_string_equal(s.plugin, "TestE");
	sk_status_reset(&s);
	sk_cycle_state_free(cs);

	for (int i = 0; i < N; i++)
		sk_node_info_free(nis[i]);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
}

static void test_score_errors(void **state)
{
	(void)state;
	struct tk_profile tp;
	struct sk_framework *fw = score_fw(&tp);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	struct sk_node_info *nis[2] = { tk_node_named("n1"), tk_node_named("n2") };
	struct sk_score_table t = { 0 };

	/* out of range after normalize */
	tk_beh[TK_B].score_default = 100;
	tk_beh[TK_B].normalize_add = 1;
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
	struct sk_status s = sk_fw_run_score(fw, cs, pod, (const struct sk_node_info *const *)nis, 2, &t);
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "applying score defaultWeights on Score plugins: plugin \"TestB\" returns an "
				     "invalid score 101, it should in the range of [0, 100] after normalizing");
	assert_null(t.total);
	sk_status_reset(&s);
	tk_beh[TK_B].score_default = -1;
	tk_beh[TK_B].normalize_add = 0;
	s = sk_fw_run_score(fw, cs, pod, (const struct sk_node_info *const *)nis, 2, &t);
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "applying score defaultWeights on Score plugins: plugin \"TestB\" returns an "
				     "invalid score -1, it should in the range of [0, 100] after normalizing");
	sk_status_reset(&s);

	/* a Score error */
	tk_beh[TK_A].score = SK_ERROR;
	s = sk_fw_run_score(fw, cs, pod, (const struct sk_node_info *const *)nis, 2, &t);
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "running Score plugins: plugin \"TestA\" failed with: score failed");
	sk_status_reset(&s);
	sk_cycle_state_free(cs);

	for (int i = 0; i < 2; i++)
		sk_node_info_free(nis[i]);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
}

/* ---------- Reserve / Permit / Bind ---------- */

static struct sk_framework *late_fw(struct tk_profile *tp)
{
	tk_profile_init(tp, "p");
	tk_profile_add(tp, SK_EP_QUEUE_SORT, TK_D, 0);
	for (int p = TK_A; p <= TK_C; p++) {
		tk_profile_add(tp, SK_EP_RESERVE, p, 0);
		tk_profile_add(tp, SK_EP_PERMIT, p, 0);
		tk_profile_add(tp, SK_EP_PRE_BIND, p, 0);
		tk_profile_add(tp, SK_EP_BIND, p, 0);
		tk_profile_add(tp, SK_EP_POST_BIND, p, 0);
	}
	return mkfw(tp, NULL);
}

static void test_reserve_unreserve_order(void **state)
{
	(void)state;
	struct tk_profile tp;
	struct sk_framework *fw = late_fw(&tp);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);

	struct sk_status s = sk_fw_run_reserve(fw, cs, pod, "n1");
	assert_int_equal(s.code, SK_SUCCESS);
	sk_fw_run_unreserve(fw, cs, pod, "n1");
	assert_string_equal(tk_log, "A.reserve(n1) B.reserve(n1) C.reserve(n1) C.unreserve B.unreserve A.unreserve ");

	tk_reset();
	tk_beh[TK_B].reserve = SK_UNSCHEDULABLE;
	s = sk_fw_run_reserve(fw, cs, pod, "n1");
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	assert_string_equal(s.plugin, "TestB");
	assert_string_equal(tk_log, "A.reserve(n1) B.reserve(n1) ");
	sk_status_reset(&s);

	tk_beh[TK_B].reserve = SK_ERROR;
	s = sk_fw_run_reserve(fw, cs, pod, "n1");
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "running Reserve plugin \"TestB\": reserve refused");
	sk_status_reset(&s);

	sk_cycle_state_free(cs);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
}

struct allow_ctx {
	struct sk_framework *fw;
	const char *uid;
	bool reject;
};

static void *allow_later(void *arg)
{
	struct allow_ctx *c = arg;
	struct timespec ts = { 0, 5 * 1000000 };
	nanosleep(&ts, NULL);
	struct sk_handle *h = sk_framework_handle(c->fw);
	if (c->reject) {
		sk_handle_reject_waiting_pod(h, c->uid, "TestC", "go away");
	} else {
		sk_handle_allow_waiting_pod(h, c->uid, "TestA");
		sk_handle_allow_waiting_pod(h, c->uid, "TestC");
	}
	return NULL;
}

static void test_permit(void **state)
{
	(void)state;
	struct tk_profile tp;
	struct sk_framework *fw = late_fw(&tp);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
	struct sk_waiting_pods *w = sk_framework_waiting_pods(fw);

	/* Wait from A and C: allowed by both from another thread */
	tk_beh[TK_A].permit = SK_WAIT;
	tk_beh[TK_A].permit_timeout_ms = 60000;
	tk_beh[TK_C].permit = SK_WAIT;
	tk_beh[TK_C].permit_timeout_ms = 100LL * 60 * 1000; /* capped at 15 min */
	struct sk_status s = sk_fw_run_permit(fw, cs, pod, "n1");
	assert_int_equal(s.code, SK_WAIT);
	assert_string_equal(tk_status_msg(&s), "one or more plugins asked to wait and no plugin rejected pod \"p\"");
	sk_status_reset(&s);
	assert_true(sk_waiting_has(w, pod->uid));
	pthread_t t;
	struct allow_ctx c = { fw, pod->uid, false };
	pthread_create(&t, NULL, allow_later, &c);
	s = sk_fw_wait_on_permit(fw, pod);
	pthread_join(t, NULL);
	assert_int_equal(s.code, SK_SUCCESS);
	assert_false(sk_waiting_has(w, pod->uid));

	/* Rejected by C */
	s = sk_fw_run_permit(fw, cs, pod, "n1");
	sk_status_reset(&s);
	c.reject = true;
	pthread_create(&t, NULL, allow_later, &c);
	s = sk_fw_wait_on_permit(fw, pod);
	pthread_join(t, NULL);
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	assert_string_equal(s.plugin, "TestC");
	assert_string_equal(tk_status_msg(&s), "go away");
	sk_status_reset(&s);

	/* Timeout */
	tk_beh[TK_C].permit_timeout_ms = 10;
	s = sk_fw_run_permit(fw, cs, pod, "n1");
	sk_status_reset(&s);
	assert_int_equal(sk_handle_allow_waiting_pod(sk_framework_handle(fw), pod->uid, "TestA"), 0);
	s = sk_fw_wait_on_permit(fw, pod);
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	assert_string_equal(tk_status_msg(&s), "rejected due to timeout after waiting 10ms at plugin TestC");
	assert_string_equal(s.plugin, "TestC");
	sk_status_reset(&s);
	assert_int_equal(sk_handle_allow_waiting_pod(sk_framework_handle(fw), pod->uid, "TestA"), -1);

	/* Not waiting: Success at once */
	s = sk_fw_wait_on_permit(fw, pod);
	assert_int_equal(s.code, SK_SUCCESS);

	/* Rejection and Error */
	tk_reset();
	tk_beh[TK_B].permit = SK_UNSCHEDULABLE_AND_UNRESOLVABLE;
	s = sk_fw_run_permit(fw, cs, pod, "n1");
	assert_int_equal(s.code, SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
	assert_string_equal(s.plugin, "TestB");
	assert_string_equal(tk_log, "A.permit B.permit ");
	sk_status_reset(&s);
	tk_beh[TK_B].permit = SK_ERROR;
	s = sk_fw_run_permit(fw, cs, pod, "n1");
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "running Permit plugin \"TestB\": permit refused");
	sk_status_reset(&s);
	assert_int_equal(sk_waiting_count(w), 0);

	sk_cycle_state_free(cs);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
}

static void test_prebind_bind_postbind(void **state)
{
	(void)state;
	struct tk_profile tp;
	struct sk_framework *fw = late_fw(&tp);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);

	tk_beh[TK_A].bind = SK_SKIP;
	struct sk_status s = sk_fw_run_bind(fw, cs, pod, "n1");
	assert_int_equal(s.code, SK_SUCCESS);
	assert_string_equal(tk_log, "A.bind(n1) B.bind(n1) "); /* C not asked once B bound */

	tk_reset();
	for (int p = TK_A; p <= TK_C; p++)
		tk_beh[p].bind = SK_SKIP;
	s = sk_fw_run_bind(fw, cs, pod, "n1");
	assert_int_equal(s.code, SK_SKIP);

	tk_beh[TK_B].bind = SK_ERROR;
	s = sk_fw_run_bind(fw, cs, pod, "n1");
	assert_int_equal(s.code, SK_ERROR);
	assert_string_equal(tk_status_msg(&s), "running Bind plugin \"TestB\": bind failed");
	sk_status_reset(&s);

	tk_reset();
	tk_beh[TK_B].pre_bind = SK_UNSCHEDULABLE;
	s = sk_fw_run_pre_bind(fw, cs, pod, "n1");
	assert_int_equal(s.code, SK_UNSCHEDULABLE);
	assert_string_equal(s.plugin, "TestB");
	assert_string_equal(tk_log, "A.prebind B.prebind ");
	sk_status_reset(&s);
	tk_beh[TK_B].pre_bind = SK_ERROR;
	s = sk_fw_run_pre_bind(fw, cs, pod, "n1");
	assert_string_equal(tk_status_msg(&s), "running PreBind plugin \"TestB\": prebind refused");
	sk_status_reset(&s);

	tk_reset();
	sk_fw_run_post_bind(fw, cs, pod, "n1");
	assert_string_equal(tk_log, "A.postbind B.postbind C.postbind ");
	assert_string_equal(last_point, "PostBind");

	sk_cycle_state_free(cs);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
}

/* ---------- cycle state ---------- */

struct counter {
	int v;
};
static int frees;
static void counter_free(void *p)
{
	frees++;
	free(p);
}
static void *counter_clone(const void *p)
{
	struct counter *c = malloc(sizeof(*c));
	*c = *(const struct counter *)p;
	return c;
}
static const struct sk_state_ops clone_ops = { counter_free, counter_clone };
static const struct sk_state_ops shared_ops = { counter_free, NULL };

static void test_cycle_state(void **state)
{
	(void)state;
	struct tk_profile tp;
	tk_profile_minimal(&tp, "p");
	tk_profile_add(&tp, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&tp, SK_EP_FILTER, TK_B, 0);
	struct sk_framework *fw = mkfw(&tp, NULL);
	frees = 0;
	struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
	struct counter *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	a->v = 1;
	b->v = 2;
	sk_cycle_state_put(cs, 0, a, &clone_ops);
	sk_cycle_state_put(cs, 1, b, &shared_ops);
	sk_cycle_state_put(cs, 99, malloc(sizeof(struct counter)), &clone_ops); /* bad slot: freed */
	assert_int_equal(frees, 1);
	assert_null(sk_cycle_state_get(cs, 99));
	struct sk_cycle_state *c = sk_cycle_state_clone(cs);
	struct counter *ca = sk_cycle_state_get(c, 0);
	assert_ptr_not_equal(ca, a);
	assert_int_equal(ca->v, 1);
	ca->v = 10;
	assert_int_equal(a->v, 1);
	assert_ptr_equal(sk_cycle_state_get(c, 1), b); /* immutable data is shared */
	sk_cycle_state_free(c);
	assert_int_equal(frees, 2); /* only the clone of a */
	sk_cycle_state_activate_pod(cs, "default/x");
	sk_cycle_state_activate_pod(cs, "default/x");
	sk_cycle_state_activate_pod(cs, "default/y");
	char **keys;
	int n = sk_cycle_state_take_pods_to_activate(cs, &keys);
	assert_int_equal(n, 2);
	assert_string_equal(keys[1], "default/y");
	for (int i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	sk_cycle_state_free(cs);
	assert_int_equal(frees, 4);
	sk_cycle_state_free(NULL);
	sk_framework_unref(fw);
}

/* Freed cycle states are kept per thread and handed out again (scheduler/framework/cycle_state.c):
 * a state made after freeing used ones has no slot data, skip bit, pod to activate or metrics
 * flag of theirs, and its clones stay independent. Rows: what the freed states carried. */
static void test_cycle_state_reuse(void **state)
{
	(void)state;
	static const struct { bool metrics, activate, prefilter_skip, clones; } rows[] = {
		{ false, false, false, false }, { true, true, true, true }, { true, false, true, false },
		{ false, true, false, true },
	};
	struct tk_profile tp;
	tk_profile_minimal(&tp, "p");
	tk_profile_add(&tp, SK_EP_PRE_FILTER, TK_A, 0);
	tk_profile_add(&tp, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&tp, SK_EP_FILTER, TK_B, 0);
	struct sk_framework *fw = mkfw(&tp, NULL);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	int slot_a = tk_beh[TK_A].instance->slot, slot_b = tk_beh[TK_B].instance->slot;
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		frees = 0;
		struct sk_cycle_state *used[12];
		int nput = 0;
		for (int i = 0; i < 12; i++) {
			used[i] = sk_cycle_state_new(fw, rows[r].metrics);
			assert_non_null(used[i]);
			if (rows[r].activate)
				sk_cycle_state_activate_pod(used[i], "default/old");
			if (rows[r].prefilter_skip) {
				struct sk_prefilter_result res;
				tk_beh[TK_A].pre_filter = SK_SKIP;
				struct sk_status st = sk_fw_run_pre_filter(fw, used[i], pod, &res, NULL, 0, NULL);
				sk_status_reset(&st);
				free(res.names);
				tk_beh[TK_A].pre_filter = SK_SUCCESS;
				assert_true(sk_cycle_state_skip_filter(used[i], slot_a));
			}
			/* after PreFilter, which may put the plugin's own state in its slot */
			struct counter *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
			a->v = 100 + i;
			b->v = 200 + i;
			sk_cycle_state_put(used[i], slot_a, a, &clone_ops);
			sk_cycle_state_put(used[i], slot_b, b, &shared_ops);
			nput += 2;
			if (rows[r].clones) {
				struct sk_cycle_state *c = sk_cycle_state_clone(used[i]);
				assert_non_null(c);
				nput++; /* a's clone; b is borrowed */
				assert_ptr_equal(sk_cycle_state_get(c, slot_b), sk_cycle_state_get(used[i], slot_b));
				sk_cycle_state_free(used[i]); /* the original goes first: its shell is reused next */
				used[i] = c;
			}
		}
		for (int i = 0; i < 12; i++)
			sk_cycle_state_free(used[i]);

		for (int k = 0; k < 12; k++) {
			struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
			assert_non_null(cs);
			assert_null(sk_cycle_state_get(cs, slot_a));
			assert_null(sk_cycle_state_get(cs, slot_b));
			assert_false(sk_cycle_state_skip_filter(cs, slot_a));
			assert_false(sk_cycle_state_skip_score(cs, slot_a));
			assert_false(sk_cycle_state_records_plugin_metrics(cs));
			char **keys = NULL;
			assert_int_equal(sk_cycle_state_take_pods_to_activate(cs, &keys), 0);
			free(keys);
			struct counter *a = malloc(sizeof(*a));
			a->v = k;
			sk_cycle_state_put(cs, slot_a, a, &clone_ops);
			struct sk_cycle_state *c = sk_cycle_state_clone(cs);
			struct counter *ca = sk_cycle_state_get(c, slot_a);
			assert_ptr_not_equal(ca, a);
			assert_int_equal(ca->v, k);
			ca->v = -1;
			assert_int_equal(a->v, k);
			assert_null(sk_cycle_state_get(c, slot_b));
			sk_cycle_state_free(c);
			sk_cycle_state_free(cs);
			nput += 2;
		}
		/* every slot's data was released exactly once (the shared one only by its owner) */
		assert_int_equal(frees, nput);
	}
	sk_pod_unref(pod);
	sk_framework_unref(fw);
}

/* ---------- hints, durations ---------- */

static void test_event_matching_and_hints(void **state)
{
	(void)state;
	struct sk_cluster_event node_add = { SK_EV_NODE, SK_ACT_ADD, "NodeAdd" };
	struct sk_cluster_event node_taint = { SK_EV_NODE, SK_ACT_UPDATE_NODE_TAINT, "NodeTaintChange" };
	struct sk_cluster_event pod_any = { SK_EV_POD, SK_ACT_ALL, "Pod" };
	struct sk_cluster_event assigned_del = { SK_EV_ASSIGNED_POD, SK_ACT_DELETE, "AssignedPodDelete" };
	struct sk_cluster_event wild = { SK_EV_WILDCARD, SK_ACT_ALL, "*" };
	assert_true(sk_event_matches(&node_add, &node_add));
	assert_false(sk_event_matches(&node_add, &node_taint));
	assert_true(sk_event_matches(&pod_any, &assigned_del));
	assert_false(sk_event_matches(&assigned_del, &node_add));
	assert_true(sk_event_matches(&wild, &node_taint));

	struct tk_profile tp;
	tk_profile_minimal(&tp, "p");
	tk_profile_add(&tp, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&tp, SK_EP_FILTER, TK_B, 0);
	tk_beh[TK_A].nevents = 1;
	tk_beh[TK_A].events[0] = node_add;
	tk_beh[TK_A].hint_result = SK_QUEUE_SKIP;
	struct sk_framework *fw = mkfw(&tp, NULL);
	struct sk_pod *pod = tk_pod_prio("p", 0);
	assert_int_equal(sk_fw_queueing_hint(fw, "TestA", &node_taint, pod, NULL, NULL), -1);
	assert_int_equal(sk_fw_queueing_hint(fw, "TestA", &node_add, pod, NULL, NULL), SK_QUEUE_SKIP);
	tk_beh[TK_A].hint_result = SK_QUEUE;
	assert_int_equal(sk_fw_queueing_hint(fw, "TestA", &node_add, pod, NULL, NULL), SK_QUEUE);
	assert_int_equal(tk_beh[TK_A].hint_calls, 2);
	/* B registered nothing (nevents 0 still means an EnqueueExtensions with no events) */
	assert_int_equal(sk_fw_queueing_hint(fw, "TestB", &node_add, pod, NULL, NULL), -1);
	assert_int_equal(sk_fw_queueing_hint(fw, "Unknown", &node_add, pod, NULL, NULL), -1);
	sk_pod_unref(pod);
	sk_framework_unref(fw);
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_build_instances_and_weights, setup),
		cmocka_unit_test_setup(test_build_errors, setup),
		cmocka_unit_test_setup(test_pre_enqueue_and_less, setup),
		cmocka_unit_test_setup(test_prefilter_statuses, setup),
		cmocka_unit_test_setup(test_prefilter_result_intersection, setup),
		cmocka_unit_test_setup(test_filter_first_failure_and_errors, setup),
		cmocka_unit_test_setup(test_filter_runner_modes, setup),
		cmocka_unit_test_setup(test_filter_with_nominated_pods, setup),
		cmocka_unit_test_setup(test_post_filter, setup),
		cmocka_unit_test_setup(test_score_weights_and_normalize, setup),
		cmocka_unit_test_setup(test_score_errors, setup),
		cmocka_unit_test_setup(test_score_batch, setup),
		cmocka_unit_test_setup(test_reserve_unreserve_order, setup),
		cmocka_unit_test_setup(test_permit, setup),
		cmocka_unit_test_setup(test_prebind_bind_postbind, setup),
		cmocka_unit_test_setup(test_cycle_state, setup),
		cmocka_unit_test_setup(test_cycle_state_reuse, setup),
		cmocka_unit_test_setup(test_event_matching_and_hints, setup),
	};
	return cmocka_run_group_tests(tests, tk_pool_setup, tk_pool_teardown);
}
