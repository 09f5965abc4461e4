/* Tests for scheduler/framework/cycle_state.c: the used-slot list behind clone and free. Scripts
 * of puts (replacing, emptying, slots in any order), clones and frees, each checked against a
 * model of what every slot holds; every datum is freed exactly once, a clone holds exactly its
 * source's data, and a state made from a reused shell holds nothing of the previous one. And the
 * PreFilter-extension list a state carries (built by sk_fw_run_pre_filter, copied by clones): the
 * AddPod/RemovePod calls it leads to are upstream's (every plugin with the extension, in profile
 * order, those skipped at PreFilter left out), on the state, on its clones and on reused shells. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/framework/runtime.h"
#include "scheduler/tests/testkit.h"

static struct sk_config cfg = { .parallelism = 4, .percentage_of_nodes_to_score = 0 };

/* A datum: its value, and its own free count (a clone is a new datum). */
struct datum {
	int v;
	int *frees;
};

#define MAX_DATA 256
static int free_counts[MAX_DATA];
static int ndata;

static struct datum *datum_new(int v)
{
	assert_true(ndata < MAX_DATA);
	struct datum *d = malloc(sizeof(*d));
	assert_non_null(d);
	d->v = v;
	d->frees = &free_counts[ndata++];
	return d;
}

static void datum_free(void *p)
{
	struct datum *d = p;
	(*d->frees)++;
	free(d);
}

static void *datum_clone(const void *p)
{
	return datum_new(((const struct datum *)p)->v);
}

static const struct sk_state_ops cloned_ops = { datum_free, datum_clone };
static const struct sk_state_ops shared_ops = { datum_free, NULL }; /* clones borrow it */

/* One script step on state s (0 or 1): 'p' put value v (0: NULL) into slot; 'c' s = clone of the
 * other state; 'f' free s (then NULL); 'n' s = a new state. */
struct step {
	char op;
	int s;
	int slot;
	int v;
	bool shared;
};

#define NSLOTS 5

/* The expected value of each slot of each state (0: empty), and whether it is a shared datum. A
 * borrowed datum must not outlive its owner: the scripts free clones first. */
struct model {
	bool live[2];
	int v[2][NSLOTS];
	bool shared[2][NSLOTS];
};

static void check(struct sk_cycle_state *const *cs, const struct model *m, size_t row, size_t step)
{
	for (int s = 0; s < 2; s++) {
		if (!m->live[s])
			continue;
		for (int k = 0; k < NSLOTS; k++) {
			const struct datum *d = sk_cycle_state_get(cs[s], k);
			int got = d ? d->v : 0;
			if (got != m->v[s][k])
				fail_msg("row %zu step %zu: state %d slot %d holds %d, want %d", row, step, s, k, got,
					 m->v[s][k]);
		}
	}
}

static void test_used_slots_scripts(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		struct step steps[12];
	} rows[] = {
		{ "puts in any order, clone, free both",
		  { { 'n', 0, 0, 0, 0 }, { 'p', 0, 3, 1, 0 }, { 'p', 0, 0, 2, 0 }, { 'p', 0, 4, 3, 1 },
		    { 'c', 1, 0, 0, 0 }, { 'f', 1, 0, 0, 0 }, { 'f', 0, 0, 0, 0 } } },
		{ "a slot replaced and emptied before the clone",
		  { { 'n', 0, 0, 0, 0 }, { 'p', 0, 2, 1, 0 }, { 'p', 0, 2, 2, 0 }, { 'p', 0, 1, 3, 0 },
		    { 'p', 0, 1, 0, 0 }, { 'c', 1, 0, 0, 0 }, { 'p', 0, 1, 4, 0 }, { 'f', 1, 0, 0, 0 },
		    { 'f', 0, 0, 0, 0 } } },
		{ "the clone gets new data in a slot its source never used",
		  { { 'n', 0, 0, 0, 0 }, { 'p', 0, 4, 1, 0 }, { 'c', 1, 0, 0, 0 }, { 'p', 1, 0, 2, 0 },
		    { 'p', 1, 4, 3, 0 }, { 'f', 0, 0, 0, 0 }, { 'c', 0, 0, 0, 0 }, { 'f', 1, 0, 0, 0 },
		    { 'f', 0, 0, 0, 0 } } },
		{ "a reused shell starts empty: every slot put again",
		  { { 'n', 0, 0, 0, 0 }, { 'p', 0, 0, 1, 0 }, { 'p', 0, 1, 2, 0 }, { 'p', 0, 2, 3, 0 },
		    { 'p', 0, 3, 4, 0 }, { 'p', 0, 4, 5, 0 }, { 'f', 0, 0, 0, 0 }, { 'n', 1, 0, 0, 0 },
		    { 'p', 1, 2, 6, 0 }, { 'c', 0, 0, 0, 0 }, { 'f', 1, 0, 0, 0 }, { 'f', 0, 0, 0, 0 } } },
		{ "emptied slots are not cloned, refilled ones are",
		  { { 'n', 0, 0, 0, 0 }, { 'p', 0, 1, 1, 0 }, { 'p', 0, 3, 2, 0 }, { 'p', 0, 1, 0, 0 },
		    { 'p', 0, 3, 0, 0 }, { 'p', 0, 1, 3, 0 }, { 'c', 1, 0, 0, 0 }, { 'c', 0, 0, 0, 0 },
		    { 'f', 0, 0, 0, 0 }, { 'f', 1, 0, 0, 0 } } },
	};
	struct tk_profile tp;
	tk_reset();
	tk_profile_minimal(&tp, "p");
	for (int k = TK_A; k <= TK_D; k++)
		tk_profile_add(&tp, SK_EP_FILTER, k, 0);
	tk_profile_add(&tp, SK_EP_SCORE, TK_E, 1); /* five plugins: five slots */
	struct sk_framework_env env = { 0 };
	char *err = NULL;
	struct sk_framework *fw = sk_framework_new(&cfg, &tp.p, &env, &err);
	if (!fw)
		fail_msg("sk_framework_new: %s", err ? err : "?");
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		memset(free_counts, 0, sizeof(free_counts));
		ndata = 0;
		struct sk_cycle_state *cs[2] = { NULL, NULL };
		struct model m = { 0 };
		for (size_t i = 0; i < sizeof(rows[r].steps) / sizeof(rows[r].steps[0]) && rows[r].steps[i].op; i++) {
			const struct step *st = &rows[r].steps[i];
			int s = st->s, o = 1 - st->s;
			switch (st->op) {
			case 'n':
				assert_null(cs[s]);
				cs[s] = sk_cycle_state_new(fw, false);
				assert_non_null(cs[s]);
				m.live[s] = true;
				memset(m.v[s], 0, sizeof(m.v[s]));
				memset(m.shared[s], 0, sizeof(m.shared[s]));
				break;
			case 'p':
				sk_cycle_state_put(cs[s], st->slot, st->v ? datum_new(st->v) : NULL,
						   st->shared ? &shared_ops : &cloned_ops);
				m.v[s][st->slot] = st->v;
				m.shared[s][st->slot] = st->shared;
				break;
			case 'c':
				if (cs[s]) {
					sk_cycle_state_free(cs[s]);
					m.live[s] = false;
				}
				cs[s] = sk_cycle_state_clone(cs[o]);
				assert_non_null(cs[s]);
				m.live[s] = true;
				memcpy(m.v[s], m.v[o], sizeof(m.v[s]));
				memcpy(m.shared[s], m.shared[o], sizeof(m.shared[s]));
				for (int k = 0; k < NSLOTS; k++) {
					const struct datum *a = sk_cycle_state_get(cs[o], k);
					const struct datum *b = sk_cycle_state_get(cs[s], k);
					/* a shared datum is borrowed, a cloned one copied */
					if (a && (a == b) != m.shared[o][k])
						fail_msg("row %zu step %zu: slot %d %s", r, i, k,
							 a == b ? "borrowed, not cloned" : "cloned, not borrowed");
				}
				break;
			case 'f':
				sk_cycle_state_free(cs[s]);
				cs[s] = NULL;
				m.live[s] = false;
				break;
			}
			check(cs, &m, r, i);
		}
		assert_null(cs[0]);
		assert_null(cs[1]);
		/* every datum released exactly once, borrowed ones only by their owner */
		for (int d = 0; d < ndata; d++)
			if (free_counts[d] != 1)
				fail_msg("row %zu (%s): datum %d freed %d times", r, rows[r].name, d, free_counts[d]);
	}
	sk_framework_unref(fw);
}

/* ---------- the PreFilter extensions ---------- */

static char ext_log[256];

static void ext_logf(const struct sk_plugin *pl, char what)
{
	size_t n = strlen(ext_log);
	snprintf(ext_log + n, sizeof(ext_log) - n, "%s%c%c", n ? " " : "", pl->desc->name[4], what);
}

static struct sk_status ext_add(struct sk_plugin *pl, struct sk_cycle_state *cs, const struct sk_pod *pod,
				const struct sk_pod *other, const struct sk_node_info *ni)
{
	(void)cs, (void)pod, (void)other, (void)ni;
	ext_logf(pl, '+');
	return sk_ok();
}

static struct sk_status ext_remove(struct sk_plugin *pl, struct sk_cycle_state *cs, const struct sk_pod *pod,
				   const struct sk_pod *other, const struct sk_node_info *ni)
{
	(void)cs, (void)pod, (void)other, (void)ni;
	ext_logf(pl, '-');
	return sk_ok();
}

static void test_pre_filter_extension_list(void **state)
{
	(void)state;
	static const struct {
		const char *ext;   /* per plugin A..D: 'a' AddPod, 'r' RemovePod, 'b' both, '.' neither */
		const char *skip;  /* per plugin: 's' PreFilter returns Skip */
		const char *added, *removed; /* the calls one AddPod / RemovePod run makes */
	} rows[] = {
		{ "bbbb", "....", "A+ B+ C+ D+", "A- B- C- D-" },
		{ "bbbb", "s.s.", "B+ D+", "B- D-" },
		{ "a.r.", "....", "A+", "C-" },
		{ ".b.a", ".s..", "D+", "" },
		{ "bbbb", "ssss", "", "" },
		{ "....", "....", "", "" },
		{ "rabr", "s...", "B+ C+", "C- D-" },
	};
	struct sk_pod *pod = NULL;
	{
		struct sk_pod *p = calloc(1, sizeof(*p));
		assert_non_null(p);
		pod = p;
	}
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		tk_reset();
		struct sk_plugin_desc descs[4];
		struct tk_profile tp;
		tk_profile_init(&tp, "p");
		for (int k = 0; k < 4; k++) {
			descs[k] = tk_desc[TK_A + k];
			char e = rows[r].ext[k];
			descs[k].pre_filter_add_pod = e == 'a' || e == 'b' ? ext_add : NULL;
			descs[k].pre_filter_remove_pod = e == 'r' || e == 'b' ? ext_remove : NULL;
			struct sk_plugin_list *l = &tp.p.points[SK_EP_PRE_FILTER];
			l->items[l->n].desc = &descs[k];
			l->n++;
			tk_beh[TK_A + k].pre_filter = rows[r].skip[k] == 's' ? SK_SKIP : SK_SUCCESS;
		}
		/* QueueSort and Bind as tk_profile_minimal has them, from this TestD */
		const enum sk_ext_point must[] = { SK_EP_QUEUE_SORT, SK_EP_BIND };
		for (int i = 0; i < 2; i++) {
			struct sk_plugin_list *l = &tp.p.points[must[i]];
			l->items[l->n].desc = &descs[3];
			l->n++;
		}
		struct sk_framework_env env = { 0 };
		char *err = NULL;
		struct sk_framework *fw = sk_framework_new(&cfg, &tp.p, &env, &err);
		if (!fw)
			fail_msg("row %zu: sk_framework_new: %s", r, err ? err : "?");
		for (int round = 0; round < 3; round++) { /* the later rounds take reused shells */
			struct sk_cycle_state *cs = sk_cycle_state_new(fw, false);
			assert_non_null(cs);
			/* before PreFilter: nothing skipped, every extension runs */
			ext_log[0] = '\0';
			struct sk_status st = sk_fw_run_pre_filter_add_pod(fw, cs, pod, pod, NULL);
			assert_int_equal(st.code, SK_SUCCESS);
			char want_all[64] = "";
			for (int k = 0; k < 4; k++)
				if (rows[r].ext[k] == 'a' || rows[r].ext[k] == 'b')
					snprintf(want_all + strlen(want_all), sizeof(want_all) - strlen(want_all), "%s%c+",
						 *want_all ? " " : "", 'A' + k);
			assert_string_equal(ext_log, want_all);

			struct sk_prefilter_result res;
			st = sk_fw_run_pre_filter(fw, cs, pod, &res, NULL, 0, NULL);
			sk_status_reset(&st);
			free(res.names);
			struct sk_cycle_state *clone = sk_cycle_state_clone(cs);
			assert_non_null(clone);
			struct sk_cycle_state *const states[] = { cs, clone };
			for (int s = 0; s < 2; s++) {
				ext_log[0] = '\0';
				st = sk_fw_run_pre_filter_add_pod(fw, states[s], pod, pod, NULL);
				assert_int_equal(st.code, SK_SUCCESS);
				if (strcmp(ext_log, rows[r].added) != 0)
					fail_msg("row %zu round %d %s: AddPod ran \"%s\", want \"%s\"", r, round,
						 s ? "clone" : "state", ext_log, rows[r].added);
				ext_log[0] = '\0';
				st = sk_fw_run_pre_filter_remove_pod(fw, states[s], pod, pod, NULL);
				assert_int_equal(st.code, SK_SUCCESS);
				if (strcmp(ext_log, rows[r].removed) != 0)
					fail_msg("row %zu round %d %s: RemovePod ran \"%s\", want \"%s\"", r, round,
						 s ? "clone" : "state", ext_log, rows[r].removed);
			}
			sk_cycle_state_free(clone);
			sk_cycle_state_free(cs);
		}
		sk_framework_unref(fw);
	}
	free(pod);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_used_slots_scripts),
		cmocka_unit_test(test_pre_filter_extension_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
