/* Private to the extender client (extender.c, extender_wire.c, extender_preempt.c): the
 * struct and the HTTP call. */
#ifndef SK_EXTENDER_PRIV_H
#define SK_EXTENDER_PRIV_H

#include <stdio.h>

#include <curl/curl.h>

#include "scheduler/framework/extender.h"

static inline const char *sk_ni_name(const struct sk_node_info *ni)
{
	return ni->node && ni->node->name ? ni->node->name : "";
}

struct sk_extender {
	char *url_prefix; /* trailing '/' removed */
	char *name;       /* urlPrefix as configured */
	char *filter_verb, *prioritize_verb, *bind_verb, *preempt_verb;
	int64_t weight;
	int64_t timeout_ms;
	bool enable_https, node_cache_capable, ignorable;
	/* TLS */
	bool tls_set, insecure;
	char *server_name;
	char *ca_file, *cert_file, *key_file;
	char *ca_data, *cert_data, *key_data; /* decoded PEM */
	size_t ca_len, cert_len, key_len;
	int nmanaged;
	char **managed;
	struct sk_extender_pool *pool; /* idle curl handles (keep-alive), extender_pool.c */
	/* extender_tls.c: the fixed request headers; with tlsConfig.serverName on an https
	 * urlPrefix, the prefix the calls use (its host replaced) and where they connect */
	struct curl_slist *headers;
	char *call_prefix; /* NULL: url_prefix */
	struct curl_slist *connect_to;
};

/* extender_tls.c: the headers and serverName set up (after the TLS fields are read); 0 or -1 and
 * *err naming path. */
int sk_extender_request_init(struct sk_extender *e, const char *path, char **err);
/* The TLS options (and CURLOPT_CONNECT_TO for serverName) of one call. */
void sk_extender_tls_setopt(const struct sk_extender *e, CURL *c);

/* The index of the node called name[0..len) in nodes, searched from *hint on (wrapping); *hint
 * moves past the hit, so an answer in the order of the request costs one comparison per name. */
int sk_extender_find_node(const struct sk_node_info *const *nodes, int n, const char *name, size_t len, int *hint);
/* One FailedNodes / FailedAndUnresolvableNodes entry (copied); skipped when the node is already
 * listed (FailedAndUnresolvable is read first and wins). -1 on ENOMEM. */
int sk_extender_add_failed(struct sk_extender_filter_result *r, const char *node, size_t node_len, const char *msg,
			   size_t msg_len, bool unresolvable);
/* extender_fast.c: the answer read from the response bytes. 1 decoded into *out (whose nodes
 * array has room for n) or add; 0 when the body needs the cJSON path (out left without
 * entries, add untouched); -1 on ENOMEM. */
int sk_extender_filter_fast(const struct sk_extender *e, const char *body, const struct sk_node_info *const *nodes,
			    int n, struct sk_extender_filter_result *out);
int sk_extender_prioritize_fast(const struct sk_extender *e, const char *body, const struct sk_node_info *const *nodes,
				int n, int64_t *add);

/* extender_pool.c: a handle from the pool (or a new one; NULL on ENOMEM), and back (reset). */
struct sk_extender_pool *sk_extender_pool_new(void);
void sk_extender_pool_free(struct sk_extender_pool *p); /* NULL ok */
CURL *sk_extender_pool_get(struct sk_extender_pool *p);
void sk_extender_pool_put(struct sk_extender_pool *p, CURL *c);

/* POSTs body (JSON; NULL reads as ENOMEM) to urlPrefix/path; returns the parsed response (caller
 * deletes) or NULL and *err. label: the verb for the metrics ("filter", "prioritize", "bind",
 * "preempt"); the call's duration and its error kind are recorded (extender_metrics.c). */
cJSON *sk_extender_post(const struct sk_extender *e, const char *label, const char *path, const char *body,
			char **err);
/* Records one call: seconds < 0 records no duration; error_kind NULL records no error. */
void sk_extender_observe(const struct sk_extender *e, const char *label, double seconds, const char *error_kind);

/* Go's decoder: exact key first, else case-insensitive. */
const cJSON *sk_extender_rget(const cJSON *o, const char *k);

/* ExtenderArgs as a compact JSON string (caller frees; NULL on ENOMEM). */
char *sk_extender_args_body(const struct sk_extender *e, const struct sk_pod *pod,
			    const struct sk_node_info *const *nodes, int n);
/* Appends the pod's JSON (the kept object, else the rebuilt one) to f. -1 on ENOMEM. */
int sk_extender_write_pod(FILE *f, const struct sk_pod *pod);

#endif
