/* A fake scheduler extender for tests: a small HTTP/1.1 server on 127.0.0.1 (ephemeral port), one
 * thread, one connection at a time ("Connection: close"). Each test scripts the answer per path
 * (status, body, delay; a delayed reply holds up later requests until it is sent or fe_stop)
 * and reads back the recorded requests (path, Content-Type, body). A mutex inside guards the
 * script and the records; every function is thread-safe. */
#ifndef SK_TEST_FAKE_EXTENDER_H
#define SK_TEST_FAKE_EXTENDER_H

#include <cjson/cJSON.h>

struct fe_server;

/* Starts the server (NULL on failure). fe_stop joins the thread and frees; NULL ok. */
struct fe_server *fe_start(void);
/* The same over TLS ("https://127.0.0.1:<port>") with a PEM certificate and key; client_ca_file
 * non-NULL: a client certificate signed by it is required. */
struct fe_server *fe_start_tls(const char *cert_file, const char *key_file, const char *client_ca_file);
/* Writes a self-signed P-256 certificate (CA:TRUE, subjectAltName IP:127.0.0.1) and its key. 0 or -1. */
int fe_make_cert(const char *cert_path, const char *key_path, const char *cn);
/* The same with another subjectAltName ("DNS:extender.example"). */
int fe_make_cert_san(const char *cert_path, const char *key_path, const char *cn, const char *san);
void fe_stop(struct fe_server *s);
/* "http://127.0.0.1:<port>" (owned by the server). */
const char *fe_url(const struct fe_server *s);
/* Scripts the reply to POST <path> ("/filter"): HTTP status, body (copied), and a delay before
 * answering in ms (interrupted by fe_stop). An unscripted path answers 404. */
void fe_respond(struct fe_server *s, const char *path, int status, const char *body, int delay_ms);
/* Requests received so far (all paths), or those of one path. */
int fe_count(struct fe_server *s, const char *path_or_null);
/* The i-th request body of path (0-based; -1 = last) parsed as JSON (caller cJSON_Delete's), NULL
 * when there is none. */
cJSON *fe_body(struct fe_server *s, const char *path, int i);
/* The Content-Type header of the last request ("" when none; caller frees). */
char *fe_last_content_type(struct fe_server *s);
void fe_clear(struct fe_server *s); /* forget the recorded requests */
/* The Host header and the TLS SNI name of the last request ("" when none; caller frees). */
char *fe_last_host(struct fe_server *s);
char *fe_last_sni(struct fe_server *s);

#endif
