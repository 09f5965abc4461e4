/* Private to kube/rest.c: the persistent HTTP/1.1 keep-alive client that carries kube_request's
 * plain requests (every verb, a Content-Length, chunked or close-delimited answer) without
 * libcurl's per-request work (docs/benchmarks.md, "The client's per-request cost"). Streams, the
 * tunnel, proxies and exec-plugin client certificates stay on libcurl.
 *
 * Errors are reported as the CURLcode libcurl would have returned for the same failure, with a
 * message in the same words, so that rest.c maps both transports to one struct kube_error.
 *
 * Locking: a pool's mutex guards its idle connections and its TLS context; it is never held
 * across I/O. A connection is used by one request at a time. */
#ifndef KUBE_REST_CONN_H
#define KUBE_REST_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

struct kube_conn_pool;

/* TLS material as the client holds it (borrowed for the call; files are read here and again
 * when a new connection finds one changed, as libcurl reads them per connection). */
struct kube_conn_tls {
	bool insecure;
	const char *ca_file, *ca_data;
	const char *cert_file, *cert_data, *key_file, *key_data;
};

/* A pool for server ("http[s]://host[:port][/prefix]"). Returns NULL when this client cannot
 * carry the server's requests the way libcurl would (a proxy from the environment, user info in
 * the URL, TLS material OpenSSL refuses, OOM): the caller then keeps libcurl for everything.
 * Free with kube_conn_pool_free (NULL is a no-op). */
struct kube_conn_pool *kube_conn_pool_new(const char *server, const struct kube_conn_tls *tls);
void kube_conn_pool_free(struct kube_conn_pool *);

/* One request. head: the header lines after the request line and Host, each ending "\r\n"
 * (User-Agent, Accept, Authorization, Content-Type), not the blank line; the pool adds
 * Content-Length when a body is given (or for POST/PUT/PATCH without one). timeout_s 0: none. */
struct kube_conn_request {
	const char *method;
	const char *path, *query;   /* query NULL or "" = none */
	const char *head; size_t head_len;
	const char *body; size_t body_len;   /* body NULL = none */
	int timeout_s;
};

/* The answer. body is malloc'd (NUL-terminated, NULL when empty; caller frees). */
struct kube_conn_response {
	long code;
	double retry_after;   /* Retry-After seconds, -1 when absent */
	char *body; size_t body_len;
	bool sent;            /* a byte of the request reached the socket (retry rules) */
	char errbuf[CURL_ERROR_SIZE];
	/* kube_conn_do_pipelined: this request's outcome (as kube_conn_do returns it), and when its
	 * answer was read (kube_mono_ns seconds) */
	CURLcode result;
	double done;
};

/* Returns CURLE_OK with the answer in *resp (any HTTP code), or the CURLcode libcurl reports for
 * the same failure with resp->errbuf set. An idle connection the server closed is found before
 * the request is written and replaced; a reused connection that dies before the first answer byte
 * is replaced and the request sent again only for idempotent verbs (GET, HEAD, PUT, DELETE). */
CURLcode kube_conn_do(struct kube_conn_pool *, const struct kube_conn_request *req, struct kube_conn_response *resp);

/* n requests on one connection, written back to back and answered in order (HTTP/1.1
 * pipelining: the server reads the next request after answering the previous one). r[i] gets
 * request i's answer and r[i].result its CURLcode. An idle connection found closed before
 * anything was written is replaced; otherwise nothing is sent again: when the connection dies,
 * the requests whose answers did not arrive fail with sent set for those that reached the
 * socket (they may have been applied). Timeout: q[0].timeout_s for the whole pipeline. */
void kube_conn_do_pipelined(struct kube_conn_pool *, const struct kube_conn_request *q, size_t n,
			    struct kube_conn_response *r);

/* Connections opened since the pool was made (tests: keep-alive reuse). */
unsigned long kube_conn_pool_opened(struct kube_conn_pool *);

#endif
