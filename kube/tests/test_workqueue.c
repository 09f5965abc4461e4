/* Tests for kube/workqueue: dedupe, re-queue of keys added while processing, delays with a fake
 * clock, the default controller rate limiter's arithmetic, forget/num_requeues, shutdown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/metrics.h"
#include "kube/workqueue.h"

#define MS 1000000LL
#define SEC 1000000000LL

struct fake_clock {
	_Atomic int64_t now;
};

static int64_t fake_now(void *ctx)
{
	return atomic_load(&((struct fake_clock *)ctx)->now);
}

static struct kube_workqueue *new_fake_queue(struct fake_clock *fc, double qps, int burst)
{
	atomic_store(&fc->now, 1000 * SEC);
	struct kube_workqueue_clock clock = {fake_now, fc};
	struct kube_workqueue_opts o = {.name = "test", .clock = &clock, .qps = qps, .burst = burst};
	struct kube_workqueue *q = kube_workqueue_new(&o);
	assert_non_null(q);
	return q;
}

/* Non-blocking get: the test must not hang if the queue is wrong. */
static char *get_now(struct kube_workqueue *q)
{
	return kube_workqueue_get_timeout(q, 0, NULL);
}

static void expect_get(struct kube_workqueue *q, const char *want)
{
	char *k = get_now(q);
	if (!want) {
		if (k)
			fail_msg("got %s, want nothing", k);
		return;
	}
	if (!k)
		fail_msg("got nothing, want %s", want);
	assert_string_equal(k, want);
	free(k);
}

static void test_dedupe_and_fifo(void **state)
{
	(void)state;
	struct kube_workqueue *q = kube_workqueue_new(NULL);
	kube_workqueue_add(q, "a");
	kube_workqueue_add(q, "b");
	kube_workqueue_add(q, "a");
	kube_workqueue_add(q, "c");
	kube_workqueue_add(q, "b");
	assert_int_equal(kube_workqueue_len(q), 3);
	const char *order[] = {"a", "b", "c"};
	for (int i = 0; i < 3; i++) {
		char *k = get_now(q);
		assert_non_null(k);
		assert_string_equal(k, order[i]);
		kube_workqueue_done(q, k);
		free(k);
	}
	expect_get(q, NULL);
	kube_workqueue_free(q);
}

static void test_requeue_while_processing(void **state)
{
	(void)state;
	struct kube_workqueue *q = kube_workqueue_new(NULL);
	kube_workqueue_add(q, "k");
	char *k = get_now(q);
	assert_string_equal(k, "k");
	/* Added twice while processing: not handed out now, queued exactly once after done. */
	kube_workqueue_add(q, "k");
	kube_workqueue_add(q, "k");
	assert_int_equal(kube_workqueue_len(q), 0);
	expect_get(q, NULL);
	kube_workqueue_done(q, k);
	free(k);
	assert_int_equal(kube_workqueue_len(q), 1);
	k = get_now(q);
	assert_string_equal(k, "k");
	kube_workqueue_done(q, k);
	free(k);
	assert_int_equal(kube_workqueue_len(q), 0);
	/* done without a re-add does not queue. */
	expect_get(q, NULL);
	kube_workqueue_free(q);
}

static void test_add_after_with_fake_clock(void **state)
{
	(void)state;
	struct fake_clock fc;
	struct kube_workqueue *q = new_fake_queue(&fc, 0, 0);
	kube_workqueue_add_after(q, "late", 100 * MS);
	kube_workqueue_add_after(q, "early", 50 * MS);
	kube_workqueue_add_after(q, "now", 0);
	kube_workqueue_add_after(q, "late", 500 * MS); /* later time is ignored: keeps 100ms */
	assert_int_equal(kube_workqueue_len(q), 1);
	expect_get(q, "now");
	atomic_fetch_add(&fc.now, 49 * MS);
	assert_int_equal(kube_workqueue_len(q), 0);
	atomic_fetch_add(&fc.now, 1 * MS);
	expect_get(q, "early");
	atomic_fetch_add(&fc.now, 50 * MS);
	expect_get(q, "late");
	/* The ignored 500ms entry does not fire a second time. */
	atomic_fetch_add(&fc.now, 1000 * MS);
	expect_get(q, NULL);

	/* An earlier time replaces a later one. */
	kube_workqueue_add_after(q, "x", 1 * SEC);
	kube_workqueue_add_after(q, "x", 10 * MS);
	atomic_fetch_add(&fc.now, 10 * MS);
	expect_get(q, "x");
	atomic_fetch_add(&fc.now, 2 * SEC);
	kube_workqueue_done(q, "x");
	expect_get(q, NULL);
	kube_workqueue_free(q);
}

struct getter {
	struct kube_workqueue *q;
	char *got;
	bool shutdown;
};

static void *getter_thread(void *p)
{
	struct getter *g = p;
	g->got = kube_workqueue_get_timeout(g->q, 30 * SEC, &g->shutdown);
	return NULL;
}

static void test_blocked_getter_wakes_on_fake_clock(void **state)
{
	(void)state;
	struct fake_clock fc;
	struct kube_workqueue *q = new_fake_queue(&fc, 0, 0);
	kube_workqueue_add_after(q, "d", 3600 * SEC);
	struct getter g = {q, NULL, false};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, getter_thread, &g), 0);
	atomic_fetch_add(&fc.now, 3600 * SEC);
	kube_workqueue_wake(q);
	pthread_join(th, NULL);
	assert_non_null(g.got);
	assert_string_equal(g.got, "d");
	free(g.got);
	kube_workqueue_free(q);
}

static void test_real_clock_delay(void **state)
{
	(void)state;
	struct kube_workqueue *q = kube_workqueue_new(NULL);
	kube_workqueue_add_after(q, "soon", 20 * MS);
	char *k = kube_workqueue_get(q); /* blocks on a timed wait until the key is ready */
	assert_non_null(k);
	assert_string_equal(k, "soon");
	free(k);
	kube_workqueue_free(q);
}

static void test_exponential_backoff(void **state)
{
	(void)state;
	struct fake_clock fc;
	struct kube_workqueue *q = new_fake_queue(&fc, -1, 0); /* token bucket off */
	/* ItemExponentialFailureRateLimiter(5ms, 1000s): 5ms * 2^n, capped. */
	static const int64_t want[] = {5 * MS, 10 * MS, 20 * MS, 40 * MS, 80 * MS, 160 * MS, 320 * MS, 640 * MS,
				       1280 * MS, 2560 * MS};
	for (int i = 0; i < 10; i++) {
		int64_t d = kube_workqueue_when(q, "one");
		if (d != want[i])
			fail_msg("failure %d: delay %lld, want %lld", i, (long long)d, (long long)want[i]);
		assert_int_equal(kube_workqueue_num_requeues(q, "one"), i + 1);
	}
	/* Another key has its own count. */
	assert_int_equal(kube_workqueue_when(q, "two"), 5 * MS);
	/* 5ms * 2^18 = 1310.72s > 1000s: capped; and it stays capped far beyond (no overflow). */
	for (int i = 10; i < 18; i++)
		kube_workqueue_when(q, "one");
	assert_int_equal(kube_workqueue_when(q, "one"), 1000 * SEC);
	for (int i = 0; i < 100; i++)
		kube_workqueue_when(q, "one");
	assert_int_equal(kube_workqueue_when(q, "one"), 1000 * SEC);
	kube_workqueue_forget(q, "one");
	assert_int_equal(kube_workqueue_num_requeues(q, "one"), 0);
	assert_int_equal(kube_workqueue_when(q, "one"), 5 * MS);
	kube_workqueue_free(q);
}

static void test_token_bucket(void **state)
{
	(void)state;
	struct fake_clock fc;
	struct kube_workqueue *q = new_fake_queue(&fc, 0, 0); /* defaults: 10 qps, burst 100 */
	char key[32];
	/* 100 distinct keys use the burst: each gets only its 5ms backoff. */
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(kube_workqueue_when(q, key), 5 * MS);
	}
	/* Then the bucket is empty: 100ms per token at 10 qps, accumulating. */
	assert_int_equal(kube_workqueue_when(q, "x1"), 100 * MS);
	assert_int_equal(kube_workqueue_when(q, "x2"), 200 * MS);
	/* One second later, 10 tokens came back; the balance was -2. */
	atomic_fetch_add(&fc.now, 1 * SEC);
	for (int i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "y%d", i);
		assert_int_equal(kube_workqueue_when(q, key), 5 * MS);
	}
	assert_int_equal(kube_workqueue_when(q, "z"), 100 * MS);
	kube_workqueue_free(q);
}

static void test_add_rate_limited_uses_delay(void **state)
{
	(void)state;
	struct fake_clock fc;
	struct kube_workqueue *q = new_fake_queue(&fc, 0, 0);
	kube_workqueue_add_rate_limited(q, "r"); /* 5ms */
	assert_int_equal(kube_workqueue_len(q), 0);
	atomic_fetch_add(&fc.now, 4 * MS);
	expect_get(q, NULL);
	atomic_fetch_add(&fc.now, 1 * MS);
	char *k = get_now(q);
	assert_non_null(k);
	kube_workqueue_add_rate_limited(q, k); /* 10ms, queued after done */
	kube_workqueue_done(q, k);
	free(k);
	atomic_fetch_add(&fc.now, 9 * MS);
	expect_get(q, NULL);
	atomic_fetch_add(&fc.now, 1 * MS);
	expect_get(q, "r");
	assert_int_equal(kube_workqueue_num_requeues(q, "r"), 2);
	kube_workqueue_free(q);
}

static void test_shutdown(void **state)
{
	(void)state;
	struct kube_workqueue *q = kube_workqueue_new(NULL);
	struct getter g[3];
	pthread_t th[3];
	for (int i = 0; i < 3; i++) {
		g[i] = (struct getter){q, NULL, false};
		assert_int_equal(pthread_create(&th[i], NULL, getter_thread, &g[i]), 0);
	}
	kube_workqueue_shut_down(q);
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		assert_null(g[i].got);
		assert_true(g[i].shutdown);
	}
	assert_true(kube_workqueue_shutting_down(q));
	kube_workqueue_free(q);

	/* Already queued keys drain; adds and delayed keys after shutdown are dropped. */
	q = kube_workqueue_new(NULL);
	kube_workqueue_add(q, "queued");
	kube_workqueue_add_after(q, "delayed", 10 * MS);
	kube_workqueue_shut_down(q);
	kube_workqueue_add(q, "ignored");
	assert_int_equal(kube_workqueue_len(q), 1);
	char *k = kube_workqueue_get(q);
	assert_string_equal(k, "queued");
	free(k);
	bool down = false;
	assert_null(kube_workqueue_get_timeout(q, 50 * MS, &down));
	assert_true(down);
	kube_workqueue_free(q);
	kube_workqueue_free(NULL);
}

static void test_metrics_and_stray_done(void **state)
{
	(void)state;
	struct fake_clock fc;
	atomic_store(&fc.now, 1000 * SEC);
	struct kube_workqueue_clock clock = {fake_now, &fc};
	struct kube_metrics_registry *reg = kube_metrics_registry_new();
	struct kube_workqueue_opts o = {.name = "op", .clock = &clock, .metrics = reg};
	struct kube_workqueue *q = kube_workqueue_new(&o);
	const char *const *op = KUBE_LABELS("op");
#define VAL(n) kube_metrics_value(reg, n, op)
	kube_workqueue_add(q, "a");
	kube_workqueue_add(q, "b");
	kube_workqueue_add(q, "a");
	assert_true(VAL("workqueue_adds_total") == 2);
	assert_true(VAL("workqueue_depth") == 2);
	atomic_fetch_add(&fc.now, 3 * SEC);
	char *k = get_now(q);
	assert_string_equal(k, "a");
	assert_true(VAL("workqueue_depth") == 1);
	struct kube_metric *qd = kube_metrics_lookup(reg, "workqueue_queue_duration_seconds");
	assert_true(kube_metric_value(qd, op) == 1);
	assert_true(kube_histogram_sum(qd, op) == 3);
	kube_workqueue_add(q, "a"); /* while processing */
	assert_true(VAL("workqueue_adds_total") == 3);
	assert_true(VAL("workqueue_depth") == 2);
	/* done for a key that was never handed out changes nothing. */
	kube_workqueue_done(q, "b");
	assert_int_equal(kube_workqueue_len(q), 1);
	atomic_fetch_add(&fc.now, 2 * SEC);
	kube_workqueue_done(q, k);
	free(k);
	struct kube_metric *wd = kube_metrics_lookup(reg, "workqueue_work_duration_seconds");
	assert_true(kube_histogram_sum(wd, op) == 2);
	assert_int_equal(kube_workqueue_len(q), 2);
	assert_true(VAL("workqueue_depth") == 2);
	kube_workqueue_add_after(q, "x", SEC);
	kube_workqueue_add_rate_limited(q, "y");
	assert_true(VAL("workqueue_retries_total") == 2);
#undef VAL
	kube_workqueue_free(q);
	char *text = kube_metrics_render(reg);
	assert_non_null(strstr(text, "workqueue_depth{name=\"op\"} 2\n"));
	assert_non_null(strstr(text, "workqueue_queue_duration_seconds_bucket{name=\"op\",le=\"1e-08\"} 0\n"));
	free(text);
	kube_metrics_registry_free(reg);
}

#define WORKERS 4
#define KEYS 200

struct worker {
	struct kube_workqueue *q;
	_Atomic int *in_flight; /* per key: concurrent processing count */
	_Atomic int *processed;
	atomic_bool overlap;
};

static void *worker_thread(void *p)
{
	struct worker *w = p;
	char *k;
	while ((k = kube_workqueue_get(w->q))) {
		int i = atoi(k + 1);
		if (atomic_fetch_add(&w->in_flight[i], 1) != 0)
			atomic_store(&w->overlap, true);
		atomic_fetch_add(&w->processed[i], 1);
		atomic_fetch_sub(&w->in_flight[i], 1);
		kube_workqueue_done(w->q, k);
		free(k);
	}
	return NULL;
}

static void test_concurrent_workers_never_overlap(void **state)
{
	(void)state;
	struct kube_workqueue *q = kube_workqueue_new(NULL);
	_Atomic int in_flight[KEYS] = {0}, processed[KEYS] = {0};
	struct worker w = {q, in_flight, processed, false};
	pthread_t th[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker_thread, &w), 0);
	char key[16];
	for (int round = 0; round < 50; round++)
		for (int i = 0; i < KEYS; i++) {
			snprintf(key, sizeof(key), "k%d", i);
			kube_workqueue_add(q, key);
		}
	/* Wait until drained, then stop the workers. */
	while (kube_workqueue_len(q) > 0)
		kube_workqueue_wake(q);
	kube_workqueue_shut_down(q);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	assert_false(atomic_load(&w.overlap));
	for (int i = 0; i < KEYS; i++)
		if (processed[i] < 1 || processed[i] > 50)
			fail_msg("key %d processed %d times", i, processed[i]);
	kube_workqueue_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedupe_and_fifo),
		cmocka_unit_test(test_requeue_while_processing),
		cmocka_unit_test(test_add_after_with_fake_clock),
		cmocka_unit_test(test_blocked_getter_wakes_on_fake_clock),
		cmocka_unit_test(test_real_clock_delay),
		cmocka_unit_test(test_exponential_backoff),
		cmocka_unit_test(test_token_bucket),
		cmocka_unit_test(test_add_rate_limited_uses_delay),
		cmocka_unit_test(test_shutdown),
		cmocka_unit_test(test_metrics_and_stray_done),
		cmocka_unit_test(test_concurrent_workers_never_overlap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
