/* Worker pool overhead: time per sk_parallel_for call over n items with an empty body and with
 * ~100 ns of work per item, for 1 thread and for the pool's default thread count. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "scheduler/parallel.h"

static volatile double sink;

static void empty(int i, void *ctx)
{
	(void)i;
	(void)ctx;
}

static void work(int i, void *ctx)
{
	(void)ctx;
	double x = i;
	for (int k = 0; k < 40; k++)
		x = x * 1.0000001 + 0.5;
	sink = x;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run(struct sk_pool *p, const char *label, int n, void (*fn)(int, void *))
{
	int reps = 20000;
	double t0 = now_s();
	for (int r = 0; r < reps; r++)
		sk_parallel_for(p, n, fn, NULL);
	double per = (now_s() - t0) / reps * 1e6;
	printf("  %-6s threads=%d n=%-5d %8.2f us/call\n", label, sk_pool_threads(p), n, per);
}

int main(void)
{
	struct sk_pool *one = NULL;
	struct sk_pool *many = sk_pool_new(16, NULL);
	printf("parallel_for overhead (serial = NULL pool):\n");
	static const int sizes[] = { 100, 500, 5000 };
	for (int i = 0; i < 3; i++) {
		run(one, "empty", sizes[i], empty);
		run(many, "empty", sizes[i], empty);
		run(one, "work", sizes[i], work);
		run(many, "work", sizes[i], work);
	}
	sk_pool_free(many);
	return 0;
}
