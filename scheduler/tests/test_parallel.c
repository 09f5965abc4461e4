/* Tests for scheduler/framework/parallel.c: every index runs exactly once, chunk sizes follow upstream,
 * early stop leaves a processed prefix, nested calls run inline instead of deadlocking. The pools
 * are forced (SK_POOL_EAGER_FORCE) and the counters prove worker threads ran part of each loop:
 * left adaptive, short loops stay on the caller and these properties would go untested. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/framework/parallel.h"

/* A pool of `threads` threads (caller included) whose every loop runs partly on a worker. */
static struct sk_pool *forced_pool(int threads)
{
	char buf[16];
	snprintf(buf, sizeof(buf), "%d", threads);
	setenv("SK_POOL_THREADS", buf, 1);
	char *err = NULL;
	struct sk_pool *p = sk_pool_new(16, &err);
	unsetenv("SK_POOL_THREADS");
	assert_non_null(p);
	assert_int_equal(sk_pool_threads(p), threads);
	sk_pool_set_eager(p, SK_POOL_EAGER_FORCE);
	return p;
}

struct count_ctx {
	atomic_int *hits;
};

static void hit(int i, void *arg)
{
	struct count_ctx *c = arg;
	atomic_fetch_add(&c->hits[i], 1);
}

static void test_every_index_once(void **state)
{
	(void)state;
	struct sk_pool *p = forced_pool(4);
	assert_int_equal(sk_pool_parallelism(p), 16);
	static const int sizes[] = { 0, 1, 2, 7, 100, 1000, 5000 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		int n = sizes[k];
		atomic_int *hits = calloc((size_t)(n ? n : 1), sizeof(atomic_int));
		struct count_ctx c = { hits };
		struct sk_pool_stats before, after;
		sk_pool_get_stats(p, &before);
		for (int rep = 0; rep < 20; rep++)
			sk_parallel_for(p, n, hit, &c);
		sk_pool_get_stats(p, &after);
		for (int i = 0; i < n; i++)
			assert_int_equal(atomic_load(&hits[i]), 20);
		free(hits);
		long loops = after.loops - before.loops;
		long wchunks = after.worker_chunks - before.worker_chunks;
		long items = after.worker_items - before.worker_items + after.caller_items - before.caller_items;
		if (n <= sk_pool_chunk_size(n, 16)) {
			/* one chunk or less: inline, the pool is not taken */
			assert_int_equal(loops, 0);
			assert_int_equal(wchunks, 0);
			continue;
		}
		assert_int_equal(loops, 20);
		assert_int_equal(items, 20L * n); /* every item counted once, by whoever ran it */
		assert_true(wchunks >= 20);        /* a worker ran (at least) the first chunk of each loop */
		assert_true(after.worker_items - before.worker_items > 0);
	}
	sk_pool_free(p);
}

/* Adaptive (the default): a short loop on an idle pool stays on the caller, which is why the other
 * tests force the workers. Also checks that the counters split the work correctly then. */
static void test_adaptive_keeps_short_loops_inline(void **state)
{
	(void)state;
	setenv("SK_POOL_THREADS", "2", 1);
	unsetenv("SK_POOL_EAGER");
	struct sk_pool *p = sk_pool_new(16, NULL);
	unsetenv("SK_POOL_THREADS");
	assert_non_null(p);
	atomic_int hits[100];
	for (int i = 0; i < 100; i++)
		atomic_init(&hits[i], 0);
	struct count_ctx c = { hits };
	sk_parallel_for(p, 100, hit, &c);
	struct sk_pool_stats st;
	sk_pool_get_stats(p, &st);
	assert_int_equal(st.loops, 1);
	assert_int_equal(st.opened_at_once, 0);
	assert_int_equal(st.caller_items + st.worker_items, 100);
	assert_int_equal(st.caller_chunks + st.worker_chunks, 15); /* chunk = min(sqrt(100), 100/16+1) = 7 */
	sk_pool_set_eager(p, SK_POOL_EAGER_FORCE);
	sk_parallel_for(p, 100, hit, &c);
	sk_pool_get_stats(p, &st);
	assert_int_equal(st.loops, 2);
	assert_int_equal(st.opened_at_once, 1);
	assert_true(st.worker_chunks >= 1);
	assert_int_equal(st.caller_items + st.worker_items, 200);
	for (int i = 0; i < 100; i++)
		assert_int_equal(atomic_load(&hits[i]), 2);
	sk_pool_free(p);
}

/* SK_POOL_EAGER=2 in the environment is the same as sk_pool_set_eager(FORCE). */
static void test_eager_env_forces_workers(void **state)
{
	(void)state;
	setenv("SK_POOL_THREADS", "3", 1);
	setenv("SK_POOL_EAGER", "2", 1);
	struct sk_pool *p = sk_pool_new(16, NULL);
	unsetenv("SK_POOL_EAGER");
	unsetenv("SK_POOL_THREADS");
	assert_non_null(p);
	atomic_int hits[64];
	for (int i = 0; i < 64; i++)
		atomic_init(&hits[i], 0);
	struct count_ctx c = { hits };
	for (int rep = 0; rep < 50; rep++)
		sk_parallel_for(p, 64, hit, &c);
	struct sk_pool_stats st;
	sk_pool_get_stats(p, &st);
	assert_int_equal(st.loops, 50);
	assert_true(st.worker_chunks >= 50);
	for (int i = 0; i < 64; i++)
		assert_int_equal(atomic_load(&hits[i]), 50);
	sk_pool_free(p);
}

static void test_threads_capped_by_parallelism(void **state)
{
	(void)state;
	setenv("SK_POOL_THREADS", "8", 1);
	struct sk_pool *p = sk_pool_new(2, NULL);
	unsetenv("SK_POOL_THREADS");
	assert_int_equal(sk_pool_threads(p), 2);
	sk_pool_free(p);
	p = sk_pool_new(0, NULL);
	assert_int_equal(sk_pool_parallelism(p), 16);
	sk_pool_free(p);
	sk_pool_free(NULL);
}

static void test_chunk_size(void **state)
{
	(void)state;
	assert_int_equal(sk_pool_chunk_size(0, 16), 1);
	assert_int_equal(sk_pool_chunk_size(1, 16), 1);
	assert_int_equal(sk_pool_chunk_size(100, 16), 7);    /* min(10, 100/16+1=7) */
	assert_int_equal(sk_pool_chunk_size(5000, 16), 70);  /* sqrt=70, 313 */
	assert_int_equal(sk_pool_chunk_size(5000, 1000), 6); /* 5000/1000+1 */
}

struct stop_ctx {
	atomic_int *done;
	atomic_int *cancel;
	int stop_at;
};

static void stop_range(int begin, int end, void *arg)
{
	struct stop_ctx *c = arg;
	for (int i = begin; i < end; i++) {
		atomic_store(&c->done[i], 1);
		if (i == c->stop_at)
			atomic_store(c->cancel, 1);
	}
}

static void test_cancel_leaves_prefix(void **state)
{
	(void)state;
	struct sk_pool *p = forced_pool(4);
	struct sk_pool_stats st;
	for (int rep = 0; rep < 50; rep++) {
		int n = 3000;
		atomic_int *done = calloc((size_t)n, sizeof(atomic_int));
		atomic_int cancel;
		atomic_init(&cancel, 0);
		struct stop_ctx c = { done, &cancel, 500 };
		sk_parallel_for_range(p, n, 10, stop_range, &c, &cancel);
		int i = 0;
		while (i < n && atomic_load(&done[i]))
			i++;
		assert_true(i > 500);     /* the stopping chunk finished */
		assert_int_equal(i % 10, 0); /* whole chunks */
		for (int k = i; k < n; k++)
			assert_int_equal(atomic_load(&done[k]), 0); /* nothing after the prefix */
		free(done);
	}
	sk_pool_get_stats(p, &st);
	assert_int_equal(st.loops, 50);
	assert_true(st.worker_chunks >= 50); /* the prefix property held with a worker in each loop */
	assert_true(st.caller_items + st.worker_items <= 50L * 3000);
	/* cancelled before the loop starts: no chunk runs and the forced wait does not hang */
	atomic_int done[100], cancel;
	for (int i = 0; i < 100; i++)
		atomic_init(&done[i], 0);
	atomic_init(&cancel, 1);
	struct stop_ctx c = { done, &cancel, -1 };
	sk_parallel_for_range(p, 100, 10, stop_range, &c, &cancel);
	for (int i = 0; i < 100; i++)
		assert_int_equal(atomic_load(&done[i]), 0);
	sk_pool_free(p);
}

struct nest_ctx {
	struct sk_pool *p;
	atomic_int total;
};

static void inner(int i, void *arg)
{
	(void)i;
	struct nest_ctx *c = arg;
	atomic_fetch_add(&c->total, 1);
}

static void outer(int i, void *arg)
{
	(void)i;
	struct nest_ctx *c = arg;
	sk_parallel_for(c->p, 10, inner, c);
}

static void test_nested_runs_inline(void **state)
{
	(void)state;
	struct nest_ctx c = { .p = forced_pool(3) };
	atomic_init(&c.total, 0);
	sk_parallel_for(c.p, 100, outer, &c);
	assert_int_equal(atomic_load(&c.total), 1000);
	struct sk_pool_stats st;
	sk_pool_get_stats(c.p, &st);
	assert_int_equal(st.loops, 1);        /* the inner loops ran inline, uncounted... */
	assert_true(st.worker_chunks >= 1);   /* ...on a worker too: nesting from a worker thread */
	assert_int_equal(st.caller_items + st.worker_items, 100);
	sk_parallel_for(NULL, 5, outer, &c); /* NULL pool: serial */
	assert_int_equal(atomic_load(&c.total), 1050);
	sk_pool_free(c.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_index_once),
		cmocka_unit_test(test_adaptive_keeps_short_loops_inline),
		cmocka_unit_test(test_eager_env_forces_workers),
		cmocka_unit_test(test_threads_capped_by_parallelism),
		cmocka_unit_test(test_chunk_size),
		cmocka_unit_test(test_cancel_leaves_prefix),
		cmocka_unit_test(test_nested_runs_inline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
