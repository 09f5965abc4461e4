/* Permit's waiting pods (upstream waitingPodsMap + waitingPod): a pod that a Permit plugin asked to
 * Wait for stays here until every waiting plugin allows it, one rejects it, or one's timeout
 * (capped at 15 min by the framework) expires. The binding cycle blocks in sk_waiting_wait.
 * Thread-safe: one mutex guards the map and every entry; each entry has its own condition
 * variable on CLOCK_MONOTONIC (timeouts are real time, never the injectable clock). */
#ifndef SK_WAITING_H
#define SK_WAITING_H

#include <stdbool.h>
#include <stdint.h>

#include "schedkit/plugin.h"

#define SK_PERMIT_MAX_TIMEOUT_MS (15LL * 60 * 1000)

struct sk_waiting_pods;

struct sk_waiting_pods *sk_waiting_new(void);
/* Rejects every remaining waiter ("scheduler is shutting down") and frees once none is blocked. NULL ok. */
void sk_waiting_free(struct sk_waiting_pods *w);

/* Adds pod (a reference is taken) waiting for plugins[i] with timeouts_ms[i] (plugin names must be
 * static or interned). 0, or -1 if the uid is already waiting or on ENOMEM. */
int sk_waiting_add(struct sk_waiting_pods *w, struct sk_pod *pod, const char *const *plugins,
		   const int64_t *timeouts_ms, int n);
/* Blocks until the outcome is known, removes the entry and returns: Success; Unschedulable with
 * plugin set (Reject, or `rejected due to timeout after waiting <d> at plugin <name>`). Returns
 * Success at once when uid is not waiting. */
struct sk_status sk_waiting_wait(struct sk_waiting_pods *w, const char *uid);
/* Allow by one plugin; the pod proceeds when none is left pending. 0, or -1 when uid is unknown. */
int sk_waiting_allow(struct sk_waiting_pods *w, const char *uid, const char *plugin);
/* Reject with msg (Unschedulable, plugin set). 0, or -1 when uid is unknown. */
int sk_waiting_reject(struct sk_waiting_pods *w, const char *uid, const char *plugin, const char *msg);
bool sk_waiting_has(struct sk_waiting_pods *w, const char *uid);
int sk_waiting_count(struct sk_waiting_pods *w);
/* Fills up to max uids (strdup'd, caller frees) of waiting pods; returns the number filled. */
int sk_waiting_list(struct sk_waiting_pods *w, char **uids, int max);

#endif
