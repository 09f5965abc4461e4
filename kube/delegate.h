/* Delegated authentication and authorization for the HTTPS endpoints of the schedkit binaries,
 * as kube-scheduler builds them (k8s.io/apiserver/pkg/server/options/authentication.go and
 * authorization.go, DelegatingAuthenticationOptions / DelegatingAuthorizationOptions):
 *
 *   - a request without a bearer token is the user system:anonymous (group
 *     system:unauthenticated); a bearer token is checked with a TokenReview
 *     (authentication.k8s.io/v1) against the API server; a token the review rejects, or a failed
 *     review, is 401 Unauthorized (a bad token is never taken as anonymous); authenticated users
 *     get the group system:authenticated;
 *   - authorization: the always-allow paths (--authorization-always-allow-paths, "x*" a prefix)
 *     for anyone, the group system:masters for everything, otherwise a SubjectAccessReview
 *     (authorization.k8s.io/v1, nonResourceAttributes: path and the lower-case method as verb);
 *     a denial is 403 `forbidden: User "U" cannot VERB path "P"`.
 *   - results are cached as upstream's webhooks cache them: token reviews for authn_ttl_ms
 *     (--authentication-token-webhook-cache-ttl, 10s), allowed and denied reviews for
 *     allowed_ttl_ms / denied_ttl_ms (--authorization-webhook-cache-[un]authorized-ttl, 10s).
 *     Failed calls are not cached. Tokens are kept only as their sha256.
 *
 * Without an authentication client a bearer token is ignored (anonymous, as upstream with no
 * authentication-kubeconfig); without an authorization client every path but the always-allow
 * ones is forbidden. kube_delegate_guard is a kube_http_guard_fn (kube/httpserver.h). */
#ifndef KUBE_DELEGATE_H
#define KUBE_DELEGATE_H

#include <stddef.h>
#include <stdint.h>

struct kube_client;

struct kube_delegate_opts {
	struct kube_client *authn, *authz; /* borrowed, may be NULL (see above) */
	const char *const *always_allow_paths; /* NULL-terminated; copied */
	int64_t authn_ttl_ms, allowed_ttl_ms, denied_ttl_ms; /* < 0: default 10 s; 0: no caching */
};

struct kube_delegate;

/* NULL on allocation failure. */
struct kube_delegate *kube_delegate_new(const struct kube_delegate_opts *opts);
void kube_delegate_free(struct kube_delegate *d);
/* 0 (serve), 401 or 403 with msg (see kube_http_guard_fn). ctx is the struct kube_delegate. */
int kube_delegate_guard(void *ctx, const char *method, const char *path, const char *authorization, char *msg,
			size_t msg_len);
/* How many TokenReviews and SubjectAccessReviews were sent (tests: the cache). */
void kube_delegate_calls(struct kube_delegate *d, uint64_t *token_reviews, uint64_t *access_reviews);

#endif
