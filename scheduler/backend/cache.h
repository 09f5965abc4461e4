/* The scheduler cache (upstream pkg/scheduler/backend/cache): the nodes and the pods placed on
 * them (bound, or assumed by the scheduler and not yet confirmed by the informer), per-node
 * aggregates (struct sk_node_info), the node tree order (pkg/scheduler/backend/cache/node_tree.go), image states, and the
 * incremental snapshot the scheduling loop reads.
 *
 * Threading:
 *   - One mutex inside struct sk_cache guards everything the cache owns: its node infos, pod
 *     states, node tree and image states. Every sk_cache_* function takes it; none calls out
 *     (no HTTP, no callbacks) while holding it. Informer threads and the scheduling/binding
 *     threads may call any sk_cache_* function concurrently.
 *   - A struct sk_snapshot is owned by one thread (the scheduling loop). sk_cache_update_snapshot
 *     writes into it under the cache lock; between updates the owner reads it without any lock.
 *     Node infos in a snapshot are copies: the cache never touches them after the update returns.
 *   - Pods and nodes are immutable once decoded and reference counted (atomic), so the cache, the
 *     snapshot and the queue share them freely.
 *
 * Ownership: functions taking a struct sk_pod * / struct sk_node * take their own reference when
 * they keep it; the caller keeps its reference. Returned pods carry a new reference (caller
 * sk_pod_unref). Errors: -1 with *err (caller frees; err may be NULL) naming the pod or node. */
#ifndef SK_CACHE_H
#define SK_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "schedkit/types.h"

struct sk_cache;

/* assumed_ttl_ms: time an assumed pod whose binding finished may wait for the informer's
 * confirmation before it expires; 0 = never expire (upstream default). */
struct sk_cache *sk_cache_new(int64_t assumed_ttl_ms);
void sk_cache_free(struct sk_cache *c); /* NULL ok */
/* Clock used for TTL expiry (milliseconds, monotonic by default); for tests. */
void sk_cache_set_clock(struct sk_cache *c, int64_t (*now_ms)(void *ctx), void *ctx);

/* ---- informer events ---- */
/* Adds or replaces the node (an add of a known node behaves as an update). */
int sk_cache_add_node(struct sk_cache *c, struct sk_node *node, char **err);
int sk_cache_update_node(struct sk_cache *c, struct sk_node *node, char **err);
/* Removes the node; its pods stay (node info without a node) until they are removed. */
int sk_cache_remove_node(struct sk_cache *c, const char *name, char **err);
/* A bound pod seen by the informer (pod->node_name set). Confirms an assumed pod with that uid
 * (moving it if it landed on another node), or adds it; a pod bound to an unknown node is kept. */
int sk_cache_add_pod(struct sk_cache *c, struct sk_pod *pod, char **err);
/* Replaces the cached pod with the same uid as new_pod (which must be bound, not assumed). */
int sk_cache_update_pod(struct sk_cache *c, struct sk_pod *new_pod, char **err);
/* Removes the pod with pod's uid (assumed or bound). */
int sk_cache_remove_pod(struct sk_cache *c, const struct sk_pod *pod, char **err);

/* ---- scheduler side ---- */
/* Places pod (pod->node_name = the chosen node, e.g. from sk_pod_with_node) on its node as
 * assumed. Fails if a pod with that uid is already cached. */
int sk_cache_assume_pod(struct sk_cache *c, struct sk_pod *pod, char **err);
/* Binding done: starts the TTL clock of the assumed pod (no-op when the pod is not assumed). */
int sk_cache_finish_binding(struct sk_cache *c, const struct sk_pod *pod, char **err);
/* Undoes an assume (binding failed). Fails if the pod is not assumed or is on another node. A pod
 * the cache does not hold at all is an error too ("wasn't assumed so cannot be forgotten"), as in
 * v1.34; upstream versions after 1.34 return success for it. */
int sk_cache_forget_pod(struct sk_cache *c, const struct sk_pod *pod, char **err);
/* Expires assumed pods whose binding finished more than the TTL ago; returns how many. */
int sk_cache_cleanup_expired(struct sk_cache *c);

enum sk_pod_cache_state { SK_POD_NOT_CACHED = 0, SK_POD_ASSUMED, SK_POD_BOUND };
enum sk_pod_cache_state sk_cache_pod_state(struct sk_cache *c, const char *uid);
bool sk_cache_is_assumed(struct sk_cache *c, const char *uid);
/* The cached pod (new reference) by uid, or by namespace/name; NULL when absent. */
struct sk_pod *sk_cache_get_pod(struct sk_cache *c, const char *uid);
struct sk_pod *sk_cache_get_pod_by_key(struct sk_cache *c, const char *ns, const char *name);

int sk_cache_node_count(struct sk_cache *c);  /* nodes known (node object seen) */
int sk_cache_pod_count(struct sk_cache *c);   /* pods cached (bound + assumed) */
int sk_cache_assumed_count(struct sk_cache *c);
/* The node tree order (pkg/scheduler/backend/cache/node_tree.go). *names (interned strings) is malloc'd: caller frees
 * the array. Returns the count, or -1 on OOM. */
int sk_cache_node_tree_list(struct sk_cache *c, const char ***names);
/* A deep copy of the cached node info (caller sk_node_info_free), NULL when unknown. */
struct sk_node_info *sk_cache_node_info(struct sk_cache *c, const char *name);
/* Calls fn for every node whose Node object is known (most recently changed first) under the
 * cache lock: fn must be quick and must not call the cache (the dashboard's node fill). */
void sk_cache_each_node(struct sk_cache *c, void (*fn)(void *ctx, const struct sk_node_info *ni), void *ctx);

/* ---- snapshot ---- */
struct sk_snapshot *sk_snapshot_new(void);
void sk_snapshot_free(struct sk_snapshot *s); /* NULL ok */
/* Brings s up to date: only node infos whose generation is newer than s->generation are
 * re-copied (in place: pointers in s stay valid for unchanged and changed nodes alike); the node
 * list is rebuilt in node-tree order only when nodes were added or removed; the have-affinity
 * lists when a node's affinity state changed; image states when node images changed.
 * 0 or -1 (OOM, or an inconsistency detected; the next update then rebuilds everything). */
int sk_cache_update_snapshot(struct sk_cache *c, struct sk_snapshot *s, char **err);
/* The change log of s's last sk_cache_update_snapshot, for what follows the snapshot's lists from
 * one update to the next (the node memo, scheduler/framework/node_memo.c): the node infos that
 * update copied (each once; every other node info of s is as it was, and the lists' membership
 * changed only for these). Sets *serial (that update's number, unique in the process, 0 before
 * the first update), *prev (the update's before it) and *changed; returns the count, or -1 when
 * the log does not cover the update (nodes added or removed, a full copy, a failed update, or a
 * snapshot never updated from a cache). */
int sk_snapshot_changes(const struct sk_snapshot *s, uint64_t *serial, uint64_t *prev,
			struct sk_node_info *const **changed);
/* A snapshot over the given node infos in the given order (upstream NewSnapshot, for tests and
 * `simulate`); takes ownership of the node infos (and of the array's elements, not the array).
 * Image states are counted over these nodes. NULL on OOM. */
struct sk_snapshot *sk_snapshot_from_node_infos(struct sk_node_info **nis, int n);
/* Number of nodes of s having an image (0 when unknown). */
int sk_snapshot_image_num_nodes(const struct sk_snapshot *s, const char *image);

/* ---- node info helpers (scheduler/nodeinfo.c) ---- */
/* Next value of the process-wide generation counter (atomic). */
int64_t sk_next_generation(void);
/* A node info for node (takes a reference; node may be NULL). NULL on OOM. */
struct sk_node_info *sk_node_info_new(struct sk_node *node);
/* Replaces the node (takes a reference, drops the old one), bumps the generation. */
void sk_node_info_set_node(struct sk_node_info *ni, struct sk_node *node);
/* Deep-copies src into dst, releasing what dst held first; dst unchanged on failure (-1). */
int sk_node_info_copy_into(struct sk_node_info *dst, const struct sk_node_info *src);
/* Releases what ni holds and zeroes it (the struct itself is not freed). */
void sk_node_info_clear(struct sk_node_info *ni);

#endif
