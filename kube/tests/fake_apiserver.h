/* Scripted HTTP/1.1 peer for kube/ tests: a tiny threaded server on 127.0.0.1:<ephemeral>
 * (optionally TLS with a generated self-signed certificate). Routes are matched in the order
 * they were added by method + path prefix (path includes the query); a route with a use count
 * is consumed after that many matches. A route either replies (status/headers/body), streams
 * chunks with pauses, closes the connection, or hands the request to a handler callback.
 * Unmatched requests get 404 with a NotFound Status. Every request is recorded.
 *
 * Locking: fs->mu guards routes and the request log; handlers run on connection threads
 * without it. */
#ifndef KUBE_TESTS_FAKE_APISERVER_H
#define KUBE_TESTS_FAKE_APISERVER_H

#include <stdbool.h>
#include <stddef.h>

struct fake_apiserver;
struct fake_conn;   /* one client connection, valid inside a handler */

struct fake_request {
	char method[16];
	char *path;          /* path + "?" + query as sent */
	char *headers;       /* raw header block, "Name: value\r\n..." */
	char *body; size_t body_len;
	int conn_id;         /* connections are numbered from 1; equal ids = connection reused */
	bool client_cert;    /* TLS: the client presented a certificate that verified */
};

/* Starts the server. tls: serve HTTPS with a fresh self-signed cert (CN/IP 127.0.0.1) that also
 * serves as the CA (fake_apiserver_ca_pem); a client certificate is requested but optional
 * (accepted when it verifies against fake_apiserver_client_ca). Returns NULL on failure. */
struct fake_apiserver *fake_apiserver_start(bool tls);
void fake_apiserver_stop(struct fake_apiserver *);   /* closes everything, joins, frees */

/* "http://127.0.0.1:PORT" or "https://127.0.0.1:PORT". Borrowed. */
const char *fake_apiserver_url(const struct fake_apiserver *);
int fake_apiserver_port(const struct fake_apiserver *);
/* TLS only: the server certificate (PEM), usable as a CA bundle. Borrowed. */
const char *fake_apiserver_ca_pem(const struct fake_apiserver *);
/* TLS only: a client certificate + key (PEM) that the server accepts. Borrowed. */
const char *fake_apiserver_client_cert_pem(const struct fake_apiserver *);
const char *fake_apiserver_client_key_pem(const struct fake_apiserver *);

/* Scripted reply. headers: extra "Name: value\r\n" lines or NULL. times: 0 = forever. */
void fake_apiserver_reply(struct fake_apiserver *, const char *method, const char *path_prefix, int times,
                          int status, const char *headers, const char *body);
/* Chunked 200 stream: each chunk written (and flushed) after pause_ms; then the response ends
 * (terminating chunk) unless hang, in which case the connection stays open until the client
 * closes it or the server stops; or is closed abruptly (no terminating chunk) when abort. */
enum fake_stream_end { FAKE_END_CLEAN, FAKE_END_ABORT, FAKE_END_HANG };
void fake_apiserver_stream(struct fake_apiserver *, const char *method, const char *path_prefix, int times,
                           const char *const *chunks, int nchunks, int pause_ms, enum fake_stream_end end);
/* Close the connection without replying (after reading the request). */
void fake_apiserver_close(struct fake_apiserver *, const char *method, const char *path_prefix, int times);
/* Handler: called with the request; must write a reply with the fake_conn_* functions. Returns
 * false to close the connection afterwards. */
typedef bool (*fake_handler_fn)(void *ctx, const struct fake_request *req, struct fake_conn *c);
void fake_apiserver_handle(struct fake_apiserver *, const char *method, const char *path_prefix, int times,
                           fake_handler_fn fn, void *ctx);
/* Removes all routes. */
void fake_apiserver_clear_routes(struct fake_apiserver *);

/* Writers for handlers. Return 0, or -1 when the peer went away. */
int fake_conn_reply(struct fake_conn *, int status, const char *headers, const char *body);
int fake_conn_stream_begin(struct fake_conn *, int status, const char *headers);
int fake_conn_chunk(struct fake_conn *, const char *data, size_t len);
int fake_conn_stream_end(struct fake_conn *);
/* Blocks until the peer closes the connection or the server stops. */
void fake_conn_wait_closed(struct fake_conn *);

/* Request log. */
size_t fake_apiserver_request_count(struct fake_apiserver *);
/* Copy of request i (0-based); caller frees with fake_request_free. NULL when out of range. */
struct fake_request *fake_apiserver_request(struct fake_apiserver *, size_t i);
/* Number of recorded requests with this method whose path starts with prefix (method NULL = any). */
size_t fake_apiserver_count(struct fake_apiserver *, const char *method, const char *path_prefix);
/* Copy of the last matching request, or NULL. Caller frees. */
struct fake_request *fake_apiserver_last(struct fake_apiserver *, const char *method, const char *path_prefix);
void fake_apiserver_clear_requests(struct fake_apiserver *);
void fake_request_free(struct fake_request *);
/* Value of header name (case-insensitive) in req into buf; returns buf or NULL when absent. */
char *fake_request_header(const struct fake_request *req, const char *name, char *buf, size_t len);

#endif
