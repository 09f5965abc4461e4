/* The worker pool behind sk_parallel_for (see parallel.h for the thread-count choice).
 * Hand-off without locks on the hot path: the caller fills the job while job_closed is set, opens
 * it and bumps gen; workers poll gen briefly, then sleep on work_cv (mu only protects that wait).
 * Indexes are claimed with one atomic add on job.next. run_lock makes one parallel_for at a time
 * use the workers. */
#include "scheduler/parallel.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pool_job {
	void (*fn)(int begin, int end, void *ctx);
	void *ctx;
	int n, chunk;
	atomic_int *cancel;
	atomic_int next;
};

struct sk_pool {
	int parallelism, nthreads, nworkers;
	pthread_t *workers;
	pthread_mutex_t run_lock; /* one parallel_for at a time uses the workers */
	pthread_mutex_t mu;       /* sleeping workers: guards nothing but the condition wait */
	pthread_cond_t work_cv;
	atomic_uint_fast64_t gen; /* bumped when a job opens */
	atomic_bool stop;
	atomic_bool job_closed;   /* true between jobs: a worker that arrives then must not run */
	atomic_int running;       /* workers inside the current job (net count) */
	atomic_int sleepers;      /* workers blocked (or about to block) on work_cv */
	struct pool_job job;      /* written by the caller while job_closed is true */
};

/* The pool whose work this thread is executing (worker threads always; the caller while it runs
 * its own loop). A parallel_for on that pool from such a thread runs inline. */
static _Thread_local struct sk_pool *tls_running_pool;

/* How long a worker polls for the next job before sleeping: the scheduling loop issues its
 * Filter and Score loops back to back, and a futex wake-up costs more than a short poll. */
#define SPIN_ROUNDS 4000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
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

static void run_chunks(struct pool_job *j)
{
	for (;;) {
		if (j->cancel && atomic_load_explicit(j->cancel, memory_order_acquire))
			return;
		int begin = atomic_fetch_add_explicit(&j->next, j->chunk, memory_order_relaxed);
		if (begin >= j->n)
			return;
		int end = j->n - begin > j->chunk ? begin + j->chunk : j->n;
		j->fn(begin, end, j->ctx);
	}
}

/* Joins the open job, if any: the running count is raised before job_closed is read, so the
 * caller (which closes, then waits for running == 0) either sees this worker or is seen closed. */
static void try_join(struct sk_pool *p)
{
	atomic_fetch_add(&p->running, 1);
	if (!atomic_load(&p->job_closed))
		run_chunks(&p->job);
	atomic_fetch_sub(&p->running, 1);
}

static void *worker_main(void *arg)
{
	struct sk_pool *p = arg;
	uint64_t seen = atomic_load(&p->gen);
	tls_running_pool = p;
	while (!atomic_load(&p->stop)) {
		uint64_t g = atomic_load(&p->gen);
		for (int i = 0; g == seen && i < SPIN_ROUNDS && !atomic_load_explicit(&p->stop, memory_order_relaxed); i++) {
			cpu_relax();
			g = atomic_load(&p->gen);
		}
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
		try_join(p);
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
	pthread_mutex_init(&p->run_lock, NULL);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work_cv, NULL);
	atomic_init(&p->gen, 0);
	atomic_init(&p->stop, false);
	atomic_init(&p->job_closed, true);
	atomic_init(&p->running, 0);
	atomic_init(&p->sleepers, 0);
	atomic_init(&p->job.next, 0);
	if (threads > 1) {
		p->workers = calloc((size_t)(threads - 1), sizeof(pthread_t));
		if (!p->workers) {
			sk_pool_free(p);
			if (err)
				*err = strdup("worker pool: out of memory");
			return NULL;
		}
		for (int i = 0; i < threads - 1; i++) {
			int rc = pthread_create(&p->workers[i], NULL, worker_main, p);
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

void sk_pool_free(struct sk_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	atomic_store(&p->stop, true);
	pthread_cond_broadcast(&p->work_cv);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->nworkers; i++)
		pthread_join(p->workers[i], NULL);
	free(p->workers);
	pthread_cond_destroy(&p->work_cv);
	pthread_mutex_destroy(&p->mu);
	pthread_mutex_destroy(&p->run_lock);
	free(p);
}

int sk_pool_parallelism(const struct sk_pool *p) { return p ? p->parallelism : 1; }
int sk_pool_threads(const struct sk_pool *p) { return p ? p->nthreads : 1; }

void sk_parallel_for_range(struct sk_pool *p, int n, int chunk, void (*fn)(int begin, int end, void *ctx), void *ctx,
			   atomic_int *cancel)
{
	if (n <= 0)
		return;
	if (chunk < 1)
		chunk = sk_pool_chunk_size(n, sk_pool_parallelism(p));
	bool inline_run = !p || p->nworkers == 0 || n <= chunk || tls_running_pool == p ||
			  pthread_mutex_trylock(&p->run_lock) != 0;
	if (inline_run) {
		struct pool_job j = { .fn = fn, .ctx = ctx, .n = n, .chunk = chunk, .cancel = cancel };
		atomic_init(&j.next, 0);
		run_chunks(&j);
		return;
	}
	/* job_closed is true here: no worker touches the job fields. */
	p->job.fn = fn;
	p->job.ctx = ctx;
	p->job.n = n;
	p->job.chunk = chunk;
	p->job.cancel = cancel;
	atomic_store(&p->job.next, 0);
	atomic_store(&p->job_closed, false);
	atomic_fetch_add(&p->gen, 1);
	if (atomic_load(&p->sleepers) > 0) {
		pthread_mutex_lock(&p->mu);
		pthread_cond_broadcast(&p->work_cv);
		pthread_mutex_unlock(&p->mu);
	}

	struct sk_pool *prev = tls_running_pool;
	tls_running_pool = p;
	run_chunks(&p->job);
	tls_running_pool = prev;

	/* Close, then wait for the workers that joined (each finishes at most its current chunk). */
	atomic_store(&p->job_closed, true);
	while (atomic_load(&p->running) > 0)
		sched_yield();
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
