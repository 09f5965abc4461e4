/* A fixed worker pool and a low-overhead parallel_for (upstream's parallelize.Parallelizer).
 *
 * Thread count: `parallelism` (config, default 16) is the upper bound of concurrent work; the pool
 * starts min(parallelism, online CPUs) threads in total, counting the caller, which always takes
 * part in its own parallel_for. On a 2-core box that is one worker thread plus the caller:
 * Filter and Score are CPU-bound and never block, so more threads than cores only add context
 * switches and cache misses; sk_pool_parallelism() still reports the configured value so chunk
 * sizes follow upstream (chunkSizeFor). SK_POOL_THREADS in the environment overrides the thread
 * count (benchmarks, tests).
 *
 * Work is handed out in chunks of consecutive indexes claimed in increasing order with one atomic
 * add; nothing is allocated per item or per call. One parallel_for runs at a time per pool:
 * a second caller (another thread, or a nested call from inside fn) runs its loop inline on its
 * own thread, so nesting never deadlocks.
 *
 * The pool pays for itself or stays out of the way: a loop runs inline on the caller, chunk by
 * chunk, and the workers join only (a) at once when one of them is already polling for work
 * (hand-off ~0.1 us), or when the caller has been busy in parallel loops for a large share of the
 * recent wall time (back-to-back Filter/Score: a backlog or a benchmark), or (b) once the caller
 * has spent ~30 us inline with work left (a futex wake-up costs several us, and much more when
 * the core is busy with another process). Idle workers poll for at most ~40 us, and only while
 * the caller is that busy. When another process wants the cores (e.g. the local API server on a
 * 2-core machine), seen as a worker preempted while polling or a caller that waited > 50 us for a
 * worker's chunk, the pool neither polls nor wakes workers for 50 ms: loops run on the caller.
 * None of this changes which chunks run: they are claimed in order from the same counter,
 * whoever runs them.
 * SK_POOL_EAGER=1 in the environment (read once per pool, in sk_pool_new) opens every loop to the
 * workers at once (A/B runs); SK_POOL_EAGER=2 also makes the caller wait until a worker has claimed
 * the first chunk, so every loop the pool takes runs partly on a worker thread (tests that must
 * exercise concurrent Filter/Score; sk_pool_set_eager does the same for one pool).
 * SK_POOL_STATS=1 prints the counters below to stderr when the pool is freed. */
#ifndef SK_PARALLEL_H
#define SK_PARALLEL_H

#include <stdatomic.h>
#include <stdbool.h>

struct sk_pool;

/* parallelism < 1 means 16. Returns NULL and *err (caller frees) if no thread could be started. */
struct sk_pool *sk_pool_new(int parallelism, char **err);
/* Joins the workers. NULL ok. No parallel_for may be running. */
void sk_pool_free(struct sk_pool *p);
int sk_pool_parallelism(const struct sk_pool *p); /* the configured value */
int sk_pool_threads(const struct sk_pool *p);     /* threads that run work, caller included */

#define SK_POOL_EAGER_OFF 0   /* adaptive engagement (the default) */
#define SK_POOL_EAGER_OPEN 1  /* every loop opened to the workers at once */
#define SK_POOL_EAGER_FORCE 2 /* ... and a worker always runs the first chunk */
/* Overrides SK_POOL_EAGER for p (level clamped to the values above). No parallel_for on p may be
 * running in the caller's thread; a concurrent one finishes under the old level. NULL ok. */
void sk_pool_set_eager(struct sk_pool *p, int level);

/* Counters since sk_pool_new (benchmarks, diagnostics). Loops that ran inline without taking the
 * pool (NULL pool, n <= chunk, nested, concurrent caller) are not counted. */
struct sk_pool_stats {
	long loops;          /* loops that took the pool */
	long opened_at_once; /* workers invited from the first chunk (polling worker or busy caller) */
	long opened_late;    /* workers woken after WAKE_AFTER_NS inline */
	long poll_backoffs;  /* polls cut short by preemption (another task wanted the core) */
	long stalls;         /* loops whose caller waited > 50 us for a preempted worker's chunk */
	/* Work of the loops that took the pool, split by who ran it: tests assert worker_* > 0 to
	 * prove a loop really ran concurrently. */
	long caller_chunks, caller_items;
	long worker_chunks, worker_items;
};
void sk_pool_get_stats(struct sk_pool *p, struct sk_pool_stats *out);

/* upstream chunkSizeFor: sqrt(n), at most n/parallelism + 1, at least 1. */
int sk_pool_chunk_size(int n, int parallelism);

/* Runs fn(i, ctx) for every i in [0, n). Returns when all are done. p may be NULL (serial). */
void sk_parallel_for(struct sk_pool *p, int n, void (*fn)(int i, void *ctx), void *ctx);

/* Range form with early stop: fn(begin, end, ctx) is called for consecutive chunks of `chunk`
 * indexes (chunk < 1: sk_pool_chunk_size); chunks are claimed in increasing order and a claimed
 * chunk is always finished. Before claiming the next chunk each thread reads *cancel (may be NULL);
 * once it is non-zero no further chunk starts. Hence the chunks that ran are exactly a prefix
 * [0, k*chunk) of the range, whatever the thread timing: callers can rebuild serial-order results. */
void sk_parallel_for_range(struct sk_pool *p, int n, int chunk, void (*fn)(int begin, int end, void *ctx), void *ctx,
			   atomic_int *cancel);

#endif
