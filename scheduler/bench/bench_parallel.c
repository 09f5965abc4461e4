/* Worker pool overhead: time per sk_parallel_for call over n items with an empty body and with
 * ~100 ns of work per item, serially (NULL pool), with the default pool (adaptive engagement, see
 * parallel.h) and with SK_POOL_EAGER (every loop handed to the workers at once, the old policy),
 * in two regimes: back to back (a busy caller: the pool may keep its workers polling) and spaced
 * out by ~200 us of idle time (a caller that waits for work, like the scheduler end to end).
 * Prints the pool's counters after each pool's runs. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "scheduler/framework/parallel.h"

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

static void idle_us(int us)
{
	struct timespec ts = { 0, us * 1000L };
	nanosleep(&ts, NULL);
}

/* gap_us > 0: sleep that long between calls and report only the time inside the calls. */
static void run(struct sk_pool *p, const char *pool, const char *label, int n, void (*fn)(int, void *), int gap_us)
{
	int reps = gap_us ? 1000 : 10000;
	double inside = 0;
	for (int r = 0; r < reps; r++) {
		double t0 = now_s();
		sk_parallel_for(p, n, fn, NULL);
		inside += now_s() - t0;
		if (gap_us)
			idle_us(gap_us);
	}
	printf("  %-6s %-6s %-8s threads=%d n=%-5d %8.2f us/call\n", label, gap_us ? "spaced" : "b2b", pool,
	       sk_pool_threads(p), n, inside / reps * 1e6);
}

static void stats(const char *name, struct sk_pool *p)
{
	struct sk_pool_stats st;
	sk_pool_get_stats(p, &st);
	printf("  [%s pool] loops=%ld opened_at_once=%ld opened_late=%ld poll_backoffs=%ld stalls=%ld\n", name,
	       st.loops, st.opened_at_once, st.opened_late, st.poll_backoffs, st.stalls);
}

int main(void)
{
	struct sk_pool *adaptive = sk_pool_new(16, NULL);
	setenv("SK_POOL_EAGER", "1", 1);
	struct sk_pool *eager = sk_pool_new(16, NULL);
	unsetenv("SK_POOL_EAGER");
	printf("parallel_for overhead (serial = NULL pool; adaptive = default pool; eager = SK_POOL_EAGER=1):\n");
	static const int sizes[] = { 100, 500, 5000 };
	for (int gap = 0; gap <= 200; gap += 200) {
		for (int i = 0; i < 3; i++) {
			run(NULL, "serial", "empty", sizes[i], empty, gap);
			run(adaptive, "adaptive", "empty", sizes[i], empty, gap);
			run(eager, "eager", "empty", sizes[i], empty, gap);
			run(NULL, "serial", "work", sizes[i], work, gap);
			run(adaptive, "adaptive", "work", sizes[i], work, gap);
			run(eager, "eager", "work", sizes[i], work, gap);
		}
	}
	stats("adaptive", adaptive);
	stats("eager", eager);
	sk_pool_free(adaptive);
	sk_pool_free(eager);
	return 0;
}
