/* The per-thread decision trace (record.h). */
#include "scheduler/framework/record.h"

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
	t->victims_total++;
	if (t->nvictims == SK_REC_MAX_VICTIMS)
		return;
	char *s = NULL;
	if (asprintf(&s, "%s/%s", victim->ns ? victim->ns : "", victim->name ? victim->name : "") >= 0)
		t->victims[t->nvictims++] = s;
}

void sk_rec_trace_reset(struct sk_rec_trace *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nvictims; i++)
		free(t->victims[i]);
	memset(t, 0, sizeof *t);
}
