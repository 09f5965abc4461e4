/* The worker pool behind sk_parallel_for (see parallel.h for the thread-count and engagement
 * policy).
 *
 * Hand-off without locks on the hot path: the caller fills the job while job_closed is set, opens
 * it and bumps gen; workers poll gen for a bounded time, then sleep on work_cv (mu only protects
 * that wait). Indexes are claimed with one atomic add on job.next. run_lock makes one
 * parallel_for at a time use the workers; the fields under "caller only" are touched only by the
 * thread holding run_lock.
 *
 * Engagement ("the pool must pay for itself"): the caller claims chunks from the job itself
 * before it is opened, so opening it later keeps the in-order prefix property. It opens the job
 * at once only when a worker is polling (hand-off ~100 ns) or the pool is saturated: the share of
 * wall time the caller spent in parallel loops over the last WINDOW_NS is at least SATURATED_PCT
 * (back-to-back Filter/Score, as in a benchmark or a backlog). Otherwise it runs inline and wakes
 * the sleepers only once it has spent WAKE_AFTER_NS on the loop with work left, so a futex
 * wake-up is paid only by loops long enough to amortise it. Workers poll (SPIN_NS, wall clock)
 * only while the pool is saturated. When another process wants the cores (e.g. the API server on
 * a 2-core box), seen as a worker preempted while polling (involuntary context switch) or a caller
 * that waited STALL_NS for a worker's chunk, backoff_until stops polling, inviting and waking for
 * BACKOFF_NS. */
#include "scheduler/framework/parallel.h"
#include "kube/util.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct pool_job {
	void (*fn)(int begin, int end, void *ctx);
	void *ctx;
	int n, chunk;
	atomic_int *cancel;
	atomic_int next;
};

/* One per worker thread, on its own cache line: the worker is the only writer of its counters, so
 * counting never bounces a line shared with the caller or the other workers. */
struct worker_slot {
	_Alignas(64) struct sk_pool *pool;
	pthread_t thread;
	atomic_long chunks, items; /* run by this worker in jobs it joined */
};

struct sk_pool {
	int parallelism, nthreads, nworkers;
	struct worker_slot *workers;
	pthread_mutex_t run_lock; /* one parallel_for at a time uses the workers */
	pthread_mutex_t mu;       /* sleeping workers: guards nothing but the condition wait */
	pthread_cond_t work_cv;
	atomic_uint_fast64_t gen; /* bumped when a job opens */
	atomic_bool stop;
	atomic_bool job_closed;   /* true between jobs: a worker that arrives then must not run */
	atomic_int running;       /* workers inside the current job (net count) */
	atomic_int sleepers;      /* workers blocked (or about to block) on work_cv */
	atomic_int pollers;       /* workers polling gen right now */
	atomic_bool saturated;    /* workers may poll (set by the caller from its duty cycle) */
	atomic_int_fast64_t backoff_until; /* monotonic ns: no polling before (set by workers) */
	int eager;                /* SK_POOL_EAGER_*: 0 adaptive, 1 open at once, 2 also wait for a worker */
	struct pool_job job;      /* written by the caller while job_closed is true */
	/* caller only (holder of run_lock): duty-cycle window, counters */
	int64_t win_start, win_busy;
	struct sk_pool_stats st;
	atomic_long backoffs;
};

/* The pool whose work this thread is executing (worker threads always; the caller while it runs
 * its own loop). A parallel_for on that pool from such a thread runs inline. */
static _Thread_local struct sk_pool *tls_running_pool;

#define SPIN_NS 40000          /* how long an idle worker polls for the next job when saturated */
#define WAKE_AFTER_NS 30000    /* inline time after which sleeping workers are woken */
#define WINDOW_NS 2000000      /* duty-cycle window */
#define SATURATED_PCT 40       /* % of the window spent in parallel loops => keep workers polling */
#define BACKOFF_NS 50000000    /* no polling (nor waking) for 50 ms after a preemption was seen */
#define STALL_NS 50000         /* caller waited this long for a worker's chunk: it was preempted */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static long thread_nivcsw(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : 0;
}

int sk_pool_chunk_size(int n, int parallelism)
{
	if (parallelism < 1)
		parallelism = 1;
	int s = (int)sqrt((double)n);
	int r = n / parallelism + 1;
	if (s > r)
		s = r;
	return s < 1 ? 1 : s;
}

/* Claims and runs one chunk; returns its size, 0 when there is nothing left (or cancelled). */
static int run_one_chunk(struct pool_job *j)
{
	if (j->cancel && atomic_load_explicit(j->cancel, memory_order_acquire))
		return 0;
	int begin = atomic_fetch_add_explicit(&j->next, j->chunk, memory_order_relaxed);
	if (begin >= j->n)
		return 0;
	int end = j->n - begin > j->chunk ? begin + j->chunk : j->n;
	j->fn(begin, end, j->ctx);
	return end - begin;
}

/* Runs chunks until none is left; adds what it ran to *chunks and *items (plain locals of the
 * running thread, so counting costs nothing shared per chunk). */
static void run_chunks(struct pool_job *j, long *chunks, long *items)
{
	for (int k; (k = run_one_chunk(j)) > 0;) {
		(*chunks)++;
		*items += k;
	}
}

/* Joins the open job, if any: the running count is raised before job_closed is read, so the
 * caller (which closes, then waits for running == 0) either sees this worker or is seen closed. */
static void try_join(struct sk_pool *p, struct worker_slot *w)
{
	atomic_fetch_add(&p->running, 1);
	if (!atomic_load(&p->job_closed)) {
		long chunks = 0, items = 0;
		run_chunks(&p->job, &chunks, &items);
		/* Before leaving the job: once the caller has seen running == 0, the counters include
		 * this worker's share. Single writer: load and store, no read-modify-write. */
		if (chunks) {
			atomic_store_explicit(&w->chunks, atomic_load_explicit(&w->chunks, memory_order_relaxed) + chunks,
					      memory_order_relaxed);
			atomic_store_explicit(&w->items, atomic_load_explicit(&w->items, memory_order_relaxed) + items,
					      memory_order_relaxed);
		}
	}
	atomic_fetch_sub(&p->running, 1);
}

/* Polls gen for up to SPIN_NS while the pool is saturated; returns the generation seen. */
static uint64_t poll_gen(struct sk_pool *p, uint64_t seen)
{
	uint64_t g = atomic_load(&p->gen);
	if (g != seen || !atomic_load_explicit(&p->saturated, memory_order_relaxed))
		return g;
	int64_t t0 = kube_mono_ns();
	if (t0 < atomic_load_explicit(&p->backoff_until, memory_order_relaxed))
		return g;
	long cs0 = thread_nivcsw();
	atomic_fetch_add(&p->pollers, 1);
	for (unsigned i = 1; g == seen && !atomic_load_explicit(&p->stop, memory_order_relaxed); i++) {
		cpu_relax();
		g = atomic_load(&p->gen);
		if ((i & 63) == 0 && kube_mono_ns() - t0 > SPIN_NS)
			break;
	}
	atomic_fetch_sub(&p->pollers, 1);
	/* Preempted while polling: another runnable task wanted this core. Stop polling for a while. */
	if (g == seen && thread_nivcsw() != cs0) {
		atomic_store_explicit(&p->backoff_until, kube_mono_ns() + BACKOFF_NS, memory_order_relaxed);
		atomic_fetch_add_explicit(&p->backoffs, 1, memory_order_relaxed);
	}
	return g;
}

static void *worker_main(void *arg)
{
	struct worker_slot *w = arg;
	struct sk_pool *p = w->pool;
	/* gen as it was in sk_pool_new, not as this thread finds it: a job opened before the thread
	 * got here must still be joined (a forced pool's caller waits for it). */
	uint64_t seen = 0;
	tls_running_pool = p;
	while (!atomic_load(&p->stop)) {
		uint64_t g = poll_gen(p, seen);
		if (g == seen) {
			pthread_mutex_lock(&p->mu);
			atomic_fetch_add(&p->sleepers, 1);
			while (!atomic_load(&p->stop) && atomic_load(&p->gen) == seen)
				pthread_cond_wait(&p->work_cv, &p->mu);
			atomic_fetch_sub(&p->sleepers, 1);
			pthread_mutex_unlock(&p->mu);
			continue;
		}
		seen = g;
		try_join(p, w);
	}
	return NULL;
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (int)n;
}

struct sk_pool *sk_pool_new(int parallelism, char **err)
{
	if (parallelism < 1)
		parallelism = 16;
	struct sk_pool *p = calloc(1, sizeof(*p));
	if (!p) {
		if (err)
			*err = strdup("worker pool: out of memory");
		return NULL;
	}
	p->parallelism = parallelism;
	int threads = online_cpus();
	const char *env = getenv("SK_POOL_THREADS");
	if (env && atoi(env) > 0)
		threads = atoi(env);
	if (threads > parallelism)
		threads = parallelism;
	p->nthreads = threads;
	env = getenv("SK_POOL_EAGER");
	p->eager = env ? atoi(env) : 0;
	if (p->eager < 0 || p->eager > SK_POOL_EAGER_FORCE)
		p->eager = p->eager < 0 ? 0 : SK_POOL_EAGER_FORCE;
	pthread_mutex_init(&p->run_lock, NULL);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work_cv, NULL);
	atomic_init(&p->gen, 0);
	atomic_init(&p->stop, false);
	atomic_init(&p->job_closed, true);
	atomic_init(&p->running, 0);
	atomic_init(&p->sleepers, 0);
	atomic_init(&p->pollers, 0);
	atomic_init(&p->saturated, p->eager);
	atomic_init(&p->backoff_until, 0);
	atomic_init(&p->job.next, 0);
	atomic_init(&p->backoffs, 0);
	if (threads > 1) {
		p->workers = aligned_alloc(_Alignof(struct worker_slot), (size_t)(threads - 1) * sizeof(struct worker_slot));
		if (!p->workers) {
			sk_pool_free(p);
			if (err)
				*err = strdup("worker pool: out of memory");
			return NULL;
		}
		for (int i = 0; i < threads - 1; i++) {
			struct worker_slot *w = &p->workers[i];
			w->pool = p;
			atomic_init(&w->chunks, 0);
			atomic_init(&w->items, 0);
			int rc = pthread_create(&w->thread, NULL, worker_main, w);
			if (rc != 0) {
				if (p->nworkers == 0) {
					sk_pool_free(p);
					if (err && asprintf(err, "worker pool: cannot start a thread: %s", strerror(rc)) < 0)
						*err = NULL;
					return NULL;
				}
				break; /* run with fewer threads */
			}
			p->nworkers++;
		}
		p->nthreads = p->nworkers + 1;
	}
	return p;
}

static long worker_sum(struct sk_pool *p, bool chunks)
{
	long s = 0;
	for (int i = 0; i < p->nworkers; i++)
		s += atomic_load_explicit(chunks ? &p->workers[i].chunks : &p->workers[i].items, memory_order_relaxed);
	return s;
}

void sk_pool_free(struct sk_pool *p)
{
	if (!p)
		return;
	const char *env = getenv("SK_POOL_STATS");
	if (env && atoi(env) > 0)
		fprintf(stderr, "sk_pool: threads=%d loops=%ld opened_at_once=%ld opened_late=%ld poll_backoffs=%ld stalls=%ld "
			"items caller=%ld workers=%ld chunks caller=%ld workers=%ld\n",
			p->nthreads, p->st.loops, p->st.opened_at_once, p->st.opened_late, (long)atomic_load(&p->backoffs),
			p->st.stalls, p->st.caller_items, worker_sum(p, false), p->st.caller_chunks, worker_sum(p, true));
	pthread_mutex_lock(&p->mu);
	atomic_store(&p->stop, true);
	pthread_cond_broadcast(&p->work_cv);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->nworkers; i++)
		pthread_join(p->workers[i].thread, NULL);
	free(p->workers);
	pthread_cond_destroy(&p->work_cv);
	pthread_mutex_destroy(&p->mu);
	pthread_mutex_destroy(&p->run_lock);
	free(p);
}

int sk_pool_parallelism(const struct sk_pool *p) { return p ? p->parallelism : 1; }

void sk_pool_get_stats(struct sk_pool *p, struct sk_pool_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!p)
		return;
	pthread_mutex_lock(&p->run_lock);
	*out = p->st;
	pthread_mutex_unlock(&p->run_lock);
	out->poll_backoffs = atomic_load(&p->backoffs);
	out->worker_chunks = worker_sum(p, true);
	out->worker_items = worker_sum(p, false);
}

void sk_pool_set_eager(struct sk_pool *p, int level)
{
	if (!p)
		return;
	if (level < 0)
		level = 0;
	if (level > SK_POOL_EAGER_FORCE)
		level = SK_POOL_EAGER_FORCE;
	pthread_mutex_lock(&p->run_lock);
	p->eager = level;
	/* Eager pools keep their workers polling; back to adaptive, the duty cycle decides again. */
	atomic_store_explicit(&p->saturated, level > 0, memory_order_relaxed);
	p->win_start = 0;
	pthread_mutex_unlock(&p->run_lock);
}
int sk_pool_threads(const struct sk_pool *p) { return p ? p->nthreads : 1; }

/* Opens the (already filled) job to the workers; wakes them when none is polling. */
static void open_job(struct sk_pool *p)
{
	atomic_store(&p->job_closed, false);
	atomic_fetch_add(&p->gen, 1);
	if (atomic_load(&p->sleepers) > 0 && atomic_load(&p->pollers) < p->nworkers) {
		pthread_mutex_lock(&p->mu);
		pthread_cond_broadcast(&p->work_cv);
		pthread_mutex_unlock(&p->mu);
	}
}

/* SK_POOL_EAGER_FORCE: the caller lets a worker claim the first chunk before it takes any, so
 * every loop the pool takes runs partly on a worker thread (tests that must exercise concurrent
 * Filter/Score). Nothing else claims chunks of this job yet, hence next > 0 means a worker did; a
 * loop cancelled before it started has no chunk to give. */
static void wait_first_claim(struct sk_pool *p)
{
	for (int i = 0; atomic_load_explicit(&p->job.next, memory_order_relaxed) == 0; i++) {
		if (p->job.cancel && atomic_load_explicit(p->job.cancel, memory_order_acquire))
			return;
		if (i < 256)
			cpu_relax();
		else
			sched_yield(); /* on a busy box the worker may need this core */
	}
}

/* Duty-cycle bookkeeping (caller only): busy ns spent in this loop, now = end of the loop. */
static void account(struct sk_pool *p, int64_t busy, int64_t now)
{
	if (p->eager)
		return;
	if (p->win_start == 0 || now - p->win_start > 4 * WINDOW_NS) {
		/* First loop, or idle for a long time: start a fresh window, not saturated. */
		p->win_start = now - busy;
		p->win_busy = 0;
		atomic_store_explicit(&p->saturated, false, memory_order_relaxed);
	}
	p->win_busy += busy;
	int64_t span = now - p->win_start;
	if (span >= WINDOW_NS) {
		atomic_store_explicit(&p->saturated, p->win_busy * 100 >= span * SATURATED_PCT, memory_order_relaxed);
		p->win_start = now;
		p->win_busy = 0;
	}
}

void sk_parallel_for_range(struct sk_pool *p, int n, int chunk, void (*fn)(int begin, int end, void *ctx), void *ctx,
			   atomic_int *cancel)
{
	if (n <= 0)
		return;
	if (chunk < 1)
		chunk = sk_pool_chunk_size(n, sk_pool_parallelism(p));
	bool inline_run = !p || p->nworkers == 0 || n <= chunk || tls_running_pool == p ||
			  pthread_mutex_trylock(&p->run_lock) != 0;
	long chunks = 0, items = 0;
	if (inline_run) {
		struct pool_job j = { .fn = fn, .ctx = ctx, .n = n, .chunk = chunk, .cancel = cancel };
		atomic_init(&j.next, 0);
		run_chunks(&j, &chunks, &items);
		return;
	}
	/* job_closed is true here: no worker touches the job fields. */
	p->job.fn = fn;
	p->job.ctx = ctx;
	p->job.n = n;
	p->job.chunk = chunk;
	p->job.cancel = cancel;
	atomic_store(&p->job.next, 0);

	struct sk_pool *prev = tls_running_pool;
	tls_running_pool = p;
	int64_t t0 = kube_mono_ns();
	bool opened = false;
	p->st.loops++;
	if (p->eager || atomic_load(&p->pollers) > 0 ||
	    (atomic_load_explicit(&p->saturated, memory_order_relaxed) &&
	     t0 >= atomic_load_explicit(&p->backoff_until, memory_order_relaxed))) {
		open_job(p);
		opened = true;
		p->st.opened_at_once++;
		if (p->eager == SK_POOL_EAGER_FORCE)
			wait_first_claim(p);
		run_chunks(&p->job, &chunks, &items);
	} else {
		/* Inline until the loop proves long enough to pay for a wake-up (not while another
		 * process keeps the other cores busy: see backoff_until). The caller claims chunks from
		 * the job itself, so the chunks run stay a prefix once workers join. */
		bool may_wake = t0 >= atomic_load_explicit(&p->backoff_until, memory_order_relaxed);
		for (int k; (k = run_one_chunk(&p->job)) > 0;) {
			chunks++;
			items += k;
			if (may_wake && !opened && kube_mono_ns() - t0 > WAKE_AFTER_NS) {
				open_job(p);
				opened = true;
				p->st.opened_late++;
			}
		}
	}
	tls_running_pool = prev;

	if (opened) {
		/* Close, then wait for the workers that joined (each finishes at most its current chunk). */
		atomic_store(&p->job_closed, true);
		int64_t yielded_at = 0;
		for (int i = 0; atomic_load(&p->running) > 0; i++) {
			if (i < 256) {
				cpu_relax();
				continue;
			}
			if (!yielded_at)
				yielded_at = kube_mono_ns();
			sched_yield();
		}
		/* A long wait means a worker lost its core mid-chunk (another process runs there): keep
		 * the next loops on this thread for a while. */
		if (yielded_at && kube_mono_ns() - yielded_at > STALL_NS) {
			atomic_store_explicit(&p->backoff_until, kube_mono_ns() + BACKOFF_NS, memory_order_relaxed);
			p->st.stalls++;
		}
	}
	p->st.caller_chunks += chunks;
	p->st.caller_items += items;
	int64_t t1 = kube_mono_ns();
	account(p, t1 - t0, t1);
	pthread_mutex_unlock(&p->run_lock);
}

struct each_ctx {
	void (*fn)(int i, void *ctx);
	void *ctx;
};

static void each_range(int begin, int end, void *arg)
{
	struct each_ctx *e = arg;
	for (int i = begin; i < end; i++)
		e->fn(i, e->ctx);
}

void sk_parallel_for(struct sk_pool *p, int n, void (*fn)(int i, void *ctx), void *ctx)
{
	struct each_ctx e = { fn, ctx };
	sk_parallel_for_range(p, n, 0, each_range, &e, NULL);
}
