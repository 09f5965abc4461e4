/* Label selectors, node selectors and preferred node terms as plugins use them: matching a pod's
 * compiled selectors (struct sk_pod, struct sk_affinity_term, ...) against labels, and compiling the
 * node selectors of plugin args. The types are opaque; the functions are the kube/ library's
 * (kube/selector.h, kube/nodeselector.h), declared again here so the API header set stays
 * self-contained. Every core file that includes both this header and kube/'s makes the compiler
 * check that the two sets of prototypes agree. Selectors are immutable: share them across threads. */
#ifndef SK_SCHEDKIT_SELECTOR_H
#define SK_SCHEDKIT_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct kube_label_selector;  /* metav1.LabelSelector (with matchLabelKeys merged where decoded so) */
struct kube_node_selector;   /* v1.NodeSelector: terms ORed, requirements ANDed */
struct kube_preferred_terms; /* preferredDuringSchedulingIgnoredDuringExecution */

/* Looks a label up (NULL when absent); sk_labels_get (types.h) is one, over a struct sk_labels. */
typedef const char *(*kube_label_lookup_fn)(const void *ctx, const char *key);

bool kube_label_selector_matches(const struct kube_label_selector *s, kube_label_lookup_fn get, const void *ctx);
/* True when s matches everything (no requirements). A "nothing" selector is not empty. */
bool kube_label_selector_is_empty(const struct kube_label_selector *s);
/* True for the selector that matches nothing (an absent labelSelector). */
bool kube_label_selector_is_nothing(const struct kube_label_selector *s);
/* Frees a selector the plugin was handed as its own (sk_handle_default_selector); NULL ok. */
void kube_label_selector_free(struct kube_label_selector *s);
/* ABI 1.2: true when a and b have the same requirements (same keys, operators and values, in
 * their compiled order) and the same "nothing" flag, so they match exactly the same label sets;
 * false may also mean "equivalent but written differently". NULL equals only NULL. For plugins
 * that keep results from one cycle to the next keyed by the incoming pod's selectors. */
bool kube_label_selector_equal(const struct kube_label_selector *a, const struct kube_label_selector *b);

/* Compiles a v1.NodeSelector object {"nodeSelectorTerms": [...]} (flags 0: any error fails).
 * path names the object in error messages. 0, or -1 and *err (caller frees). Caller frees *out. */
int kube_node_selector_compile_object(const cJSON *node_selector, const char *path, unsigned flags,
				      struct kube_node_selector **out, char **err);
/* node_name feeds matchFields metadata.name; get looks node labels up. */
bool kube_node_selector_matches(const struct kube_node_selector *s, const char *node_name,
				kube_label_lookup_fn get, const void *ctx);
/* The node names s can match through matchFields "metadata.name In": 0 when it may match any node,
 * 1 when narrowed to *names (malloc'd array the caller frees; strings borrowed from s; *n == 0:
 * no node can match), -1 on ENOMEM. */
int kube_node_selector_node_names(const struct kube_node_selector *s, const char ***names, size_t *n);
void kube_node_selector_free(struct kube_node_selector *s); /* NULL ok */
/* ABI 1.3: true when a and b have the same terms in the same order, each with the same
 * requirements and fields (as kube_label_selector_equal); NULL equals only NULL. */
bool kube_node_selector_equal(const struct kube_node_selector *a, const struct kube_node_selector *b);

/* Compiles [{weight, preference: term}] (terms with weight 0 skipped); path and flags as above. */
int kube_preferred_terms_compile(const cJSON *terms, const char *path, unsigned flags,
				 struct kube_preferred_terms **out, char **err);
/* Sum of the weights of the terms matching the node. */
int64_t kube_preferred_terms_score(const struct kube_preferred_terms *p, const char *node_name,
				   kube_label_lookup_fn get, const void *ctx);
void kube_preferred_terms_free(struct kube_preferred_terms *p); /* NULL ok */

#endif
