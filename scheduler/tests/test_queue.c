/* Tests for scheduler/backend/queue.c: activeQ order, backoff durations and windows, unschedulable pods and
 * their flush, PreEnqueue gating, requeueing through queueing hints (including events seen while a
 * pod is in flight), pending-pod updates and deletes, Pop blocking and close. Time is the injectable
 * clock `clk`; nothing sleeps. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/backend/queue.h"
#include "scheduler/tests/fixtures.h"

#define S 1000000000LL

static int64_t clk;

struct hint_rule {
	const char *plugin;
	uint32_t resource, action;
	int result;
};
static struct hint_rule rules[8];
static int nrules, hint_calls;

static bool less(void *ctx, const struct sk_queued_pod *a, const struct sk_queued_pod *b)
{
	(void)ctx;
	if (a->pod->priority != b->pod->priority)
		return a->pod->priority > b->pod->priority;
	return a->timestamp_ns < b->timestamp_ns;
}

static int pre_enqueue_calls;
static bool preempting; /* DefaultPreemption's stand-in: pods named "pre*" wait while set */

static struct sk_status pre_enqueue(void *ctx, const struct sk_pod *pod)
{
	(void)ctx;
	pre_enqueue_calls++;
	if (preempting && !strncmp(pod->name, "pre", 3)) {
		struct sk_status s = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE,
					       "waiting for the preemption for this pod to be finished");
		s.plugin = "DefaultPreemption";
		return s;
	}
	if (pod->nscheduling_gates > 0) {
		struct sk_status s = sk_status(SK_UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates");
		s.plugin = "SchedulingGates";
		return s;
	}
	return sk_ok();
}

static int hint(void *ctx, const struct sk_pod *pod, const char *plugin, const struct sk_cluster_event *ev,
		const void *old_obj, const void *new_obj)
{
	(void)ctx;
	(void)pod;
	(void)old_obj;
	(void)new_obj;
	hint_calls++;
	int r = -1;
	for (int i = 0; i < nrules; i++)
		if (strcmp(rules[i].plugin, plugin) == 0 && (rules[i].resource & ev->resource) &&
		    (rules[i].action & ev->action)) {
			if (rules[i].result == SK_QUEUE)
				return SK_QUEUE;
			r = SK_QUEUE_SKIP;
		}
	return r;
}

static int64_t now(void *ctx)
{
	(void)ctx;
	return clk;
}

static struct sk_queue *mkq(bool hints)
{
	struct sk_queue_ops ops = { .less = less, .pre_enqueue = pre_enqueue, .hint = hint, .now_ns = now };
	struct sk_queue_options o = { .initial_backoff_ns = 1 * S, .max_backoff_ns = 10 * S,
				      .disable_queueing_hints = !hints };
	return sk_queue_new(&ops, &o);
}

static int setup(void **state)
{
	(void)state;
	clk = 100 * S + 300000000LL; /* 100.3 s */
	nrules = hint_calls = 0;
	return 0;
}

static struct sk_pod *mkpod(const char *name, int prio, bool gated)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"x\"}},\"spec\":{\"priority\":%d,%s\"containers\":[{\"name\":\"c\"}]}}",
		 name, prio, gated ? "\"schedulingGates\":[{\"name\":\"g\"}]," : "");
	return fx_pod(text);
}

/* Adds pod (dropping the caller's reference); returns a copy of its uid. */
static const char *add(struct sk_queue *q, struct sk_pod *p)
{
	static char uids[16][128];
	static int next;
	char *uid = uids[next++ % 16];
	snprintf(uid, 128, "%s", p->uid);
	assert_int_equal(sk_queue_add(q, p), 0);
	sk_pod_unref(p);
	return uid;
}

/* Pops and fails the pod with the given rejecting plugin (NULL = an error). */
static enum sk_queue_where fail_with(struct sk_queue *q, const char *plugin, bool pending)
{
	struct sk_queued_pod *qp = sk_queue_try_pop(q, NULL);
	assert_non_null(qp);
	if (plugin && pending)
		qp->pending_plugins[qp->npending_plugins++] = plugin;
	else if (plugin)
		qp->unschedulable_plugins[qp->nunschedulable_plugins++] = plugin;
	return sk_queue_add_unschedulable(q, qp, NULL);
}

static void test_active_order(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	add(q, mkpod("low", 1, false));
	clk += 1;
	add(q, mkpod("high1", 5, false));
	clk += 1;
	add(q, mkpod("high2", 5, false));
	struct sk_queue_counts c;
	sk_queue_counts(q, &c);
	assert_int_equal(c.active, 3);
	int64_t cycle;
	const char *order[] = { "high1", "high2", "low" };
	for (int i = 0; i < 3; i++) {
		struct sk_queued_pod *qp = sk_queue_pop(q, &cycle);
		assert_string_equal(qp->pod->name, order[i]);
		assert_int_equal(cycle, i + 1);
		assert_int_equal(qp->attempts, 1);
		assert_int_equal(sk_queue_where_is(q, qp->pod->uid), SK_Q_IN_FLIGHT);
		sk_queue_done(q, qp);
	}
	assert_null(sk_queue_try_pop(q, NULL));
	assert_int_equal(sk_queue_scheduling_cycle(q), 3);
	sk_queue_free(q);
}

static void test_backoff_durations(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	struct sk_queued_pod qp = { 0 };
	static const int64_t want[] = { 0, 1, 2, 4, 8, 10, 10, 10 };
	for (int c = 0; c < 8; c++) {
		qp.unschedulable_count = c;
		assert_int_equal(sk_queue_backoff_duration(q, &qp), want[c] * S);
	}
	qp.unschedulable_count = 7;
	qp.consecutive_errors = 2; /* v1.34: the error count wins when > 0 */
	assert_int_equal(sk_queue_backoff_duration(q, &qp), 2 * S);
	qp.unschedulable_count = 1000;
	qp.consecutive_errors = 0;
	assert_int_equal(sk_queue_backoff_duration(q, &qp), 10 * S); /* no overflow */
	sk_queue_free(q);

	struct sk_queue_ops ops = { .less = less, .now_ns = now };
	struct sk_queue_options o = { .initial_backoff_ns = 1 * S, .max_backoff_ns = 0 };
	q = sk_queue_new(&ops, &o);
	qp.unschedulable_count = 3;
	assert_int_equal(sk_queue_backoff_duration(q, &qp), 0); /* max 0 with PopFromBackoffQ: no backoff */
	sk_queue_free(q);
}


/* Upstream backoff_queue_test TestBackoffQueue_calculateBackoffDuration, ported as values
 * (durations in ns). */
static void test_backoff_duration_table(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int64_t initial, max;
		int unschedulable, errors;
		int64_t want;
	} cases[] = {
		{ "no backoff", 1, 32, 0, 0, 0 },
		{ "normal", 1, 32, 16, 0, 32 },
		{ "overflow_32bit", 1, INT32_MAX, 32, 0, INT32_MAX },
		{ "overflow_64bit", 1, INT64_MAX, 64, 0, INT64_MAX },
		{ "consecutive errors win", 1, 32, 16, 3, 4 },
		{ "errors only", 1, 32, 0, 6, 32 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case: %s\n", cases[i].name);
		struct sk_queue_ops ops = { .less = less, .now_ns = now };
		struct sk_queue_options o = { .initial_backoff_ns = cases[i].initial, .max_backoff_ns = cases[i].max };
		struct sk_queue *q = sk_queue_new(&ops, &o);
		struct sk_queued_pod qp = { .unschedulable_count = cases[i].unschedulable,
					    .consecutive_errors = cases[i].errors };
		assert_int_equal(sk_queue_backoff_duration(q, &qp), cases[i].want);
		sk_queue_free(q);
	}
}

static void test_unschedulable_event_backoff_window(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	const char *uid = add(q, mkpod("p", 0, false));
	rules[nrules++] = (struct hint_rule){ "NodeResourcesFit", SK_EV_NODE, SK_ACT_ADD, SK_QUEUE };
	assert_int_equal(fail_with(q, "NodeResourcesFit", false), SK_Q_UNSCHEDULABLE);
	struct sk_queue_counts c;
	sk_queue_counts(q, &c);
	assert_int_equal(c.unschedulable, 1);
	assert_int_equal(c.active + c.backoff + c.gated, 0);

	/* an event nobody registered for: stays */
	struct sk_cluster_event taint = { SK_EV_NODE, SK_ACT_UPDATE_NODE_TAINT, "NodeTaintChange" };
	sk_queue_move_all(q, &taint, NULL, NULL);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_UNSCHEDULABLE);

	/* NodeAdd: Queue, still backing off (failed at 100.3 s, 1 s backoff) -> backoffQ */
	clk += 200000000LL; /* 100.5 */
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, NULL);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_BACKOFF);
	/* expiry 101.3 s truncated to the 1 s window: 101 s */
	assert_int_equal(sk_queue_backoff_expiry(q, uid), 101 * S);
	sk_queue_flush_backoff(q, 101 * S - 1);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_BACKOFF);
	sk_queue_flush_backoff(q, 101 * S);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_ACTIVE);

	/* second failure: 2 s backoff; an event after it expired goes straight to activeQ */
	assert_int_equal(fail_with(q, "NodeResourcesFit", false), SK_Q_UNSCHEDULABLE);
	clk += 3 * S;
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, NULL);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_ACTIVE);
	sk_queue_free(q);
}

static void test_hint_skip_and_pending(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	const char *p1 = add(q, mkpod("p1", 0, false));
	const char *p2 = add(q, mkpod("p2", 0, false));
	rules[nrules++] = (struct hint_rule){ "A", SK_EV_NODE, SK_ACT_ADD, SK_QUEUE_SKIP };
	rules[nrules++] = (struct hint_rule){ "B", SK_EV_NODE, SK_ACT_ADD, SK_QUEUE };
	assert_int_equal(fail_with(q, "A", false), SK_Q_UNSCHEDULABLE);
	assert_int_equal(fail_with(q, "B", true), SK_Q_UNSCHEDULABLE); /* Pending plugin */
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, NULL);
	assert_int_equal(sk_queue_where_is(q, p1), SK_Q_UNSCHEDULABLE); /* QueueSkip */
	assert_int_equal(sk_queue_where_is(q, p2), SK_Q_ACTIVE);        /* Pending + Queue: no backoff */
	sk_queue_free(q);
}

static void test_error_backoff_queue(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	const char *uid = add(q, mkpod("p", 0, false));
	assert_int_equal(fail_with(q, NULL, false), SK_Q_ERROR_BACKOFF);
	assert_null(sk_queue_try_pop(q, NULL)); /* the error queue is never popped early */
	struct sk_queue_counts c;
	sk_queue_counts(q, &c);
	assert_int_equal(c.backoff, 1);
	sk_queue_flush_backoff(q, clk + 1 * S);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_ACTIVE);
	/* second error: 2 s; then a rejection resets the error count */
	struct sk_queued_pod *qp = sk_queue_try_pop(q, NULL);
	assert_int_equal(sk_queue_add_unschedulable(q, qp, NULL), SK_Q_ERROR_BACKOFF);
	assert_int_equal(qp->consecutive_errors, 2);
	assert_int_equal(sk_queue_backoff_duration(q, qp), 2 * S);
	sk_queue_flush_backoff(q, clk + 2 * S);
	qp = sk_queue_try_pop(q, NULL);
	qp->unschedulable_plugins[qp->nunschedulable_plugins++] = "X";
	assert_int_equal(sk_queue_add_unschedulable(q, qp, NULL), SK_Q_UNSCHEDULABLE);
	assert_int_equal(qp->consecutive_errors, 0);
	assert_int_equal(qp->unschedulable_count, 1);
	assert_int_equal(qp->attempts, 3);
	sk_queue_free(q);
}

static void test_pop_from_backoff_when_idle(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	const char *uid = add(q, mkpod("p", 0, false));
	rules[nrules++] = (struct hint_rule){ "A", SK_EV_NODE, SK_ACT_ADD, SK_QUEUE };
	assert_int_equal(fail_with(q, "A", false), SK_Q_UNSCHEDULABLE);
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, NULL);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_BACKOFF);
	struct sk_queued_pod *qp = sk_queue_try_pop(q, NULL); /* activeQ empty: head of backoffQ */
	assert_non_null(qp);
	assert_string_equal(qp->pod->uid, uid);
	assert_int_equal(qp->nunschedulable_plugins, 0); /* cleared at Pop */
	sk_queue_done(q, qp);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_NONE);
	sk_queue_free(q);
}

static void test_gated_pods(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	struct sk_pod *gated = mkpod("g", 0, true);
	const char *uid = gated->uid;
	assert_int_equal(sk_queue_add(q, gated), 0);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_GATED);
	struct sk_queue_counts c;
	sk_queue_counts(q, &c);
	assert_int_equal(c.gated, 1);
	assert_int_equal(c.unschedulable, 0);
	assert_null(sk_queue_try_pop(q, NULL));

	/* events the gating plugin did not register for leave it gated */
	rules[nrules++] = (struct hint_rule){ "SchedulingGates", SK_EV_UNSCHEDULED_POD,
					      SK_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED, SK_QUEUE };
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, NULL);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_GATED);
	/* a wildcard event re-runs PreEnqueue, which still gates */
	sk_queue_flush_unschedulable(q, clk + 301 * S);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_GATED);

	/* an update that keeps the gates: still gated; one that removes them: activeQ */
	struct sk_pod *same = mkpod("g", 1, true);
	sk_queue_update(q, gated, same);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_GATED);
	struct sk_pod *ungated = mkpod("g", 1, false);
	sk_queue_update(q, same, ungated);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_ACTIVE);
	sk_queue_counts(q, &c);
	assert_int_equal(c.gated, 0);
	assert_int_equal(c.active, 1);
	struct sk_queued_pod *qp = sk_queue_try_pop(q, NULL);
	assert_ptr_equal(qp->pod, ungated);
	assert_int_equal(qp->attempts, 1);
	sk_queue_done(q, qp);
	sk_pod_unref(gated);
	sk_pod_unref(same);
	sk_pod_unref(ungated);
	sk_queue_free(q);
}

static void test_flush_unschedulable(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	const char *uid = add(q, mkpod("p", 0, false));
	int64_t failed_at = clk;
	assert_int_equal(fail_with(q, "A", false), SK_Q_UNSCHEDULABLE);
	sk_queue_flush_unschedulable(q, failed_at + 300 * S); /* not longer than 5 min yet */
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_UNSCHEDULABLE);
	sk_queue_flush_unschedulable(q, failed_at + 300 * S + 1);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_ACTIVE);
	sk_queue_free(q);
}

static void test_inflight_events(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	add(q, mkpod("p", 0, false));
	const char *other = add(q, mkpod("o", 0, false));
	rules[nrules++] = (struct hint_rule){ "A", SK_EV_NODE, SK_ACT_ADD, SK_QUEUE };
	struct sk_node *n = fx_node("{\"metadata\":{\"name\":\"n9\"}}");

	/* o fails first, with no event during its cycle: unschedulable */
	struct sk_queued_pod *p = sk_queue_try_pop(q, NULL);
	struct sk_queued_pod *o = sk_queue_try_pop(q, NULL);
	assert_string_equal(o->pod->uid, other);
	o->unschedulable_plugins[o->nunschedulable_plugins++] = "A";
	assert_int_equal(sk_queue_add_unschedulable(q, o, NULL), SK_Q_UNSCHEDULABLE);

	/* a NodeAdd while p is in flight: p's hint replay sends it to backoff, not unschedulable */
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, n);
	assert_int_equal(sk_queue_where_is(q, other), SK_Q_BACKOFF); /* o was moved by the event itself */
	p->unschedulable_plugins[p->nunschedulable_plugins++] = "A";
	assert_int_equal(sk_queue_add_unschedulable(q, p, NULL), SK_Q_BACKOFF);

	/* an event before the pop does not count */
	sk_queue_flush_backoff(q, clk + 10 * S);
	p = sk_queue_try_pop(q, NULL);
	p->unschedulable_plugins[p->nunschedulable_plugins++] = "A";
	assert_int_equal(sk_queue_add_unschedulable(q, p, NULL), SK_Q_UNSCHEDULABLE);
	sk_node_unref(n);
	sk_queue_free(q);
}

/* sk_queue_options.inflight / hint_observed (scheduler_inflight_events,
 * scheduler_queueing_hint_execution_duration_seconds): "PodPopped" while a pod is in flight, an
 * event's label while an attempt that can see it runs, back to zero when they are done; each hint
 * call of a plugin registered for the event, with its answer. */
static struct { char event[32]; int n; } infl[8];
static int ninfl;
static char hints_seen[512];
static void on_inflight(void *ctx, const char *event, int delta)
{
	(void)ctx;
	int i = 0;
	while (i < ninfl && strcmp(infl[i].event, event))
		i++;
	if (i == ninfl)
		snprintf(infl[ninfl++].event, sizeof infl[0].event, "%s", event);
	infl[i].n += delta;
}
static int inflight_of(const char *event)
{
	for (int i = 0; i < ninfl; i++)
		if (!strcmp(infl[i].event, event))
			return infl[i].n;
	return 0;
}
static void on_hint(void *ctx, const char *plugin, const char *event, const char *h, double seconds)
{
	(void)ctx;
	assert_true(seconds >= 0 && seconds < 1);
	size_t k = strlen(hints_seen);
	snprintf(hints_seen + k, sizeof hints_seen - k, "%s/%s/%s ", plugin, event, h);
}

static void test_inflight_and_hint_metrics(void **state)
{
	(void)state;
	ninfl = 0;
	hints_seen[0] = 0;
	struct sk_queue_ops ops = { .less = less, .pre_enqueue = pre_enqueue, .hint = hint, .now_ns = now };
	struct sk_queue_options o = { .initial_backoff_ns = 1 * S, .max_backoff_ns = 10 * S,
				      .inflight = on_inflight, .hint_observed = on_hint };
	struct sk_queue *q = sk_queue_new(&ops, &o);
	add(q, mkpod("p", 0, false));
	add(q, mkpod("o", 0, false));
	rules[nrules++] = (struct hint_rule){ "A", SK_EV_NODE, SK_ACT_ADD, SK_QUEUE };
	rules[nrules++] = (struct hint_rule){ "B", SK_EV_NODE, SK_ACT_ADD, SK_QUEUE_SKIP };
	struct sk_node *n = fx_node("{\"metadata\":{\"name\":\"n9\"}}");
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, n); /* nothing in flight: not tracked */
	assert_int_equal(inflight_of("NodeAdd"), 0);
	struct sk_queued_pod *p = sk_queue_try_pop(q, NULL), *po = sk_queue_try_pop(q, NULL);
	assert_int_equal(inflight_of("PodPopped"), 2);
	po->unschedulable_plugins[po->nunschedulable_plugins++] = "B";
	po->unschedulable_plugins[po->nunschedulable_plugins++] = "A";
	assert_int_equal(sk_queue_add_unschedulable(q, po, NULL), SK_Q_UNSCHEDULABLE);
	assert_int_equal(inflight_of("PodPopped"), 1);
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, n); /* p is in flight: recorded; o is moved */
	assert_int_equal(inflight_of("NodeAdd"), 1);
	assert_string_equal(hints_seen, "B/NodeAdd/QueueSkip A/NodeAdd/Queue ");
	sk_queue_done(q, p);
	assert_int_equal(inflight_of("PodPopped"), 0);
	assert_int_equal(inflight_of("NodeAdd"), 0);
	sk_node_unref(n);
	sk_queue_free(q);
}

static void test_hints_disabled(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(false);
	add(q, mkpod("p", 0, false));
	struct sk_queued_pod *p = sk_queue_try_pop(q, NULL);
	p->unschedulable_plugins[p->nunschedulable_plugins++] = "A";
	/* a move request during the cycle (moveRequestCycle >= podCycle): backoffQ */
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, NULL);
	assert_int_equal(sk_queue_add_unschedulable(q, p, NULL), SK_Q_BACKOFF);
	assert_int_equal(hint_calls, 0);
	sk_queue_flush_backoff(q, clk + 5 * S);
	p = sk_queue_try_pop(q, NULL);
	p->unschedulable_plugins[p->nunschedulable_plugins++] = "A";
	assert_int_equal(sk_queue_add_unschedulable(q, p, NULL), SK_Q_UNSCHEDULABLE);

	/* the cycle compared is the queue's at failure time (SchedulingCycle()), not the pod's: a
	 * move request before a later pop no longer counts for an attempt that ends after it */
	const char *a = add(q, mkpod("a", 0, false));
	const char *b = add(q, mkpod("b", 0, false));
	struct sk_queued_pod *qa = sk_queue_try_pop(q, NULL);
	sk_queue_move_all(q, &SK_EVENT_NODE_ADD, NULL, NULL);
	struct sk_queued_pod *qb = sk_queue_try_pop(q, NULL);
	qa->unschedulable_plugins[qa->nunschedulable_plugins++] = "A";
	assert_int_equal(sk_queue_add_unschedulable(q, qa, NULL), SK_Q_UNSCHEDULABLE);
	qb->unschedulable_plugins[qb->nunschedulable_plugins++] = "A";
	assert_int_equal(sk_queue_add_unschedulable(q, qb, NULL), SK_Q_UNSCHEDULABLE);
	(void)a;
	(void)b;
	sk_queue_free(q);
}

static void test_update_delete_activate(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	struct sk_pod *a = mkpod("a", 1, false), *b = mkpod("b", 2, false);
	sk_queue_add(q, a);
	clk++;
	sk_queue_add(q, b);
	/* raising a's priority in activeQ reorders the heap */
	struct sk_pod *a2 = mkpod("a", 9, false);
	sk_queue_update(q, a, a2);
	struct sk_queued_pod *qp = sk_queue_try_pop(q, NULL);
	assert_string_equal(qp->pod->name, "a");
	assert_int_equal(qp->pod->priority, 9);
	/* deleted while in flight: dropped when handed back */
	sk_queue_delete(q, a2);
	qp->unschedulable_plugins[qp->nunschedulable_plugins++] = "A";
	assert_int_equal(sk_queue_add_unschedulable(q, qp, NULL), SK_Q_NONE);
	assert_int_equal(sk_queue_where_is(q, a->uid), SK_Q_NONE);
	/* unschedulable b, then Activate by key */
	assert_int_equal(fail_with(q, "A", false), SK_Q_UNSCHEDULABLE);
	char *keys[] = { "default/zzz", "default/b" };
	sk_queue_activate(q, keys, 2);
	assert_int_equal(sk_queue_where_is(q, b->uid), SK_Q_ACTIVE);
	sk_queue_delete(q, b);
	assert_int_equal(sk_queue_where_is(q, b->uid), SK_Q_NONE);
	/* update of an unknown pod adds it */
	sk_queue_update(q, NULL, b);
	assert_int_equal(sk_queue_where_is(q, b->uid), SK_Q_ACTIVE);
	sk_pod_unref(a);
	sk_pod_unref(a2);
	sk_pod_unref(b);
	sk_queue_free(q);
}


/* Activate of a pod in backoffQ skips PreEnqueue (it ran when the pod entered backoffQ:
 * moveToActiveQ with movesFromBackoffQ); from unschedulablePods it runs. */
static void test_activate_from_backoff_skips_pre_enqueue(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	struct sk_pod *p = mkpod("p", 0, false);
	sk_queue_add(q, p);
	assert_int_equal(fail_with(q, NULL, false), SK_Q_ERROR_BACKOFF);
	/* the queued copy now carries gates (the PreEnqueue stand-in would reject it) */
	struct sk_pod *gated = mkpod("p", 0, true);
	sk_queue_update(q, p, gated);
	assert_int_equal(sk_queue_where_is(q, p->uid), SK_Q_ERROR_BACKOFF);
	char *keys[] = { "default/p" };
	sk_queue_activate(q, keys, 1);
	assert_int_equal(sk_queue_where_is(q, p->uid), SK_Q_ACTIVE);
	sk_pod_unref(p);
	sk_pod_unref(gated);
	sk_queue_free(q);
}

/* MoveAllToActiveOrBackoffQueue's preCheck: pods it refuses are not even asked. */
static bool not_a(void *ctx, const struct sk_pod *pod)
{
	(void)ctx;
	return strcmp(pod->name, "a") != 0;
}

static void test_move_all_pre_check(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	rules[nrules++] = (struct hint_rule){ "X", SK_EV_NODE, SK_ACT_ADD, SK_QUEUE };
	const char *a = add(q, mkpod("a", 0, false));
	const char *b = add(q, mkpod("b", 0, false));
	assert_int_equal(fail_with(q, "X", false), SK_Q_UNSCHEDULABLE);
	assert_int_equal(fail_with(q, "X", false), SK_Q_UNSCHEDULABLE);
	sk_queue_move_all_checked(q, &SK_EVENT_NODE_ADD, NULL, NULL, not_a, NULL);
	assert_int_equal(hint_calls, 1);
	assert_int_equal(sk_queue_where_is(q, a), SK_Q_UNSCHEDULABLE);
	assert_int_equal(sk_queue_where_is(q, b), SK_Q_BACKOFF);
	sk_queue_free(q);
}

/* Activate of an in-flight pod without hints sets the move request cycle: it comes back to
 * backoffQ instead of unschedulablePods. */
static void test_activate_in_flight_without_hints(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(false);
	const char *uid = add(q, mkpod("p", 0, false));
	struct sk_queued_pod *qp = sk_queue_try_pop(q, NULL);
	assert_non_null(qp);
	char *keys[] = { "default/p" };
	sk_queue_activate(q, keys, 1);
	qp->unschedulable_plugins[qp->nunschedulable_plugins++] = "X";
	assert_int_equal(sk_queue_add_unschedulable(q, qp, NULL), SK_Q_BACKOFF);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_BACKOFF);
	sk_queue_free(q);
}


/* isPodWorthRequeuing: a wildcard event with a target pod (ForceActivate recorded for an in-flight
 * pod) requeues that pod only, not the other pods in flight at the time. */
static void test_force_activate_targets_one_in_flight_pod(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	add(q, mkpod("a", 0, false));
	clk++;
	add(q, mkpod("b", 0, false));
	struct sk_queued_pod *qa = sk_queue_try_pop(q, NULL), *qb = sk_queue_try_pop(q, NULL);
	assert_string_equal(qa->pod->name, "a");
	char *keys[] = { "default/a" };
	sk_queue_activate(q, keys, 1);
	qb->unschedulable_plugins[qb->nunschedulable_plugins++] = "X";
	assert_int_equal(sk_queue_add_unschedulable(q, qb, NULL), SK_Q_UNSCHEDULABLE);
	qa->unschedulable_plugins[qa->nunschedulable_plugins++] = "X";
	enum sk_queue_where w = sk_queue_add_unschedulable(q, qa, NULL);
	assert_true(w == SK_Q_BACKOFF || w == SK_Q_ACTIVE);
	sk_queue_free(q);
}


/* movePodsToActiveOrBackoffQueue skips a gated pod unless the event is one of its gating plugin's:
 * the UnschedulableTimeout flush does not even re-run PreEnqueue for it. */
static void test_flush_leaves_gated_pods_alone(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	const char *uid = add(q, mkpod("g", 0, true));
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_GATED);
	int calls = pre_enqueue_calls;
	sk_queue_flush_unschedulable(q, clk + 301 * S);
	assert_int_equal(pre_enqueue_calls, calls);
	assert_int_equal(sk_queue_where_is(q, uid), SK_Q_GATED);
	sk_queue_free(q);
}

/* Asynchronous preemption: the preemptor (rejected by NodeResourcesFit) is held back by
 * DefaultPreemption's PreEnqueue while its victims go; as a gated pod it moves only on
 * AssignedPod/Delete (DefaultPreemption's registration, hint Skip), where NodeResourcesFit's hint
 * decides; once the preemption is over the next deletion lets it through. */
static void test_preemptor_gated_until_its_victims_go(void **state)
{
	(void)state;
	rules[nrules++] = (struct hint_rule){ "NodeResourcesFit", SK_EV_ASSIGNED_POD, SK_ACT_DELETE, SK_QUEUE };
	rules[nrules++] = (struct hint_rule){ "NodeResourcesFit", SK_EV_NODE, SK_ACT_ADD, SK_QUEUE };
	rules[nrules++] = (struct hint_rule){ "DefaultPreemption", SK_EV_ASSIGNED_POD, SK_ACT_DELETE, SK_QUEUE_SKIP };
	struct sk_queue *q = mkq(true);
	const char *uid = add(q, mkpod("pre", 10, false));
	preempting = true; /* PostFilter nominated it and started the evictions */
	assert_int_equal(fail_with(q, "NodeResourcesFit", false), SK_Q_UNSCHEDULABLE);
	struct sk_pod *victim = mkpod("v", 0, false);
	const struct {
		const struct sk_cluster_event *ev;
		bool preempting;
		enum sk_queue_where want;
	} steps[] = {
		{ &SK_EVENT_ASSIGNED_POD_DELETE, true, SK_Q_GATED },   /* first victim: NRF says Queue, PreEnqueue holds it */
		{ &SK_EVENT_NODE_ADD, true, SK_Q_GATED },              /* not an event of the gating plugin */
		{ &SK_EVENT_ASSIGNED_POD_DELETE, true, SK_Q_GATED },   /* still preempting */
		{ &SK_EVENT_NODE_ADD, false, SK_Q_GATED },             /* over, but a NodeAdd does not move it */
		{ &SK_EVENT_ASSIGNED_POD_DELETE, false, SK_Q_BACKOFF }, /* the last victim's deletion */
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		preempting = steps[i].preempting;
		bool node = steps[i].ev == &SK_EVENT_NODE_ADD;
		sk_queue_move_all(q, steps[i].ev, node ? NULL : victim, NULL);
		if (sk_queue_where_is(q, uid) != steps[i].want)
			fail_msg("step %zu: where %d, want %d", i, sk_queue_where_is(q, uid), steps[i].want);
	}
	preempting = false;
	sk_pod_unref(victim);
	sk_queue_free(q);
}

static void *blocked_pop(void *arg)
{
	return sk_queue_pop(arg, NULL);
}

static void test_pop_blocks_until_add_or_close(void **state)
{
	(void)state;
	struct sk_queue *q = mkq(true);
	pthread_t t;
	pthread_create(&t, NULL, blocked_pop, q);
	add(q, mkpod("p", 0, false));
	void *got;
	pthread_join(t, &got);
	assert_non_null(got);
	sk_queue_done(q, got);
	pthread_create(&t, NULL, blocked_pop, q);
	sk_queue_close(q);
	pthread_join(t, &got);
	assert_null(got);
	sk_queue_free(q);
}

static void test_pod_update_events(void **state)
{
	(void)state;
	struct sk_pod *a = fx_pod("{\"metadata\":{\"name\":\"p\",\"labels\":{\"x\":\"1\"}},\"spec\":{\"schedulingGates\":[{\"name\":\"g\"}],"
				  "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}");
	struct sk_pod *b = fx_pod("{\"metadata\":{\"name\":\"p\",\"labels\":{\"x\":\"2\"}},\"spec\":{"
				  "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}],"
				  "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}");
	struct sk_cluster_event ev[8];
	int n = sk_pod_update_events(a, b, ev, 8);
	assert_int_equal(n, 4);
	assert_string_equal(ev[0].label, "UpdatePodLabel");
	assert_string_equal(ev[1].label, "UpdatePodScaleDown");
	assert_string_equal(ev[2].label, "UpdatePodSchedulingGatesEliminated");
	assert_string_equal(ev[3].label, "UpdatePodToleration");
	assert_int_equal(ev[0].resource, SK_EV_UNSCHEDULED_POD);
	n = sk_pod_update_events(a, a, ev, 8);
	assert_int_equal(n, 1);
	assert_string_equal(ev[0].label, "UpdatePodOther");
	assert_int_equal(ev[0].action & SK_ACT_UPDATE_POD_LABEL, 0);
	sk_pod_unref(a);
	sk_pod_unref(b);
}


static void test_flusher_thread_starts_and_stops(void **state)
{
	(void)state;
	struct sk_queue_ops ops = { .less = less }; /* real clock */
	struct sk_queue *q = sk_queue_new(&ops, NULL);
	assert_int_equal(sk_queue_start_flushers(q), 0);
	assert_int_equal(sk_queue_start_flushers(q), 0); /* idempotent */
	struct sk_pod *p = mkpod("p", 0, false);
	sk_queue_add(q, p);
	struct sk_queued_pod *qp = sk_queue_pop(q, NULL);
	assert_ptr_equal(qp->pod, p);
	sk_queue_done(q, qp);
	sk_queue_close(q);
	assert_null(sk_queue_pop(q, NULL));
	sk_queue_free(q);
	sk_pod_unref(p);
}

/* Node update classification: what the node informer's update handler sends to move_all is
 * sk_node_update_actions | sk_node_object_update_actions, so the table checks the two together. */
static void test_node_update_classification(void **state)
{
	(void)state;
#define ALLOC "status: {allocatable: {cpu: '2', pods: '10'}"
	static const struct {
		const char *old_obj, *new_obj;
		uint32_t want;
	} cases[] = {
		{ "{metadata: {name: n1, labels: {a: '1'}}, " ALLOC "}}", "{metadata: {name: n1, labels: {a: '1'}}, " ALLOC "}}", 0 },
		{ "{metadata: {name: n1, labels: {a: '1'}}, " ALLOC "}}", "{metadata: {name: n1, labels: {a: '2'}}, " ALLOC "}}",
		  SK_ACT_UPDATE_NODE_LABEL },
		{ "{metadata: {name: n1}, " ALLOC "}}", "{metadata: {name: n1, labels: {b: '1'}}, " ALLOC "}}",
		  SK_ACT_UPDATE_NODE_LABEL },
		{ "{metadata: {name: n1}, " ALLOC "}}", "{metadata: {name: n1}, status: {allocatable: {cpu: '4', pods: '10'}}}",
		  SK_ACT_UPDATE_NODE_ALLOCATABLE },
		{ "{metadata: {name: n1}, " ALLOC "}}", "{metadata: {name: n1}, status: {allocatable: {cpu: '2', pods: '10', example.com/gpu: '1'}}}",
		  SK_ACT_UPDATE_NODE_ALLOCATABLE },
		{ "{metadata: {name: n1}, " ALLOC "}}", "{metadata: {name: n1}, spec: {taints: [{key: k, effect: NoSchedule}]}, " ALLOC "}}",
		  SK_ACT_UPDATE_NODE_TAINT },
		{ "{metadata: {name: n1}, spec: {taints: [{key: k, effect: NoSchedule}]}, " ALLOC "}}",
		  "{metadata: {name: n1}, spec: {taints: [{key: k, effect: NoExecute}]}, " ALLOC "}}", SK_ACT_UPDATE_NODE_TAINT },
		{ "{metadata: {name: n1}, " ALLOC "}}", "{metadata: {name: n1}, spec: {unschedulable: true}, " ALLOC "}}",
		  SK_ACT_UPDATE_NODE_TAINT },
		{ "{metadata: {name: n1}, status: {conditions: [{type: Ready, status: 'True', lastHeartbeatTime: a}]}}",
		  "{metadata: {name: n1}, status: {conditions: [{type: Ready, status: 'True', lastHeartbeatTime: b}]}}", 0 },
		{ "{metadata: {name: n1}, status: {conditions: [{type: Ready, status: 'True'}]}}",
		  "{metadata: {name: n1}, status: {conditions: [{type: Ready, status: 'False'}]}}", SK_ACT_UPDATE_NODE_CONDITION },
		{ "{metadata: {name: n1, annotations: {a: '1'}}}", "{metadata: {name: n1, annotations: {a: '2'}}}",
		  SK_ACT_UPDATE_NODE_ANNOTATION },
		{ "{metadata: {name: n1}}", "{metadata: {name: n1, annotations: {}}}", 0 },
		{ "{metadata: {name: n1}, status: {images: [{names: [a], sizeBytes: 1}]}}",
		  "{metadata: {name: n1}, status: {images: [{names: [b], sizeBytes: 2}]}}", 0 }, /* images are no event */
		{ "{metadata: {name: n1, labels: {a: '1'}}, " ALLOC "}}",
		  "{metadata: {name: n1, labels: {b: '1'}, annotations: {x: y}}, spec: {taints: [{key: k, effect: NoSchedule}]},"
		  " status: {allocatable: {cpu: '3', pods: '10'}, conditions: [{type: Ready, status: 'True'}]}}",
		  SK_ACT_UPDATE_NODE_LABEL | SK_ACT_UPDATE_NODE_ALLOCATABLE | SK_ACT_UPDATE_NODE_TAINT |
			  SK_ACT_UPDATE_NODE_CONDITION | SK_ACT_UPDATE_NODE_ANNOTATION },
	};
#undef ALLOC
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sk_node *o = fx_node(cases[i].old_obj), *n = fx_node(cases[i].new_obj);
		cJSON *oj = fx_json(cases[i].old_obj), *nj = fx_json(cases[i].new_obj);
		uint32_t got = sk_node_update_actions(o, n) | sk_node_object_update_actions(oj, nj);
		if (got != cases[i].want)
			fail_msg("case %zu: got %#x want %#x", i, got, cases[i].want);
		sk_node_unref(o);
		sk_node_unref(n);
		cJSON_Delete(oj);
		cJSON_Delete(nj);
	}
	struct sk_node *n = fx_node("{metadata: {name: n1}}");
	assert_int_equal(sk_node_update_actions(NULL, n), SK_ACT_UPDATE);
	assert_int_equal(sk_node_update_actions(n, NULL), SK_ACT_UPDATE);
	sk_node_unref(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_active_order, setup),
		cmocka_unit_test_setup(test_backoff_durations, setup),
		cmocka_unit_test_setup(test_unschedulable_event_backoff_window, setup),
		cmocka_unit_test_setup(test_hint_skip_and_pending, setup),
		cmocka_unit_test_setup(test_error_backoff_queue, setup),
		cmocka_unit_test_setup(test_pop_from_backoff_when_idle, setup),
		cmocka_unit_test_setup(test_gated_pods, setup),
		cmocka_unit_test_setup(test_flush_unschedulable, setup),
		cmocka_unit_test_setup(test_inflight_events, setup),
		cmocka_unit_test_setup(test_inflight_and_hint_metrics, setup),
		cmocka_unit_test_setup(test_hints_disabled, setup),
		cmocka_unit_test_setup(test_update_delete_activate, setup),
		cmocka_unit_test_setup(test_pop_blocks_until_add_or_close, setup),
		cmocka_unit_test_setup(test_pod_update_events, setup),
		cmocka_unit_test_setup(test_flusher_thread_starts_and_stops, setup),
		cmocka_unit_test_setup(test_activate_from_backoff_skips_pre_enqueue, setup),
		cmocka_unit_test_setup(test_move_all_pre_check, setup),
		cmocka_unit_test_setup(test_backoff_duration_table, setup),
		cmocka_unit_test_setup(test_force_activate_targets_one_in_flight_pod, setup),
		cmocka_unit_test_setup(test_flush_leaves_gated_pods_alone, setup),
		cmocka_unit_test_setup(test_preemptor_gated_until_its_victims_go, setup),
		cmocka_unit_test_setup(test_activate_in_flight_without_hints, setup),
		cmocka_unit_test(test_node_update_classification),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
