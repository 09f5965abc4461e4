/* Leader election on a coordination.k8s.io/v1 Lease with client-go leaderelection semantics:
 * acquire loop every retryPeriod (jittered), renew within renewDeadline or lose leadership,
 * expiry measured on the local clock from when the record last changed, optimistic concurrency
 * through resourceVersion, optional release on stop, and annotations written by the leader.
 *
 * Locking: le->mu guards the observed record, leadership flag and pending annotations; it is never
 * held across an HTTP call. Callbacks run on the elector thread without locks held. */
#ifndef KUBE_LEADER_H
#define KUBE_LEADER_H

#include <stdbool.h>
#include <stddef.h>

#include "kube/rest.h"

struct kube_leader;

/* Clock for tests. now: wall-clock seconds since the epoch (used for acquireTime/renewTime and
 * lease expiry). sleep: waits (or advances a fake clock); it must return early when woken by
 * kube_leader_stop — the real one does; a fake one may just advance and return. NULL = real. */
struct kube_leader_clock {
	double (*now)(void *ctx);
	void (*sleep)(void *ctx, double seconds);
	void *ctx;
};

struct kube_leader_config {
	const char *ns, *name;          /* the Lease; required */
	const char *identity;           /* required; e.g. "<hostname>_<uuid>" */
	double lease_duration_s;        /* 0 = 15 */
	double renew_deadline_s;        /* 0 = 10 */
	double retry_period_s;          /* 0 = 2 */
	bool release_on_cancel;
	void (*on_started_leading)(void *ctx);
	void (*on_stopped_leading)(void *ctx);
	void (*on_new_leader)(void *ctx, const char *identity);   /* identity borrowed for the call */
	void *ctx;
	const struct kube_leader_clock *clock;   /* NULL = real; copied */
	/* The leader renewed through the slow path (GET then PUT: its optimistic PUT failed or its
	 * observation had expired): client-go's leader_election_slowpath_total. May be NULL. */
	void (*on_slowpath)(void *ctx);
};

/* Validates (leaseDuration > renewDeadline > 1.2 * retryPeriod, names set) and copies cfg.
 * Returns 0 and *out, or -1 and *err (caller frees; names the field). */
int kube_leader_new(struct kube_client *, const struct kube_leader_config *, struct kube_leader **out, char **err);
/* Starts the elector thread (acquire loop, then renew loop). After losing leadership the thread
 * ends (on_stopped_leading tells the caller; kube-scheduler exits). One start per elector: to run
 * for leadership again, free it and create a new one. Returns 0, or -1 (already started / no thread). */
int kube_leader_start(struct kube_leader *);
/* Stops the thread (joins). If leading: with release_on_cancel the lease is released
 * (holderIdentity "", leaseDurationSeconds 1), then on_stopped_leading is called. on_stopped_leading
 * is only called for an elector that was leading (client-go calls it unconditionally). */
void kube_leader_stop(struct kube_leader *);
void kube_leader_free(struct kube_leader *);   /* stops first; NULL is a no-op */

bool kube_leader_is_leader(struct kube_leader *);
/* Current observed holder identity into buf ("" when none); returns buf. */
char *kube_leader_holder(struct kube_leader *, char *buf, size_t len);

/* The leader writes metadata.annotations[key] = value into the Lease on its next renew
 * (value NULL removes the key). Returns 0 or -1 (OOM). */
int kube_leader_set_annotation(struct kube_leader *, const char *key, const char *value);

/* One tryAcquireOrRenew step (exposed for tests; the elector thread calls it). Returns true
 * when this identity holds the lease afterwards. Does not call on_started/stopped_leading. */
bool kube_leader_try_acquire_or_renew(struct kube_leader *);
/* One release step (as on stop with release_on_cancel). Returns true on success. */
bool kube_leader_release(struct kube_leader *);

#endif
