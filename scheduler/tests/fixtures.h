/* Test fixtures for every scheduler and plugin test: build pods, nodes, node infos and snapshots
 * from short JSON (or YAML) strings. Linked into all tests (lib/libtestsupport.a).
 *
 *   struct sk_node_info *ni = fx_node_info(
 *       fx_node("{metadata: {name: n1}, status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}}"),
 *       fx_pod("{metadata: {name: p1}, spec: {containers: [{resources: {requests: {cpu: 1}}}]}}"),
 *       NULL);
 *
 * Text is tried as JSON first; anything else goes through kube_yaml_parse_one (block YAML, or
 * flow-style YAML like the above). YAML typing is sigs.k8s.io/yaml's: unquoted y, n, yes, no, on,
 * off are booleans, so quote such names ({name: 'y'}); numbers are fine as quantities. A decode error fails the
 * current cmocka test with the decoder's message.
 * Defaults filled in before decoding: pods get metadata.namespace "default" and metadata.uid
 * "<namespace>/<name>" when absent (nodes need only a name).
 * Ownership: every fx_* constructor returns a new reference / owned object; fx_node_info and
 * fx_snapshot CONSUME the references passed to them (so calls nest without leaks). */
#ifndef SK_TEST_FIXTURES_H
#define SK_TEST_FIXTURES_H

#include <cjson/cJSON.h>

#include "scheduler/backend/cache.h"
#include "schedkit/types.h"

/* Parsed object (caller cJSON_Delete); fails the test on a syntax error. */
cJSON *fx_json(const char *text);
/* Decoded pod / node (caller sk_pod_unref / sk_node_unref). */
struct sk_pod *fx_pod(const char *text);
struct sk_node *fx_node(const char *text);
/* Decodes without failing the test: returns the decoder's error (caller frees) or NULL when the
 * object decoded fine. For hostile-input tests. */
char *fx_pod_error(const char *text);
char *fx_node_error(const char *text);
/* A node info for node (may be NULL) holding the NULL-terminated pods; consumes all references.
 * Caller sk_node_info_free. */
struct sk_node_info *fx_node_info(struct sk_node *node, ...);
/* A snapshot over the NULL-terminated node infos, in argument order (the node order plugins
 * see); consumes them. Caller sk_snapshot_free. */
struct sk_snapshot *fx_snapshot(struct sk_node_info *first, ...);
/* Same from arrays: n node infos; consumed. */
struct sk_snapshot *fx_snapshot_of(struct sk_node_info **nis, int n);

#endif
