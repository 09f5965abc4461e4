/* Tests for the decision records (scheduler/decisions/, framework/record.c): the store's bounds
 * (per pod, global cap, accounted bytes) and eviction order, queries and filters, the JSON of a
 * record (filter, raw/normalized/weighted scores, extenders' part, tie, reasons histogram,
 * preemption, timings), the per-profile switch, and records made by real attempts with parallel
 * Filter/Score and binder threads while readers render them. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/decisions/annotate.h"
#include "scheduler/decisions/store.h"
#include "scheduler/decisions/summary.h"
#include "scheduler/framework/parallel.h"
#include "scheduler/schedule_one.h"
#include "scheduler/tests/fixtures.h"
#include "scheduler/tests/testkit.h"

/* ---------- synthetic outcomes ---------- */

struct fake {
	struct sk_pod *pod;
	struct sk_status st[4];
	struct sk_outcome_filter f[4];
	struct sk_score_table t;
	int ran[2];
	const char *plugin[2];
	int32_t weight[2];
	int64_t raw[6], norm[6], total[3];
	const char *nodes[3];
	struct sk_rec_trace trace;
	struct sk_outcome o;
};

static struct sk_pod *pod_named(const char *ns, const char *name)
{
	char text[256];
	snprintf(text, sizeof text, "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
		 ns, name);
	return fx_pod(text);
}

/* A Scheduled outcome on n1 over three scored nodes (two plugins, weights 3 and 1, an extender
 * adding 5 to n2), with two rejected nodes. */
static void fake_init(struct fake *x, const char *ns, const char *name, const char *profile, enum sk_result res)
{
	memset(x, 0, sizeof *x);
	x->pod = pod_named(ns, name);
	x->st[0] = sk_status(SK_UNSCHEDULABLE, "Insufficient cpu");
	sk_status_add(&x->st[0], "Insufficient memory");
	x->st[1] = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint(s)");
	x->f[0] = (struct sk_outcome_filter){ "r1", "NodeResourcesFit", &x->st[0] };
	x->f[1] = (struct sk_outcome_filter){ "r2", "TaintToleration", &x->st[1] };
	x->plugin[0] = "TaintToleration";
	x->plugin[1] = "NodeResourcesFit";
	x->weight[0] = 3;
	x->weight[1] = 1;
	int64_t raw[6] = { 0, 1, 0, 40, 80, 60 }, norm[6] = { 100, 0, 100, 40, 80, 60 };
	memcpy(x->raw, raw, sizeof raw);
	memcpy(x->norm, norm, sizeof norm);
	x->total[0] = 340;
	x->total[1] = 80 + 5;
	x->total[2] = 360;
	x->nodes[0] = "n1";
	x->nodes[1] = "n2";
	x->nodes[2] = "n3";
	x->t = (struct sk_score_table){ .nnodes = 3, .nplugins = 2, .ran = x->ran, .plugin = x->plugin,
					.weight = x->weight, .scores = x->norm, .total = x->total, .raw = x->raw };
	x->trace.ntimes = 2;
	x->trace.times[0] = (struct sk_rec_time){ "PreFilter", 0.001, 1 };
	x->trace.times[1] = (struct sk_rec_time){ "Filter", 0.002, 1 };
	x->o = (struct sk_outcome){ .pod = x->pod, .profile = profile, .result = res,
				    .node = res == SK_RESULT_SCHEDULED ? "n3" : NULL,
				    .message = res == SK_RESULT_SCHEDULED ? NULL : "0/5 nodes are available: ...",
				    .attempts = 1, .nfilter = 2, .filter = x->f, .scores = &x->t, .score_nodes = x->nodes,
				    .record = true, .num_all_nodes = 5, .prefilter_nodes = -1, .trace = &x->trace };
}

static void fake_free(struct fake *x)
{
	for (int i = 0; i < 4; i++)
		sk_status_reset(&x->st[i]);
	sk_pod_unref(x->pod);
}

static uint64_t add_fake(struct sk_decisions *d, const char *ns, const char *name, const char *profile,
			 enum sk_result res)
{
	struct fake x;
	fake_init(&x, ns, name, profile, res);
	uint64_t seq = sk_decisions_add(d, &x.o);
	fake_free(&x);
	return seq;
}

static int64_t fixed_wall(void *ctx)
{
	(void)ctx;
	return 1764633600LL * 1000000000LL + 123456000LL; /* 2025-12-02T00:00:00.123456Z */
}

/* ---------- bounds ---------- */

struct bound_case {
	const char *what;
	int per_pod, max_records;
	int64_t max_bytes_records; /* max_bytes as a number of records' worth (0: unbounded) */
	int pods, rounds;          /* rounds of one record per pod */
	int want_records, want_pods;
	uint64_t want_evicted;
};

static void test_bounds_table(void **state)
{
	(void)state;
	/* the size of one record of this shape, for the byte bound */
	struct fake x;
	fake_init(&x, "default", "p0", "default-scheduler", SK_RESULT_SCHEDULED);
	struct sk_decision *one = sk_decision_build(&x.o, 1, 0);
	assert_non_null(one);
	int64_t rec = (int64_t)one->bytes + 64; /* + the pod entry's share */
	sk_decision_unref(one);
	fake_free(&x);

	static const struct bound_case cases[] = {
		{ "nothing evicted", 4, 100, 0, 5, 2, 10, 5, 0 },
		{ "per pod: oldest of the pod goes", 2, 100, 0, 3, 5, 6, 3, 9 },
		{ "global cap: oldest of the store goes", 4, 5, 0, 10, 1, 5, 5, 5 },
		{ "both", 2, 7, 0, 5, 3, 7, 5, 8 },
		{ "bytes: about three records fit", 10, 100, 3, 6, 1, 3, 3, 3 },
		{ "one record larger than the byte bound is still kept", 4, 100, -1, 3, 1, 1, 1, 2 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const struct bound_case *k = &cases[c];
		struct sk_decisions_opts o = { .per_pod = k->per_pod, .max_records = k->max_records };
		if (k->max_bytes_records > 0)
			o.max_bytes = rec * k->max_bytes_records;
		else if (k->max_bytes_records < 0)
			o.max_bytes = 1;
		struct sk_decisions *d = sk_decisions_new(&o);
		assert_non_null(d);
		uint64_t last = 0;
		for (int r = 0; r < k->rounds; r++)
			for (int p = 0; p < k->pods; p++) {
				char name[16];
				snprintf(name, sizeof name, "p%d", p);
				uint64_t s = add_fake(d, "default", name, "default-scheduler", SK_RESULT_SCHEDULED);
				assert_true(s > last);
				last = s;
			}
		struct sk_decisions_stats st;
		sk_decisions_stats(d, &st);
		if (st.records != k->want_records || st.pods != k->want_pods || st.evicted != k->want_evicted)
			fail_msg("%s: records %d pods %d evicted %llu, want %d %d %llu", k->what, st.records, st.pods,
				 (unsigned long long)st.evicted, k->want_records, k->want_pods,
				 (unsigned long long)k->want_evicted);
		assert_int_equal(st.added, (uint64_t)(k->rounds * k->pods));
		assert_true(st.bytes > 0);
		if (k->max_bytes_records > 0)
			assert_true(st.bytes <= o.max_bytes);
		/* the newest record is always there, and the list is newest first */
		struct sk_decision **v = NULL;
		int n = sk_decisions_recent(d, &(struct sk_decisions_filter){ .limit = 1000 }, &v);
		assert_int_equal(n, k->want_records);
		assert_int_equal(v[0]->seq, last);
		for (int i = 1; i < n; i++)
			assert_true(v[i - 1]->seq > v[i]->seq);
		for (int i = 0; i < n; i++)
			sk_decision_unref(v[i]);
		free(v);
		sk_decisions_free(d);
	}
}

/* Bytes go back to zero as records go: the accounting is exact. */
static void test_bytes_accounting(void **state)
{
	(void)state;
	struct sk_decisions *d = sk_decisions_new(&(struct sk_decisions_opts){ .per_pod = 1, .max_records = 1 });
	add_fake(d, "a", "x", "p", SK_RESULT_SCHEDULED);
	struct sk_decisions_stats s1, s2;
	sk_decisions_stats(d, &s1);
	add_fake(d, "a", "y", "p", SK_RESULT_SCHEDULED); /* same shape, evicts x */
	sk_decisions_stats(d, &s2);
	assert_int_equal(s1.bytes, s2.bytes);
	assert_int_equal(s2.records, 1);
	assert_int_equal(s2.pods, 1);
	sk_decisions_free(d);
}

/* ---------- queries ---------- */

static void test_pod_and_recent_filters(void **state)
{
	(void)state;
	struct sk_decisions *d = sk_decisions_new(NULL);
	add_fake(d, "default", "web", "default-scheduler", SK_RESULT_UNSCHEDULABLE);
	add_fake(d, "default", "web", "default-scheduler", SK_RESULT_SCHEDULED);
	add_fake(d, "other", "web", "batch", SK_RESULT_UNSCHEDULABLE);
	add_fake(d, "default", "db", "batch", SK_RESULT_ERROR);

	struct sk_decision **v = NULL;
	int n = sk_decisions_pod(d, "default", "web", &v);
	assert_int_equal(n, 2);
	assert_int_equal(v[0]->result, SK_RESULT_SCHEDULED); /* newest first */
	assert_int_equal(v[1]->result, SK_RESULT_UNSCHEDULABLE);
	for (int i = 0; i < n; i++)
		sk_decision_unref(v[i]);
	free(v);
	assert_int_equal(sk_decisions_pod(d, "default", "nope", &v), 0);
	assert_null(v);

	static const struct {
		struct sk_decisions_filter f;
		int want;
		const char *first; /* ns/name of the first item */
	} cases[] = {
		{ { 0 }, 4, "default/db" },
		{ { .profile = "batch" }, 2, "default/db" },
		{ { .result = "Unschedulable" }, 2, "other/web" },
		{ { .profile = "default-scheduler", .result = "Unschedulable" }, 1, "default/web" },
		{ { .ns = "other" }, 1, "other/web" },
		{ { .latest_per_pod = true }, 3, "default/db" },
		{ { .latest_per_pod = true, .result = "Unschedulable" }, 1, "other/web" },
		{ { .limit = 2 }, 2, "default/db" },
		{ { .profile = "none" }, 0, NULL },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		n = sk_decisions_recent(d, &cases[c].f, &v);
		if (n != cases[c].want)
			fail_msg("case %zu: %d items, want %d", c, n, cases[c].want);
		if (n > 0) {
			char key[128];
			snprintf(key, sizeof key, "%s/%s", v[0]->ns, v[0]->name);
			assert_string_equal(key, cases[c].first);
		}
		for (int i = 0; i < n; i++)
			sk_decision_unref(v[i]);
		free(v);
	}
	sk_decisions_free(d);
}

/* ---------- JSON ---------- */

static const cJSON *at(const cJSON *j, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	const cJSON *cur = j;
	for (char *save = NULL, *tok = strtok_r(buf, ".", &save); cur && tok; tok = strtok_r(NULL, ".", &save)) {
		char *end;
		long idx = strtol(tok, &end, 10);
		cur = *end == '\0' ? cJSON_GetArrayItem(cur, (int)idx) : cJSON_GetObjectItemCaseSensitive(cur, tok);
	}
	return cur;
}

static void expect_str(const cJSON *j, const char *path, const char *want)
{
	const cJSON *v = at(j, path);
	if (!cJSON_IsString(v) || strcmp(v->valuestring, want))
		fail_msg("%s: got %s, want \"%s\"", path, v ? cJSON_PrintUnformatted(v) : "(absent)", want);
}

static void expect_num(const cJSON *j, const char *path, double want)
{
	const cJSON *v = at(j, path);
	if (!cJSON_IsNumber(v) || v->valuedouble != want)
		fail_msg("%s: got %s, want %g", path, v ? cJSON_PrintUnformatted(v) : "(absent)", want);
}

static void test_record_json(void **state)
{
	(void)state;
	struct sk_decisions *d = sk_decisions_new(&(struct sk_decisions_opts){ .wall_ns = fixed_wall });
	struct fake x;
	fake_init(&x, "default", "web-1", "default-scheduler", SK_RESULT_SCHEDULED);
	x.trace.nvictims = 1;
	x.trace.victims_total = 3;
	x.trace.victims[0] = strdup("default/low");
	x.o.nominated_path = "n3";
	x.o.nominated_path_fit = false;
	/* three candidates handed to the extenders, which keep n1 and n4 */
	struct sk_victims cands[3] = { { .node = "n1", .npods = 2, .num_pdb_violations = 1 },
				       { .node = "n2", .npods = 1 }, { .node = "n4", .npods = 3 } };
	struct sk_victims kept[2] = { cands[2], cands[0] };
	struct sk_rec_trace *prev = sk_rec_set_current(&x.trace);
	sk_rec_candidates(cands, 3);
	sk_rec_candidates_kept(kept, 2);
	sk_rec_set_current(prev);
	sk_decisions_add(d, &x.o);
	sk_rec_trace_reset(&x.trace);
	fake_free(&x);

	struct sk_decision **v = NULL;
	assert_int_equal(sk_decisions_pod(d, "default", "web-1", &v), 1);
	cJSON *j = sk_decision_json(v[0]);
	assert_non_null(j);
	static const struct {
		const char *path, *s;
		double n;
	} want[] = {
		{ "time", "2025-12-02T00:00:00.123456Z", 0 },
		{ "pod.namespace", "default", 0 },
		{ "pod.name", "web-1", 0 },
		{ "pod.uid", "default/web-1", 0 },
		{ "profile", "default-scheduler", 0 },
		{ "result", "Scheduled", 0 },
		{ "node", "n3", 0 },
		{ "numAllNodes", NULL, 5 },
		{ "preFilter.nodes", "all", 0 },
		{ "nominatedNodePath.node", "n3", 0 },
		{ "nominatedNodePath.result", "Rejected", 0 },
		{ "filter.0.node", "r1", 0 },
		{ "filter.0.plugin", "NodeResourcesFit", 0 },
		{ "filter.0.code", "Unschedulable", 0 },
		{ "filter.0.message", "Insufficient cpu, Insufficient memory", 0 },
		{ "filter.0.reasons.1", "Insufficient memory", 0 },
		{ "filter.1.code", "UnschedulableAndUnresolvable", 0 },
		{ "score.plugins.0.name", "TaintToleration", 0 },
		{ "score.plugins.0.weight", NULL, 3 },
		{ "score.nodes.1.node", "n2", 0 },
		{ "score.nodes.1.raw.0", NULL, 1 },
		{ "score.nodes.1.normalized.0", NULL, 0 },
		{ "score.nodes.1.normalized.1", NULL, 80 },
		{ "score.nodes.2.weighted.0", NULL, 300 },
		{ "score.nodes.2.weighted.1", NULL, 60 },
		{ "score.nodes.1.extenders", NULL, 5 },
		{ "score.nodes.1.total", NULL, 85 },
		{ "score.nodes.0.extenders", NULL, 0 },
		{ "chosen.node", "n3", 0 },
		{ "chosen.tiedWith", NULL, 0 },
		{ "reasons.0.count", NULL, 1 },
		{ "reasons.0.reason", "Insufficient cpu", 0 }, /* equal counts: by name */
		{ "reasons.2.reason", "node(s) had untolerated taint(s)", 0 },
		{ "preemption.victims.0", "default/low", 0 },
		{ "preemption.victimsTotal", NULL, 3 },
		{ "preemption.candidatesTotal", NULL, 3 },
		{ "preemption.candidates.0.node", "n1", 0 },
		{ "preemption.candidates.0.victims", NULL, 2 },
		{ "preemption.candidates.0.pdbViolations", NULL, 1 },
		{ "preemption.candidates.0.droppedByExtenders", NULL, -1 },
		{ "preemption.candidates.1.node", "n2", 0 },
		{ "preemption.candidates.1.pdbViolations", NULL, 0 },
		{ "preemption.candidates.2.node", "n4", 0 },
		{ "preemption.candidates.2.victims", NULL, 3 },
		{ "permit.waited", NULL, -1 },
		{ "timings.1.point", "Filter", 0 },
		{ "timings.1.seconds", NULL, 0.002 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		if (want[i].s)
			expect_str(j, want[i].path, want[i].s);
		else if (want[i].n == -1)
			assert_true(cJSON_IsFalse(at(j, want[i].path)));
		else
			expect_num(j, want[i].path, want[i].n);
	}
	cJSON *s = sk_decision_summary_json(v[0]);
	assert_null(cJSON_GetObjectItemCaseSensitive(s, "score"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "reasons")), 3);
	cJSON_Delete(s);
	cJSON_Delete(j);
	sk_decision_unref(v[0]);
	free(v);
	sk_decisions_free(d);
}

/* Candidates past SK_REC_MAX_CANDIDATES are counted, not kept; the one the extenders dropped is
 * marked; without a current trace nothing is noted. */
static void test_candidates(void **state)
{
	(void)state;
	struct sk_victims list[SK_REC_MAX_CANDIDATES + 4];
	char names[SK_REC_MAX_CANDIDATES + 4][16];
	for (int i = 0; i < SK_REC_MAX_CANDIDATES + 4; i++) {
		snprintf(names[i], sizeof names[i], "c%d", i);
		list[i] = (struct sk_victims){ .node = names[i], .npods = i };
	}
	sk_rec_candidates(list, 3); /* no trace: a no-op */
	struct fake x;
	fake_init(&x, "default", "p", "p", SK_RESULT_UNSCHEDULABLE);
	struct sk_rec_trace *prev = sk_rec_set_current(&x.trace);
	sk_rec_candidates(list, SK_REC_MAX_CANDIDATES + 4);
	sk_rec_candidates_kept(list + 1, SK_REC_MAX_CANDIDATES + 3); /* c0 dropped */
	sk_rec_set_current(prev);
	assert_int_equal(x.trace.ncandidates, SK_REC_MAX_CANDIDATES);
	assert_int_equal(x.trace.candidates_total, SK_REC_MAX_CANDIDATES + 4);
	struct sk_decision *r = sk_decision_build(&x.o, 1, 0);
	assert_int_equal(r->ncandidates, SK_REC_MAX_CANDIDATES);
	cJSON *j = sk_decision_json(r);
	assert_int_equal(cJSON_GetArraySize(at(j, "preemption.candidates")), SK_REC_MAX_CANDIDATES);
	expect_num(j, "preemption.candidatesTotal", SK_REC_MAX_CANDIDATES + 4);
	assert_true(cJSON_IsTrue(at(j, "preemption.candidates.0.droppedByExtenders")));
	assert_true(cJSON_IsFalse(at(j, "preemption.candidates.1.droppedByExtenders")));
	expect_str(j, "preemption.candidates.15.node", "c15");
	expect_num(j, "preemption.candidates.15.victims", 15);
	cJSON_Delete(j);
	sk_decision_unref(r);
	sk_rec_trace_reset(&x.trace);
	fake_free(&x);
}

/* A tie at the top and a record without scores. */
static void test_tie_and_unscored(void **state)
{
	(void)state;
	struct fake x;
	fake_init(&x, "default", "t", "p", SK_RESULT_SCHEDULED);
	x.total[0] = 360; /* n1 ties n3 */
	struct sk_decision *r = sk_decision_build(&x.o, 1, 0);
	cJSON *j = sk_decision_json(r);
	expect_num(j, "chosen.tiedWith", 1);
	assert_true(cJSON_IsTrue(at(j, "chosen.scored")));
	cJSON_Delete(j);
	sk_decision_unref(r);
	x.o.scores = NULL;
	x.o.nfilter = 0;
	x.o.prefilter_nodes = 2;
	x.o.trace = NULL;
	r = sk_decision_build(&x.o, 2, 0);
	j = sk_decision_json(r);
	assert_true(cJSON_IsFalse(at(j, "chosen.scored")));
	assert_int_equal(cJSON_GetArraySize(at(j, "score.nodes")), 0);
	assert_int_equal(cJSON_GetArraySize(at(j, "filter")), 0);
	assert_true(cJSON_IsNull(at(j, "nominatedNodePath")));
	expect_num(j, "preFilter.nodes", 2);
	cJSON_Delete(j);
	sk_decision_unref(r);
	fake_free(&x);
}

/* ---------- result annotations ---------- */

static const char *ann_str(const cJSON *a, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_annotations_small(void **state)
{
	(void)state;
	struct fake x;
	fake_init(&x, "default", "a", "p", SK_RESULT_SCHEDULED);
	struct sk_decision *r = sk_decision_build(&x.o, 1, fixed_wall(NULL));
	cJSON *a = sk_decision_annotations(r);
	assert_string_equal(ann_str(a, SK_ANN_RESULT), "Scheduled");
	assert_string_equal(ann_str(a, SK_ANN_NODE), "n3");
	assert_string_equal(ann_str(a, SK_ANN_TIME), "2025-12-02T00:00:00Z");
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a, SK_ANN_MESSAGE)));
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a, SK_ANN_TRUNCATED)));
	assert_string_equal(ann_str(a, SK_ANN_FILTER), "{\"r1\":{\"NodeResourcesFit\":\"Insufficient cpu, Insufficient memory\"},"
						       "\"r2\":{\"TaintToleration\":\"node(s) had untolerated taint(s)\"}}");
	/* the chosen node first, then by total */
	assert_string_equal(ann_str(a, SK_ANN_SCORE), "{\"n3\":{\"TaintToleration\":100,\"NodeResourcesFit\":60,\"total\":360},"
						      "\"n1\":{\"TaintToleration\":100,\"NodeResourcesFit\":40,\"total\":340},"
						      "\"n2\":{\"TaintToleration\":0,\"NodeResourcesFit\":80,\"total\":85}}");
	cJSON_Delete(a);
	sk_decision_unref(r);
	fake_free(&x);
}

/* Past the limits whole node entries are left out and the truncated annotation says which. */
static void test_annotations_limits_table(void **state)
{
	(void)state;
	static const struct {
		int nfilter, nscore;
		size_t msg_len;
		const char *truncated; /* NULL: none */
	} cases[] = {
		{ 10, 10, 100, NULL },
		{ 2000, 10, 100, "filter" },
		{ 10, 2000, 100, "score" },
		{ 2000, 2000, 5000, "filter,score" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		int nf = cases[c].nfilter, ns = cases[c].nscore;
		struct sk_status st = sk_status(SK_UNSCHEDULABLE, "a fairly long reason for this node to say no to the pod");
		struct sk_outcome_filter *f = calloc((size_t)nf, sizeof *f);
		char (*names)[32] = calloc((size_t)(nf > ns ? nf : ns), sizeof *names);
		const char **nodes = calloc((size_t)ns, sizeof *nodes);
		int64_t *norm = calloc((size_t)ns, sizeof *norm), *total = calloc((size_t)ns, sizeof *total);
		for (int i = 0; i < (nf > ns ? nf : ns); i++)
			snprintf(names[i], sizeof names[i], "node-%05d", i);
		for (int i = 0; i < nf; i++)
			f[i] = (struct sk_outcome_filter){ names[i], "NodeResourcesFit", &st };
		for (int i = 0; i < ns; i++) {
			nodes[i] = names[i];
			norm[i] = i % 101;
			total[i] = i % 101;
		}
		const char *plugin[1] = { "NodeResourcesFit" };
		int32_t weight[1] = { 1 };
		int ran[1] = { 0 };
		struct sk_score_table t = { .nnodes = ns, .nplugins = 1, .ran = ran, .plugin = plugin, .weight = weight,
					    .scores = norm, .total = total };
		char *msg = malloc(cases[c].msg_len + 1);
		memset(msg, 'm', cases[c].msg_len);
		msg[cases[c].msg_len] = '\0';
		struct sk_pod *pod = pod_named("default", "many");
		struct sk_outcome o = { .pod = pod, .profile = "p", .result = SK_RESULT_SCHEDULED, .node = names[ns - 1],
					.message = msg, .nfilter = nf, .filter = f, .scores = &t, .score_nodes = nodes };
		struct sk_decision *r = sk_decision_build(&o, 1, 0);
		cJSON *a = sk_decision_annotations(r);
		assert_non_null(a);
		const char *tr = ann_str(a, SK_ANN_TRUNCATED);
		if (cases[c].truncated)
			assert_string_equal(tr, cases[c].truncated);
		else
			assert_null(tr);
		size_t total_len = 0;
		const char *keys[] = { SK_ANN_FILTER, SK_ANN_SCORE };
		for (int k = 0; k < 2; k++) {
			const char *v = ann_str(a, keys[k]);
			assert_non_null(v);
			assert_true(strlen(v) <= SK_ANNOTATION_VALUE_MAX);
			total_len += strlen(v);
			cJSON *parsed = cJSON_Parse(v); /* still valid JSON when cut */
			assert_non_null(parsed);
			int want = k == 0 ? nf : ns;
			if (cases[c].truncated && strstr(cases[c].truncated, k == 0 ? "filter" : "score"))
				assert_true(cJSON_GetArraySize(parsed) < want && cJSON_GetArraySize(parsed) > 10);
			else
				assert_int_equal(cJSON_GetArraySize(parsed), want);
			if (k == 1) /* the chosen node stays, first */
				assert_string_equal(parsed->child->string, names[ns - 1]);
			cJSON_Delete(parsed);
		}
		const char *m = ann_str(a, SK_ANN_MESSAGE);
		assert_true(strlen(m) == (cases[c].msg_len > SK_ANNOTATION_MESSAGE_MAX ? SK_ANNOTATION_MESSAGE_MAX : cases[c].msg_len));
		if (cases[c].msg_len > SK_ANNOTATION_MESSAGE_MAX)
			assert_string_equal(m + SK_ANNOTATION_MESSAGE_MAX - 4, " ...");
		assert_true(total_len + strlen(m) < 34 * 1024);
		cJSON_Delete(a);
		sk_decision_unref(r);
		sk_pod_unref(pod);
		free(msg);
		free(f);
		free(names);
		free(nodes);
		free(norm);
		free(total);
		sk_status_reset(&st);
	}
}

/* ---------- the profile summary ---------- */

static void test_summary_window(void **state)
{
	(void)state;
	assert_null(sk_summary_new(10, 0));
	assert_null(sk_summary_new(10, 60));
	struct sk_summary *s = sk_summary_new(600, 60);
	const char *cpu_twice[] = { "Insufficient cpu", "Insufficient cpu", "Insufficient memory" };
	const char *taint[] = { "node(s) had untolerated taint(s)" };
	int64_t t = 100000;
	sk_summary_add(s, "a", SK_RESULT_SCHEDULED, NULL, 0, t);
	sk_summary_add(s, "a", SK_RESULT_UNSCHEDULABLE, cpu_twice, 3, t);       /* cpu counted once */
	sk_summary_add(s, "a", SK_RESULT_UNSCHEDULABLE, cpu_twice, 1, t + 61);  /* next bucket */
	sk_summary_add(s, "a", SK_RESULT_UNSCHEDULABLE, taint, 1, t + 120);
	sk_summary_add(s, "a", SK_RESULT_SCHEDULED, taint, 1, t + 120);         /* not a reason when scheduled */
	sk_summary_add(s, "a", SK_RESULT_ERROR, NULL, 0, t + 130);
	sk_summary_add(s, "b", SK_RESULT_SCHEDULED, NULL, 0, t + 130);
	static const struct {
		int64_t at;
		int sched, unsched, errors;
		const char *top;
		int top_count, nreasons;
	} cases[] = {
		{ 100130, 2, 3, 1, "Insufficient cpu", 2, 3 },
		{ 100000 + 600, 1, 2, 1, "Insufficient cpu", 1, 2 },     /* the first bucket left the window */
		{ 100000 + 660, 1, 1, 1, "node(s) had untolerated taint(s)", 1, 1 }, /* the second too */
		{ 100000 + 2000, 0, 0, 0, NULL, 0, 0 },                  /* all old */
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		cJSON *j = sk_summary_json(s, cases[c].at, 5);
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "a");
		assert_non_null(a);
		expect_num(a, "windowSeconds", 600);
		expect_num(a, "scheduled", cases[c].sched);
		expect_num(a, "unschedulable", cases[c].unsched);
		expect_num(a, "errors", cases[c].errors);
		const cJSON *tr = cJSON_GetObjectItemCaseSensitive(a, "topReasons");
		if (cJSON_GetArraySize(tr) != cases[c].nreasons)
			fail_msg("case %zu: %d reasons, want %d", c, cJSON_GetArraySize(tr), cases[c].nreasons);
		if (cases[c].top) {
			expect_str(tr, "0.reason", cases[c].top);
			expect_num(tr, "0.count", cases[c].top_count);
		}
		expect_num(j, "b.scheduled", c < 3 ? 1 : 0);
		cJSON_Delete(j);
	}
	sk_summary_free(s);
}

/* Many distinct reasons: top N only, by count then name; the bucket caps its distinct reasons. */
static void test_summary_top(void **state)
{
	(void)state;
	struct sk_summary *s = sk_summary_new(60, 60);
	char names[40][24];
	for (int i = 0; i < 40; i++) {
		snprintf(names[i], sizeof names[i], "reason-%02d", i);
		const char *one[] = { names[i] };
		for (int k = 0; k <= i % 4; k++)
			sk_summary_add(s, "p", SK_RESULT_UNSCHEDULABLE, one, 1, 10);
	}
	cJSON *j = sk_summary_json(s, 10, 3);
	const cJSON *tr = at(j, "p.topReasons");
	assert_int_equal(cJSON_GetArraySize(tr), 3);
	expect_str(tr, "0.reason", "reason-03"); /* 4 each: 03, 07, 11, 15 (the first 16 distinct are kept) */
	expect_str(tr, "1.reason", "reason-07");
	expect_num(tr, "2.count", 4);
	cJSON_Delete(j);
	sk_summary_free(s);
}

/* ---------- the profile field ---------- */

static void test_config_field_table(void **state)
{
	(void)state;
	static const struct {
		const char *profile; /* the profile's extra YAML lines */
		const char *err;     /* NULL: loads */
		bool enabled, annotations;
	} cases[] = {
		{ "", NULL, false, false },
		{ "  decisionRecords: {enabled: true}\n", NULL, true, false },
		{ "  decisionRecords: {enabled: true, annotations: true}\n", NULL, true, true },
		{ "  decisionRecords: {}\n", NULL, false, false },
		{ "  decisionRecords: {enabled: 'yes'}\n",
		  "profiles[0].decisionRecords.enabled: Invalid type: expected bool, got string", false, false },
		{ "  decisionRecords: {enable: true}\n", "unknown field \"profiles[0].decisionRecords.enable\"", false, false },
		{ "  decisionRecords: true\n", "profiles[0].decisionRecords: Invalid type: expected object", false, false },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char text[1024];
		snprintf(text, sizeof text,
			 "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
			 "- schedulerName: s\n%s",
			 cases[c].profile);
		struct sk_errors e = { 0 };
		struct sk_config *cfgp = sk_config_load(text, strlen(text), &e);
		char *msg = sk_errors_join(&e, "; ");
		if (cases[c].err) {
			if (cfgp || !msg || !strstr(msg, cases[c].err))
				fail_msg("case %zu: got \"%s\", want an error containing \"%s\"", c, msg ? msg : "",
					 cases[c].err);
		} else {
			if (!cfgp)
				fail_msg("case %zu: %s", c, msg ? msg : "");
			assert_int_equal(cfgp->profiles[0].records.enabled, cases[c].enabled);
			assert_int_equal(cfgp->profiles[0].records.annotations, cases[c].annotations);
			/* printed back (for /configz) only when given, and loads again the same */
			cJSON *j = sk_config_to_json(cfgp);
			const cJSON *dr = at(j, "profiles.0.decisionRecords");
			assert_int_equal(dr != NULL, strstr(cases[c].profile, "decisionRecords") != NULL);
			char *again = cJSON_PrintUnformatted(j);
			struct sk_errors e2 = { 0 };
			struct sk_config *c2 = sk_config_load(again, strlen(again), &e2);
			assert_non_null(c2);
			assert_int_equal(c2->profiles[0].records.enabled, cases[c].enabled);
			sk_config_free(c2);
			sk_errors_free(&e2);
			free(again);
			cJSON_Delete(j);
		}
		free(msg);
		sk_errors_free(&e);
		sk_config_free(cfgp);
	}
}

/* ---------- real attempts ---------- */

static struct sk_pool *pool;
static struct sk_snapshot *snap;
static struct sk_scheduler *sched;
static struct sk_decisions *store;
static struct tk_profile prof;
static struct sk_config cfg = { .parallelism = 16, .percentage_of_nodes_to_score = 100 };
static _Atomic int observed, recorded_flag;

static const struct sk_snapshot *fw_snapshot(void *ctx)
{
	(void)ctx;
	return sk_scheduler_snapshot(sched);
}
static const struct sk_snapshot *update_snapshot(void *ctx, char **err)
{
	(void)ctx;
	(void)err;
	return snap;
}
static void observe(void *ctx, const struct sk_outcome *o)
{
	(void)ctx;
	observed++;
	if (o->record) {
		recorded_flag++;
		sk_decisions_add(store, o);
	}
}

static void start_sched(int nnodes, bool record, int binders)
{
	struct sk_node_info **nis = calloc((size_t)nnodes, sizeof *nis);
	for (int i = 0; i < nnodes; i++) {
		char text[128];
		snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"n%d\"}}", i + 1);
		nis[i] = fx_node_info(fx_node(text), NULL);
	}
	snap = fx_snapshot_of(nis, nnodes);
	free(nis);
	prof.p.records.enabled = record;
	struct sk_sched_env env = { .update_snapshot = update_snapshot, .observe = observe, .seed = 3,
				    .binder_threads = binders };
	char *err = NULL;
	sched = sk_scheduler_new(&env, &err);
	assert_non_null(sched);
	struct sk_framework_env fenv = { .pool = pool, .snapshot = fw_snapshot };
	struct sk_framework *fw = sk_framework_new(&cfg, &prof.p, &fenv, &err);
	if (!fw)
		fail_msg("framework: %s", err);
	sk_scheduler_set_frameworks(sched, &fw, 1);
	sk_framework_unref(fw);
}

static int setup(void **state)
{
	(void)state;
	tk_reset();
	tk_profile_minimal(&prof, "default-scheduler");
	observed = recorded_flag = 0;
	store = sk_decisions_new(&(struct sk_decisions_opts){ .per_pod = 2, .max_records = 50 });
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sk_scheduler_free(sched);
	sched = NULL;
	sk_snapshot_free(snap);
	snap = NULL;
	sk_decisions_free(store);
	store = NULL;
	return 0;
}

static void add_pods(int n, const char *prefix)
{
	for (int i = 0; i < n; i++) {
		char text[256];
		snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"%s%d\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
			 prefix, i);
		struct sk_pod *p = fx_pod(text);
		assert_int_equal(sk_queue_add(sk_scheduler_queue(sched), p), 0);
		sk_pod_unref(p);
	}
}

/* Off: attempts carry no record flag and nothing is stored. */
static void test_profile_switch_off(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_SCORE, TK_A, 1);
	start_sched(4, false, 0);
	add_pods(3, "p");
	for (int i = 0; i < 3; i++)
		assert_int_equal(sk_schedule_one(sched, false), 1);
	assert_int_equal(observed, 3);
	assert_int_equal(recorded_flag, 0);
	struct sk_decisions_stats st;
	sk_decisions_stats(store, &st);
	assert_int_equal(st.records, 0);
}

static void *reader_main(void *arg)
{
	_Atomic int *stop = arg;
	int rounds = 0;
	while (!*stop || rounds < 10) {
		struct sk_decision **v = NULL;
		int n = sk_decisions_recent(store, &(struct sk_decisions_filter){ .limit = 20 }, &v);
		for (int i = 0; i < n; i++) {
			cJSON *j = sk_decision_json(v[i]);
			assert_non_null(j);
			cJSON_Delete(j);
			sk_decision_unref(v[i]);
		}
		free(v);
		n = sk_decisions_pod(store, "default", "p7", &v);
		for (int i = 0; i < n; i++)
			sk_decision_unref(v[i]);
		free(v);
		rounds++;
	}
	return NULL;
}

/* On, with four pool threads running Filter and Score over 300 nodes, four binder threads and two
 * readers rendering records while they are added: every attempt is recorded with the rejections,
 * raw and normalised scores and the timings, within the bounds. */
static void test_parallel_attempts_recorded(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_PRE_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_profile_add(&prof, SK_EP_SCORE, TK_B, 2);
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].filter_reason = "filter says no";
	tk_beh[TK_A].filter_nodes[0] = "n2";
	tk_beh[TK_A].filter_nodes[1] = "n299";
	tk_beh[TK_B].score_default = 10;
	tk_beh[TK_B].score_nodes[0] = "n7";
	tk_beh[TK_B].score_of[0] = 40;
	tk_beh[TK_B].normalize = true; /* x * 100 / max */
	start_sched(300, true, 4);
	_Atomic int stop = 0;
	pthread_t rd[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&rd[i], NULL, reader_main, &stop), 0);
	add_pods(40, "p");
	for (int i = 0; i < 40; i++)
		assert_int_equal(sk_schedule_one(sched, false), 1);
	sk_scheduler_wait_bindings(sched);
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(rd[i], NULL);
	assert_int_equal(recorded_flag, 40);
	struct sk_decisions_stats st;
	sk_decisions_stats(store, &st);
	assert_int_equal(st.added, 40);
	assert_int_equal(st.records, 40);

	struct sk_decision **v = NULL;
	assert_int_equal(sk_decisions_pod(store, "default", "p7", &v), 1);
	struct sk_decision *r = v[0];
	assert_int_equal(r->result, SK_RESULT_SCHEDULED);
	assert_string_equal(r->node, "n7");
	assert_int_equal(r->num_all_nodes, 300);
	assert_int_equal(r->nfilter, 2);
	assert_string_equal(r->filter[0].node, "n2");
	assert_string_equal(r->filter[0].plugin, "TestA");
	assert_string_equal(r->filter[1].node, "n299");
	assert_int_equal(r->nnodes, 298);
	assert_int_equal(r->nplugins, 1);
	assert_int_equal(r->weight[0], 2);
	assert_true(r->has_raw);
	assert_int_equal(r->raw_row[0], 0); /* TestB normalises: its raw row is kept */
	for (int i = 0; i < r->nnodes; i++) {
		bool seven = !strcmp(r->nodes[i], "n7");
		assert_int_equal(sk_decision_raw(r, 0, i), seven ? 40 : 10);
		assert_int_equal(sk_decision_norm(r, 0, i), seven ? 100 : 25);
		assert_int_equal(r->total[i], seven ? 200 : 50);
	}
	const char *need[] = { "PreFilter", "Filter", "Score", "Reserve", "Permit", "PreBind", "Bind", "PostBind" };
	for (size_t k = 0; k < sizeof need / sizeof need[0]; k++) {
		bool found = false;
		for (int i = 0; i < r->ntimes; i++)
			found |= !strcmp(r->times[i].point, need[k]) && r->times[i].runs >= 1 && r->times[i].seconds >= 0;
		if (!found)
			fail_msg("no timing for %s", need[k]);
	}
	sk_decision_unref(r);
	free(v);
}

/* Unschedulable on every node: every node's reason is in the record. */
static void test_unschedulable_every_reason(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_beh[TK_A].filter_all = true;
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].filter_reason = "Insufficient cpu";
	start_sched(120, true, 0);
	add_pods(1, "big");
	assert_int_equal(sk_schedule_one(sched, false), 1);
	struct sk_decision **v = NULL;
	assert_int_equal(sk_decisions_pod(store, "default", "big0", &v), 1);
	assert_int_equal(v[0]->result, SK_RESULT_UNSCHEDULABLE);
	assert_int_equal(v[0]->nfilter, 120);
	assert_string_equal(v[0]->message, "0/120 nodes are available: 120 Insufficient cpu.");
	cJSON *j = sk_decision_json(v[0]);
	expect_num(j, "reasons.0.count", 120);
	cJSON_Delete(j);
	sk_decision_unref(v[0]);
	free(v);
}

static int group_setup(void **state)
{
	(void)state;
	setenv("SK_POOL_THREADS", "4", 1);
	pool = sk_pool_new(16, NULL);
	unsetenv("SK_POOL_THREADS");
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
		cmocka_unit_test(test_bounds_table),
		cmocka_unit_test(test_bytes_accounting),
		cmocka_unit_test(test_pod_and_recent_filters),
		cmocka_unit_test(test_record_json),
		cmocka_unit_test(test_candidates),
		cmocka_unit_test(test_tie_and_unscored),
		cmocka_unit_test(test_config_field_table),
		cmocka_unit_test(test_annotations_small),
		cmocka_unit_test(test_annotations_limits_table),
		cmocka_unit_test(test_summary_window),
		cmocka_unit_test(test_summary_top),
		T(test_profile_switch_off),
		T(test_parallel_attempts_recorded),
		T(test_unschedulable_every_reason),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
