/* Scratch copies for preemption's dry runs. Upstream's DryRunPreemption
 * (pkg/scheduler/framework/preemption/preemption.go) clones the candidate's NodeInfo and the
 * attempt's CycleState for every node it tries; here one scratch per concurrent dry run is reset
 * from them before each node, so once its buffers have grown a node costs no allocation.
 * After sk_dryrun_reset the scratch node info equals sk_node_info_clone(ni) (pods in the same
 * order, one reference each, requests, ports, counters, index) and the scratch state equals
 * sk_cycle_state_clone(cs): slots with a clone op (the state PreFilter AddPod/RemovePod change)
 * are cloned afresh, the others borrowed; pods to activate start empty. It also shares the
 * attempt's Filter list (built at PreFilter, read-only afterwards). Not thread-safe: one scratch
 * per thread of work; the attempt's state and node info must outlive the use of the scratch. */
#ifndef SK_FRAMEWORK_DRYRUN_H
#define SK_FRAMEWORK_DRYRUN_H

#include "schedkit/plugin.h"

struct sk_dryrun_scratch;

struct sk_dryrun_scratch *sk_dryrun_scratch_new(void); /* NULL on ENOMEM */
void sk_dryrun_scratch_free(struct sk_dryrun_scratch *s); /* NULL ok */
/* Makes the scratch copies of ni and cs. 0, or -1 on ENOMEM (the scratch is then empty and may be
 * reset again). */
int sk_dryrun_reset(struct sk_dryrun_scratch *s, const struct sk_node_info *ni, const struct sk_cycle_state *cs);
/* The copies of the last successful reset (owned by the scratch). */
struct sk_node_info *sk_dryrun_node(struct sk_dryrun_scratch *s);
struct sk_cycle_state *sk_dryrun_state(struct sk_dryrun_scratch *s);

/* Whether anyone looks at the candidates a PostFilter hands to sk_handle_preempt_extenders: an
 * HTTP extender of h's profile, or the decision record of the attempt running on this thread.
 * When false that call leaves the list as it is, so building it (a victim array per candidate,
 * ~500 per preemptor at 5,000 nodes) can be skipped. */
bool sk_dryrun_candidates_observed(struct sk_handle *h);

#endif
