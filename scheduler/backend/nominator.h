/* The nominator: pods nominated to run on a node (status.nominatedNodeName, or nominated in memory
 * by preemption), used by the Filter pass that adds nominated pods (RunFilterPluginsWithNominatedPods in pkg/scheduler/framework/runtime/framework.go).
 * Thread-safe: one mutex guards the maps; readers on pool threads take it too (a count read without
 * the lock makes the common "nobody is nominated" case lock-free). */
#ifndef SK_NOMINATOR_H
#define SK_NOMINATOR_H

#include "schedkit/types.h"

struct sk_nominator;

struct sk_nominator *sk_nominator_new(void);
void sk_nominator_free(struct sk_nominator *n); /* drops every pod reference; NULL ok */

/* AddNominatedPod: override != NULL is ModeOverride (node name, "" = clear); NULL is ModeNoop
 * (use pod->nominated_node_name; nothing when unset). A pod that is bound (node_name set) is not
 * nominated. Replaces any previous nomination of the same uid. Takes a reference on pod. */
void sk_nominator_add(struct sk_nominator *n, struct sk_pod *pod, const char *override);
void sk_nominator_delete(struct sk_nominator *n, const char *uid);
/* UpdateNominatedPod: keeps an in-memory nomination when neither the old nor the new pod carries
 * nominatedNodeName; otherwise re-adds from the new pod. */
void sk_nominator_update(struct sk_nominator *n, const struct sk_pod *old_pod, struct sk_pod *new_pod);
/* The pods nominated to node, in nomination order. *out is malloc'd (caller frees) and each element
 * holds a reference (caller sk_pod_unref's). Returns the count (0: *out NULL), -1 on ENOMEM. */
int sk_nominator_pods_for_node(struct sk_nominator *n, const char *node, struct sk_pod ***out);
/* False when nobody is nominated to node: the lock-free part of sk_nominator_pods_for_node (the
 * count and the bit filter over the names nominated to). True means "maybe": the bit filter is
 * cleared only when the last nomination goes, and names can share a bit. */
bool sk_nominator_maybe_on(struct sk_nominator *n, const char *node);
/* For tests: the bit of the filter a name maps to, computed from its bytes (what the pointer cache
 * of sk_nominator_maybe_on must agree with). */
uint32_t sk_nominator_name_bit_slow(const char *node);
/* The node pod uid is nominated to (interned), or NULL. */
const char *sk_nominator_node_of(struct sk_nominator *n, const char *uid);
int sk_nominator_count(struct sk_nominator *n);

#endif
