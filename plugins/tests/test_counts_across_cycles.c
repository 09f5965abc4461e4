/* InterPodAffinity and PodTopologySpread keep their counts across cycles (schedkit/node_memo.h,
 * docs/plugins.md "Counts across cycles"). This test schedules a table of pods one after the
 * other with one plugin instance and one snapshot updated in place from a cache (the memo sees
 * every cycle), binds each pod to its first feasible node, and compares each cycle's Filter codes
 * and Score values on every node with those of a fresh instance over a fresh snapshot (no memo):
 * they must be equal. The table mixes shapes so that the memo is kept (the same shape again),
 * reset (another shape), and sees nodes change, pods leave and nodes join. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_pts_util.h"

#define ANTI_HOST "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[" \
		  "{\"topologyKey\":\"kubernetes.io/hostname\",\"labelSelector\":{\"matchLabels\":{\"color\":\"green\"}}}]}}"
#define ANTI_ZONE "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[" \
		  "{\"topologyKey\":\"zone\",\"labelSelector\":{\"matchLabels\":{\"color\":\"green\"}}}]}}"
#define AFF_ZONE "\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[" \
		 "{\"topologyKey\":\"zone\",\"labelSelector\":{\"matchLabels\":{\"color\":\"blue\"}}}]}}"
#define PREF_BOTH "\"affinity\":{\"podAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[" \
		  "{\"weight\":3,\"podAffinityTerm\":{\"topologyKey\":\"zone\",\"labelSelector\":{\"matchLabels\":{\"color\":\"blue\"}}}}]}," \
		  "\"podAntiAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[" \
		  "{\"weight\":2,\"podAffinityTerm\":{\"topologyKey\":\"kubernetes.io/hostname\",\"labelSelector\":{\"matchLabels\":{\"color\":\"green\"}}}}]}}"
#define SPREAD_ZONE "\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"," \
		    "\"labelSelector\":{\"matchLabels\":{\"color\":\"red\"}}}]"
#define SPREAD_HOST "\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"kubernetes.io/hostname\",\"whenUnsatisfiable\":\"DoNotSchedule\"," \
		    "\"labelSelector\":{\"matchLabels\":{\"color\":\"red\"}}}]"

struct step {
	const char *labels, *spec; /* the pod scheduled */
	const char *ns;            /* NULL = default */
	const char *event;         /* before the pod: "remove <pod>", "node <name> <zone>", NULL */
	bool nobind;               /* the pod is not bound: the next cycle sees the same nodes */
};

static const struct step steps[] = {
	{ "color=green", ANTI_HOST, NULL, NULL, false },
	{ "color=green", ANTI_HOST, NULL, NULL, false },
	{ "color=green", ANTI_HOST, NULL, NULL, true },
	{ "color=green", ANTI_ZONE, NULL, NULL, true },
	{ "color=blue", AFF_ZONE, NULL, NULL, false },
	{ "color=blue", AFF_ZONE, NULL, NULL, false },
	{ "color=green", ANTI_HOST, NULL, "remove s1", false },
	{ "color=green", ANTI_HOST, "other", NULL, false },
	{ "color=blue", PREF_BOTH, NULL, NULL, false },
	{ "color=blue", PREF_BOTH, NULL, "node n6 z1", false },
	{ "color=green", PREF_BOTH, NULL, NULL, false },
	{ "color=red", SPREAD_ZONE, NULL, NULL, false },
	{ "color=red", SPREAD_ZONE, NULL, NULL, false },
	{ "color=red", SPREAD_ZONE, NULL, "remove s10", true },
	{ "color=red", SPREAD_HOST, NULL, NULL, true },
	{ "color=green", ANTI_HOST, NULL, NULL, true },
	{ "color=green", PREF_BOTH, NULL, NULL, true },
	{ "color=red", SPREAD_HOST, NULL, NULL, false },
	{ "color=red", SPREAD_ZONE, NULL, "node n2 z2", false },
	{ "color=green", ANTI_HOST, NULL, NULL, false },
};

static const char *const plugins[] = { "InterPodAffinity", "PodTopologySpread" };

static struct sk_node *node_in(const char *name, const char *zone)
{
	char desc[128];
	snprintf(desc, sizeof(desc), "%s zone=%s,kubernetes.io/hostname=%s", name, zone, name);
	return tu_node(desc);
}

static struct sk_snapshot *fresh_snapshot(struct sk_cache *c)
{
	struct sk_snapshot *s = sk_snapshot_new();
	assert_non_null(s);
	assert_int_equal(sk_cache_update_snapshot(c, s, NULL), 0);
	return s;
}

/* Filter codes and scores of plugin `name` (h's instance) for pod over h's snapshot. */
static void run(struct ph *h, const char *name, const struct sk_pod *pod, char *codes, int64_t *scores)
{
	struct sk_plugin *pl = ph_plugin(h, name);
	tu_filter_all(h, pl, pod, codes, NULL);
	enum sk_code rc = ph_scores(h, pl, pod, scores);
	if (rc == SK_SKIP)
		memset(scores, 0, (size_t)h->snap->nnodes * sizeof(*scores));
}

static void test_memo_equals_fresh(void **state)
{
	(void)state;
	struct sk_cache *c = sk_cache_new(0);
	const char *zones[] = { "z0", "z1", "z0", "z1", "z2" };
	for (int i = 0; i < 5; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%d", i + 1);
		struct sk_node *n = node_in(name, zones[i]);
		assert_int_equal(sk_cache_add_node(c, n, NULL), 0);
		sk_node_unref(n);
	}
	struct ph *kept = ph_new(NULL);
	ph_set_snapshot(kept, fresh_snapshot(c));
	struct sk_pod *bound[sizeof(steps) / sizeof(steps[0])] = { 0 };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *st = &steps[i];
		char ev[32] = "", a1[32] = "", a2[32] = "";
		if (st->event && sscanf(st->event, "%31s %31s %31s", ev, a1, a2) >= 2) {
			if (!strcmp(ev, "remove")) {
				int k = atoi(a1 + 1);
				assert_non_null(bound[k]);
				assert_int_equal(sk_cache_remove_pod(c, bound[k], NULL), 0);
			} else {
				struct sk_node *n = node_in(a1, a2);
				assert_int_equal(sk_cache_add_node(c, n, NULL), 0);
				sk_node_unref(n);
			}
		}
		assert_int_equal(sk_cache_update_snapshot(c, kept->snap, NULL), 0);
		struct ph *fresh = ph_new(NULL);
		ph_set_snapshot(fresh, fresh_snapshot(c));
		int n = kept->snap->nnodes;
		assert_int_equal(fresh->snap->nnodes, n);
		char name[16];
		snprintf(name, sizeof(name), "s%zu", i);
		struct sk_pod *pod = tu_pod(name, st->ns, NULL, st->labels, NULL, false, st->spec);
		char *codes[2] = { calloc((size_t)n + 1, 1), calloc((size_t)n + 1, 1) };
		int64_t *scores[2] = { calloc((size_t)n, sizeof(int64_t)), calloc((size_t)n, sizeof(int64_t)) };
		const char *target = NULL;
		for (size_t p = 0; p < sizeof(plugins) / sizeof(plugins[0]); p++) {
			run(kept, plugins[p], pod, codes[0], scores[0]);
			run(fresh, plugins[p], pod, codes[1], scores[1]);
			if (strcmp(codes[0], codes[1]) != 0) {
				print_error("step %zu %s: codes %s, fresh %s\n", i, plugins[p], codes[0], codes[1]);
				fail();
			}
			for (int k = 0; k < n; k++)
				if (scores[0][k] != scores[1][k]) {
					print_error("step %zu %s node %d: score %lld, fresh %lld\n", i, plugins[p], k,
						    (long long)scores[0][k], (long long)scores[1][k]);
					fail();
				}
			for (int k = 0; k < n && !target; k++)
				if (codes[0][k] == 'S' || codes[0][k] == 'K')
					target = kept->snap->nodes[k]->node->name;
		}
		/* bound where the last plugin allowed it (the first feasible node): the next cycle's state */
		if (target && !st->nobind) {
			char spec[1024];
			snprintf(spec, sizeof(spec), "%s", st->spec);
			bound[i] = tu_pod(name, st->ns, target, st->labels, NULL, false, spec);
			assert_int_equal(sk_cache_add_pod(c, bound[i], NULL), 0);
		}
		for (int k = 0; k < 2; k++) {
			free(codes[k]);
			free(scores[k]);
		}
		sk_pod_unref(pod);
		ph_free(fresh);
	}
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		sk_pod_unref(bound[i]);
	ph_free(kept);
	sk_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memo_equals_fresh),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
