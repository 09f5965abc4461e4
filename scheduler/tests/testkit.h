/* Scriptable test plugins for the framework, schedule_one and queue tests (Engineer D's tests):
 * five descriptors TestA..TestE implementing every extension point, each driven by a global
 * struct tk_behavior (what code to return where), plus a profile builder. Call tk_reset() first. */
#ifndef SK_TEST_TESTKIT_H
#define SK_TEST_TESTKIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "scheduler/config/config.h"
#include "schedkit/plugin.h"

#define TK_NPLUGINS 5
/* TestE scores and filters, with score_batch and filter_batch too (its batches score and filter
 * each node as score and filter do). */
enum { TK_A = 0, TK_B, TK_C, TK_D, TK_E };

struct tk_behavior {
	/* PreEnqueue */
	enum sk_code pre_enqueue;
	/* PreFilter: code + reason; narrow: nodes (NULL-terminated) when narrow is true */
	enum sk_code pre_filter;
	const char *pre_filter_reason;
	bool narrow;
	const char *narrow_nodes[8];
	/* Filter: reject the listed nodes (or every node when filter_all) with code + reason */
	enum sk_code filter;
	const char *filter_reason;
	const char *filter_nodes[16];
	bool filter_all;
	int max_pods;                 /* > 0: reject "too many pods" when the node has >= max_pods pods */
	/* PostFilter */
	enum sk_code post_filter;
	const char *post_filter_reason;
	const char *nominate;
	/* PreScore / Score: score_of[i] for score_nodes[i], else score_default; normalize: x*100/max */
	enum sk_code pre_score;
	enum sk_code score;
	const char *score_nodes[8];
	int64_t score_of[8];
	int64_t score_default;
	bool normalize;
	int64_t normalize_add;
	/* Reserve / Permit / PreBind / Bind */
	enum sk_code reserve;
	enum sk_code permit;
	int64_t permit_timeout_ms;
	enum sk_code pre_bind;
	enum sk_code bind;
	/* counters */
	int init_calls, fini_calls;
	atomic_int filter_calls, score_calls;
	atomic_int batch_calls, batch_nodes; /* score_batch calls and the nodes they covered */
	atomic_int filter_batch_calls;       /* filter_batch calls (TestE) */
	int unreserve_calls, post_bind_calls;
	struct sk_plugin *instance;
	/* EnqueueExtensions: when nevents > 0 the plugin registers these with hint_result */
	int nevents;
	struct sk_cluster_event events[4];
	enum sk_hint hint_result;
	int hint_calls;
};

extern struct tk_behavior tk_beh[TK_NPLUGINS];
extern const struct sk_plugin_desc tk_desc[TK_NPLUGINS];

/* Serial-point call log, e.g. "A.prefilter B.prefilter A.reserve ..." */
extern char tk_log[8192];
void tk_reset(void);

struct tk_profile {
	struct sk_profile_config p;
	struct sk_plugin_ref refs[SK_EP_COUNT][8];
};
void tk_profile_init(struct tk_profile *tp, const char *scheduler_name);
void tk_profile_add(struct tk_profile *tp, enum sk_ext_point ep, int plugin, int32_t weight);
/* A minimal valid profile: QueueSort and Bind from TestD. */
void tk_profile_minimal(struct tk_profile *tp, const char *scheduler_name);

/* Objects and messages the framework tables share (test_framework.c, test_framework_runners.c):
 * a pod with one container and spec.priority prio; a node info of a node with only a name (both
 * built by scheduler/tests/fixtures.c, owned by the caller); a status's message in a static
 * buffer ("" for none), valid until the next call. */
struct sk_pod *tk_pod_prio(const char *name, int prio);
struct sk_node_info *tk_node_named(const char *name);
const char *tk_status_msg(const struct sk_status *s);

/* scheduler_plugin_evaluation_total as the framework reports it (sk_framework_env.evaluated):
 * tk_env_evaluated adds each Filter evaluation to its plugin's count in tk_filter_evals. */
extern double tk_filter_evals[TK_NPLUGINS];
void tk_env_evaluated(void *ctx, const char *profile, const char *point, const char *plugin, double n);

/* The framework tables' worker pool: parallelism 16 on 4 threads (SK_POOL_THREADS=4 while it is
 * made), for cmocka_run_group_tests's group setup and teardown. */
struct sk_pool;
extern struct sk_pool *tk_pool;
int tk_pool_setup(void **state);
int tk_pool_teardown(void **state);

#endif
