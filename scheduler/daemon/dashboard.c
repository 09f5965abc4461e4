/* The scheduler's live web view (docs/explain.md, "The live web view"): the embedded page under
 * /debug/schedkit/v1/dashboard/, its WebSocket /debug/schedkit/v1/dashboard/ws (kube/httpws.h,
 * guarded as every debug path), and the thread that feeds it. The thread does nothing while no
 * browser is connected; with one it publishes the new decision records every FEED_MS and the
 * state (queues, node fill, recent records) every STATE_MS, retained so a new client starts
 * from it. It takes the queue's and the cache's lock once per state, the store's once per tick,
 * never across building JSON. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/httpws.h"
#include "kube/log.h"
#include "kube/util.h"
#include "scheduler/daemon/internal.h"
#include "scheduler/decisions/dashboard.h"
#include "scheduler/decisions/dashboard_assets.h"

#define DASH_PREFIX "/debug/schedkit/v1/dashboard"
#define FEED_MS 200
#define STATE_MS 1000
#define RECENT_IN_STATE 50
#define FEED_BATCH 200

struct sk_dm_dashboard {
	struct kube_ws_channel *ch;
	pthread_mutex_t mu;   /* guards stop; cv wakes the thread to stop */
	pthread_cond_t cv;
	bool stop, running;
	pthread_t thread;
	/* the thread's own */
	uint64_t last_seq;
	int64_t last_state_ns;
	bool had_clients;
};

static void asset_handler(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	(void)req;
	const struct sk_dash_asset *a = ctx;
	kube_http_respond(resp, 200, a->content_type, NULL);
	resp->body = (const char *)a->data;
	resp->body_len = a->len;
}

/* Without the slash the page's relative URLs would point one level up. */
static void redirect_handler(const struct kube_http_request *req, struct kube_http_response *resp, void *ctx)
{
	(void)req;
	(void)ctx;
	kube_http_respond(resp, 200, "text/html; charset=utf-8",
			  "<!doctype html><meta http-equiv=\"refresh\" content=\"0; url=dashboard/\">"
			  "<a href=\"dashboard/\">dashboard/</a>\n");
}

/* ---- the state ---- */

static void count_pod(void *ctx, const struct sk_pod *pod, enum sk_queue_where where)
{
	sk_dash_queues_count(ctx, pod->scheduler_name, where);
}

struct node_vec {
	struct sk_dash_node *v;
	int n, cap;
	bool oom;
};

static void take_node(void *ctx, const struct sk_node_info *ni)
{
	struct node_vec *nv = ctx;
	if (nv->n == nv->cap) {
		int cap = nv->cap ? nv->cap * 2 : 64;
		struct sk_dash_node *v = realloc(nv->v, (size_t)cap * sizeof *v);
		if (!v) {
			nv->oom = true;
			return;
		}
		nv->v = v;
		nv->cap = cap;
	}
	const struct sk_node *n = ni->node;
	nv->v[nv->n++] = (struct sk_dash_node){
		.name = n->name, .cpu_requested = ni->requested.milli_cpu, .cpu_allocatable = n->allocatable.milli_cpu,
		.mem_requested = ni->requested.memory, .mem_allocatable = n->allocatable.memory, .pods = ni->npods,
		.max_pods = (int)n->allocatable.allowed_pod_number, .unschedulable = n->unschedulable,
	};
}

/* The configured profiles first (zero counts included), then the queue's pods. */
static int gather_queues(struct sk_daemon *d, struct sk_dash_queues *q)
{
	int rc = 0;
	pthread_rwlock_rdlock(&d->names_lock);
	const struct sk_config *cfg = d->gen ? d->gen->cfg : NULL;
	for (int i = 0; cfg && i < cfg->nprofiles && rc == 0; i++) {
		/* interned: the name outlives a reload that drops the profile */
		struct sk_dash_queue *e = sk_dash_queues_profile(q, sk_intern(cfg->profiles[i].scheduler_name));
		if (!e)
			rc = -1;
		else
			e->records = cfg->profiles[i].records.enabled;
	}
	pthread_rwlock_unlock(&d->names_lock);
	if (rc == 0)
		sk_queue_each(sk_scheduler_queue(d->sched), count_pod, q);
	return rc;
}

static uint64_t max_seq(struct sk_decision **v, int n, uint64_t seq)
{
	for (int i = 0; i < n; i++)
		if (v[i]->seq > seq)
			seq = v[i]->seq;
	return seq;
}

static void unref_all(struct sk_decision **v, int n)
{
	for (int i = 0; i < n; i++)
		sk_decision_unref(v[i]);
	free(v);
}

static void publish(struct sk_dm_dashboard *db, cJSON *j, bool retain)
{
	char *s = j ? cJSON_PrintUnformatted(j) : NULL;
	cJSON_Delete(j);
	if (s && kube_ws_publish(db->ch, s, strlen(s), retain) != 0)
		klog_warning("Dashboard: cannot publish (out of memory)");
	free(s);
}

static void publish_state(struct sk_daemon *d, struct sk_dm_dashboard *db)
{
	struct sk_dash_queues q = { 0 };
	struct node_vec nv = { 0 };
	struct sk_decision **v = NULL;
	int nrec = 0;
	if (gather_queues(d, &q) != 0)
		goto out;
	sk_cache_each_node(d->cache, take_node, &nv);
	if (nv.oom)
		goto out;
	struct sk_decisions_filter f = { .limit = RECENT_IN_STATE };
	nrec = sk_decisions_recent(d->decisions, &f, &v);
	if (nrec < 0) {
		nrec = 0;
		goto out;
	}
	cJSON *recent = sk_dash_decisions_json(v, nrec);
	cJSON *items = recent ? cJSON_DetachItemFromObjectCaseSensitive(recent, "items") : NULL;
	cJSON_Delete(recent);
	struct sk_decisions_stats st;
	sk_decisions_stats(d->decisions, &st);
	bool leading = !d->leader || sk_daemon_is_leading(d);
	int64_t now = sk_decisions_now_ns(d->decisions);
	if (items) {
		publish(db, sk_dash_state_json(&q, nv.v, nv.n, items, &st, leading, now), true);
		db->last_seq = max_seq(v, nrec, db->last_seq);
	}
out:
	unref_all(v, nrec);
	free(nv.v);
	sk_dash_queues_free(&q);
}

static void publish_feed(struct sk_daemon *d, struct sk_dm_dashboard *db)
{
	struct sk_decision **v = NULL;
	struct sk_decisions_filter f = { .limit = FEED_BATCH };
	int n = sk_decisions_recent(d->decisions, &f, &v);
	if (n <= 0)
		return;
	int fresh = 0; /* newest first: the new ones are a prefix */
	while (fresh < n && v[fresh]->seq > db->last_seq)
		fresh++;
	if (fresh) {
		publish(db, sk_dash_decisions_json(v, fresh), false);
		db->last_seq = max_seq(v, fresh, db->last_seq);
	}
	unref_all(v, n);
}

static void *dash_main(void *arg)
{
	struct sk_daemon *d = arg;
	struct sk_dm_dashboard *db = d->dash;
	pthread_mutex_lock(&db->mu);
	while (!db->stop) {
		pthread_mutex_unlock(&db->mu);
		if (kube_ws_clients(db->ch) > 0) {
			int64_t now = kube_mono_ns();
			if (!db->had_clients || now - db->last_state_ns >= (int64_t)STATE_MS * 1000000) {
				publish_state(d, db);
				db->last_state_ns = now;
			} else {
				publish_feed(d, db);
			}
			db->had_clients = true;
		} else {
			db->had_clients = false;
		}
		pthread_mutex_lock(&db->mu);
		if (db->stop)
			break;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += FEED_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&db->cv, &db->mu, &ts);
	}
	pthread_mutex_unlock(&db->mu);
	return NULL;
}

/* ---- lifecycle (serve.c and daemon.c) ---- */

int sk_dm_dashboard_new(struct sk_daemon *d)
{
	struct sk_dm_dashboard *db = calloc(1, sizeof *db);
	if (!db)
		return -1;
	pthread_mutex_init(&db->mu, NULL);
	pthread_cond_init(&db->cv, NULL);
	d->dash = db;
	char path[256];
	for (int i = 0; i < sk_dash_nassets; i++) {
		const struct sk_dash_asset *a = &sk_dash_assets[i];
		snprintf(path, sizeof path, DASH_PREFIX "/%s", a->name);
		if (kube_http_route(d->http, "GET", path, asset_handler, (void *)a) != 0)
			return -1;
		if (!strcmp(a->name, "index.html") &&
		    kube_http_route(d->http, "GET", DASH_PREFIX "/", asset_handler, (void *)a) != 0)
			return -1;
	}
	if (kube_http_route(d->http, "GET", DASH_PREFIX, redirect_handler, NULL) != 0 ||
	    kube_http_add_websocket(d->http, DASH_PREFIX "/ws", &db->ch) != 0)
		return -1;
	return 0;
}

int sk_dm_dashboard_start(struct sk_daemon *d)
{
	struct sk_dm_dashboard *db = d->dash;
	if (!db || db->running)
		return 0;
	if (pthread_create(&db->thread, NULL, dash_main, d) != 0)
		return -1;
	db->running = true;
	return 0;
}

void sk_dm_dashboard_stop(struct sk_daemon *d)
{
	struct sk_dm_dashboard *db = d->dash;
	if (!db || !db->running)
		return;
	pthread_mutex_lock(&db->mu);
	db->stop = true;
	pthread_cond_broadcast(&db->cv);
	pthread_mutex_unlock(&db->mu);
	pthread_join(db->thread, NULL);
	db->running = false;
}

void sk_dm_dashboard_free(struct sk_daemon *d)
{
	struct sk_dm_dashboard *db = d->dash;
	if (!db)
		return;
	sk_dm_dashboard_stop(d);
	pthread_mutex_destroy(&db->mu);
	pthread_cond_destroy(&db->cv);
	free(db); /* the channel belongs to the HTTP server */
	d->dash = NULL;
}
