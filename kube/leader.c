/* Lease-based leader election following client-go's leaderelection package: tryAcquireOrRenew
 * with a fast path for the current holder, expiry measured locally from the last observed change,
 * renew deadline, jittered retry period, release on cancel, and leader-written annotations. */
#include "kube/leader.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/log.h"
#include "kube/object.h"
#include "kube/util.h"

#define JITTER_FACTOR 1.2

struct lease_record {
	char holder[256];
	double duration;          /* leaseDurationSeconds */
	char acquire[40], renew[40];
	int transitions;
};

struct kube_leader {
	struct kube_client *client;
	char *ns, *name, *identity, *path, *collection;
	double lease_duration, renew_deadline, retry_period;
	bool release_on_cancel;
	void (*on_started)(void *);
	void (*on_stopped)(void *);
	void (*on_new_leader)(void *, const char *);
	void (*on_slowpath)(void *);
	void *ctx;
	struct kube_leader_clock clock;   /* now/sleep may be NULL = real */

	pthread_mutex_t mu;               /* guards everything below */
	pthread_cond_t wake;              /* signalled on stop (real sleeps wait on it) */
	cJSON *lease;                     /* last lease object read or written (has resourceVersion) */
	cJSON *observed_spec;             /* spec as last observed, to detect changes */
	struct lease_record observed;
	double observed_time;             /* clock now() when observed last changed */
	bool leading;
	char reported_leader[256];
	cJSON *annotations;               /* key -> string or null (remove) */
	bool stopping, started, joined;
	pthread_t thread;
	unsigned int rand_state;
};

/* ---------- clock ---------- */

static double le_now(struct kube_leader *le)
{
	if (le->clock.now)
		return le->clock.now(le->clock.ctx);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool le_stopping(struct kube_leader *le)
{
	pthread_mutex_lock(&le->mu);
	bool s = le->stopping;
	pthread_mutex_unlock(&le->mu);
	return s;
}

static void le_sleep(struct kube_leader *le, double seconds)
{
	if (le->clock.sleep) {
		le->clock.sleep(le->clock.ctx, seconds);
		return;
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + seconds;
	ts.tv_sec = (time_t)end;
	ts.tv_nsec = (long)((end - floor(end)) * 1e9);
	pthread_mutex_lock(&le->mu);
	while (!le->stopping)
		if (pthread_cond_timedwait(&le->wake, &le->mu, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&le->mu);
}

static double jitter(struct kube_leader *le, double d)
{
	pthread_mutex_lock(&le->mu);
	double r = (double)rand_r(&le->rand_state) / (double)RAND_MAX;
	pthread_mutex_unlock(&le->mu);
	return d + r * JITTER_FACTOR * d;
}


/* ---------- lifecycle ---------- */

int kube_leader_new(struct kube_client *c, const struct kube_leader_config *cfg, struct kube_leader **out, char **err)
{
	*out = NULL;
	if (err)
		*err = NULL;
	if (!c || !cfg) {
		kube_errf(err, "leader election: client and config are required");
		return -1;
	}
	if (!cfg->ns || !*cfg->ns || !cfg->name || !*cfg->name) {
		kube_errf(err, "leader election: lease namespace and name are required");
		return -1;
	}
	if (!cfg->identity || !*cfg->identity) {
		kube_errf(err, "leader election: identity: required");
		return -1;
	}
	if (strlen(cfg->identity) >= 256) {
		kube_errf(err, "leader election: identity: longer than 255 characters");
		return -1;
	}
	double ld = cfg->lease_duration_s > 0 ? cfg->lease_duration_s : 15;
	double rd = cfg->renew_deadline_s > 0 ? cfg->renew_deadline_s : 10;
	double rp = cfg->retry_period_s > 0 ? cfg->retry_period_s : 2;
	if (ld <= rd) {
		kube_errf(err, "leader election: leaseDuration must be greater than renewDeadline");
		return -1;
	}
	if (rd <= JITTER_FACTOR * rp) {
		kube_errf(err, "leader election: renewDeadline must be greater than retryPeriod*JitterFactor (1.2)");
		return -1;
	}
	struct kube_leader *le = calloc(1, sizeof(*le));
	if (!le) {
		kube_errf(err, "leader election: out of memory");
		return -1;
	}
	le->client = c;
	le->lease_duration = ld;
	le->renew_deadline = rd;
	le->retry_period = rp;
	le->release_on_cancel = cfg->release_on_cancel;
	le->on_started = cfg->on_started_leading;
	le->on_stopped = cfg->on_stopped_leading;
	le->on_new_leader = cfg->on_new_leader;
	le->on_slowpath = cfg->on_slowpath;
	le->ctx = cfg->ctx;
	if (cfg->clock)
		le->clock = *cfg->clock;
	le->rand_state = (unsigned int)time(NULL) ^ (unsigned int)(uintptr_t)le;
	pthread_mutex_init(&le->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&le->wake, &ca);
	pthread_condattr_destroy(&ca);
	le->ns = strdup(cfg->ns);
	le->name = strdup(cfg->name);
	le->identity = strdup(cfg->identity);
	le->path = kube_path("coordination.k8s.io", "v1", "leases", cfg->ns, cfg->name, NULL);
	le->collection = kube_path("coordination.k8s.io", "v1", "leases", cfg->ns, NULL, NULL);
	le->annotations = cJSON_CreateObject();
	if (!le->ns || !le->name || !le->identity || !le->path || !le->collection || !le->annotations) {
		kube_leader_free(le);
		kube_errf(err, "leader election: out of memory");
		return -1;
	}
	*out = le;
	return 0;
}

void kube_leader_free(struct kube_leader *le)
{
	if (!le)
		return;
	kube_leader_stop(le);
	cJSON_Delete(le->lease);
	cJSON_Delete(le->observed_spec);
	cJSON_Delete(le->annotations);
	free(le->ns); free(le->name); free(le->identity); free(le->path); free(le->collection);
	pthread_mutex_destroy(&le->mu);
	pthread_cond_destroy(&le->wake);
	free(le);
}

bool kube_leader_is_leader(struct kube_leader *le)
{
	pthread_mutex_lock(&le->mu);
	bool l = le->leading;
	pthread_mutex_unlock(&le->mu);
	return l;
}

char *kube_leader_holder(struct kube_leader *le, char *buf, size_t len)
{
	pthread_mutex_lock(&le->mu);
	snprintf(buf, len, "%s", le->observed.holder);
	pthread_mutex_unlock(&le->mu);
	return buf;
}

int kube_leader_set_annotation(struct kube_leader *le, const char *key, const char *value)
{
	if (!key || !*key)
		return -1;
	cJSON *v = value ? cJSON_CreateString(value) : cJSON_CreateNull();
	if (!v)
		return -1;
	pthread_mutex_lock(&le->mu);
	cJSON_DeleteItemFromObjectCaseSensitive(le->annotations, key);
	bool ok = cJSON_AddItemToObject(le->annotations, key, v);
	pthread_mutex_unlock(&le->mu);
	if (!ok)
		cJSON_Delete(v);
	return ok ? 0 : -1;
}

/* ---------- record <-> lease ---------- */

static void record_from_spec(struct lease_record *r, const cJSON *spec)
{
	memset(r, 0, sizeof(*r));
	const cJSON *v;
	if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(spec, "holderIdentity")))
		snprintf(r->holder, sizeof(r->holder), "%s", v->valuestring);
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(spec, "leaseDurationSeconds")))
		r->duration = v->valuedouble;
	if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(spec, "acquireTime")))
		snprintf(r->acquire, sizeof(r->acquire), "%s", v->valuestring);
	if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(spec, "renewTime")))
		snprintf(r->renew, sizeof(r->renew), "%s", v->valuestring);
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions")))
		r->transitions = v->valueint;
}

static cJSON *spec_from_record(const struct lease_record *r)
{
	cJSON *s = cJSON_CreateObject();
	if (!s)
		return NULL;
	/* holderIdentity is written even when empty (a release), as client-go does. */
	if (!cJSON_AddStringToObject(s, "holderIdentity", r->holder) ||
	    !cJSON_AddNumberToObject(s, "leaseDurationSeconds", (double)(int)r->duration) ||
	    (*r->acquire && !cJSON_AddStringToObject(s, "acquireTime", r->acquire)) ||
	    (*r->renew && !cJSON_AddStringToObject(s, "renewTime", r->renew)) ||
	    !cJSON_AddNumberToObject(s, "leaseTransitions", r->transitions)) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

/* Builds the lease object to write: base (may be NULL for create) with spec replaced and the
 * desired annotations applied (only when writing as holder). Caller frees. */
static cJSON *build_lease(struct kube_leader *le, const cJSON *base, const struct lease_record *r, bool as_holder)
{
	cJSON *obj = base ? cJSON_Duplicate(base, 1) : cJSON_CreateObject();
	cJSON *spec = spec_from_record(r);
	if (!obj || !spec)
		goto oom;
	if (!base) {
		cJSON *meta = cJSON_CreateObject();
		if (!meta || !cJSON_AddStringToObject(obj, "apiVersion", "coordination.k8s.io/v1") ||
		    !cJSON_AddStringToObject(obj, "kind", "Lease") || !cJSON_AddItemToObject(obj, "metadata", meta)) {
			cJSON_Delete(meta);
			goto oom;
		}
		if (!cJSON_AddStringToObject(meta, "name", le->name) || !cJSON_AddStringToObject(meta, "namespace", le->ns))
			goto oom;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(obj, "spec");
	if (!cJSON_AddItemToObject(obj, "spec", spec)) {
		cJSON_Delete(spec);
		spec = NULL;
		goto oom;
	}
	spec = NULL;
	if (as_holder) {
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
		pthread_mutex_lock(&le->mu);
		const cJSON *a;
		bool fail = false;
		cJSON_ArrayForEach(a, le->annotations) {
			cJSON *annos = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
			if (!cJSON_IsObject(annos)) {
				cJSON_DeleteItemFromObjectCaseSensitive(meta, "annotations");
				annos = cJSON_AddObjectToObject(meta, "annotations");
				if (!annos) {
					fail = true;
					break;
				}
			}
			cJSON_DeleteItemFromObjectCaseSensitive(annos, a->string);
			if (cJSON_IsString(a) && !cJSON_AddStringToObject(annos, a->string, a->valuestring)) {
				fail = true;
				break;
			}
		}
		pthread_mutex_unlock(&le->mu);
		if (fail)
			goto oom;
	}
	return obj;
oom:
	cJSON_Delete(spec);
	cJSON_Delete(obj);
	return NULL;
}

/* Records a lease we wrote or read as the new observation. obj is taken. */
static void observe(struct kube_leader *le, cJSON *obj, double now, bool force_time)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	pthread_mutex_lock(&le->mu);
	bool changed = !le->observed_spec || !cJSON_Compare(le->observed_spec, spec, 1);
	if (changed || force_time) {
		cJSON_Delete(le->observed_spec);
		le->observed_spec = spec ? cJSON_Duplicate(spec, 1) : cJSON_CreateObject();
		record_from_spec(&le->observed, spec);
		le->observed_time = now;
	}
	cJSON_Delete(le->lease);
	le->lease = obj;
	pthread_mutex_unlock(&le->mu);
}

static void report_transition(struct kube_leader *le)
{
	char holder[256];
	bool changed = false;
	pthread_mutex_lock(&le->mu);
	if (strcmp(le->reported_leader, le->observed.holder) != 0) {
		snprintf(le->reported_leader, sizeof(le->reported_leader), "%s", le->observed.holder);
		snprintf(holder, sizeof(holder), "%s", le->observed.holder);
		changed = true;
	}
	pthread_mutex_unlock(&le->mu);
	if (changed) {
		klog_info(2, "New leader observed", " lease=%s/%s holder=%s", le->ns, le->name, holder);
		if (le->on_new_leader)
			le->on_new_leader(le->ctx, holder);
	}
}

/* PUT obj to the lease; on success observes the returned lease. Returns true on success. */
static bool put_lease(struct kube_leader *le, cJSON *obj, double now)
{
	cJSON *out = NULL;
	struct kube_error e;
	int rc = kube_update(le->client, le->path, obj, &out, &e);
	cJSON_Delete(obj);
	if (rc) {
		klog_info(3, "Failed to update lease", " lease=%s/%s code=%d reason=%s", le->ns, le->name, e.http_code, e.reason);
		return false;
	}
	if (!out)
		return false;
	observe(le, out, now, true);
	return true;
}

static bool try_acquire_or_renew(struct kube_leader *le)
{
	double now = le_now(le);
	struct lease_record rec = {0};
	snprintf(rec.holder, sizeof(rec.holder), "%s", le->identity);
	rec.duration = le->lease_duration;
	kube_time_micro(rec.acquire, now);
	kube_time_micro(rec.renew, now);

	/* Fast path: we hold it and our observation is still valid. */
	pthread_mutex_lock(&le->mu);
	bool fast = le->lease && strcmp(le->observed.holder, le->identity) == 0 &&
		    le->observed_time + le->observed.duration > now;
	cJSON *base = fast ? cJSON_Duplicate(le->lease, 1) : NULL;
	struct lease_record old = le->observed;
	pthread_mutex_unlock(&le->mu);
	if (fast && base) {
		struct lease_record r = rec;
		snprintf(r.acquire, sizeof(r.acquire), "%s", old.acquire);
		r.transitions = old.transitions;
		cJSON *obj = build_lease(le, base, &r, true);
		cJSON_Delete(base);
		if (obj && put_lease(le, obj, now))
			return true;
		klog_info(4, "Lease fast-path renew failed; retrying with a fresh read", " lease=%s/%s", le->ns, le->name);
	} else {
		cJSON_Delete(base);
	}

	cJSON *cur = NULL;
	struct kube_error e;
	if (kube_get(le->client, le->path, &cur, &e)) {
		if (!kube_error_is_not_found(&e)) {
			klog_error("Error retrieving lease", " lease=%s/%s code=%d reason=%s message=\"%s\"", le->ns, le->name,
				   e.http_code, e.reason, e.message);
			return false;
		}
		cJSON *obj = build_lease(le, NULL, &rec, true);
		cJSON *out = NULL;
		int rc = obj ? kube_create(le->client, le->collection, obj, &out, &e) : -1;
		cJSON_Delete(obj);
		if (rc || !out) {
			cJSON_Delete(out);
			klog_error("Error creating lease", " lease=%s/%s code=%d reason=%s", le->ns, le->name, e.http_code, e.reason);
			return false;
		}
		observe(le, out, now, true);
		return true;
	}
	if (!cJSON_IsObject(cur)) {
		cJSON_Delete(cur);
		return false;
	}
	cJSON *fetched = cJSON_Duplicate(cur, 1);
	if (!fetched) {
		cJSON_Delete(cur);
		return false;
	}
	observe(le, fetched, now, false);   /* observed_time moves only if the record changed */
	pthread_mutex_lock(&le->mu);
	old = le->observed;
	double observed_time = le->observed_time;
	pthread_mutex_unlock(&le->mu);
	bool me = strcmp(old.holder, le->identity) == 0;
	if (*old.holder && !me && observed_time + old.duration > now) {
		klog_info(4, "Lease is held by another holder and has not yet expired", " lease=%s/%s holder=%s", le->ns,
			  le->name, old.holder);
		cJSON_Delete(cur);
		return false;
	}
	if (me) {
		snprintf(rec.acquire, sizeof(rec.acquire), "%s", old.acquire);
		rec.transitions = old.transitions;
		/* client-go tryAcquireOrRenew: the leader's update after a Get is the slow path */
		if (le->on_slowpath)
			le->on_slowpath(le->ctx);
	} else {
		rec.transitions = old.transitions + 1;
	}
	cJSON *obj = build_lease(le, cur, &rec, true);
	cJSON_Delete(cur);
	return obj && put_lease(le, obj, now);
}

bool kube_leader_try_acquire_or_renew(struct kube_leader *le)
{
	bool ok = try_acquire_or_renew(le);
	report_transition(le);
	return ok;
}

bool kube_leader_release(struct kube_leader *le)
{
	pthread_mutex_lock(&le->mu);
	bool holder = le->lease && strcmp(le->observed.holder, le->identity) == 0;
	cJSON *base = holder ? cJSON_Duplicate(le->lease, 1) : NULL;
	struct lease_record r = le->observed;
	pthread_mutex_unlock(&le->mu);
	if (!holder)
		return true;
	if (!base)
		return false;
	double now = le_now(le);
	r.holder[0] = 0;
	r.duration = 1;
	kube_time_micro(r.acquire, now);
	kube_time_micro(r.renew, now);
	cJSON *obj = build_lease(le, base, &r, false);
	cJSON_Delete(base);
	if (!obj || !put_lease(le, obj, now)) {
		klog_error("Failed to release lease", " lease=%s/%s", le->ns, le->name);
		return false;
	}
	klog_info(2, "Released lease", " lease=%s/%s", le->ns, le->name);
	return true;
}

/* ---------- elector thread ---------- */

static void set_leading(struct kube_leader *le, bool v)
{
	pthread_mutex_lock(&le->mu);
	le->leading = v;
	pthread_mutex_unlock(&le->mu);
}

static void *elector_main(void *arg)
{
	struct kube_leader *le = arg;
	klog_info(2, "Attempting to acquire leader lease", " lease=%s/%s", le->ns, le->name);
	bool acquired = false;
	while (!le_stopping(le)) {
		if ((acquired = kube_leader_try_acquire_or_renew(le)))
			break;
		le_sleep(le, jitter(le, le->retry_period));
	}
	/* Stopped while acquiring: an acquisition that landed anyway still leads (and releases)
	 * below, as client-go's Run does; otherwise there is nothing to undo. */
	if (!acquired)
		return NULL;
	klog_info(2, "Successfully acquired lease", " lease=%s/%s", le->ns, le->name);
	set_leading(le, true);
	if (le->on_started)
		le->on_started(le->ctx);
	bool lost = false;
	while (!le_stopping(le)) {
		le_sleep(le, le->retry_period);
		double deadline = le_now(le) + le->renew_deadline;
		bool ok = false;
		while (!le_stopping(le)) {
			if (kube_leader_try_acquire_or_renew(le)) {
				ok = true;
				break;
			}
			if (le_now(le) + le->retry_period > deadline)
				break;
			le_sleep(le, le->retry_period);
		}
		if (!ok && !le_stopping(le)) {
			klog_error("Failed to renew lease: timed out waiting for the condition", " lease=%s/%s", le->ns, le->name);
			lost = true;
			break;
		}
	}
	if (!lost && le->release_on_cancel)
		kube_leader_release(le);
	set_leading(le, false);
	klog_info(2, lost ? "Leader election lost" : "Stopped leading", " lease=%s/%s", le->ns, le->name);
	if (le->on_stopped)
		le->on_stopped(le->ctx);
	return NULL;
}

int kube_leader_start(struct kube_leader *le)
{
	pthread_mutex_lock(&le->mu);
	if (le->started) {
		pthread_mutex_unlock(&le->mu);
		return -1;
	}
	le->started = true;
	pthread_mutex_unlock(&le->mu);
	if (pthread_create(&le->thread, NULL, elector_main, le) != 0) {
		pthread_mutex_lock(&le->mu);
		le->started = false;
		pthread_mutex_unlock(&le->mu);
		return -1;
	}
	return 0;
}

void kube_leader_stop(struct kube_leader *le)
{
	if (!le)
		return;
	pthread_mutex_lock(&le->mu);
	le->stopping = true;
	pthread_cond_broadcast(&le->wake);
	bool join = le->started && !le->joined;
	le->joined = le->joined || join;
	pthread_mutex_unlock(&le->mu);
	if (join)
		pthread_join(le->thread, NULL);
}
