/* GET https://127.0.0.1:<port><path> for the daemon tests (lib/libtestsupport.a): the daemon's
 * self-signed serving certificate is not verified; bearer, when not NULL, is sent as
 * "Authorization: Bearer <bearer>". Returns the body (caller frees; "" for an empty one) and the
 * HTTP status in *code (code may be NULL), or NULL on a transport error (printed to stderr, *code 0). */
#ifndef SK_TEST_HTTPS_GET_H
#define SK_TEST_HTTPS_GET_H

char *sk_test_https_get(int port, const char *path, const char *bearer, long *code);

#endif
