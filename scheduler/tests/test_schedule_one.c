/* Tests for scheduler/schedule_one.c: one attempt end to end with the test
 * plugins (filter rejections, PreFilter rejection and narrowing, start-index rotation, serial-order
 * equivalent early stop, scoring and tie-break, Reserve/Permit/PreBind failures, PostFilter
 * suffix and nomination, nominated node first, no nodes, terminating pods, async binders). */
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
#include "scheduler/schedule_one.h"
#include "scheduler/tests/fixtures.h"
#include "scheduler/tests/testkit.h"

static struct sk_config cfg = { .parallelism = 16, .percentage_of_nodes_to_score = 0 };
static struct sk_pool *pool;
static struct sk_snapshot *snap;
static struct sk_scheduler *sched;
static struct sk_nominator *nom;
static struct tk_profile prof;
static int assumed, forgotten, finished, patches, outcomes;
static char last_event[2048], last_patch[2048], last_node[64], last_msg[2048];
static bool last_nominate;
static char last_nominated[64];
static enum sk_result last_result;
static int last_nfilter;
static char last_filter_plugin[64];
static uint64_t rand_value;
static bool use_fixed_rand;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* env.evaluated / env.permit_waited: sums by "point plugin profile", and the waits seen */
static struct { char key[96]; double n; } evals[32];
static int nevals;
static double permit_wait_s;
static enum sk_code permit_wait_code;
static int permit_waits;
static void fw_evaluated(void *ctx, const char *profile, const char *point, const char *plugin, double n)
{
	(void)ctx;
	char key[96];
	snprintf(key, sizeof key, "%s %s %s", point, plugin, profile);
	pthread_mutex_lock(&mu);
	int i = 0;
	while (i < nevals && strcmp(evals[i].key, key))
		i++;
	if (i == nevals && nevals < 32)
		snprintf(evals[nevals++].key, sizeof evals[0].key, "%s", key);
	if (i < 32)
		evals[i].n += n;
	pthread_mutex_unlock(&mu);
}
static double evals_of(const char *key)
{
	for (int i = 0; i < nevals; i++)
		if (!strcmp(evals[i].key, key))
			return evals[i].n;
	return 0;
}
static void fw_permit_waited(void *ctx, enum sk_code code, double seconds)
{
	(void)ctx;
	pthread_mutex_lock(&mu);
	permit_waits++;
	permit_wait_code = code;
	permit_wait_s = seconds;
	pthread_mutex_unlock(&mu);
}

/* env.working (both envs): scheduler_goroutines by operation, now and at most */
static const char *const work_ops[] = { "binding", "Filter", "Score" };
static int work_now[3], work_max[3];
static void working(void *ctx, const char *operation, int delta)
{
	(void)ctx;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 3; i++)
		if (!strcmp(operation, work_ops[i])) {
			work_now[i] += delta;
			if (work_now[i] > work_max[i])
				work_max[i] = work_now[i];
		}
	pthread_mutex_unlock(&mu);
}

static const struct sk_snapshot *fw_snapshot(void *ctx)
{
	(void)ctx;
	return sk_scheduler_snapshot(sched);
}

static void fw_event(void *ctx, const struct sk_pod *pod, const char *type, const char *reason, const char *action,
		     const char *note)
{
	(void)ctx;
	(void)pod;
	pthread_mutex_lock(&mu);
	snprintf(last_event, sizeof(last_event), "%s %s %s: %s", type, reason, action, note);
	pthread_mutex_unlock(&mu);
}

static const struct sk_snapshot *update_snapshot(void *ctx, char **err)
{
	(void)ctx;
	(void)err;
	return snap;
}
static int assume(void *ctx, struct sk_pod *p, char **err)
{
	(void)ctx;
	(void)err;
	assert_non_null(p->node_name);
	__atomic_add_fetch(&assumed, 1, __ATOMIC_RELAXED);
	return 0;
}
static int forget(void *ctx, const struct sk_pod *p, char **err)
{
	(void)ctx;
	(void)p;
	(void)err;
	__atomic_add_fetch(&forgotten, 1, __ATOMIC_RELAXED);
	return 0;
}
static int finish(void *ctx, const struct sk_pod *p, char **err)
{
	(void)ctx;
	(void)p;
	(void)err;
	__atomic_add_fetch(&finished, 1, __ATOMIC_RELAXED);
	return 0;
}
static void patch(void *ctx, const struct sk_pod *pod, const char *reason, const char *message, bool nominate,
		  const char *nominated)
{
	(void)ctx;
	(void)pod;
	pthread_mutex_lock(&mu);
	patches++;
	snprintf(last_patch, sizeof(last_patch), "%s: %s", reason, message);
	last_nominate = nominate;
	snprintf(last_nominated, sizeof(last_nominated), "%s", nominated ? nominated : "");
	pthread_mutex_unlock(&mu);
}
static void observe(void *ctx, const struct sk_outcome *o)
{
	(void)ctx;
	pthread_mutex_lock(&mu);
	outcomes++;
	last_result = o->result;
	snprintf(last_node, sizeof(last_node), "%s", o->node ? o->node : "");
	snprintf(last_msg, sizeof(last_msg), "%s", o->message ? o->message : "");
	last_nfilter = o->nfilter;
	snprintf(last_filter_plugin, sizeof(last_filter_plugin), "%s", o->nfilter ? o->filter[0].plugin : "");
	assert_string_equal(o->profile, "default-scheduler");
	pthread_mutex_unlock(&mu);
}
static bool pod_gone;
static struct sk_pod *get_pod(void *ctx, const struct sk_pod *pod)
{
	(void)ctx;
	return pod_gone ? NULL : sk_pod_ref((struct sk_pod *)pod);
}
static uint64_t fixed_rand(void *ctx)
{
	(void)ctx;
	return rand_value;
}

static struct sk_node_info *ni_named(const char *name)
{
	char text[128];
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\"}}", name);
	return fx_node_info(fx_node(text), NULL);
}

static void make_nodes(int n)
{
	sk_snapshot_free(snap);
	struct sk_node_info **nis = calloc((size_t)(n ? n : 1), sizeof(*nis));
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "n%d", i + 1);
		nis[i] = ni_named(name);
	}
	snap = fx_snapshot_of(nis, n);
	free(nis);
}

/* Starts a scheduler over `prof` (set up by the test) with binder_threads binders. */
static void start(int binder_threads)
{
	struct sk_sched_env env = { .update_snapshot = update_snapshot, .assume = assume, .forget = forget,
				    .finish_binding = finish, .patch_failure = patch, .observe = observe,
				    .want_details = true, .rand = use_fixed_rand ? fixed_rand : NULL, .seed = 7,
				    .binder_threads = binder_threads, .nominator = nom, .get_pod = get_pod,
				    .working = working };
	char *err = NULL;
	sched = sk_scheduler_new(&env, &err);
	assert_non_null(sched);
	struct sk_framework_env fenv = { .pool = pool, .nominator = nom, .snapshot = fw_snapshot, .event = fw_event,
					 .evaluated = fw_evaluated, .permit_waited = fw_permit_waited, .working = working };
	memset(work_now, 0, sizeof work_now);
	memset(work_max, 0, sizeof work_max);
	struct sk_framework *fw = sk_framework_new(&cfg, &prof.p, &fenv, &err);
	if (!fw)
		fail_msg("framework: %s", err);
	sk_scheduler_set_frameworks(sched, &fw, 1);
	sk_framework_unref(fw);
	memset(evals, 0, sizeof evals);
	nevals = permit_waits = 0;
}

static int setup(void **state)
{
	(void)state;
	tk_reset();
	tk_profile_minimal(&prof, "default-scheduler");
	assumed = forgotten = finished = patches = outcomes = 0;
	last_event[0] = last_patch[0] = last_node[0] = last_msg[0] = '\0';
	use_fixed_rand = false;
	pod_gone = false;
	nom = sk_nominator_new();
	make_nodes(3);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sk_scheduler_free(sched);
	sched = NULL;
	sk_snapshot_free(snap);
	snap = NULL;
	sk_nominator_free(nom);
	return 0;
}

static struct sk_pod *add_pod(const char *name, const char *extra_status)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}%s}", name,
		 extra_status ? extra_status : "");
	struct sk_pod *p = fx_pod(text);
	assert_int_equal(sk_queue_add(sk_scheduler_queue(sched), p), 0);
	return p;
}

static void run_one(void) { assert_int_equal(sk_schedule_one(sched, false), 1); }

/* ---------- attempts ---------- */

static void test_filter_then_bind(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_beh[TK_A].filter_nodes[0] = "n1";
	tk_beh[TK_A].filter_nodes[1] = "n2";
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].filter_reason = "nope";
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(last_node, "n3");
	assert_int_equal(last_nfilter, 2);
	assert_string_equal(last_filter_plugin, "TestA");
	assert_int_equal(assumed, 1);
	assert_int_equal(finished, 1);
	assert_int_equal(forgotten, 0);
	assert_string_equal(last_event, "Normal Scheduled Binding: Successfully assigned default/p to n3");
	assert_string_equal(tk_log, "D.bind(n3) ");
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), p->uid), SK_Q_NONE);
	sk_pod_unref(p);
}

static void test_all_rejected(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_FILTER, TK_B, 0);
	tk_beh[TK_A].filter_nodes[0] = "n2";
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].filter_reason = "Insufficient cpu";
	tk_beh[TK_B].filter_all = true;
	tk_beh[TK_B].filter = SK_UNSCHEDULABLE_AND_UNRESOLVABLE;
	tk_beh[TK_B].filter_reason = "node(s) didn't match Pod's node affinity/selector";
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	const char *want = "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector.";
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	assert_string_equal(last_msg, want);
	char buf[2048];
	snprintf(buf, sizeof(buf), "Unschedulable: %s", want);
	assert_string_equal(last_patch, buf);
	/* no PostFilter plugins: upstream returns clearNominatedNode (ModeOverride, "") */
	assert_true(last_nominate);
	assert_string_equal(last_nominated, "");
	snprintf(buf, sizeof(buf), "Warning FailedScheduling Scheduling: %s", want);
	assert_string_equal(last_event, buf);
	assert_int_equal(last_nfilter, 3);
	assert_int_equal(assumed, 0);
	/* requeued unschedulable, rejected by both plugins */
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), p->uid), SK_Q_UNSCHEDULABLE);
	sk_pod_unref(p);
}

static void test_prefilter_rejection_and_narrowing(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_PRE_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_FILTER, TK_B, 0);
	tk_beh[TK_A].pre_filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].pre_filter_reason = "node(s) didn't match pod topology spread constraints (missing required label)";
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_string_equal(last_msg, "0/3 nodes are available: node(s) didn't match pod topology spread constraints "
				      "(missing required label).");
	assert_int_equal(last_nfilter, 3); /* every node carries the PreFilter status */
	assert_int_equal(atomic_load(&tk_beh[TK_B].filter_calls), 0);
	sk_pod_unref(p);

	/* narrowing to n2, which B rejects: the other two count as absent */
	tk_beh[TK_A].pre_filter = SK_SUCCESS;
	tk_beh[TK_A].narrow = true;
	tk_beh[TK_A].narrow_nodes[0] = "n2";
	tk_beh[TK_A].narrow_nodes[1] = "ghost"; /* unknown names are ignored */
	tk_beh[TK_B].filter_nodes[0] = "n2";
	tk_beh[TK_B].filter = SK_UNSCHEDULABLE;
	tk_beh[TK_B].filter_reason = "nope";
	p = add_pod("q", NULL);
	run_one();
	assert_string_equal(last_msg, "0/3 nodes are available: 1 nope, 2 node(s) didn't satisfy plugin(s) [TestA].");
	assert_int_equal(atomic_load(&tk_beh[TK_B].filter_calls), 1);
	sk_pod_unref(p);

	/* narrowing to n3 alone: scheduled there */
	tk_beh[TK_A].narrow_nodes[0] = "n3";
	p = add_pod("r", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(last_node, "n3");
	sk_pod_unref(p);
}

/* A PreFilterResult of one node is looked up by name, a longer one searched for in the node list
 * (nodes_in_prefilter_result): the same nodes reach Filter either way, a name the snapshot lacks
 * is left out, and the nodes left out count as absent in the FitError. 250 nodes. */
static void test_prefilter_narrowing_table(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		const char *narrow[3];
		const char *rejected; /* by TestB's Filter */
		int filter_calls;
		const char *node, *msg; /* scheduled there, or this FitError */
	} rows[] = {
		{ "one node, the last of the list", { "n250" }, NULL, 1, "n250", NULL },
		{ "one node, the first", { "n1" }, NULL, 1, "n1", NULL },
		{ "one node the snapshot lacks", { "ghost" }, NULL, 0, NULL,
		  "0/250 nodes are available: 250 node(s) didn't satisfy plugin(s) [TestA]." },
		{ "one node, rejected", { "n250" }, "n250", 1, NULL,
		  "0/250 nodes are available: 1 nope, 249 node(s) didn't satisfy plugin(s) [TestA]." },
		{ "two nodes, the first rejected", { "n200", "n7" }, "n7", 2, "n200", NULL },
		{ "a node and one the snapshot lacks", { "ghost", "n31" }, NULL, 1, "n31", NULL },
	};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		teardown(NULL);
		setup(NULL);
		make_nodes(250);
		tk_profile_add(&prof, SK_EP_PRE_FILTER, TK_A, 0);
		tk_profile_add(&prof, SK_EP_FILTER, TK_B, 0);
		tk_beh[TK_A].narrow = true;
		for (int k = 0; k < 3; k++)
			tk_beh[TK_A].narrow_nodes[k] = rows[r].narrow[k];
		tk_beh[TK_B].filter_nodes[0] = rows[r].rejected;
		tk_beh[TK_B].filter = SK_UNSCHEDULABLE;
		tk_beh[TK_B].filter_reason = "nope";
		start(0);
		struct sk_pod *p = add_pod("p", NULL);
		run_one();
		int calls = atomic_load(&tk_beh[TK_B].filter_calls);
		bool ok = calls == rows[r].filter_calls &&
			  (rows[r].node ? last_result == SK_RESULT_SCHEDULED && !strcmp(last_node, rows[r].node)
					: last_result == SK_RESULT_UNSCHEDULABLE && !strcmp(last_msg, rows[r].msg));
		if (!ok)
			fail_msg("%s: result %d on \"%s\", \"%s\", %d Filter calls", rows[r].name, last_result, last_node,
				 last_msg, calls);
		sk_pod_unref(p);
	}
}

static void test_start_index_rotation(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0); /* no score plugins: one feasible node is enough */
	start(0);
	const char *want[] = { "n1", "n2", "n3", "n1" };
	for (int i = 0; i < 4; i++) {
		char name[32];
		snprintf(name, sizeof(name), "p%d", i);
		struct sk_pod *p = add_pod(name, NULL);
		run_one();
		assert_string_equal(last_node, want[i]);
		assert_int_equal(sk_scheduler_next_start_index(sched), (i + 1) % 3);
		sk_pod_unref(p);
	}
	/* start at n2 (index 1), n2 rejected: n3 found after 2 processed nodes -> next = (1+2)%3 = 0 */
	tk_beh[TK_A].filter_nodes[0] = "n2";
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	struct sk_pod *p = add_pod("px", NULL);
	run_one();
	assert_string_equal(last_node, "n3");
	assert_int_equal(sk_scheduler_next_start_index(sched), 0);
	sk_pod_unref(p);
}

static void test_early_stop_is_serial_equivalent(void **state)
{
	(void)state;
	make_nodes(250);
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_SCORE, TK_B, 1);
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	/* reject every node whose number is divisible by 3 */
	static char names[16][16];
	int k = 0;
	for (int i = 3; i <= 250 && k < 16; i += 3) {
		snprintf(names[k], sizeof(names[k]), "n%d", i);
		tk_beh[TK_A].filter_nodes[k] = names[k];
		k++;
	}
	/* nodes n3..n48 rejected (16 of them); numFeasibleNodesToFind(250) = 250*48/100 = 120 */
	assert_int_equal(sk_num_feasible_nodes_to_find(&cfg, &prof.p, 250), 120);
	start(0);
	struct sk_pool_stats st0, st1;
	sk_pool_get_stats(pool, &st0);
	for (int rep = 0; rep < 5; rep++) {
		int before = sk_scheduler_next_start_index(sched);
		char name[32];
		snprintf(name, sizeof(name), "p%d", rep);
		struct sk_pod *p = add_pod(name, NULL);
		run_one();
		assert_int_equal(last_result, SK_RESULT_SCHEDULED);
		/* serial: scan from `before` until the 121st feasible node; processed = 120 + rejected seen */
		int feasible = 0, processed = 0;
		for (int i = 0; i < 250; i++) {
			int num = (before + i) % 250 + 1;
			bool rejected = num % 3 == 0 && num <= 48;
			if (!rejected) {
				if (feasible == 120)
					break;
				feasible++;
			}
			processed++;
		}
		assert_int_equal(sk_scheduler_next_start_index(sched), (before + processed) % 250);
		sk_pod_unref(p);
	}
	sk_pool_get_stats(pool, &st1);
	assert_true(st1.loops - st0.loops >= 5); /* at least the Filter loop of each cycle... */
	assert_true(st1.worker_chunks - st0.worker_chunks >= st1.loops - st0.loops); /* ...ran on a worker too */
}

/* The cut-off tables' cluster: a fresh scheduler over nodes n1..n<nodes>, Filter by TestA
 * rejecting n<first>, n<first+step>, ... (nrejected of them, marked in rejected[]), Score by TestB;
 * want is numFeasibleNodesToFind for that size. */
static void cut_off_case(int nodes, int first, int step, int nrejected, int want, bool rejected[1001])
{
	teardown(NULL);
	setup(NULL);
	make_nodes(nodes);
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_SCORE, TK_B, 1);
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	static char names[16][16];
	for (int k = 0; k < nrejected; k++) {
		int num = first + k * step;
		snprintf(names[k], sizeof(names[k]), "n%d", num);
		tk_beh[TK_A].filter_nodes[k] = names[k];
		rejected[num] = true;
	}
	assert_int_equal(sk_num_feasible_nodes_to_find(&cfg, &prof.p, nodes), want);
	start(0);
}

/* The feasible list Filter hands to Score is the serial scan's first `want` feasible nodes from
 * the start index, wrapping at the end of the node list (pass_filters copies runs of feasible
 * nodes at once): Score gives the want-th feasible node 50, the one after it (which Filter
 * evaluates, then drops) 100, every other node 0, so the pod lands on the want-th exactly when
 * the list holds it and not the next one. One thread and four, the start index moving round. */
static void test_filter_feasible_list_table(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int nodes, first_rejected, step, nrejected;
		int want;
	} cases[] = {
		{ "none rejected", 250, 0, 0, 0, 120 },
		{ "every third of the first 48", 250, 3, 3, 16, 120 },
		{ "a run across the cut-off", 250, 119, 1, 16, 120 },
		{ "a run at the end of the list, the scan wrapping", 150, 135, 1, 16, 100 },
		{ "fewer feasible than wanted", 110, 5, 5, 16, 100 },
		{ "just enough feasible", 116, 101, 1, 16, 100 },
		{ "single rejections among runs of feasible nodes", 1000, 7, 61, 16, 420 },
	};
	struct sk_pool *saved = pool;
	for (int mode = 0; mode < 2; mode++) {
		pool = mode == 0 ? NULL : saved;
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			bool rejected[1001] = { 0 };
			cut_off_case(cases[c].nodes, cases[c].first_rejected, cases[c].step, cases[c].nrejected,
				     cases[c].want, rejected);
			for (int rep = 0; rep < 5; rep++) {
				int n = cases[c].nodes, want = cases[c].want;
				int before = sk_scheduler_next_start_index(sched);
				int feasible = 0, last = -1, next = -1;
				for (int i = 0; i < n && next < 0; i++) {
					int num = (before + i) % n + 1;
					if (rejected[num])
						continue;
					if (feasible == want)
						next = num;
					else
						last = num, feasible++;
				}
				static char last_name[16], next_name[16];
				snprintf(last_name, sizeof(last_name), "n%d", last);
				snprintf(next_name, sizeof(next_name), "n%d", next);
				tk_beh[TK_B].score_default = 0;
				tk_beh[TK_B].score_nodes[0] = last_name;
				tk_beh[TK_B].score_of[0] = 50;
				tk_beh[TK_B].score_nodes[1] = next > 0 ? next_name : NULL;
				tk_beh[TK_B].score_of[1] = 100;
				char name[32];
				snprintf(name, sizeof(name), "p%d", rep);
				struct sk_pod *p = add_pod(name, NULL);
				run_one();
				if (last_result != SK_RESULT_SCHEDULED || strcmp(last_node, last_name) != 0)
					fail_msg("%s, %s, pod %d (start %d): on %s, want %s (the next feasible: %s)",
						 mode == 0 ? "one thread" : "four threads", cases[c].name, rep, before,
						 last_node, last_name, next > 0 ? next_name : "none");
				sk_pod_unref(p);
			}
		}
	}
	pool = saved;
}

/* Filter stops at the (want+1)-th feasible node in scan order (findNodesThatPassFilters). The
 * result (next start index, so the nodes processed) must be the serial one whoever runs the
 * chunks; on one thread exactly the nodes up to that node are evaluated (the chunk that holds it
 * stops there), and on four threads each node at most once. Rejections are placed around chunk
 * boundaries and the cut-off; chunk sizes: sqrt(n). */
static void test_filter_cut_off_table(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int nodes, first_rejected, step, nrejected; /* nodes n<first>, n<first+step>, ... reject */
		int want;                                 /* numFeasibleNodesToFind(nodes) */
	} cases[] = {
		{ "none rejected", 250, 0, 0, 0, 120 },
		{ "every third of the first 48", 250, 3, 3, 16, 120 },
		{ "a run across the cut-off and a chunk boundary", 250, 119, 1, 16, 120 },
		{ "a run at the start", 150, 1, 1, 16, 100 },
		{ "a run inside a chunk", 1000, 400, 1, 16, 420 },
		{ "fewer feasible than wanted: every node once", 110, 5, 5, 16, 100 },
		{ "just enough feasible", 116, 101, 1, 16, 100 },
	};
	struct sk_pool *saved = pool;
	for (int mode = 0; mode < 2; mode++) {
		pool = mode == 0 ? NULL : saved; /* NULL: every chunk on the scheduling thread */
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			bool rejected[1001] = { 0 };
			cut_off_case(cases[c].nodes, cases[c].first_rejected, cases[c].step, cases[c].nrejected,
				     cases[c].want, rejected);
			for (int rep = 0; rep < 4; rep++) {
				int n = cases[c].nodes, want = cases[c].want;
				int before = sk_scheduler_next_start_index(sched);
				int calls0 = atomic_load(&tk_beh[TK_A].filter_calls);
				char name[32];
				snprintf(name, sizeof(name), "p%d", rep);
				struct sk_pod *p = add_pod(name, NULL);
				run_one();
				int feasible = 0, processed = 0, serial_calls = 0;
				for (int i = 0; i < n; i++) {
					int num = (before + i) % n + 1;
					serial_calls++;
					if (!rejected[num]) {
						if (feasible == want)
							break; /* evaluated, then dropped */
						feasible++;
					}
					processed++;
				}
				int calls = atomic_load(&tk_beh[TK_A].filter_calls) - calls0;
				if (last_result != SK_RESULT_SCHEDULED ||
				    sk_scheduler_next_start_index(sched) != (before + processed) % n ||
				    (mode == 0 && calls != serial_calls) || calls < serial_calls || calls > n)
					fail_msg("%s, %s, pod %d: next start %d (want %d), %d Filter calls (serial %d, nodes %d)",
						 mode == 0 ? "one thread" : "four threads", cases[c].name, rep,
						 sk_scheduler_next_start_index(sched), (before + processed) % n, calls,
						 serial_calls, n);
				sk_pod_unref(p);
			}
		}
	}
	pool = saved;
}

/* Nodes somebody is nominated to go one by one through the nominated-pods Filter
 * (addGeneralNominatedPods in pkg/scheduler/framework/runtime/framework.go); every other node
 * still runs in the batched Filter, a batch cut before each maybe-nominated node. TestA rejects
 * a node holding a pod ("too many pods"), TestB every node: a node with a nomination of priority
 * >= the pod's (0) fails at TestA, every other node (a lower-priority nomination is not added)
 * at TestB. The FitError counts both, and TestA runs once per node, on one thread and on four. */
static void test_filter_around_nominated_table(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int nodes;
		int nominated[8], prio[8]; /* node numbers (0 ends), each nominee's priority */
	} cases[] = {
		{ "none counts: only lower-priority nominations", 40, { 10, 21 }, { -1, -1 } },
		{ "adjacent, at both ends, two on one node", 40, { 1, 2, 3, 20, 40, 20 }, { 0, 5, 0, 0, 1, 0 } },
		{ "scattered, one lower-priority among them", 40, { 7, 10, 33 }, { 0, -1, 0 } },
		{ "the last two of a large list, the scan wrapping", 250, { 249, 250, 1, 100 }, { 0, 0, 0, -1 } },
		{ "inside chunks and at a chunk boundary", 250, { 16, 17, 18, 125, 126, 200 }, { 0, 0, 0, 0, 0, 0 } },
	};
	struct sk_pool *saved = pool;
	for (int mode = 0; mode < 2; mode++) {
		pool = mode == 0 ? NULL : saved;
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			teardown(NULL);
			setup(NULL);
			int n = cases[c].nodes;
			make_nodes(n);
			tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
			tk_profile_add(&prof, SK_EP_FILTER, TK_B, 0);
			tk_beh[TK_A].max_pods = 1;
			tk_beh[TK_B].filter_all = true;
			tk_beh[TK_B].filter = SK_UNSCHEDULABLE;
			tk_beh[TK_B].filter_reason = "nope";
			bool counts[251] = { 0 };
			int full = 0;
			for (int k = 0; k < 8 && cases[c].nominated[k]; k++) {
				char pod[32], node[32];
				snprintf(pod, sizeof pod, "nom%d", k);
				snprintf(node, sizeof node, "n%d", cases[c].nominated[k]);
				struct sk_pod *np = tk_pod_prio(pod, cases[c].prio[k]);
				sk_nominator_add(nom, np, node);
				sk_pod_unref(np);
				if (cases[c].prio[k] >= 0 && !counts[cases[c].nominated[k]])
					counts[cases[c].nominated[k]] = true, full++;
			}
			char a[64], b[64], want[256];
			snprintf(a, sizeof a, "%d too many pods", full);
			snprintf(b, sizeof b, "%d nope", n - full);
			if (full == 0)
				snprintf(want, sizeof want, "0/%d nodes are available: %s.", n, b);
			else if (full == n)
				snprintf(want, sizeof want, "0/%d nodes are available: %s.", n, a);
			else
				snprintf(want, sizeof want, "0/%d nodes are available: %s, %s.", n,
					 strcmp(a, b) < 0 ? a : b, strcmp(a, b) < 0 ? b : a);
			start(0);
			for (int rep = 0; rep < 3; rep++) {
				int calls0 = atomic_load(&tk_beh[TK_A].filter_calls);
				char name[32];
				snprintf(name, sizeof name, "p%d", rep);
				struct sk_pod *p = add_pod(name, NULL);
				run_one();
				int calls = atomic_load(&tk_beh[TK_A].filter_calls) - calls0;
				if (last_result != SK_RESULT_UNSCHEDULABLE || strcmp(last_msg, want) != 0 || calls != n)
					fail_msg("%s, %s, pod %d: \"%s\" (want \"%s\"), %d TestA calls (want %d)",
						 mode == 0 ? "one thread" : "four threads", cases[c].name, rep, last_msg,
						 want, calls, n);
				sk_pod_unref(p);
			}
		}
	}
	pool = saved;
}

static void test_scoring_and_ties(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_SCORE, TK_A, 2);
	tk_beh[TK_A].score_default = 50;
	use_fixed_rand = true;
	rand_value = 0; /* every tie replaces the choice: the last tied node wins */
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_string_equal(last_node, "n3");
	sk_pod_unref(p);
	rand_value = 1; /* 1 % 2 and 1 % 3 are non-zero: the first tied node stays */
	p = add_pod("q", NULL);
	run_one();
	assert_string_equal(last_node, "n1");
	sk_pod_unref(p);
	tk_beh[TK_A].score_nodes[0] = "n2";
	tk_beh[TK_A].score_of[0] = 60;
	p = add_pod("r", NULL);
	run_one();
	assert_string_equal(last_node, "n2");
	sk_pod_unref(p);
}

static void test_reserve_and_permit_rejection(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_RESERVE, TK_A, 0);
	tk_profile_add(&prof, SK_EP_RESERVE, TK_B, 0);
	tk_profile_add(&prof, SK_EP_PERMIT, TK_C, 0);
	tk_beh[TK_B].reserve = SK_UNSCHEDULABLE;
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	assert_string_equal(last_msg, "0/1 nodes are available: 1 reserve refused.");
	assert_string_equal(tk_log, "A.reserve(n1) B.reserve(n1) B.unreserve A.unreserve ");
	assert_int_equal(assumed, 1);
	assert_int_equal(forgotten, 1);
	assert_true(last_nominate);
	assert_string_equal(last_nominated, "");
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), p->uid), SK_Q_UNSCHEDULABLE);
	sk_pod_unref(p);

	tk_reset();
	tk_beh[TK_C].permit = SK_ERROR;
	p = add_pod("q", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_ERROR);
	assert_string_equal(last_msg, "running Permit plugin \"TestC\": permit refused");
	assert_string_equal(last_patch, "SchedulerError: running Permit plugin \"TestC\": permit refused");
	assert_int_equal(forgotten, 2);
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), p->uid), SK_Q_ERROR_BACKOFF);
	sk_pod_unref(p);
}

static void test_binding_failures(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_RESERVE, TK_A, 0);
	tk_profile_add(&prof, SK_EP_PRE_BIND, TK_A, 0);
	tk_profile_add(&prof, SK_EP_PERMIT, TK_B, 0);
	start(0);
	tk_beh[TK_A].pre_bind = SK_ERROR;
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_ERROR);
	assert_string_equal(last_msg, "running PreBind plugin \"TestA\": prebind refused");
	assert_int_equal(tk_beh[TK_A].unreserve_calls, 1);
	assert_int_equal(forgotten, 1);
	sk_pod_unref(p);

	/* Permit waits 10 ms and times out in the binding cycle: a one-node FitError */
	tk_reset();
	tk_beh[TK_B].permit = SK_WAIT;
	tk_beh[TK_B].permit_timeout_ms = 10;
	p = add_pod("q", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	assert_string_equal(last_msg, "0/1 nodes are available: 1 rejected due to timeout after waiting 10ms at plugin TestB.");
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), p->uid), SK_Q_UNSCHEDULABLE);
	sk_pod_unref(p);

	/* every Bind plugin skips: the binding fails */
	tk_reset();
	tk_beh[TK_D].bind = SK_SKIP;
	p = add_pod("r", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_ERROR);
	assert_int_equal(finished, 1); /* FinishBinding runs after the Bind attempt either way */
	sk_pod_unref(p);
}

/* scheduler_plugin_evaluation_total as upstream's instrumented plugins count: every PreFilter and
 * PreScore call, every Filter call per node (a node rejected by the first plugin never reaches
 * the second), every Score call per node; summed per chunk of nodes on the pool threads. And
 * scheduler_permit_wait_duration_seconds for a pod that waited on Permit. */
static void test_plugin_evaluations_and_permit_wait(void **state)
{
	(void)state;
	make_nodes(40);
	tk_profile_add(&prof, SK_EP_PRE_FILTER, TK_C, 0);
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_FILTER, TK_B, 0);
	tk_profile_add(&prof, SK_EP_PRE_SCORE, TK_C, 0);
	tk_profile_add(&prof, SK_EP_SCORE, TK_C, 1);
	tk_profile_add(&prof, SK_EP_PERMIT, TK_D, 0);
	tk_beh[TK_A].filter_nodes[0] = "n2";
	tk_beh[TK_A].filter_nodes[1] = "n7";
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].filter_reason = "nope";
	tk_beh[TK_D].permit = SK_WAIT;
	tk_beh[TK_D].permit_timeout_ms = 30;
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	for (int i = 0; getenv("SK_DEBUG_EVALS") && i < nevals; i++)
		fprintf(stderr, "%s = %g\n", evals[i].key, evals[i].n);
	/* 40 nodes, all of them searched (fewer than the 100 nodes upstream always scores) */
	assert_int_equal((int)evals_of("PreFilter TestC default-scheduler"), 1);
	assert_int_equal((int)evals_of("Filter TestA default-scheduler"), 40);
	assert_int_equal((int)evals_of("Filter TestB default-scheduler"), 38);
	assert_int_equal((int)evals_of("PreScore TestC default-scheduler"), 1);
	assert_int_equal((int)evals_of("Score TestC default-scheduler"), 38);
	assert_int_equal(permit_waits, 1);
	assert_int_equal(permit_wait_code, SK_UNSCHEDULABLE); /* timed out */
	assert_true(permit_wait_s >= 0.02);
	/* scheduler_goroutines: each operation ran on at least one thread and none is left counted */
	for (int i = 0; i < 3; i++) {
		if (work_max[i] < 1 || work_now[i] != 0)
			fail_msg("%s: max %d, now %d", work_ops[i], work_max[i], work_now[i]);
	}
	assert_true(work_max[0] == 1); /* one binding cycle */
	sk_pod_unref(p);
	make_nodes(3);
}

static void test_post_filter_and_nomination(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_POST_FILTER, TK_B, 0);
	tk_beh[TK_A].filter_all = true;
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].filter_reason = "Insufficient cpu";
	tk_beh[TK_B].post_filter = SK_UNSCHEDULABLE;
	tk_beh[TK_B].post_filter_reason = "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_string_equal(last_msg, "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
				      "3 No preemption victims found for incoming pod.");
	assert_false(last_nominate);
	sk_pod_unref(p);

	/* preemption succeeded: Success (no suffix), node nominated */
	tk_beh[TK_B].post_filter = SK_SUCCESS;
	tk_beh[TK_B].nominate = "n2";
	p = add_pod("q", NULL);
	run_one();
	assert_string_equal(last_msg, "0/3 nodes are available: 3 Insufficient cpu.");
	assert_true(last_nominate);
	assert_string_equal(last_nominated, "n2");
	assert_string_equal(sk_nominator_node_of(nom, p->uid), "n2");
	sk_pod_unref(p);
}

static void test_nominated_node_first(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_SCORE, TK_B, 1);
	start(0);
	struct sk_pod *p = add_pod("p", ",\"status\":{\"nominatedNodeName\":\"n3\"}");
	run_one();
	assert_string_equal(last_node, "n3");
	assert_int_equal(atomic_load(&tk_beh[TK_A].filter_calls), 1);
	assert_int_equal(atomic_load(&tk_beh[TK_B].score_calls), 0);
	sk_pod_unref(p);

	/* nominated node rejected: the normal pass runs; its status is reported once */
	tk_beh[TK_A].filter_all = true;
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	p = add_pod("q", ",\"status\":{\"nominatedNodeName\":\"n3\"}");
	run_one();
	assert_string_equal(last_msg, "0/3 nodes are available: 3 filter says no.");
	assert_int_equal(last_nfilter, 3);
	sk_pod_unref(p);
}

static void test_no_nodes_and_terminating(void **state)
{
	(void)state;
	make_nodes(0);
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	assert_string_equal(last_msg, "no nodes available to schedule pods");
	assert_true(last_nominate);
	sk_pod_unref(p);

	int before = outcomes;
	struct sk_pod *t = fx_pod("{\"metadata\":{\"name\":\"t\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
				  "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	sk_queue_add(sk_scheduler_queue(sched), t);
	run_one();
	assert_string_equal(last_event, "Warning FailedScheduling Scheduling: skip schedule deleting pod: default/t");
	assert_int_equal(outcomes, before);
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), t->uid), SK_Q_NONE);
	sk_pod_unref(t);
}

static void test_async_binders(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_SCORE, TK_A, 1);
	start(3);
	for (int i = 0; i < 40; i++) {
		char name[32];
		snprintf(name, sizeof(name), "p%d", i);
		sk_pod_unref(add_pod(name, NULL));
	}
	while (sk_schedule_one(sched, false) == 1)
		;
	sk_scheduler_wait_bindings(sched);
	assert_int_equal(outcomes, 40);
	assert_int_equal(finished, 40);
	assert_int_equal(tk_beh[TK_D].post_bind_calls, 0); /* D is not a PostBind plugin here */
	/* scheduler_goroutines{operation="binding"}: at most the 3 binders at once, none left */
	assert_int_equal(work_now[0], 0);
	assert_true(work_max[0] >= 1 && work_max[0] <= 3);
	struct sk_queue_counts c;
	sk_queue_counts(sk_scheduler_queue(sched), &c);
	assert_int_equal(c.active + c.backoff + c.unschedulable + c.gated, 0);
}

/* ---------- upstream-conformance cases (v1.34) ---------- */

/* RunPreFilterPlugins returns the narrowing plugins as UnschedulablePlugins: a pod narrowed by A
 * and rejected by B on the remaining node is requeued by A's events too. */
static void test_narrowing_plugin_is_a_rejector(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_PRE_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_FILTER, TK_B, 0);
	tk_beh[TK_A].narrow = true;
	tk_beh[TK_A].narrow_nodes[0] = "n2";
	tk_beh[TK_A].nevents = 1;
	tk_beh[TK_A].events[0] = SK_EVENT_NODE_ADD;
	tk_beh[TK_A].hint_result = SK_QUEUE;
	tk_beh[TK_B].filter_nodes[0] = "n2";
	tk_beh[TK_B].filter = SK_UNSCHEDULABLE;
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	struct sk_queue *q = sk_scheduler_queue(sched);
	assert_int_equal(sk_queue_where_is(q, p->uid), SK_Q_UNSCHEDULABLE);
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, NULL);
	assert_int_equal(tk_beh[TK_A].hint_calls, 1);
	enum sk_queue_where w = sk_queue_where_is(q, p->uid);
	assert_true(w == SK_Q_BACKOFF || w == SK_Q_ACTIVE);
	sk_pod_unref(p);
}

/* A Filter error cancels filtering, but nextStartNodeIndex still moves past the nodes processed
 * before it (upstream: "always try to update the sched.nextStartNodeIndex"). */
static void test_filter_error_still_advances_start_index(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_FILTER, TK_B, 0);
	tk_beh[TK_A].filter_nodes[0] = "n1";
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	tk_beh[TK_B].filter_nodes[0] = "n2";
	tk_beh[TK_B].filter = SK_ERROR;
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_ERROR);
	assert_string_equal(last_msg, "running \"TestB\" filter plugin: filter says no");
	assert_int_equal(sk_scheduler_next_start_index(sched), 1); /* n1 was processed, then n2 failed */
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), p->uid), SK_Q_ERROR_BACKOFF);
	sk_pod_unref(p);
}

/* v1.33+ (upstream PR 130189): a PreBind rejection is no FitError and names no rejecting plugin:
 * the plain message, reason Unschedulable, and the pod is retried after backoff. */
static void test_prebind_rejection_goes_to_backoff(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_PRE_BIND, TK_A, 0);
	tk_beh[TK_A].pre_bind = SK_UNSCHEDULABLE;
	tk_beh[TK_A].nevents = 1;
	tk_beh[TK_A].events[0] = SK_EVENT_NODE_ADD;
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	assert_string_equal(last_msg, "prebind refused");
	assert_string_equal(last_patch, "Unschedulable: prebind refused");
	assert_true(last_nominate);
	assert_int_equal(forgotten, 1);
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), p->uid), SK_Q_ERROR_BACKOFF);
	sk_pod_unref(p);
}

/* handleBindingCycleError: the AssignedPodDelete move after a rejection leaves the rejected pod
 * itself alone (preCheck), even when its plugin would say Queue to that event. */
static void test_binding_rejection_does_not_requeue_itself(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_PERMIT, TK_B, 0);
	tk_beh[TK_B].permit = SK_WAIT;
	tk_beh[TK_B].permit_timeout_ms = 1;
	tk_beh[TK_B].nevents = 1;
	tk_beh[TK_B].events[0] = SK_EVENT_ASSIGNED_POD_DELETE;
	tk_beh[TK_B].hint_result = SK_QUEUE;
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	assert_string_equal(last_msg, "0/1 nodes are available: 1 rejected due to timeout after waiting 1ms at plugin TestB.");
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), p->uid), SK_Q_UNSCHEDULABLE);
	assert_int_equal(tk_beh[TK_B].hint_calls, 0);
	sk_pod_unref(p);
}

/* handleSchedulingFailure calls AddNominatedPod even when the pod is gone: the old nomination is
 * dropped and nothing is added back. */
static void test_failure_of_vanished_pod_drops_nomination(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_beh[TK_A].filter_all = true;
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	sk_nominator_add(nom, p, "n2");
	assert_string_equal(sk_nominator_node_of(nom, p->uid), "n2");
	pod_gone = true;
	run_one();
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	assert_null(sk_nominator_node_of(nom, p->uid));
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), p->uid), SK_Q_NONE);
	sk_pod_unref(p);
}

/* A Pending status counts among the rejecting plugins (Diagnosis.AddPluginStatus puts it in both
 * sets): a Queue from it sends the pod straight to activeQ. */
static void test_pending_filter_status(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_beh[TK_A].filter_all = true;
	tk_beh[TK_A].filter = SK_PENDING;
	tk_beh[TK_A].filter_reason = "waiting for the driver";
	tk_beh[TK_A].nevents = 1;
	tk_beh[TK_A].events[0] = SK_EVENT_NODE_ADD;
	tk_beh[TK_A].hint_result = SK_QUEUE;
	start(0);
	struct sk_pod *p = add_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	assert_string_equal(last_msg, "0/3 nodes are available: 3 waiting for the driver.");
	struct sk_queue *q = sk_scheduler_queue(sched);
	assert_int_equal(sk_queue_where_is(q, p->uid), SK_Q_UNSCHEDULABLE);
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, NULL);
	assert_int_equal(sk_queue_where_is(q, p->uid), SK_Q_ACTIVE); /* no backoff for Pending */
	sk_pod_unref(p);
}


/* ---------- with the real config loader, in-tree plugins and cache ---------- */

static struct sk_cache *real_cache;
static struct sk_snapshot *real_snap;
static int binds;

static const struct sk_snapshot *real_update(void *ctx, char **err)
{
	(void)ctx;
	return sk_cache_update_snapshot(real_cache, real_snap, err) == 0 ? real_snap : NULL;
}
static int real_assume(void *ctx, struct sk_pod *p, char **err)
{
	(void)ctx;
	return sk_cache_assume_pod(real_cache, p, err);
}
static int real_forget(void *ctx, const struct sk_pod *p, char **err)
{
	(void)ctx;
	return sk_cache_forget_pod(real_cache, p, err);
}
static int real_finish(void *ctx, const struct sk_pod *p, char **err)
{
	(void)ctx;
	return sk_cache_finish_binding(real_cache, p, err);
}
static int real_bind(void *ctx, const struct sk_pod *pod, const char *node, char **err)
{
	(void)ctx;
	(void)pod;
	(void)node;
	(void)err;
	binds++;
	return 0;
}

static void test_default_profile_end_to_end(void **state)
{
	(void)state;
	static const char yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
				   "kind: KubeSchedulerConfiguration\n"
				   "profiles:\n"
				   "- schedulerName: default-scheduler\n";
	struct sk_errors errs = { 0 };
	struct sk_config *c = sk_config_load(yaml, sizeof(yaml) - 1, &errs);
	if (!c) {
		char *m = sk_errors_join(&errs, "; ");
		fail_msg("config: %s", m);
	}
	real_cache = sk_cache_new(0);
	real_snap = sk_snapshot_new();
	char *err = NULL;
	const char *nodes[] = {
		"{\"metadata\":{\"name\":\"small\"},\"status\":{\"allocatable\":{\"cpu\":\"1\",\"memory\":\"4Gi\",\"pods\":\"110\"}}}",
		"{\"metadata\":{\"name\":\"big\"},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"4Gi\",\"pods\":\"110\"}}}",
		("{\"metadata\":{\"name\":\"tainted\"},\"spec\":{\"taints\":[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}]},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"4Gi\",\"pods\":\"110\"}}}"),
	};
	for (int i = 0; i < 3; i++) {
		struct sk_node *n = fx_node(nodes[i]);
		assert_int_equal(sk_cache_add_node(real_cache, n, &err), 0);
		sk_node_unref(n);
	}
	struct sk_sched_env env = { .update_snapshot = real_update, .assume = real_assume, .forget = real_forget,
				    .finish_binding = real_finish, .patch_failure = patch, .observe = observe,
				    .want_details = true, .seed = 1, .nominator = nom };
	sched = sk_scheduler_new(&env, &err);
	struct sk_framework_env fenv = { .pool = pool, .nominator = nom, .snapshot = fw_snapshot, .event = fw_event,
					 .bind = real_bind };
	struct sk_framework *fw = sk_framework_new(c, &c->profiles[0], &fenv, &err);
	if (!fw)
		fail_msg("framework: %s", err);
	assert_true(sk_framework_has(fw, SK_EP_PRE_ENQUEUE));
	assert_int_equal(sk_framework_point_len(fw, SK_EP_QUEUE_SORT), 1);
	sk_scheduler_set_frameworks(sched, &fw, 1);
	sk_framework_unref(fw);

	/* 2 cpu: only "big" fits and tolerates */
	struct sk_pod *p = add_pod("p", NULL);
	sk_pod_unref(p);
	p = fx_pod("{\"metadata\":{\"name\":\"two\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}");
	sk_queue_add(sk_scheduler_queue(sched), p);
	run_one(); /* "p" (no requests) first: FIFO at equal priority */
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(last_node, "big");
	sk_pod_unref(p);
	/* 3 cpu more: nothing fits any more */
	p = fx_pod("{\"metadata\":{\"name\":\"three\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]}}");
	sk_queue_add(sk_scheduler_queue(sched), p);
	run_one();
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	/* DefaultPreemption: no lower-priority pod anywhere; a node whose capacity is below the
	 * request is UU for NodeResourcesFit, so only one node was a preemption candidate */
	assert_string_equal(last_msg, "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
				      "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming "
				      "pod, 2 Preemption is not helpful for scheduling.");
	assert_int_equal(binds, 2);
	assert_int_equal(sk_cache_assumed_count(real_cache), 2);
	/* the rejecting plugins drive the requeue: a node add moves it */
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), p->uid), SK_Q_UNSCHEDULABLE);
	struct sk_node *n = fx_node("{\"metadata\":{\"name\":\"new\"},\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"4Gi\",\"pods\":\"110\"}}}");
	sk_cache_add_node(real_cache, n, &err);
	sk_queue_move_all(sk_scheduler_queue(sched), &SK_EVENT_NODE_ADD, NULL, n);
	enum sk_queue_where w = sk_queue_where_is(sk_scheduler_queue(sched), p->uid);
	assert_true(w == SK_Q_BACKOFF || w == SK_Q_ACTIVE);
	run_one(); /* popped from backoffQ when activeQ is empty */
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(last_node, "new");
	sk_node_unref(n);
	sk_pod_unref(p);

	sk_scheduler_free(sched);
	sched = NULL;
	sk_snapshot_free(real_snap);
	sk_cache_free(real_cache);
	sk_config_free(c);
	sk_errors_free(&errs);
}


struct allow_args {
	struct sk_framework *fw;
	const char *uid;
};

static void *allow_when_waiting(void *arg)
{
	struct allow_args *a = arg;
	struct sk_waiting_pods *w = sk_framework_waiting_pods(a->fw);
	while (!sk_waiting_has(w, a->uid)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	/* swap the profile's framework while the pod waits in its binding cycle */
	static struct tk_profile p2; /* must outlive the framework */
	tk_profile_minimal(&p2, "default-scheduler");
	struct sk_framework_env fenv = { .pool = pool, .nominator = nom, .snapshot = fw_snapshot, .event = fw_event };
	char *err = NULL;
	struct sk_framework *fw2 = sk_framework_new(&cfg, &p2.p, &fenv, &err);
	sk_scheduler_set_frameworks(sched, &fw2, 1);
	sk_framework_unref(fw2);
	assert_int_equal(tk_beh[TK_B].fini_calls, 0); /* the in-flight attempt still holds the old one */
	sk_handle_allow_waiting_pod(sk_framework_handle(a->fw), a->uid, "TestB");
	return NULL;
}

static void test_reload_while_binding(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_PERMIT, TK_B, 0);
	tk_profile_add(&prof, SK_EP_POST_BIND, TK_B, 0);
	tk_beh[TK_B].permit = SK_WAIT;
	tk_beh[TK_B].permit_timeout_ms = 60000;
	start(1);
	struct sk_framework *old = sk_scheduler_framework(sched, "default-scheduler");
	struct sk_pod *p = add_pod("p", NULL);
	struct allow_args args = { old, p->uid };
	pthread_t t;
	pthread_create(&t, NULL, allow_when_waiting, &args);
	run_one();
	pthread_join(t, NULL);
	sk_framework_unref(old);
	sk_scheduler_wait_bindings(sched);
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_int_equal(tk_beh[TK_B].post_bind_calls, 1); /* finished on the framework it started with */
	assert_int_equal(tk_beh[TK_B].fini_calls, 1);      /* ... which was released afterwards */
	struct sk_framework *now = sk_scheduler_framework(sched, "default-scheduler");
	assert_int_equal(sk_framework_point_len(now, SK_EP_PERMIT), 0);
	sk_framework_unref(now);
	sk_pod_unref(p);
}

static int group_setup(void **state)
{
	(void)state;
	setenv("SK_POOL_THREADS", "4", 1);
	pool = sk_pool_new(16, NULL);
	unsetenv("SK_POOL_THREADS");
	/* workers run part of every parallel Filter/Score loop, or serial equivalence proves nothing */
	sk_pool_set_eager(pool, SK_POOL_EAGER_FORCE);
	return pool ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	sk_pool_free(pool);
	return 0;
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_filter_then_bind),
		T(test_all_rejected),
		T(test_prefilter_rejection_and_narrowing),
		T(test_prefilter_narrowing_table),
		T(test_start_index_rotation),
		T(test_early_stop_is_serial_equivalent),
		T(test_filter_cut_off_table),
		T(test_filter_feasible_list_table),
		T(test_filter_around_nominated_table),
		T(test_scoring_and_ties),
		T(test_reserve_and_permit_rejection),
		T(test_binding_failures),
		T(test_plugin_evaluations_and_permit_wait),
		T(test_post_filter_and_nomination),
		T(test_nominated_node_first),
		T(test_no_nodes_and_terminating),
		T(test_async_binders),
		T(test_reload_while_binding),
		T(test_default_profile_end_to_end),
		T(test_narrowing_plugin_is_a_rejector),
		T(test_filter_error_still_advances_start_index),
		T(test_prebind_rejection_goes_to_backoff),
		T(test_binding_rejection_does_not_requeue_itself),
		T(test_failure_of_vanished_pod_drops_nomination),
		T(test_pending_filter_status),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
