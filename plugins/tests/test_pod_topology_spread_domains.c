/* PodTopologySpread's Filter reads a constraint's domain count from a short list when the
 * constraint has at most 16 domains, else from the counts map (pod_topology_spread.c, struct
 * filter_constraint): the same decisions either way, for a node whose value is another pointer
 * to an equal string, and after RemovePod and AddPod changed the counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_pts_util.h"

#define SPREAD_ZONE \
	"\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"," \
	"\"labelSelector\":{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"Exists\"}]}}]"

/* nzones nodes n0..n{nzones-1}, node i in zone zi; a matching pod on every node but the last (so
 * the last zone is the only one at the minimum, 0): only the last node fits maxSkew 1. */
struct domains_case {
	const char *name;
	int nzones;
};

static const struct domains_case cases[] = {
	{ "3 domains: the short list", 3 },
	{ "16 domains: still the list", 16 },
	{ "17 domains: the map", 17 },
	{ "30 domains: the map", 30 },
};

static void build(struct ph *h, int nzones)
{
	struct sk_node_info *nis[TU_MAX];
	for (int i = 0; i < nzones; i++) {
		char desc[64], pod[16];
		snprintf(desc, sizeof(desc), "n%d zone=z%d", i, i);
		nis[i] = fx_node_info(tu_node(desc), NULL);
		if (i == nzones - 1)
			continue;
		snprintf(pod, sizeof(pod), "p%d", i);
		struct sk_pod *p = tu_pod(pod, NULL, nis[i]->node->name, "foo", NULL, false, "");
		assert_int_equal(sk_node_info_add_pod(nis[i], p), 0);
		sk_pod_unref(p);
	}
	ph_set_snapshot(h, fx_snapshot_of(nis, nzones));
}

static void test_short_list_and_map_agree(void **state)
{
	(void)state;
	struct ph *h = ph_new(NULL);
	struct sk_plugin *pl = ph_plugin(h, "PodTopologySpread");
	struct sk_pod *p = tu_pod("p", NULL, NULL, "foo", NULL, false, SPREAD_ZONE);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct domains_case *c = &cases[i];
		build(h, c->nzones);
		char codes[TU_MAX + 1], want[TU_MAX + 1];
		memset(want, 'U', (size_t)c->nzones);
		want[c->nzones - 1] = 'S';
		want[c->nzones] = '\0';
		tu_filter_all(h, pl, p, codes, NULL);
		if (strcmp(codes, want))
			fail_msg("case %s: got %s want %s", c->name, codes, want);

		/* The node of zone 0 again, its value under another pointer: still counted 1 (U); the
		 * last zone's the same way: 0 (S). */
		for (int k = 0; k < 2; k++) {
			struct sk_node_info *ni = h->snap->nodes[k ? c->nzones - 1 : 0];
			struct sk_label *zone = NULL;
			for (int j = 0; j < ni->node->labels.n; j++)
				if (!strcmp(ni->node->labels.items[j].key, "zone"))
					zone = &ni->node->labels.items[j];
			assert_non_null(zone);
			char copy[16];
			snprintf(copy, sizeof(copy), "%s", zone->value);
			const char *interned = zone->value;
			zone->value = copy;
			struct sk_status s = pl->desc->filter(pl, h->cs, p, ni);
			zone->value = interned;
			if (s.code != (k ? SK_SUCCESS : SK_UNSCHEDULABLE))
				fail_msg("case %s: node %d under another pointer: code %d", c->name, k, s.code);
			sk_status_reset(&s);
		}

		/* RemovePod of node 1's pod (a clone, as preemption does): zone 1 joins the minimum, so
		 * node 1 fits too; AddPod of a pod on the last node then makes zone 1 the only minimum. */
		struct sk_cycle_state *clone = sk_cycle_state_clone(h->cs);
		assert_non_null(clone);
		struct sk_node_info *second = h->snap->nodes[1], *last = h->snap->nodes[c->nzones - 1];
		struct sk_status s = pl->desc->pre_filter_remove_pod(pl, clone, p, second->pods[0].pod, second);
		assert_int_equal(s.code, SK_SUCCESS);
		want[1] = 'S';
		for (int step = 0; step < 2; step++) {
			for (int k = 0; k < c->nzones; k++) {
				s = pl->desc->filter(pl, clone, p, h->snap->nodes[k]);
				if ((s.code == SK_SUCCESS ? 'S' : 'U') != want[k])
					fail_msg("case %s: after %s node %d: code %d", c->name, step ? "AddPod" : "RemovePod", k, s.code);
				sk_status_reset(&s);
			}
			struct sk_pod *other = tu_pod("o", NULL, NULL, "foo", NULL, false, "");
			s = pl->desc->pre_filter_add_pod(pl, clone, p, other, last);
			sk_pod_unref(other);
			assert_int_equal(s.code, SK_SUCCESS);
			want[c->nzones - 1] = 'U';
		}
		sk_cycle_state_free(clone);
	}
	sk_pod_unref(p);
	ph_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_list_and_map_agree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
