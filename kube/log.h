/* klog-style logging for every schedkit binary: severity, verbosity (--v), structured pairs.
 *
 *   klog_info(2, "Successfully bound pod", " pod=%s node=%s", pod, node);
 *   klog_error("Watch failed", " resource=%s err=%q", res, msg);   // %q is not supported: quote yourself
 *
 * Line format (stderr): I1130 02:43:22.123456   12345 file.c:123] "message" key=value ...
 * The key/value part is a printf format starting with a space; it may be omitted.
 * Never pass tokens, keys or certificates to these functions. Thread-safe: one write(2) per line. */
#ifndef KUBE_LOG_H
#define KUBE_LOG_H

#include <stdbool.h>

/* Current --v level (0 by default). Read without a lock: an int store is atomic enough for a level. */
extern int kube_log_verbosity;

void kube_log_set_verbosity(int v);
/* --logging-format: text (the line format above, default) or json (one object per line as
 * component-base/logs/json writes it: {"ts":<unix seconds>,"caller":"file.c:12","msg":"...",
 * "v":0,"key":"value",...}; errors and warnings carry no "v"). */
enum { KUBE_LOG_TEXT = 0, KUBE_LOG_JSON = 1 };
void kube_log_set_format(int format);
/* Redirect output to fd (default 2). Used by tests to capture lines. */
void kube_log_set_fd(int fd);
static inline bool kube_log_enabled(int v) { return v <= kube_log_verbosity; }

/* Emits one line. sev is 'I', 'W' or 'E'. kv_fmt is printf-style and may be "" or NULL. */
void kube_log_emit(char sev, const char *file, int line, const char *msg, const char *kv_fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define klog_info(v, msg, ...) \
	do { if (kube_log_enabled(v)) kube_log_emit('I', __FILE__, __LINE__, msg, "" __VA_ARGS__); } while (0)
#define klog_warning(msg, ...) kube_log_emit('W', __FILE__, __LINE__, msg, "" __VA_ARGS__)
#define klog_error(msg, ...) kube_log_emit('E', __FILE__, __LINE__, msg, "" __VA_ARGS__)

#endif
