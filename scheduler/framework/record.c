/* The per-thread decision trace (record.h). */
#include "scheduler/framework/record.h"

#include "scheduler/framework/parallel.h"
#include "schedkit/plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local struct sk_rec_trace *sk_rec_current;

struct sk_rec_trace *sk_rec_set_current(struct sk_rec_trace *t)
{
	struct sk_rec_trace *old = sk_rec_current;
	sk_rec_current = t;
	return old;
}

void sk_rec_time(const char *point, double seconds)
{
	struct sk_rec_trace *t = sk_rec_current;
	if (!t)
		return;
	for (int i = 0; i < t->ntimes; i++)
		if (t->times[i].point == point || !strcmp(t->times[i].point, point)) {
			t->times[i].seconds += seconds;
			t->times[i].runs++;
			return;
		}
	if (t->ntimes == SK_REC_MAX_TIMES)
		return;
	t->times[t->ntimes++] = (struct sk_rec_time){ .point = point, .seconds = seconds, .runs = 1 };
}

void sk_rec_victim(const struct sk_pod *victim)
{
	struct sk_rec_trace *t = sk_rec_current;
	if (!t || !victim)
		return;
	int slot = __atomic_fetch_add(&t->victims_total, 1, __ATOMIC_RELAXED);
	if (slot >= SK_REC_MAX_VICTIMS)
		return;
	char *s = NULL;
	if (asprintf(&s, "%s/%s", victim->ns ? victim->ns : "", victim->name ? victim->name : "") < 0)
		s = NULL;
	t->victims[slot] = s;
	/* nvictims: the slots handed out so far (a slot whose string failed stays NULL) */
	int n = slot + 1, cur = __atomic_load_n(&t->nvictims, __ATOMIC_RELAXED);
	while (cur < n && !__atomic_compare_exchange_n(&t->nvictims, &cur, n, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void sk_rec_candidates(const struct sk_victims *list, int n)
{
	struct sk_rec_trace *t = sk_rec_current;
	if (!t || !list)
		return;
	for (int i = 0; i < n; i++) {
		t->candidates_total++;
		if (t->ncandidates == SK_REC_MAX_CANDIDATES)
			continue;
		t->candidates[t->ncandidates++] = (struct sk_rec_candidate){
			.node = list[i].node ? sk_intern(list[i].node) : "", .victims = list[i].npods,
			.pdb_violations = list[i].num_pdb_violations,
		};
	}
}

void sk_rec_candidates_kept(const struct sk_victims *list, int n)
{
	struct sk_rec_trace *t = sk_rec_current;
	if (!t)
		return;
	for (int i = 0; i < t->ncandidates; i++) {
		bool kept = false;
		for (int k = 0; k < n && !kept; k++)
			kept = list[k].node && !strcmp(list[k].node, t->candidates[i].node);
		t->candidates[i].dropped = !kept;
	}
}

struct rec_loop {
	void (*fn)(int i, void *ctx);
	void *ctx;
	struct sk_rec_trace *trace;
};

static void rec_loop_one(int i, void *arg)
{
	struct rec_loop *l = arg;
	struct sk_rec_trace *prev = sk_rec_set_current(l->trace);
	l->fn(i, l->ctx);
	sk_rec_set_current(prev);
}

void sk_rec_parallel_for(struct sk_pool *pool, int n, void (*fn)(int i, void *ctx), void *ctx)
{
	if (!sk_rec_current) {
		sk_parallel_for(pool, n, fn, ctx);
		return;
	}
	struct rec_loop l = { fn, ctx, sk_rec_current };
	sk_parallel_for(pool, n, rec_loop_one, &l);
}

void sk_rec_trace_reset(struct sk_rec_trace *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nvictims; i++)
		free(t->victims[i]);
	memset(t, 0, sizeof *t);
}
