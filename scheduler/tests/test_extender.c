/* Tests for scheduler/framework/extender.c and the extender steps of schedule_one.c, against the fake
 * extender (fake_extender.h): wire format of each verb (exact keys), response decoding, errors
 * and timeouts, ignorable ordering, weight arithmetic, managedResources, nodeCacheCapable, and in
 * the scheduling cycle: filter narrowing and FitError reasons (U vs UU), Error vs ignorable,
 * numFeasibleNodesToFind with extenders, prioritize totals, bind delegation and its errors,
 * profile-level extenders. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <unistd.h>

#include "scheduler/framework/extender.h"
#include "scheduler/schedule_one.h"
#include "scheduler/tests/fake_extender.h"
#include "scheduler/tests/fixtures.h"
#include "scheduler/tests/testkit.h"

static struct fe_server *fe;
static struct sk_config cfg = { .parallelism = 4, .percentage_of_nodes_to_score = 0 };
static struct sk_pool *pool;
static struct sk_snapshot *snap;
static struct sk_scheduler *sched;
static struct tk_profile prof;
static int forgotten, finished;
static char last_event[2048], last_patch[2048], last_node[64], last_msg[2048];
static enum sk_result last_result;
/* outcome details */
static int nfilter;
static char filter_node[8][32];
static enum sk_code filter_code[8];
static char filter_plugin[8][32];
static int nscore;
static char score_node[8][32];
static int64_t score_total[8];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* ---------- harness ---------- */

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
static int forget(void *ctx, const struct sk_pod *p, char **err)
{
	(void)ctx;
	(void)p;
	(void)err;
	forgotten++;
	return 0;
}
static int finish(void *ctx, const struct sk_pod *p, char **err)
{
	(void)ctx;
	(void)p;
	(void)err;
	finished++;
	return 0;
}
static void patch(void *ctx, const struct sk_pod *pod, const char *reason, const char *message, bool nominate,
		  const char *nominated)
{
	(void)ctx;
	(void)pod;
	(void)nominate;
	(void)nominated;
	snprintf(last_patch, sizeof(last_patch), "%s: %s", reason, message);
}
static void observe(void *ctx, const struct sk_outcome *o)
{
	(void)ctx;
	last_result = o->result;
	snprintf(last_node, sizeof(last_node), "%s", o->node ? o->node : "");
	snprintf(last_msg, sizeof(last_msg), "%s", o->message ? o->message : "");
	nfilter = o->nfilter < 8 ? o->nfilter : 8;
	for (int i = 0; i < nfilter; i++) {
		snprintf(filter_node[i], sizeof(filter_node[i]), "%s", o->filter[i].node);
		snprintf(filter_plugin[i], sizeof(filter_plugin[i]), "%s", o->filter[i].plugin);
		filter_code[i] = o->filter[i].status->code;
	}
	nscore = 0;
	if (o->scores) {
		nscore = o->scores->nnodes < 8 ? o->scores->nnodes : 8;
		for (int i = 0; i < nscore; i++) {
			snprintf(score_node[i], sizeof(score_node[i]), "%s", o->score_nodes[i]);
			score_total[i] = o->scores->total[i];
		}
	}
}
static struct sk_pod *get_pod(void *ctx, const struct sk_pod *pod)
{
	(void)ctx;
	return sk_pod_ref((struct sk_pod *)pod);
}

static void make_nodes(int n)
{
	sk_snapshot_free(snap);
	struct sk_node_info *nis[8];
	for (int i = 0; i < n; i++) {
		char text[160];
		snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"n%d\",\"labels\":{\"idx\":\"%d\"}}}", i + 1, i + 1);
		nis[i] = fx_node_info(fx_node(text), NULL);
	}
	snap = fx_snapshot_of(nis, n);
}

/* cfg.extenders from JSON text with every "URL" replaced by the fake's URL. */
static cJSON *ext_json(const char *text)
{
	char buf[4096];
	size_t o = 0;
	for (const char *t = text; *t && o < sizeof(buf) - 64;) {
		if (strncmp(t, "URL", 3) == 0) {
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s", fe_url(fe));
			t += 3;
		} else {
			buf[o++] = *t++;
		}
	}
	buf[o] = '\0';
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(j);
	return j;
}

static void start_with(const char *top, const char *profile_ext)
{
	cJSON_Delete(cfg.extenders);
	cJSON_Delete(prof.p.extenders);
	cfg.extenders = top ? ext_json(top) : NULL;
	prof.p.extenders = profile_ext ? ext_json(profile_ext) : NULL;
	struct sk_sched_env env = { .update_snapshot = update_snapshot, .forget = forget, .finish_binding = finish,
				    .patch_failure = patch, .observe = observe, .want_details = true, .seed = 7,
				    .get_pod = get_pod };
	char *err = NULL;
	sched = sk_scheduler_new(&env, &err);
	assert_non_null(sched);
	struct sk_framework_env fenv = { .pool = pool, .snapshot = fw_snapshot, .event = fw_event };
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
	forgotten = finished = nfilter = nscore = 0;
	last_event[0] = last_patch[0] = last_node[0] = last_msg[0] = '\0';
	fe = fe_start();
	assert_non_null(fe);
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
	fe_stop(fe);
	fe = NULL;
	cJSON_Delete(cfg.extenders);
	cfg.extenders = NULL;
	cJSON_Delete(prof.p.extenders);
	prof.p.extenders = NULL;
	return 0;
}

static struct sk_pod *queue_pod(const char *name, const char *resources)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\",\"labels\":{\"app\":\"x\"}},"
		 "\"spec\":{\"priority\":3,\"containers\":[{\"name\":\"c\"%s}]}}",
		 name, name, resources ? resources : "");
	struct sk_pod *p = fx_pod(text);
	assert_int_equal(sk_queue_add(sk_scheduler_queue(sched), p), 0);
	return p;
}

static void run_one(void) { assert_int_equal(sk_schedule_one(sched, false), 1); }

/* Sorted keys of a JSON object, space separated. */
static void keys_of(const cJSON *o, char *buf, size_t n)
{
	const char *k[16];
	int nk = 0;
	for (const cJSON *x = o ? o->child : NULL; x && nk < 16; x = x->next)
		k[nk++] = x->string;
	for (int i = 1; i < nk; i++)
		for (int j = i; j > 0 && strcmp(k[j - 1], k[j]) > 0; j--) {
			const char *t = k[j];
			k[j] = k[j - 1];
			k[j - 1] = t;
		}
	buf[0] = '\0';
	for (int i = 0; i < nk; i++)
		snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? " " : "", k[i]);
}

static struct sk_extender *new_ext(const char *text)
{
	cJSON *j = ext_json(text);
	char *err = NULL;
	struct sk_extender *e = sk_extender_new(j, "extenders[0]", &err);
	if (!e)
		fail_msg("%s", err);
	cJSON_Delete(j);
	return e;
}

/* The snapshot's nodes as a list. */
static const struct sk_node_info *const *all_nodes(void) { return (const struct sk_node_info *const *)snap->nodes; }

/* ---------- the client ---------- */

static void test_config_defaults_and_ordering(void **state)
{
	(void)state;
	struct sk_extender *e = new_ext("{\"urlPrefix\":\"URL/sched//\",\"filterVerb\":\"filter\"}");
	assert_int_equal(sk_extender_timeout_ms(e), SK_DEFAULT_EXTENDER_TIMEOUT_MS);
	assert_true(sk_extender_is_filter(e));
	assert_false(sk_extender_is_prioritizer(e));
	assert_false(sk_extender_is_binder(e));
	assert_false(sk_extender_is_ignorable(e));
	assert_false(sk_extender_node_cache_capable(e));
	sk_extender_free(e);
	e = new_ext("{\"urlPrefix\":\"URL\",\"httpTimeout\":\"1m30s\",\"prioritizeVerb\":\"p\",\"weight\":3,"
		    "\"nodeCacheCapable\":true,\"ignorable\":true,\"bindVerb\":\"b\"}");
	assert_int_equal(sk_extender_timeout_ms(e), 90000);
	assert_int_equal(sk_extender_weight(e), 3);
	assert_true(sk_extender_is_prioritizer(e) && sk_extender_is_binder(e) && sk_extender_is_ignorable(e) &&
		    sk_extender_node_cache_capable(e));
	sk_extender_free(e);
	sk_extender_free(NULL);

	/* top-level then profile, ignorable ones moved last, order kept within each group */
	cJSON *top = cJSON_Parse("[{\"urlPrefix\":\"http://a\",\"ignorable\":true},{\"urlPrefix\":\"http://b\"}]");
	cJSON *pr = cJSON_Parse("[{\"urlPrefix\":\"http://c\",\"ignorable\":true},{\"urlPrefix\":\"http://d\"}]");
	struct sk_extender **l = NULL;
	char *err = NULL;
	assert_int_equal(sk_extenders_build(top, pr, &l, &err), 4);
	assert_string_equal(sk_extender_name(l[0]), "http://b");
	assert_string_equal(sk_extender_name(l[1]), "http://d");
	assert_string_equal(sk_extender_name(l[2]), "http://a");
	assert_string_equal(sk_extender_name(l[3]), "http://c");
	sk_extenders_free(l, 4);
	assert_int_equal(sk_extenders_build(NULL, NULL, &l, &err), 0);
	assert_null(l);
	/* a bad entry fails the build with its path */
	cJSON *bad = cJSON_Parse("[{\"urlPrefix\":\"http://a\"},{\"filterVerb\":\"f\"}]");
	assert_int_equal(sk_extenders_build(bad, NULL, &l, &err), -1);
	assert_string_equal(err, "extenders[1].urlPrefix: Required value");
	free(err);
	cJSON *badca = cJSON_Parse("[{\"urlPrefix\":\"http://a\",\"tlsConfig\":{\"caData\":\"!!!\"}}]");
	err = NULL;
	assert_int_equal(sk_extenders_build(NULL, badca, &l, &err), -1);
	assert_string_equal(err, "profile extenders[0].tlsConfig.caData: invalid base64 data");
	free(err);
	cJSON_Delete(top);
	cJSON_Delete(pr);
	cJSON_Delete(bad);
	cJSON_Delete(badca);
}

static void test_filter_wire_format_full_nodes(void **state)
{
	(void)state;
	start_with(NULL, NULL);
	struct sk_extender *e = new_ext("{\"urlPrefix\":\"URL/sched/\",\"filterVerb\":\"filter\"}");
	fe_respond(fe, "/sched/filter", 200,
		   "{\"Nodes\":{\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"n3\"}},{\"metadata\":{\"name\":\"n1\"}}]},"
		   "\"NodeNames\":null,\"FailedNodes\":{\"n2\":\"busy\"},\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}",
		   0);
	struct sk_pod *pod = fx_pod("{\"metadata\":{\"name\":\"p\",\"namespace\":\"team\",\"uid\":\"u1\",\"labels\":"
				    "{\"app\":\"x\"}},\"spec\":{\"schedulerName\":\"s1\",\"priority\":7,"
				    "\"nodeSelector\":{\"disk\":\"ssd\"},\"containers\":[{\"name\":\"c\"}]}}");
	struct sk_extender_filter_result r;
	char *err = NULL;
	assert_int_equal(sk_extender_filter(e, pod, all_nodes(), 3, &r, &err), 0);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.nodes[0]->node->name, "n3");
	assert_string_equal(r.nodes[1]->node->name, "n1");
	assert_int_equal(r.nfailed, 1);
	assert_string_equal(r.failed[0].node, "n2");
	assert_string_equal(r.failed[0].message, "busy");
	assert_false(r.failed[0].unresolvable);
	sk_extender_filter_result_free(&r);

	assert_int_equal(fe_count(fe, "/sched/filter"), 1);
	char *ct = fe_last_content_type(fe);
	assert_string_equal(ct, "application/json");
	free(ct);
	cJSON *body = fe_body(fe, "/sched/filter", -1);
	char keys[256];
	keys_of(body, keys, sizeof(keys));
	assert_string_equal(keys, "NodeNames Nodes Pod");
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(body, "NodeNames")));
	char *nodes = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(body, "Nodes"));
	assert_string_equal(nodes, "{\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"n1\",\"labels\":{\"idx\":\"1\"}}},"
				   "{\"metadata\":{\"name\":\"n2\",\"labels\":{\"idx\":\"2\"}}},"
				   "{\"metadata\":{\"name\":\"n3\",\"labels\":{\"idx\":\"3\"}}}]}");
	free(nodes);
	char *p = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(body, "Pod"));
	/* the object as decoded (full v1.Pod), not a rebuilt subset */
	assert_string_equal(p, "{\"metadata\":{\"name\":\"p\",\"namespace\":\"team\",\"uid\":\"u1\",\"labels\":{\"app\":\"x\"}},"
			       "\"spec\":{\"schedulerName\":\"s1\",\"priority\":7,\"nodeSelector\":{\"disk\":\"ssd\"},"
			       "\"containers\":[{\"name\":\"c\"}]}}");
	free(p);
	cJSON_Delete(body);

	/* Nodes naming a node that was not sent: error */
	fe_respond(fe, "/sched/filter", 200, "{\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"zz\"}}]}}", 0);
	assert_int_equal(sk_extender_filter(e, pod, all_nodes(), 3, &r, &err), -1);
	assert_non_null(strstr(err, "claims a filtered node \"zz\" which is not found in the input node list"));
	free(err);
	/* a non-cache-capable extender answering NodeNames only: nothing kept (rule 4) */
	fe_respond(fe, "/sched/filter", 200, "{\"NodeNames\":[\"n1\"]}", 0);
	assert_int_equal(sk_extender_filter(e, pod, all_nodes(), 3, &r, &err), 0);
	assert_int_equal(r.n, 0);
	sk_extender_filter_result_free(&r);
	/* {} rejects every node */
	fe_respond(fe, "/sched/filter", 200, "{}", 0);
	assert_int_equal(sk_extender_filter(e, pod, all_nodes(), 3, &r, &err), 0);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.nfailed, 0);
	sk_extender_filter_result_free(&r);
	sk_pod_unref(pod);
	sk_extender_free(e);
}

static void test_filter_cache_capable_and_case_insensitive_keys(void **state)
{
	(void)state;
	start_with(NULL, NULL);
	struct sk_extender *e = new_ext("{\"urlPrefix\":\"URL\",\"filterVerb\":\"f/x\",\"nodeCacheCapable\":true}");
	/* lower-case keys are accepted (Go's decoder); unresolvable wins over failed */
	fe_respond(fe, "/f/x", 200,
		   "{\"nodenames\":[\"n2\"],\"failedNodes\":{\"n1\":\"busy\",\"n3\":\"x\"},"
		   "\"failedandunresolvablenodes\":{\"n3\":\"no hardware\"},\"unknownKey\":1}",
		   0);
	struct sk_pod *pod = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	struct sk_extender_filter_result r;
	char *err = NULL;
	assert_int_equal(sk_extender_filter(e, pod, all_nodes(), 3, &r, &err), 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.nodes[0]->node->name, "n2");
	assert_int_equal(r.nfailed, 2);
	for (int i = 0; i < 2; i++) {
		if (strcmp(r.failed[i].node, "n3") == 0) {
			assert_true(r.failed[i].unresolvable);
			assert_string_equal(r.failed[i].message, "no hardware");
		} else {
			assert_string_equal(r.failed[i].node, "n1");
			assert_false(r.failed[i].unresolvable);
		}
	}
	sk_extender_filter_result_free(&r);
	cJSON *body = fe_body(fe, "/f/x", -1);
	char *s = cJSON_PrintUnformatted(body);
	assert_string_equal(s, "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},\"spec\":"
			       "{\"containers\":[{\"name\":\"c\"}]}},\"Nodes\":null,"
			       "\"NodeNames\":[\"n1\",\"n2\",\"n3\"]}");
	free(s);
	cJSON_Delete(body);
	/* a name that was not sent */
	fe_respond(fe, "/f/x", 200, "{\"NodeNames\":[\"n9\"]}", 0);
	assert_int_equal(sk_extender_filter(e, pod, all_nodes(), 3, &r, &err), -1);
	assert_non_null(strstr(err, "claims a filtered node \"n9\""));
	free(err);
	sk_pod_unref(pod);
	sk_extender_free(e);
}

static void test_errors_and_timeout(void **state)
{
	(void)state;
	start_with(NULL, NULL);
	struct sk_extender *e = new_ext("{\"urlPrefix\":\"URL\",\"filterVerb\":\"filter\",\"httpTimeout\":\"200ms\"}");
	struct sk_pod *pod = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	struct sk_extender_filter_result r;
	char *err = NULL;
	char want[256];
	/* only 200 is success */
	fe_respond(fe, "/filter", 201, "{}", 0);
	assert_int_equal(sk_extender_filter(e, pod, all_nodes(), 3, &r, &err), -1);
	snprintf(want, sizeof(want), "failed filter with extender at URL %s/filter, code 201", fe_url(fe));
	assert_string_equal(err, want);
	free(err);
	/* unscripted: 404 */
	struct sk_extender *e404 = new_ext("{\"urlPrefix\":\"URL\",\"filterVerb\":\"nope\"}");
	assert_int_equal(sk_extender_filter(e404, pod, all_nodes(), 3, &r, &err), -1);
	assert_non_null(strstr(err, "code 404"));
	free(err);
	sk_extender_free(e404);
	/* Error field */
	fe_respond(fe, "/filter", 200, "{\"Error\":\"extender is sad\"}", 0);
	assert_int_equal(sk_extender_filter(e, pod, all_nodes(), 3, &r, &err), -1);
	assert_string_equal(err, "extender is sad");
	free(err);
	/* not an object */
	fe_respond(fe, "/filter", 200, "[\"n1\"]", 0);
	assert_int_equal(sk_extender_filter(e, pod, all_nodes(), 3, &r, &err), -1);
	assert_non_null(strstr(err, "expected an ExtenderFilterResult"));
	free(err);
	/* bad JSON */
	fe_respond(fe, "/filter", 200, "{not json", 0);
	assert_int_equal(sk_extender_filter(e, pod, all_nodes(), 3, &r, &err), -1);
	assert_non_null(strstr(err, "invalid JSON response"));
	free(err);
	/* timeout (the fake waits 10s; the client gives up after 200ms) */
	fe_respond(fe, "/filter", 200, "{}", 10000);
	assert_int_equal(sk_extender_filter(e, pod, all_nodes(), 3, &r, &err), -1);
	if (!strstr(err, "timed out"))
		fail_msg("%s", err);
	free(err);
	/* connection refused */
	cJSON *j = cJSON_Parse("{\"urlPrefix\":\"http://127.0.0.1:1\",\"filterVerb\":\"f\"}");
	struct sk_extender *dead = sk_extender_new(j, NULL, &err);
	cJSON_Delete(j);
	assert_int_equal(sk_extender_filter(dead, pod, all_nodes(), 3, &r, &err), -1);
	assert_non_null(strstr(err, "f: Post \"http://127.0.0.1:1/f\""));
	free(err);
	sk_extender_free(dead);
	/* no filterVerb: input passes unchanged without a call */
	struct sk_extender *none = new_ext("{\"urlPrefix\":\"URL\"}");
	int before = fe_count(fe, NULL);
	assert_int_equal(sk_extender_filter(none, pod, all_nodes(), 3, &r, &err), 0);
	assert_int_equal(r.n, 3);
	assert_int_equal(fe_count(fe, NULL), before);
	sk_extender_filter_result_free(&r);
	sk_extender_free(none);
	sk_pod_unref(pod);
	sk_extender_free(e);
}

static void test_prioritize_weight_arithmetic(void **state)
{
	(void)state;
	start_with(NULL, NULL);
	struct sk_extender *e =
		new_ext("{\"urlPrefix\":\"URL\",\"prioritizeVerb\":\"prio\",\"weight\":2,\"nodeCacheCapable\":true}");
	/* unknown hosts ignored, duplicates each added, no clamping */
	fe_respond(fe, "/prio", 200,
		   "[{\"Host\":\"n1\",\"Score\":5},{\"Host\":\"zz\",\"Score\":9},{\"host\":\"n3\",\"score\":1},"
		   "{\"Host\":\"n3\",\"Score\":1},{\"Host\":\"n2\",\"Score\":11}]",
		   0);
	struct sk_pod *pod = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	int64_t add[3] = { 1, 0, 0 };
	char *err = NULL;
	assert_int_equal(sk_extender_prioritize(e, pod, all_nodes(), 3, add, &err), 0);
	assert_int_equal(add[0], 1 + 5 * 2 * 10);
	assert_int_equal(add[1], 11 * 2 * 10);
	assert_int_equal(add[2], 2 * (1 * 2 * 10));
	cJSON *body = fe_body(fe, "/prio", -1);
	char keys[128];
	keys_of(body, keys, sizeof(keys));
	assert_string_equal(keys, "NodeNames Nodes Pod");
	cJSON_Delete(body);
	/* not an array: error, add untouched */
	fe_respond(fe, "/prio", 200, "{\"Host\":\"n1\"}", 0);
	assert_int_equal(sk_extender_prioritize(e, pod, all_nodes(), 3, add, &err), -1);
	free(err);
	assert_int_equal(add[0], 101);
	sk_pod_unref(pod);
	sk_extender_free(e);
}

/* Found by scheduler/fuzz/fuzz_extender.c: a huge Score overflowed Score x weight x 10 (undefined
 * behaviour in C; UBSan aborts under `make asan`). Upstream's int64 arithmetic wraps: so does ours.
 * The scores are exact doubles: the response is parsed without the raw number text. */
static void test_prioritize_huge_score_wraps(void **state)
{
	(void)state;
	start_with(NULL, NULL);
	struct sk_extender *e = new_ext("{\"urlPrefix\":\"URL\",\"prioritizeVerb\":\"prio\",\"weight\":2}");
	fe_respond(fe, "/prio", 200,
		   "[{\"Host\":\"n3\",\"Score\":0000000007428453051932635136},"
		   "{\"Host\":\"n1\",\"Score\":3458764513820540928}]",
		   0);
	struct sk_pod *pod = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	int64_t add[3] = { 0, 0, 1 };
	char *err = NULL;
	assert_int_equal(sk_extender_prioritize(e, pod, all_nodes(), 3, add, &err), 0);
	assert_int_equal(add[0], -4611686018427387904);  /* 3 * 2^60 * 20 mod 2^64 */
	assert_int_equal(add[1], 0);
	assert_int_equal(add[2], 1 + 995108448976289792); /* 7428453051932635136 * 20 mod 2^64, + 1 */
	sk_pod_unref(pod);
	sk_extender_free(e);
}

static void test_bind_wire_format(void **state)
{
	(void)state;
	start_with(NULL, NULL);
	struct sk_extender *e = new_ext("{\"urlPrefix\":\"URL\",\"bindVerb\":\"bind\"}");
	struct sk_pod *pod = fx_pod("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns1\",\"uid\":\"u-9\"},"
				    "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	fe_respond(fe, "/bind", 200, "{\"Error\":\"\"}", 0);
	char *err = NULL;
	assert_int_equal(sk_extender_bind(e, pod, "n2", &err), 0);
	cJSON *body = fe_body(fe, "/bind", -1);
	char *s = cJSON_PrintUnformatted(body);
	assert_string_equal(s, "{\"PodName\":\"p\",\"PodNamespace\":\"ns1\",\"PodUID\":\"u-9\",\"Node\":\"n2\"}");
	free(s);
	cJSON_Delete(body);
	fe_respond(fe, "/bind", 200, "{\"Error\":\"node n2 is draining\"}", 0);
	assert_int_equal(sk_extender_bind(e, pod, "n2", &err), -1);
	assert_string_equal(err, "node n2 is draining");
	free(err);
	sk_pod_unref(pod);
	sk_extender_free(e);
}

static void test_managed_resources_interest(void **state)
{
	(void)state;
	start_with(NULL, NULL);
	struct sk_extender *e = new_ext("{\"urlPrefix\":\"URL\",\"managedResources\":[{\"name\":\"example.com/fpga\"},"
					"{\"name\":\"example.com/gpu\",\"ignoredByScheduler\":true}]}");
	struct sk_extender *all = new_ext("{\"urlPrefix\":\"URL\"}");
	struct sk_pod *plain = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
				      "\"resources\":{\"requests\":{\"cpu\":\"1\",\"example.com/other\":\"1\"}}}]}}");
	struct sk_pod *req = fx_pod("{\"metadata\":{\"name\":\"q\"},\"spec\":{\"containers\":[{\"name\":\"c\","
				    "\"resources\":{\"requests\":{\"example.com/gpu\":\"2\"}}}]}}");
	struct sk_pod *init = fx_pod("{\"metadata\":{\"name\":\"r\"},\"spec\":{\"initContainers\":[{\"name\":\"i\","
				     "\"resources\":{\"requests\":{\"example.com/fpga\":\"1\"}}}],"
				     "\"containers\":[{\"name\":\"c\"}]}}");
	assert_false(sk_extender_is_interested(e, plain));
	assert_true(sk_extender_is_interested(e, req));
	assert_true(sk_extender_is_interested(e, init));
	assert_true(sk_extender_is_interested(all, plain));
	sk_pod_unref(plain);
	sk_pod_unref(req);
	sk_pod_unref(init);
	sk_extender_free(e);
	sk_extender_free(all);
}

/* ---------- TLS ---------- */

static char *b64_file(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	unsigned char in[8192];
	size_t n = fread(in, 1, sizeof(in), f);
	fclose(f);
	char *out = malloc(4 * ((n + 2) / 3) + 1);
	assert_non_null(out);
	EVP_EncodeBlock((unsigned char *)out, in, (int)n);
	return out;
}

/* Runs a cache-capable filter against url with `extra` spliced into the extender config. */
static int tls_filter(const char *url, const char *extra, char **err)
{
	char text[16384];
	snprintf(text, sizeof(text), "{\"urlPrefix\":\"%s\",\"filterVerb\":\"filter\",\"nodeCacheCapable\":true%s}", url,
		 extra);
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	struct sk_extender *e = sk_extender_new(j, NULL, err);
	cJSON_Delete(j);
	assert_non_null(e);
	struct sk_pod *pod = fx_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	struct sk_extender_filter_result r;
	*err = NULL;
	int rc = sk_extender_filter(e, pod, all_nodes(), 3, &r, err);
	if (rc == 0) {
		assert_int_equal(r.n, 1);
		assert_string_equal(r.nodes[0]->node->name, "n1");
		sk_extender_filter_result_free(&r);
	}
	sk_pod_unref(pod);
	sk_extender_free(e);
	return rc;
}

static void expect_tls(const char *url, const char *extra, bool ok)
{
	char *err = NULL;
	int rc = tls_filter(url, extra, &err);
	if (ok && rc != 0)
		fail_msg("expected success with %s: %s", extra, err ? err : "");
	if (!ok && rc == 0)
		fail_msg("expected a TLS failure with %s", extra);
	free(err);
}

static void test_tls_config(void **state)
{
	(void)state;
	char dir[] = "/tmp/sk-extender-test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char srv_crt[128], srv_key[128], cli_crt[128], cli_key[128], oth_crt[128], oth_key[128];
	snprintf(srv_crt, sizeof(srv_crt), "%s/srv.crt", dir);
	snprintf(srv_key, sizeof(srv_key), "%s/srv.key", dir);
	snprintf(cli_crt, sizeof(cli_crt), "%s/cli.crt", dir);
	snprintf(cli_key, sizeof(cli_key), "%s/cli.key", dir);
	snprintf(oth_crt, sizeof(oth_crt), "%s/oth.crt", dir);
	snprintf(oth_key, sizeof(oth_key), "%s/oth.key", dir);
	assert_int_equal(fe_make_cert(srv_crt, srv_key, "extender"), 0);
	assert_int_equal(fe_make_cert(cli_crt, cli_key, "scheduler"), 0);
	assert_int_equal(fe_make_cert(oth_crt, oth_key, "other"), 0);
	char *srv_b64 = b64_file(srv_crt), *oth_b64 = b64_file(oth_crt), *cli_b64 = b64_file(cli_crt),
	     *key_b64 = b64_file(cli_key);
	char extra[16384];

	struct fe_server *tls = fe_start_tls(srv_crt, srv_key, NULL);
	assert_non_null(tls);
	fe_respond(tls, "/filter", 200, "{\"NodeNames\":[\"n1\"]}", 0);
	const char *url = fe_url(tls);
	assert_int_equal(strncmp(url, "https://", 8), 0);
	/* enableHTTPS without a CA: no server verification (upstream) */
	expect_tls(url, ",\"enableHTTPS\":true", true);
	/* verification against the system roots fails for a self-signed server */
	expect_tls(url, ",\"tlsConfig\":{}", false);
	expect_tls(url, ",\"enableHTTPS\":true,\"tlsConfig\":{\"caFile\":\"/nonexistent/ca.crt\"}", false);
	snprintf(extra, sizeof(extra), ",\"enableHTTPS\":true,\"tlsConfig\":{\"caFile\":\"%s\"}", srv_crt);
	expect_tls(url, extra, true);
	snprintf(extra, sizeof(extra), ",\"tlsConfig\":{\"caData\":\"%s\"}", srv_b64);
	expect_tls(url, extra, true);
	snprintf(extra, sizeof(extra), ",\"tlsConfig\":{\"caData\":\"%s\"}", oth_b64);
	expect_tls(url, extra, false);
	/* caData wins over caFile */
	snprintf(extra, sizeof(extra), ",\"tlsConfig\":{\"caData\":\"%s\",\"caFile\":\"%s\"}", srv_b64, oth_crt);
	expect_tls(url, extra, true);
	expect_tls(url, ",\"tlsConfig\":{\"insecure\":true}", true);
	assert_int_equal(fe_count(tls, "/filter"), 5);
	fe_stop(tls);

	/* the server requires a client certificate signed by cli.crt */
	tls = fe_start_tls(srv_crt, srv_key, cli_crt);
	assert_non_null(tls);
	fe_respond(tls, "/filter", 200, "{\"NodeNames\":[\"n1\"]}", 0);
	url = fe_url(tls);
	snprintf(extra, sizeof(extra), ",\"tlsConfig\":{\"caFile\":\"%s\"}", srv_crt);
	expect_tls(url, extra, false);
	snprintf(extra, sizeof(extra), ",\"tlsConfig\":{\"caFile\":\"%s\",\"certFile\":\"%s\",\"keyFile\":\"%s\"}", srv_crt,
		 cli_crt, cli_key);
	expect_tls(url, extra, true);
	snprintf(extra, sizeof(extra), ",\"tlsConfig\":{\"caData\":\"%s\",\"certData\":\"%s\",\"keyData\":\"%s\"}", srv_b64,
		 cli_b64, key_b64);
	expect_tls(url, extra, true);
	assert_int_equal(fe_count(tls, "/filter"), 2);
	fe_stop(tls);

	free(srv_b64);
	free(oth_b64);
	free(cli_b64);
	free(key_b64);
	const char *files[] = { srv_crt, srv_key, cli_crt, cli_key, oth_crt, oth_key };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	rmdir(dir);
}

/* ---------- in the scheduling cycle ---------- */

static void test_cycle_filter_narrows_and_sees_all_nodes(void **state)
{
	(void)state;
	/* no Score plugins: without the extender one feasible node would be enough; with a filter
	 * extender every node is filtered and sent */
	start_with("[{\"urlPrefix\":\"URL\",\"filterVerb\":\"filter\",\"nodeCacheCapable\":true}]", NULL);
	fe_respond(fe, "/filter", 200, "{\"NodeNames\":[\"n3\"],\"FailedNodes\":{\"n1\":\"busy\",\"n2\":\"busy\"}}", 0);
	struct sk_pod *p = queue_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(last_node, "n3");
	cJSON *body = fe_body(fe, "/filter", -1);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(body, "NodeNames")), 3);
	cJSON_Delete(body);
	assert_string_equal(tk_log, "D.bind(n3) ");
	sk_pod_unref(p);
}

static void test_cycle_fit_error_reasons_u_and_uu(void **state)
{
	(void)state;
	tk_profile_add(&prof, SK_EP_FILTER, TK_A, 0);
	tk_beh[TK_A].filter_nodes[0] = "n1";
	tk_beh[TK_A].filter = SK_UNSCHEDULABLE;
	tk_beh[TK_A].filter_reason = "plugin says no";
	start_with("[{\"urlPrefix\":\"URL\",\"filterVerb\":\"filter\"}]", NULL);
	fe_respond(fe, "/filter", 200,
		   "{\"Nodes\":{\"items\":[]},\"FailedNodes\":{\"n2\":\"no free FPGA slot\",\"n3\":\"ignored\"},"
		   "\"FailedAndUnresolvableNodes\":{\"n3\":\"node has no FPGA hardware\"}}",
		   0);
	struct sk_pod *p = queue_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	assert_string_equal(last_msg, "0/3 nodes are available: 1 no free FPGA slot, 1 node has no FPGA hardware, "
				      "1 plugin says no.");
	assert_string_equal(last_patch, "Unschedulable: 0/3 nodes are available: 1 no free FPGA slot, 1 node has no "
					"FPGA hardware, 1 plugin says no.");
	/* the extender saw only the nodes the plugins passed */
	cJSON *body = fe_body(fe, "/filter", -1);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
				 cJSON_GetObjectItemCaseSensitive(body, "Nodes"), "items")),
			 2);
	cJSON_Delete(body);
	assert_int_equal(nfilter, 3);
	for (int i = 0; i < nfilter; i++) {
		if (strcmp(filter_node[i], "n1") == 0) {
			assert_int_equal(filter_code[i], SK_UNSCHEDULABLE);
			assert_string_equal(filter_plugin[i], "TestA");
		} else if (strcmp(filter_node[i], "n2") == 0) {
			assert_int_equal(filter_code[i], SK_UNSCHEDULABLE);
			assert_string_equal(filter_plugin[i], SK_EXTENDER_NAME);
		} else {
			assert_string_equal(filter_node[i], "n3");
			assert_int_equal(filter_code[i], SK_UNSCHEDULABLE_AND_UNRESOLVABLE);
		}
	}
	/* "Extender" is a rejector with a wildcard hint: any event requeues the pod */
	struct sk_framework *fw = sk_scheduler_framework(sched, "default-scheduler");
	struct sk_cluster_event ev = { .resource = SK_EV_NODE, .action = SK_ACT_ADD, .label = "NodeAdd" };
	assert_int_equal(sk_fw_queueing_hint(fw, SK_EXTENDER_NAME, &ev, p, NULL, NULL), SK_QUEUE);
	sk_framework_unref(fw);
	sk_pod_unref(p);
}

static void test_cycle_filter_error_vs_ignorable(void **state)
{
	(void)state;
	start_with("[{\"urlPrefix\":\"URL/a\",\"filterVerb\":\"filter\"}]", NULL);
	fe_respond(fe, "/a/filter", 500, "boom", 0);
	struct sk_pod *p = queue_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_ERROR);
	char want[256];
	snprintf(want, sizeof(want), "SchedulerError: failed filter with extender at URL %s/a/filter, code 500",
		 fe_url(fe));
	assert_string_equal(last_patch, want);
	assert_int_equal(finished, 0);
	sk_scheduler_free(sched);
	sched = NULL;
	sk_pod_unref(p);

	/* the failing extender is ignorable (listed first, moved last): skipped; the other one narrows */
	start_with("[{\"urlPrefix\":\"URL/a\",\"filterVerb\":\"filter\",\"ignorable\":true,\"httpTimeout\":\"100ms\"},"
		   "{\"urlPrefix\":\"URL/b\",\"filterVerb\":\"filter\",\"nodeCacheCapable\":true}]",
		   NULL);
	fe_respond(fe, "/a/filter", 200, "{}", 10000); /* times out */
	fe_respond(fe, "/b/filter", 200, "{\"NodeNames\":[\"n2\",\"n3\"]}", 0);
	p = queue_pod("q", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_true(strcmp(last_node, "n2") == 0 || strcmp(last_node, "n3") == 0);
	/* b ran first and a (ignorable, last) got b's output */
	cJSON *body = fe_body(fe, "/a/filter", -1);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
				 cJSON_GetObjectItemCaseSensitive(body, "Nodes"), "items")),
			 2);
	cJSON_Delete(body);
	sk_pod_unref(p);
}

static void test_cycle_prioritize_adds_to_totals(void **state)
{
	(void)state;
	/* plugin scores n1=60, n2=0, n3=50 (weight 1); extender weight 2: n2 5 -> +100, n3 1 -> +20 */
	tk_profile_add(&prof, SK_EP_SCORE, TK_A, 1);
	tk_beh[TK_A].score_nodes[0] = "n1";
	tk_beh[TK_A].score_of[0] = 60;
	tk_beh[TK_A].score_nodes[1] = "n3";
	tk_beh[TK_A].score_of[1] = 50;
	start_with("[{\"urlPrefix\":\"URL\",\"prioritizeVerb\":\"prioritize\",\"weight\":2}]", NULL);
	fe_respond(fe, "/prioritize", 200, "[{\"Host\":\"n2\",\"Score\":5},{\"Host\":\"n3\",\"Score\":1}]", 0);
	struct sk_pod *p = queue_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(last_node, "n2");
	assert_int_equal(nscore, 3);
	for (int i = 0; i < nscore; i++) {
		int64_t want = strcmp(score_node[i], "n1") == 0 ? 60 : strcmp(score_node[i], "n2") == 0 ? 100 : 70;
		assert_int_equal(score_total[i], want);
	}
	sk_pod_unref(p);

	/* a failing prioritizer is ignored (non-ignorable too): plugin totals decide */
	fe_respond(fe, "/prioritize", 500, "", 0);
	p = queue_pod("q", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(last_node, "n1");
	sk_pod_unref(p);
}

static void test_cycle_prioritize_without_score_plugins(void **state)
{
	(void)state;
	start_with("[{\"urlPrefix\":\"URL\",\"prioritizeVerb\":\"prioritize\",\"weight\":1}]", NULL);
	fe_respond(fe, "/prioritize", 200, "[{\"Host\":\"n3\",\"Score\":1}]", 0);
	struct sk_pod *p = queue_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(last_node, "n3");
	/* all three nodes were sent (no early stop at one feasible node) */
	cJSON *body = fe_body(fe, "/prioritize", -1);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
				 cJSON_GetObjectItemCaseSensitive(body, "Nodes"), "items")),
			 3);
	cJSON_Delete(body);
	sk_pod_unref(p);
}

static void test_cycle_single_node_skips_prioritize(void **state)
{
	(void)state;
	make_nodes(1);
	start_with("[{\"urlPrefix\":\"URL\",\"prioritizeVerb\":\"prioritize\",\"weight\":1}]", NULL);
	fe_respond(fe, "/prioritize", 200, "[]", 0);
	struct sk_pod *p = queue_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_int_equal(fe_count(fe, "/prioritize"), 0);
	sk_pod_unref(p);
}

static void test_cycle_bind_delegation(void **state)
{
	(void)state;
	make_nodes(1);
	start_with("[{\"urlPrefix\":\"URL\",\"bindVerb\":\"bind\"}]", NULL);
	fe_respond(fe, "/bind", 200, "{\"Error\":\"\"}", 0);
	struct sk_pod *p = queue_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(tk_log, ""); /* the Bind plugin did not run */
	assert_int_equal(fe_count(fe, "/bind"), 1);
	cJSON *body = fe_body(fe, "/bind", -1);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(body, "Node")->valuestring, "n1");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(body, "PodName")->valuestring, "p");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(body, "PodUID")->valuestring, "uid-p");
	cJSON_Delete(body);
	assert_string_equal(last_event, "Normal Scheduled Binding: Successfully assigned default/p to n1");
	assert_int_equal(finished, 1);
	sk_pod_unref(p);

	/* error path: the attempt fails with an Error, the assumed pod is forgotten */
	fe_respond(fe, "/bind", 200, "{\"Error\":\"binding rejected\"}", 0);
	p = queue_pod("q", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_ERROR);
	assert_string_equal(last_patch, "SchedulerError: binding rejected");
	assert_int_equal(forgotten, 1);
	assert_string_equal(tk_log, "");
	assert_int_equal(sk_queue_where_is(sk_scheduler_queue(sched), p->uid), SK_Q_ERROR_BACKOFF);
	sk_pod_unref(p);
}

static void test_cycle_bind_ignorable_and_uninterested(void **state)
{
	(void)state;
	make_nodes(1);
	start_with("[{\"urlPrefix\":\"URL\",\"bindVerb\":\"bind\",\"ignorable\":true}]", NULL);
	fe_respond(fe, "/bind", 503, "", 0);
	struct sk_pod *p = queue_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(tk_log, "D.bind(n1) "); /* fell back to the Bind plugin */
	assert_int_equal(fe_count(fe, "/bind"), 1);
	sk_pod_unref(p);
	sk_scheduler_free(sched);
	sched = NULL;

	/* managedResources: an uninterested binder is skipped, an interested one binds */
	tk_reset();
	fe_clear(fe);
	start_with("[{\"urlPrefix\":\"URL\",\"bindVerb\":\"bind\",\"managedResources\":[{\"name\":\"example.com/fpga\"}]}]",
		   NULL);
	fe_respond(fe, "/bind", 200, "{}", 0);
	p = queue_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_int_equal(fe_count(fe, "/bind"), 0);
	assert_string_equal(tk_log, "D.bind(n1) ");
	sk_pod_unref(p);
	tk_log[0] = '\0';
	p = queue_pod("q", ",\"resources\":{\"limits\":{\"example.com/fpga\":\"1\"},\"requests\":{\"example.com/fpga\":\"1\"}}");
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_int_equal(fe_count(fe, "/bind"), 1);
	assert_string_equal(tk_log, "");
	sk_pod_unref(p);
}

static void test_cycle_uninterested_filter_not_called(void **state)
{
	(void)state;
	start_with("[{\"urlPrefix\":\"URL\",\"filterVerb\":\"filter\",\"managedResources\":[{\"name\":\"example.com/fpga\"}]}]",
		   NULL);
	fe_respond(fe, "/filter", 200, "{}", 0); /* would reject everything */
	struct sk_pod *p = queue_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_int_equal(fe_count(fe, "/filter"), 0);
	sk_pod_unref(p);
	p = queue_pod("q", ",\"resources\":{\"requests\":{\"example.com/fpga\":\"1\"}}");
	run_one();
	assert_int_equal(last_result, SK_RESULT_UNSCHEDULABLE);
	assert_int_equal(fe_count(fe, "/filter"), 1);
	assert_string_equal(last_msg, "0/3 nodes are available:");
	sk_pod_unref(p);
}

static void test_cycle_nominated_node_goes_through_extenders(void **state)
{
	(void)state;
	start_with("[{\"urlPrefix\":\"URL\",\"filterVerb\":\"filter\",\"nodeCacheCapable\":true}]", NULL);
	/* the extender accepts the nominated node: it is the only candidate, one call with it alone */
	fe_respond(fe, "/filter", 200, "{\"NodeNames\":[\"n2\"]}", 0);
	const char *text = "{\"metadata\":{\"name\":\"nom\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
			   "\"status\":{\"nominatedNodeName\":\"n2\"}}";
	struct sk_pod *p = fx_pod(text);
	assert_int_equal(sk_queue_add(sk_scheduler_queue(sched), p), 0);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(last_node, "n2");
	assert_int_equal(fe_count(fe, "/filter"), 1);
	cJSON *body = fe_body(fe, "/filter", 0);
	char *s = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(body, "NodeNames"));
	assert_string_equal(s, "[\"n2\"]");
	free(s);
	cJSON_Delete(body);
	sk_pod_unref(p);

	/* the extender rejects the nominated node: the full pass runs and picks what it keeps */
	fe_respond(fe, "/filter", 200, "{\"NodeNames\":[\"n3\"]}", 0);
	fe_clear(fe);
	p = fx_pod(text);
	assert_int_equal(sk_queue_add(sk_scheduler_queue(sched), p), 0);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(last_node, "n3");
	assert_int_equal(fe_count(fe, "/filter"), 2);
	body = fe_body(fe, "/filter", 1);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(body, "NodeNames")), 3);
	cJSON_Delete(body);
	sk_pod_unref(p);
}

static void test_cycle_profile_extenders(void **state)
{
	(void)state;
	/* top-level + profile-level both apply, top-level first */
	start_with("[{\"urlPrefix\":\"URL/top\",\"filterVerb\":\"filter\",\"nodeCacheCapable\":true}]",
		   "[{\"urlPrefix\":\"URL/prof\",\"filterVerb\":\"filter\",\"nodeCacheCapable\":true}]");
	fe_respond(fe, "/top/filter", 200, "{\"NodeNames\":[\"n1\",\"n2\"],\"FailedNodes\":{\"n3\":\"top\"}}", 0);
	fe_respond(fe, "/prof/filter", 200, "{\"NodeNames\":[\"n2\"],\"FailedNodes\":{\"n1\":\"prof\"}}", 0);
	struct sk_pod *p = queue_pod("p", NULL);
	run_one();
	assert_int_equal(last_result, SK_RESULT_SCHEDULED);
	assert_string_equal(last_node, "n2");
	cJSON *body = fe_body(fe, "/prof/filter", -1);
	char *s = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(body, "NodeNames"));
	assert_string_equal(s, "[\"n1\",\"n2\"]");
	free(s);
	cJSON_Delete(body);
	sk_pod_unref(p);
}

int main(void)
{
	pool = sk_pool_new(4, NULL);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_config_defaults_and_ordering, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filter_wire_format_full_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filter_cache_capable_and_case_insensitive_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_and_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prioritize_weight_arithmetic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prioritize_huge_score_wraps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bind_wire_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_managed_resources_interest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_filter_narrows_and_sees_all_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_fit_error_reasons_u_and_uu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_filter_error_vs_ignorable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_prioritize_adds_to_totals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_prioritize_without_score_plugins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_single_node_skips_prioritize, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_bind_delegation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_bind_ignorable_and_uninterested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_uninterested_filter_not_called, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_nominated_node_goes_through_extenders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_profile_extenders, setup, teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	sk_pool_free(pool);
	return rc;
}
