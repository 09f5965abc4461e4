/* v1.NodeSelector / NodeSelectorTerm / PreferredSchedulingTerm compiled for matching, as
 * k8s.io/component-helpers/scheduling/corev1/nodeaffinity does: terms are ORed, requirements
 * inside a term ANDed; matchExpressions over node labels (In, NotIn, Exists, DoesNotExist,
 * Gt, Lt), matchFields over metadata.name only (In, NotIn).
 *
 * Compiled selectors are immutable: share them across threads without a lock. */
#ifndef KUBE_NODESELECTOR_H
#define KUBE_NODESELECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/selector.h"

struct kube_node_selector;  /* opaque */
struct kube_preferred_terms; /* opaque */

/* Compile flags. */
enum {
	/* Upstream NewLazyErrorNodeSelector (what the scheduler uses for pods): a term that fails
	 * to compile never matches, the others still work; compile returns 0 and, if err is not
	 * NULL, *err describes the first problem (NULL when none). Without this flag any error
	 * fails the compile (upstream NewNodeSelector). */
	KUBE_NODE_SELECTOR_LAZY = 1u << 0,
};

/* Compiles a nodeSelectorTerms JSON array. path names the array in error messages (NULL ->
 * "nodeSelectorTerms"), e.g. `nodeSelectorTerms[0].matchExpressions[1].operator: Unsupported
 * value: "Foo"`. An empty or NULL array, and a term without requirements, match nothing.
 * Returns 0 or -1 with *err (caller frees). Caller frees *out. */
int kube_node_selector_compile(const cJSON *terms, const char *path, unsigned flags,
			       struct kube_node_selector **out, char **err);
/* Same from a v1.NodeSelector object {"nodeSelectorTerms": [...]}; path names the object
 * (NULL -> "" so messages start with "nodeSelectorTerms"). */
int kube_node_selector_compile_object(const cJSON *node_selector, const char *path, unsigned flags,
				      struct kube_node_selector **out, char **err);

/* node_name feeds matchFields metadata.name; get looks node labels up (NULL = absent). */
bool kube_node_selector_matches(const struct kube_node_selector *s, const char *node_name,
				kube_label_lookup_fn get, const void *ctx);
/* kube_label_selector_canonicalize (kube/selector.h) over every term's matchExpressions. */
void kube_node_selector_canonicalize(struct kube_node_selector *s, const char *(*canon)(const char *));
/* Convenience over a Node object (metadata.name, metadata.labels). */
bool kube_node_selector_matches_node(const struct kube_node_selector *s, const cJSON *node);
void kube_node_selector_free(struct kube_node_selector *s);
/* True when a and b have the same terms in the same order, each with the same requirements
 * (kube_label_selector_equal) and fields; NULL equals only NULL. false may also mean "equivalent
 * but written differently". */
bool kube_node_selector_equal(const struct kube_node_selector *a, const struct kube_node_selector *b);
/* The node names a selector can match through matchFields "metadata.name In" (upstream NodeAffinity
 * PreFilter): returns 0 when it may match any node (some term has no such requirement), 1 when it
 * is narrowed to *names (a malloc'd array the caller frees; the strings are borrowed from s; *n == 0
 * means the terms conflict and no node can match), -1 on ENOMEM. */
int kube_node_selector_node_names(const struct kube_node_selector *s, const char ***names, size_t *n);

/* Compiles preferredDuringSchedulingIgnoredDuringExecution: [{weight, preference: term}].
 * Terms with weight 0 are skipped (upstream). path as above (NULL ->
 * "preferredDuringSchedulingIgnoredDuringExecution"). Flags as above. */
int kube_preferred_terms_compile(const cJSON *terms, const char *path, unsigned flags,
				 struct kube_preferred_terms **out, char **err);
/* Sum of the weights of the terms matching the node (scheduler NodeAffinity Score). */
int64_t kube_preferred_terms_score(const struct kube_preferred_terms *p, const char *node_name,
				   kube_label_lookup_fn get, const void *ctx);
int64_t kube_preferred_terms_score_node(const struct kube_preferred_terms *p, const cJSON *node);
/* kube_label_selector_canonicalize over every preference's matchExpressions. */
void kube_preferred_terms_canonicalize(struct kube_preferred_terms *p, const char *(*canon)(const char *));
void kube_preferred_terms_free(struct kube_preferred_terms *p);

#endif
