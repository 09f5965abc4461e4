/* Tests for scheduler/intern.c: identity of equal strings, growth, embedded lengths, threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <cmocka.h>

#include "schedkit/types.h"

static void test_identity(void **state)
{
	(void)state;
	const char *a = sk_intern("hello");
	char buf[32] = "hello";
	assert_ptr_equal(sk_intern(buf), a);
	assert_ptr_not_equal(buf, a);
	assert_ptr_equal(sk_intern_n("hello world", 5), a);
	assert_ptr_not_equal(sk_intern("hellO"), a);
	assert_ptr_not_equal(sk_intern("hell"), a);
	assert_null(sk_intern(NULL));
	assert_null(sk_intern_n(NULL, 3));
	assert_string_equal(sk_intern(""), "");
	assert_ptr_equal(sk_intern(""), sk_intern_n("xyz", 0));
	/* a long string (own allocation) */
	char *big = malloc(100000);
	assert_non_null(big);
	memset(big, 'x', 99999);
	big[99999] = '\0';
	const char *ib = sk_intern(big);
	assert_string_equal(ib, big);
	assert_ptr_equal(sk_intern(big), ib);
	free(big);
}

static void test_growth(void **state)
{
	(void)state;
	enum { N = 50000 };
	const char **ptrs = malloc(sizeof(*ptrs) * N);
	assert_non_null(ptrs);
	char buf[32];
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "g-%d", i);
		ptrs[i] = sk_intern(buf);
	}
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "g-%d", i);
		assert_ptr_equal(sk_intern(buf), ptrs[i]);
		assert_string_equal(ptrs[i], buf);
	}
	free(ptrs);
}

enum { THREADS = 8, PER_THREAD = 20000 };
static const char *results[THREADS][PER_THREAD / 10];

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	char buf[32];
	/* every thread interns the same set in a different order; some strings are new */
	for (int k = 0; k < PER_THREAD; k++) {
		int i = (k * 7 + t * 131) % (PER_THREAD / 10);
		snprintf(buf, sizeof(buf), "t-%d", i);
		const char *p = sk_intern(buf);
		if (k < PER_THREAD / 10)
			results[t][i] = p;
		else if (results[t][i] && results[t][i] != p)
			return (void *)1;
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	pthread_t th[THREADS];
	for (int t = 0; t < THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
	for (int t = 0; t < THREADS; t++) {
		void *rv = NULL;
		pthread_join(th[t], &rv);
		assert_null(rv);
	}
	/* all threads got the same pointer for the same string */
	for (int i = 0; i < PER_THREAD / 10; i++) {
		const char *first = NULL;
		for (int t = 0; t < THREADS; t++) {
			if (!results[t][i])
				continue;
			if (!first)
				first = results[t][i];
			assert_ptr_equal(results[t][i], first);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
