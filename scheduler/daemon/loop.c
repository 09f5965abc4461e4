/* The scheduling loop (one thread, started when leading or at start without election; it
 * counts finished cycles for the reaper), the 1 s housekeeper (gauges, expired assumptions) and
 * the leader election callbacks. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/log.h"
#include "scheduler/backend/queue.h"
#include "scheduler/daemon/internal.h"

/* ---------- loops ---------- */

static void *loop_main(void *arg)
{
	struct sk_daemon *d = arg;
	/* WaitForCacheSync: pods, nodes, the storage informers and the listers */
	while (!atomic_load(&d->stopping) && !sk_daemon_synced(d))
		usleep(20000);
	if (!atomic_load(&d->stopping))
		klog_info(0, "Starting the scheduling loop");
	while (!atomic_load(&d->stopping)) {
		int r = sk_schedule_one(d->sched, true);
		/* After the call returns this thread holds no framework reference: the reaper uses
		 * the count to know that a cycle begun before a swap is over. */
		atomic_fetch_add(&d->cycles, 1);
		if (r < 0)
			break;
	}
	atomic_store(&d->loop_active, false);
	return NULL;
}

void sk_dm_start_loop(struct sk_daemon *d)
{
	pthread_mutex_lock(&d->mu);
	if (!d->loop_running && !atomic_load(&d->stopping)) {
		atomic_store(&d->loop_active, true);
		if (pthread_create(&d->loop_thread, NULL, loop_main, d) == 0) {
			d->loop_running = true;
		} else {
			atomic_store(&d->loop_active, false);
			klog_error("Cannot start the scheduling loop thread");
		}
	}
	pthread_mutex_unlock(&d->mu);
}

void *sk_dm_house_main(void *arg)
{
	struct sk_daemon *d = arg;
	pthread_mutex_lock(&d->house_mu);
	while (!d->house_stop) {
		pthread_mutex_unlock(&d->house_mu);
		struct sk_queue_counts c;
		sk_queue_counts(sk_scheduler_queue(d->sched), &c);
		sk_sched_metrics_pending(d->metrics, &c);
		sk_sched_metrics_unschedulable(d->metrics, sk_scheduler_queue(d->sched));
		sk_sched_metrics_cache_size(d->metrics, sk_cache_node_count(d->cache), sk_cache_pod_count(d->cache),
					    sk_cache_assumed_count(d->cache));
		sk_cache_cleanup_expired(d->cache);
		sk_dm_publish_summary(d);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_mutex_lock(&d->house_mu);
		if (!d->house_stop)
			pthread_cond_timedwait(&d->house_cv, &d->house_mu, &ts);
	}
	pthread_mutex_unlock(&d->house_mu);
	return NULL;
}

/* ---------- leader election ---------- */

static void on_started_leading(void *ctx)
{
	struct sk_daemon *d = ctx;
	atomic_store(&d->leading, true);
	sk_sched_metrics_leader(d->metrics, d->lease_name, true);
	klog_info(0, "Started leading", " lease=%s/%s identity=%s", d->lease_ns, d->lease_name, d->identity);
	sk_dm_start_loop(d);
}

static void on_stopped_leading(void *ctx)
{
	struct sk_daemon *d = ctx;
	atomic_store(&d->leading, false);
	sk_sched_metrics_leader(d->metrics, d->lease_name, false);
	if (atomic_load(&d->stopping)) {
		klog_info(0, "Requested to terminate, exiting");
		return;
	}
	/* kube-scheduler exits here ("leaderelection lost"); stop popping at once. */
	klog_error("leaderelection lost", " lease=%s/%s", d->lease_ns, d->lease_name);
	atomic_store(&d->failed, true);
	sk_queue_close(sk_scheduler_queue(d->sched));
}

static void on_new_leader(void *ctx, const char *identity)
{
	struct sk_daemon *d = ctx;
	if (strcmp(identity, d->identity))
		klog_info(0, "New leader elected", " identity=%s", identity);
}

void sk_dm_leader_callbacks(struct sk_daemon *d, struct kube_leader_config *lc)
{
	lc->on_started_leading = on_started_leading;
	lc->on_stopped_leading = on_stopped_leading;
	lc->on_new_leader = on_new_leader;
	lc->ctx = d;
}
