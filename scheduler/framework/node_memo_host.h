/* The node memo's host side (scheduler/framework/node_memo.c; the plugin API is
 * schedkit/node_memo.h): the update with the snapshot given, for tests that have no handle. */
#ifndef SK_NODE_MEMO_HOST_H
#define SK_NODE_MEMO_HOST_H

#include <stdbool.h>

#include "schedkit/node_memo.h"

/* sk_node_memo_update with the scheduling snapshot snap (sk_node_memo_update passes the handle's):
 * when list is one of snap's lists and the memo last followed that list up to snap's previous
 * update, the sums follow the update's change log (sk_snapshot_changes) instead of walking list. */
struct sk_node_sums *sk_node_memo_update_in(struct sk_node_memo *m, struct sk_handle *h, const struct sk_snapshot *snap,
					    struct sk_node_info *const *list, int n, sk_node_contrib_fn fn, void *ctx);
/* Whether the last update followed the change log (no walk of the list). */
bool sk_node_memo_last_followed(const struct sk_node_memo *m);

#endif
