/* The prioritize verb of several extenders at once: upstream prioritizeNodes
 * (pkg/scheduler/schedule_one.go) starts one goroutine per interested extender and waits for all;
 * here the first runs on the calling thread and every other on a thread of its own, each into its
 * own score array, added to the totals in extender order once all have answered (the sums wrap
 * modulo 2^64 as Go's int64 does, so the order does not change them). Filter stays sequential:
 * each filter extender gets the previous one's output (findNodesThatPassExtenders). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"
#include "scheduler/framework/extender.h"

struct job {
	const struct sk_extender *e;
	const struct sk_pod *pod;
	const struct sk_node_info *const *nodes;
	int n;
	int64_t *add; /* this extender's contribution, from 0 */
	pthread_t th;
	bool started;
};

static void run(struct job *j)
{
	char *msg = NULL;
	if (sk_extender_prioritize(j->e, j->pod, j->nodes, j->n, j->add, &msg) != 0) {
		klog_info(5, "Failed to run extender's priority function. No score given by this extender.",
			  " pod=%s/%s extender=%s err=\"%s\"", j->pod->ns, j->pod->name, sk_extender_name(j->e),
			  msg ? msg : "");
		memset(j->add, 0, (size_t)j->n * sizeof(*j->add)); /* a failed answer adds nothing */
	}
	free(msg);
}

static void *job_main(void *arg)
{
	run(arg);
	return NULL;
}

/* One extender: straight into totals, no copy, no thread. */
static void run_one(const struct sk_extender *e, const struct sk_pod *pod, const struct sk_node_info *const *nodes,
		    int n, int64_t *totals)
{
	char *msg = NULL;
	if (sk_extender_prioritize(e, pod, nodes, n, totals, &msg) != 0)
		klog_info(5, "Failed to run extender's priority function. No score given by this extender.",
			  " pod=%s/%s extender=%s err=\"%s\"", pod->ns, pod->name, sk_extender_name(e), msg ? msg : "");
	free(msg);
}

void sk_extenders_prioritize(const struct sk_extender *const *es, int ne, const struct sk_pod *pod,
			     const struct sk_node_info *const *nodes, int n, int64_t *totals)
{
	int m = 0, only = -1;
	for (int i = 0; i < ne; i++)
		if (sk_extender_is_prioritizer(es[i]) && sk_extender_is_interested(es[i], pod)) {
			m++;
			only = i;
		}
	if (m == 0 || n <= 0)
		return;
	if (m == 1) {
		run_one(es[only], pod, nodes, n, totals);
		return;
	}
	struct job *jobs = calloc((size_t)m, sizeof(*jobs));
	int64_t *adds = calloc((size_t)m * (size_t)n, sizeof(*adds));
	if (!jobs || !adds) { /* out of memory: one after the other, straight into totals */
		free(jobs);
		free(adds);
		for (int i = 0; i < ne; i++)
			if (sk_extender_is_prioritizer(es[i]) && sk_extender_is_interested(es[i], pod))
				run_one(es[i], pod, nodes, n, totals);
		return;
	}
	for (int i = 0, k = 0; i < ne; i++) {
		if (!sk_extender_is_prioritizer(es[i]) || !sk_extender_is_interested(es[i], pod))
			continue;
		jobs[k] = (struct job){ .e = es[i], .pod = pod, .nodes = nodes, .n = n, .add = adds + (size_t)k * (size_t)n };
		k++;
	}
	for (int j = 1; j < m; j++)
		jobs[j].started = pthread_create(&jobs[j].th, NULL, job_main, &jobs[j]) == 0;
	run(&jobs[0]);
	for (int j = 1; j < m; j++) {
		if (jobs[j].started)
			pthread_join(jobs[j].th, NULL);
		else
			run(&jobs[j]); /* no thread: on this one */
	}
	for (int j = 0; j < m; j++)
		for (int x = 0; x < n; x++)
			totals[x] = (int64_t)((uint64_t)totals[x] + (uint64_t)jobs[j].add[x]);
	free(adds);
	free(jobs);
}
