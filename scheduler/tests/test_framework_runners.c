/* Tests for the per-node runners of scheduler/framework/framework.c: sk_fw_run_filter_nodes (a
 * run of nodes through the Filter plugins, in every runner mode) and the Score runner's totals
 * and chunks. Kept apart from test_framework.c, which covers every extension point; the test
 * plugins TestA..TestE come from scheduler/tests/testkit.c. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/framework/runtime.h"
#include "scheduler/tests/fixtures.h"
#include "scheduler/tests/testkit.h"

static struct sk_config cfg = { .parallelism = 16, .percentage_of_nodes_to_score = 0 };

static const struct sk_snapshot *env_snapshot(void *ctx)
{
	(void)ctx;
	return NULL;
}

static void env_observe(void *ctx, const char *profile, const char *point, const char *plugin, enum sk_code code,
			double seconds)
{
	(void)ctx;
	(void)profile;
	(void)point;
	(void)plugin;
	(void)code;
	assert_true(seconds >= 0);
}

static int setup(void **state)
{
	(void)state;
	tk_reset();
	return 0;
}




static struct sk_framework *mkfw(struct tk_profile *tp)
{
	struct sk_framework_env env = { .pool = tk_pool, .snapshot = env_snapshot, .observe = env_observe };
	char *err = NULL;
	struct sk_framework *fw = sk_framework_new(&cfg, &tp->p, &env, &err);
	if (!fw)
		fail_msg("sk_framework_new: %s", err ? err : "?");
	return fw;
}

/* Node i of a run was rejected or failed (res): its status is the one sk_fw_run_filter gives,
 * rejected by plugin `by` (A, or C with code c); the check's own plugin calls and evaluations are
 * taken back from the counters. Resets *st. */
static void check_rejected_node(struct sk_framework *fw, struct sk_cycle_state *cs, const struct sk_pod *pod,
				const struct sk_node_info *ni, struct sk_status *st, uint8_t res, char by, enum sk_code c,
				bool evaluated_hook, const char *mode, const char *name, int i, int mid)
{
	const char *want_plugin = by == 'A' ? "TestA" : "TestC";
	char want_msg[64];
	snprintf(want_msg, sizeof(want_msg), "%s%s", res == SK_FW_FAILED ? "running \"TestC\" filter plugin: " : "",
		 by == 'A' ? "a rejects" : "c rejects");
	enum sk_code want_code = res == SK_FW_FAILED ? SK_ERROR : by == 'A' ? SK_UNSCHEDULABLE : c;
	if (st->code != want_code || !st->plugin || strcmp(st->plugin, want_plugin) || strcmp(tk_status_msg(st), want_msg))
		fail_msg("mode %s, case %s: node %d: %s plugin=%s \"%s\"", mode, name, i, sk_code_string(st->code),
			 st->plugin ? st->plugin : "-", tk_status_msg(st));
	struct sk_status one = sk_fw_run_filter(fw, cs, pod, ni);
	assert_int_equal(one.code, st->code);
	assert_string_equal(one.plugin, st->plugin);
	char *a = sk_status_message(&one), *b = sk_status_message(st);
	assert_string_equal(a, b);
	free(a);
	free(b);
	sk_status_reset(&one);
	sk_status_reset(st);
	atomic_fetch_sub(&tk_beh[TK_A].filter_calls, 1);
	if (by != 'A') {
		atomic_fetch_sub(&tk_beh[mid].filter_calls, 1);
		atomic_fetch_sub(&tk_beh[TK_C].filter_calls, 1);
	}
	if (evaluated_hook) { /* reported per call outside a chunk */
		tk_filter_evals[TK_A]--;
		if (by != 'A') {
			tk_filter_evals[mid]--;
			tk_filter_evals[TK_C]--;
		}
	}
}

/* sk_fw_run_filter_nodes over a run of six nodes n0..n5 (Filter A, B, C; A rejects n1, C the
 * nodes listed) in every runner mode: per node the result and status of sk_fw_run_filter, the
 * plugins called as often, the stop after max_feasible feasible nodes, nothing written past the
 * last node filtered, and buffers reused from case to case never showing an earlier case's
 * results. */
static void test_filter_nodes_table(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		bool prefilter, sampled, evaluated_hook, chunk;
		bool batched; /* the middle plugin is TestE, which filters in batches (filter_batch) */
	} modes[] = {
		{ "plain", true, false, false, false, false },
		{ "counted per chunk", true, false, true, true, false },
		{ "counted per call", true, false, true, false, false },
		{ "sampled", true, true, true, true, false },
		{ "no PreFilter list", false, false, true, true, false },
		{ "plain, the middle plugin in batches", true, false, false, false, true },
		{ "counted per chunk, the middle plugin able to batch", true, false, true, true, true },
	};
	enum { NN = 6 };
	static const struct {
		const char *name;
		bool a_rejects;          /* A rejects n1 */
		const char *c_nodes[3];  /* C's nodes, with code c */
		enum sk_code c;
		int max_feasible;
		const char *want_res;    /* per node filtered: 1 feasible, 2 rejected, 3 error */
		const char *want_plugin; /* per node filtered: A, C or '-' */
		int want_found, calls_a, calls_b, calls_c;
	} cases[] = {
		{ "all pass", false, { NULL }, SK_SUCCESS, INT32_MAX, "111111", "------", 6, 6, 6, 6 },
		{ "rejections by the first and the last plugin", true, { "n3", "n4" }, SK_UNSCHEDULABLE, INT32_MAX,
		  "121221", "-A-CC-", 3, 6, 5, 5 },
		{ "all pass again (no stale result)", false, { NULL }, SK_SUCCESS, INT32_MAX, "111111", "------", 6, 6,
		  6, 6 },
		{ "stop after 2 feasible", true, { "n3", "n4" }, SK_UNSCHEDULABLE, 2, "121", "-A-", 2, 3, 2, 2 },
		{ "stop at the last node", true, { "n0" }, SK_UNSCHEDULABLE_AND_UNRESOLVABLE, 4, "221111", "CA----", 4, 6,
		  5, 5 },
		{ "an Error does not stop the run", false, { "n2" }, SK_WAIT, INT32_MAX, "113111", "--C---", 5, 6, 6, 6 },
		{ "max 0", true, { NULL }, SK_SUCCESS, 0, "", "", 0, 0, 0, 0 },
	};
	struct sk_node_info *nis[NN];
	for (int i = 0; i < NN; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i);
		nis[i] = tk_node_named(name);
	}
	uint8_t res[NN + 1];
	struct sk_status st[NN + 1];
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
			tk_reset();
			memset(tk_filter_evals, 0, sizeof(tk_filter_evals));
			struct tk_profile tp;
			tk_profile_minimal(&tp, "p");
			tk_profile_add(&tp, SK_EP_PRE_FILTER, TK_B, 0);
			const int mid = modes[m].batched ? TK_E : TK_B;
			tk_profile_add(&tp, SK_EP_FILTER, TK_A, 0);
			tk_profile_add(&tp, SK_EP_FILTER, mid, 0);
			tk_profile_add(&tp, SK_EP_FILTER, TK_C, 0);
			struct sk_framework_env env = { .pool = tk_pool, .snapshot = env_snapshot,
							.observe = modes[m].sampled ? env_observe : NULL,
							.evaluated = modes[m].evaluated_hook ? tk_env_evaluated : NULL };
			char *err = NULL;
			struct sk_framework *fw = sk_framework_new(&cfg, &tp.p, &env, &err);
			if (!fw)
				fail_msg("sk_framework_new: %s", err ? err : "?");
			struct sk_pod *pod = tk_pod_prio("p", 0);
			struct sk_cycle_state *cs = sk_cycle_state_new(fw, modes[m].sampled);
			if (modes[m].prefilter) {
				struct sk_prefilter_result r;
				struct sk_status ps = sk_fw_run_pre_filter(fw, cs, pod, &r, NULL, 0, NULL);
				assert_int_equal(ps.code, SK_SUCCESS);
				free(r.names);
			}
			if (cases[k].a_rejects) {
				tk_beh[TK_A].filter_nodes[0] = "n1";
				tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
				tk_beh[TK_A].filter_reason = "a rejects";
			}
			for (int c = 0; c < 3 && cases[k].c_nodes[c]; c++)
				tk_beh[TK_C].filter_nodes[c] = cases[k].c_nodes[c];
			tk_beh[TK_C].filter = cases[k].c;
			tk_beh[TK_C].filter_reason = "c rejects";
			memset(res, 0xee, sizeof(res));
			if (modes[m].chunk)
				sk_fw_filter_chunk_begin(fw);
			int ran = -1;
			int found = sk_fw_run_filter_nodes(fw, cs, pod, (const struct sk_node_info *const *)nis, NN,
							   cases[k].max_feasible, res, st, &ran);
			if (modes[m].chunk)
				sk_fw_filter_chunk_end(fw);
			int want_ran = (int)strlen(cases[k].want_res);
			if (found != cases[k].want_found || ran != want_ran)
				fail_msg("mode %s, case %s: found %d ran %d", modes[m].name, cases[k].name, found, ran);
			for (int i = 0; i < NN + 1; i++) {
				if (i >= ran) {
					if (res[i] != 0xee)
						fail_msg("mode %s, case %s: res[%d] written past the run", modes[m].name,
							 cases[k].name, i);
					continue;
				}
				if (res[i] != cases[k].want_res[i] - '0')
					fail_msg("mode %s, case %s: res[%d] = %d", modes[m].name, cases[k].name, i, res[i]);
				if (res[i] == SK_FW_FEASIBLE)
					continue;
				check_rejected_node(fw, cs, pod, nis[i], &st[i], res[i], cases[k].want_plugin[i], cases[k].c,
						    modes[m].evaluated_hook, modes[m].name, cases[k].name, i, mid);
			}
			if (atomic_load(&tk_beh[TK_A].filter_calls) != cases[k].calls_a ||
			    atomic_load(&tk_beh[mid].filter_calls) != cases[k].calls_b ||
			    atomic_load(&tk_beh[TK_C].filter_calls) != cases[k].calls_c)
				fail_msg("mode %s, case %s: calls %d %d %d", modes[m].name, cases[k].name,
					 atomic_load(&tk_beh[TK_A].filter_calls), atomic_load(&tk_beh[mid].filter_calls),
					 atomic_load(&tk_beh[TK_C].filter_calls));
			/* batches on the plain path and when evaluations are counted per chunk (evaluations
			 * reported per call go node by node) */
			bool want_batches = modes[m].batched && (!modes[m].evaluated_hook || modes[m].chunk) &&
					    !modes[m].sampled && cases[k].calls_b > 0;
			if ((atomic_load(&tk_beh[TK_E].filter_batch_calls) > 0) != want_batches)
				fail_msg("mode %s, case %s: %d filter_batch calls", modes[m].name, cases[k].name,
					 atomic_load(&tk_beh[TK_E].filter_batch_calls));
			if (modes[m].evaluated_hook &&
			    (tk_filter_evals[TK_A] != cases[k].calls_a || tk_filter_evals[mid] != cases[k].calls_b ||
			     tk_filter_evals[TK_C] != cases[k].calls_c))
				fail_msg("mode %s, case %s: evaluations %g %g %g", modes[m].name, cases[k].name,
					 tk_filter_evals[TK_A], tk_filter_evals[mid], tk_filter_evals[TK_C]);
			sk_cycle_state_free(cs);
			sk_pod_unref(pod);
			sk_framework_unref(fw);
		}
	}
	for (int i = 0; i < NN; i++)
		sk_node_info_free(nis[i]);
}

/* The block loop (filter_blocks.c) at the scale of its blocks: 50 nodes, TestA rejecting some, the
 * batching TestE rejecting others, TestC rejecting more; for every max_feasible around the block
 * size (cut-offs inside a block, at its end and past it) the run must stop at the node the serial
 * loop stops at, with the same result and status per node, and each plugin must have looked at
 * exactly the nodes the serial loop hands it (nothing past the cut-off, nothing already rejected). */
static void test_filter_blocks_cutoff(void **state)
{
	(void)state;
	enum { NN = 50 };
	static const char *const a_rej[] = { "n1", "n2", "n3", "n17", "n18", "n30", "n49", NULL };
	static const char *const e_rej[] = { "n4", "n16", "n17", "n31", "n32", "n33", NULL }; /* n17: A's first */
	static const char *const c_rej[] = { "n0", "n5", "n15", "n20", "n34", "n48", NULL };
	static const int maxes[] = { 0, 1, 2, 5, 9, 10, 11, 12, 16, 25, 26, 27, 31, 32, 33, 35, INT32_MAX };
	struct sk_node_info *nis[NN];
	char names[NN][16];
	for (int i = 0; i < NN; i++) {
		snprintf(names[i], sizeof(names[i]), "n%d", i);
		nis[i] = tk_node_named(names[i]);
	}
	uint8_t res[NN + 1];
	struct sk_status st[NN + 1];
	for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
		tk_reset();
		struct tk_profile tp;
		tk_profile_minimal(&tp, "p");
		tk_profile_add(&tp, SK_EP_FILTER, TK_A, 0);
		tk_profile_add(&tp, SK_EP_FILTER, TK_E, 0);
		tk_profile_add(&tp, SK_EP_FILTER, TK_C, 0);
		struct sk_framework_env env = { .pool = tk_pool, .snapshot = env_snapshot };
		char *err = NULL;
		struct sk_framework *fw = sk_framework_new(&cfg, &tp.p, &env, &err);
		if (!fw)
			fail_msg("sk_framework_new: %s", err ? err : "?");
		struct sk_pod *pod = tk_pod_prio("p", 0);
		struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
		struct sk_prefilter_result r;
		struct sk_status ps = sk_fw_run_pre_filter(fw, cs, pod, &r, NULL, 0, NULL);
		assert_int_equal(ps.code, SK_SUCCESS);
		free(r.names);
		const char *const *rej[3] = { a_rej, e_rej, c_rej };
		const int who[3] = { TK_A, TK_E, TK_C };
		for (int p = 0; p < 3; p++) {
			for (int j = 0; rej[p][j]; j++)
				tk_beh[who[p]].filter_nodes[j] = rej[p][j];
			tk_beh[who[p]].filter = SK_UNSCHEDULABLE;
			tk_beh[who[p]].filter_reason = p == 0 ? "a rejects" : p == 1 ? "e rejects" : "c rejects";
		}
		/* the serial loop's answer */
		int want_found = 0, want_ran = 0, calls[3] = { 0, 0, 0 };
		char want_by[NN];
		for (int i = 0; i < NN && want_found < maxes[m]; i++, want_ran++) {
			want_by[i] = 0;
			for (int p = 0; p < 3 && !want_by[i]; p++) {
				calls[p]++;
				for (int j = 0; rej[p][j]; j++)
					if (!strcmp(rej[p][j], names[i]))
						want_by[i] = "AEC"[p];
			}
			want_found += !want_by[i];
		}
		memset(res, 0xee, sizeof(res));
		int ran = -1;
		int found = sk_fw_run_filter_nodes(fw, cs, pod, (const struct sk_node_info *const *)nis, NN, maxes[m], res,
						   st, &ran);
		if (found != want_found || ran != want_ran)
			fail_msg("max %d: found %d ran %d, want %d and %d", maxes[m], found, ran, want_found, want_ran);
		for (int i = 0; i <= NN; i++) {
			if (i >= ran) {
				if (i < NN + 1 && res[i] != 0xee)
					fail_msg("max %d: res[%d] written past the run", maxes[m], i);
				continue;
			}
			if (!want_by[i]) {
				if (res[i] != SK_FW_FEASIBLE)
					fail_msg("max %d: node %d res %d, want feasible", maxes[m], i, res[i]);
				continue;
			}
			const char *want_plugin = want_by[i] == 'A' ? "TestA" : want_by[i] == 'E' ? "TestE" : "TestC";
			const char *want_msg = want_by[i] == 'A' ? "a rejects" : want_by[i] == 'E' ? "e rejects" : "c rejects";
			if (res[i] != SK_FW_REJECTED || st[i].code != SK_UNSCHEDULABLE || !st[i].plugin ||
			    strcmp(st[i].plugin, want_plugin) || strcmp(tk_status_msg(&st[i]), want_msg))
				fail_msg("max %d: node %d res %d %s \"%s\", want %s \"%s\"", maxes[m], i, res[i],
					 st[i].plugin ? st[i].plugin : "-", tk_status_msg(&st[i]), want_plugin, want_msg);
			sk_status_reset(&st[i]);
		}
		for (int p = 0; p < 3; p++)
			if (atomic_load(&tk_beh[who[p]].filter_calls) != calls[p])
				fail_msg("max %d: plugin %d looked at %d nodes, want %d", maxes[m], p,
					 atomic_load(&tk_beh[who[p]].filter_calls), calls[p]);
		if ((atomic_load(&tk_beh[TK_E].filter_batch_calls) > 0) != (calls[1] > 0))
			fail_msg("max %d: %d filter_batch calls", maxes[m], atomic_load(&tk_beh[TK_E].filter_batch_calls));
		sk_cycle_state_free(cs);
		sk_pod_unref(pod);
		sk_framework_unref(fw);
	}
	for (int i = 0; i < NN; i++)
		sk_node_info_free(nis[i]);
}

/* The weighted totals of 1 to 5 Score plugins (one and two groups of score_totals' four rows,
 * weights 2, 3, 5, 7, 11) over nine nodes, and scores out of range: the error names the first in
 * node order, then plugin order, whatever row group holds it, including a score whose product
 * with its weight does not fit in 64 bits. */
static void test_score_totals_table(void **state)
{
	(void)state;
	enum { NN = 9 };
	static const int32_t weights[TK_NPLUGINS] = { 2, 3, 5, 7, 11 };
	static const struct {
		int nplugins, nbad;
		struct {
			int plugin, node;
			int64_t score;
		} bad[2];
		const char *want_plugin; /* NULL: no error */
		int64_t want_score;
	} cases[] = {
		{ 1, 0, { { 0 } }, NULL, 0 },
		{ 2, 0, { { 0 } }, NULL, 0 },
		{ 3, 0, { { 0 } }, NULL, 0 },
		{ 4, 0, { { 0 } }, NULL, 0 },
		{ 5, 0, { { 0 } }, NULL, 0 },
		{ 5, 2, { { 4, 2, 101 }, { 0, 3, -1 } }, "TestE", 101 },
		{ 5, 2, { { 4, 3, 101 }, { 1, 3, -1 } }, "TestB", -1 },
		{ 4, 2, { { 3, 8, 100 }, { 3, 7, INT64_MAX } }, "TestD", INT64_MAX },
		{ 3, 1, { { 2, 0, INT64_MIN } }, "TestC", INT64_MIN },
		{ 1, 1, { { 0, 8, 101 } }, "TestA", 101 },
	};
	struct sk_node_info *nis[NN];
	for (int i = 0; i < NN; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i);
		nis[i] = tk_node_named(name);
	}
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		tk_reset();
		struct tk_profile tp;
		tk_profile_minimal(&tp, "p");
		for (int p = 0; p < cases[k].nplugins; p++) {
			tk_profile_add(&tp, SK_EP_SCORE, p, weights[p]);
			tk_beh[p].score_default = 10 + p;
			tk_beh[p].score_nodes[0] = "n1"; /* one more per plugin, so that no two rows are equal */
			tk_beh[p].score_of[0] = 50 + 7 * p;
			tk_beh[p].score_nodes[1] = "n5";
			tk_beh[p].score_of[1] = 100 - p;
		}
		for (int b = 0; b < cases[k].nbad; b++) {
			int p = cases[k].bad[b].plugin;
			static const char *const names[NN] = { "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8" };
			int e = 2;
			while (tk_beh[p].score_nodes[e])
				e++;
			tk_beh[p].score_nodes[e] = names[cases[k].bad[b].node];
			tk_beh[p].score_of[e] = cases[k].bad[b].score;
		}
		struct sk_framework *fw = mkfw(&tp);
		struct sk_pod *pod = tk_pod_prio("p", 0);
		struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
		struct sk_score_table t = { 0 };
		struct sk_status s = sk_fw_run_score(fw, cs, pod, (const struct sk_node_info *const *)nis, NN, &t);
		if (cases[k].want_plugin) {
			char want[256];
			snprintf(want, sizeof(want),
				 "applying score defaultWeights on Score plugins: plugin \"%s\" returns an invalid score %" PRId64
				 ", it should in the range of [0, 100] after normalizing",
				 cases[k].want_plugin, cases[k].want_score);
			if (s.code != SK_ERROR || strcmp(tk_status_msg(&s), want) || !s.plugin || strcmp(s.plugin, cases[k].want_plugin))
				fail_msg("case %zu: got %s \"%s\"", k, sk_code_string(s.code), tk_status_msg(&s));
			assert_null(t.total);
		} else {
			assert_int_equal(s.code, SK_SUCCESS);
			assert_int_equal(t.nplugins, cases[k].nplugins);
			for (int i = 0; i < NN; i++) {
				int64_t want = 0;
				for (int p = 0; p < cases[k].nplugins; p++)
					want += (i == 1 ? 50 + 7 * p : i == 5 ? 100 - p : 10 + p) * weights[p];
				if (t.total[i] != want)
					fail_msg("case %zu, node %d: total %" PRId64 ", want %" PRId64, k, i, t.total[i], want);
			}
		}
		sk_status_reset(&s);
		sk_score_table_free(&t);
		sk_cycle_state_free(cs);
		sk_pod_unref(pod);
		sk_framework_unref(fw);
	}
	for (int i = 0; i < NN; i++)
		sk_node_info_free(nis[i]);
}

/* Score's chunks: with a worker to share the loop (the tests' 16-thread pool) or in a cycle
 * sampled for plugin metrics, chunks of upstream's size; with no worker (no pool, or a pool of
 * one thread), the nodes in one score_batch call per plugin. The scores and totals are the same
 * in every case. TestE has score_batch, TestA scores node by node. */
static void test_score_chunks_table(void **state)
{
	(void)state;
	enum { NN = 100 }; /* chunks of 10 (sqrt) */
	static const struct {
		const char *name;
		int threads; /* 0: no pool */
		bool sampled;
	} cases[] = {
		{ "no pool", 0, false },
		{ "a pool of one thread", 1, false },
		{ "no pool, a sampled cycle", 0, true },
		{ "a pool of one thread, a sampled cycle", 1, true },
		{ "the tests' pool", 16, false },
	};
	struct sk_node_info *nis[NN];
	for (int i = 0; i < NN; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i);
		nis[i] = tk_node_named(name);
	}
	int64_t want_total[NN];
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		tk_reset();
		struct tk_profile tp;
		tk_profile_minimal(&tp, "p");
		tk_profile_add(&tp, SK_EP_SCORE, TK_A, 2);
		tk_profile_add(&tp, SK_EP_SCORE, TK_E, 3);
		tk_beh[TK_A].score_default = 10;
		tk_beh[TK_A].score_nodes[0] = "n42";
		tk_beh[TK_A].score_of[0] = 70;
		tk_beh[TK_E].score_default = 4;
		tk_beh[TK_E].score_nodes[0] = "n7";
		tk_beh[TK_E].score_of[0] = 90;
		struct sk_pool *p = cases[k].threads == 0 ? NULL : cases[k].threads == 16 ? tk_pool : sk_pool_new(1, NULL);
		struct sk_framework_env env = { .pool = p, .snapshot = env_snapshot, .observe = env_observe };
		char *err = NULL;
		struct sk_framework *fw = sk_framework_new(&cfg, &tp.p, &env, &err);
		if (!fw)
			fail_msg("sk_framework_new: %s", err ? err : "?");
		struct sk_pod *pod = tk_pod_prio("p", 0);
		struct sk_cycle_state *cs = sk_cycle_state_new(fw, cases[k].sampled);
		struct sk_score_table t = { 0 };
		struct sk_status s = sk_fw_run_score(fw, cs, pod, (const struct sk_node_info *const *)nis, NN, &t);
		assert_int_equal(s.code, SK_SUCCESS);
		for (int i = 0; i < NN; i++) {
			int64_t want = (i == 42 ? 70 : 10) * 2 + (i == 7 ? 90 : 4) * 3;
			if (k > 0)
				assert_int_equal(want_total[i], want);
			want_total[i] = want;
			if (t.total[i] != want)
				fail_msg("%s: node %d total %" PRId64 ", want %" PRId64, cases[k].name, i, t.total[i], want);
		}
		/* TestE's score_batch calls: one, or one per chunk (SK_POOL_THREADS may give the pool of
		 * "one thread" more) */
		int chunk = sk_pool_chunk_size(NN, sk_pool_parallelism(p));
		int want_calls = sk_pool_threads(p) <= 1 && !cases[k].sampled ? 1 : (NN + chunk - 1) / chunk;
		int calls = atomic_load(&tk_beh[TK_E].batch_calls);
		if ((cases[k].threads <= 1 && calls != want_calls) || calls < 1 || calls > (NN + chunk - 1) / chunk ||
		    atomic_load(&tk_beh[TK_E].batch_nodes) != NN || atomic_load(&tk_beh[TK_A].score_calls) != NN)
			fail_msg("%s: %d score_batch calls (want %d) over %d nodes, %d score calls", cases[k].name, calls, want_calls,
				 atomic_load(&tk_beh[TK_E].batch_nodes), atomic_load(&tk_beh[TK_A].score_calls));
		sk_score_table_free(&t);
		sk_cycle_state_free(cs);
		sk_pod_unref(pod);
		sk_framework_unref(fw);
		if (p && p != tk_pool)
			sk_pool_free(p);
	}
	for (int i = 0; i < NN; i++)
		sk_node_info_free(nis[i]);
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_filter_nodes_table, setup),
		cmocka_unit_test_setup(test_filter_blocks_cutoff, setup),
		cmocka_unit_test_setup(test_score_totals_table, setup),
		cmocka_unit_test_setup(test_score_chunks_table, setup),
	};
	return cmocka_run_group_tests(tests, tk_pool_setup, tk_pool_teardown);
}
