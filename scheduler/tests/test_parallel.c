/* Tests for scheduler/framework/parallel.c: every index runs exactly once, chunk sizes follow upstream,
 * early stop leaves a processed prefix, nested calls run inline instead of deadlocking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/framework/parallel.h"

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
	setenv("SK_POOL_THREADS", "4", 1);
	char *err = NULL;
	struct sk_pool *p = sk_pool_new(16, &err);
	unsetenv("SK_POOL_THREADS");
	assert_non_null(p);
	assert_int_equal(sk_pool_parallelism(p), 16);
	assert_int_equal(sk_pool_threads(p), 4);
	static const int sizes[] = { 0, 1, 2, 7, 100, 1000, 5000 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		int n = sizes[k];
		atomic_int *hits = calloc((size_t)(n ? n : 1), sizeof(atomic_int));
		struct count_ctx c = { hits };
		for (int rep = 0; rep < 20; rep++)
			sk_parallel_for(p, n, hit, &c);
		for (int i = 0; i < n; i++)
			assert_int_equal(atomic_load(&hits[i]), 20);
		free(hits);
	}
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
	setenv("SK_POOL_THREADS", "4", 1);
	struct sk_pool *p = sk_pool_new(16, NULL);
	unsetenv("SK_POOL_THREADS");
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
	setenv("SK_POOL_THREADS", "3", 1);
	struct nest_ctx c = { .p = sk_pool_new(16, NULL) };
	unsetenv("SK_POOL_THREADS");
	atomic_init(&c.total, 0);
	sk_parallel_for(c.p, 100, outer, &c);
	assert_int_equal(atomic_load(&c.total), 1000);
	sk_parallel_for(NULL, 5, outer, &c); /* NULL pool: serial */
	assert_int_equal(atomic_load(&c.total), 1050);
	sk_pool_free(c.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_index_once),
		cmocka_unit_test(test_threads_capped_by_parallelism),
		cmocka_unit_test(test_chunk_size),
		cmocka_unit_test(test_cancel_leaves_prefix),
		cmocka_unit_test(test_nested_runs_inline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
