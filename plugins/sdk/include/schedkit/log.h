/* Logging for plugins: klog-style lines through the scheduler's logger (kube/log.h in the core),
 * at the scheduler's --v level. kv_fmt is printf-style and starts with a space:
 *
 *   sk_log_info(5, "Pod is not eligible for preemption", " pod=%s/%s", pod->ns, pod->name);
 *
 * Not included by plugin.h: core files use kube/log.h, whose klog_* macros these would redefine. */
#ifndef SK_SCHEDKIT_LOG_H
#define SK_SCHEDKIT_LOG_H

#include <stdarg.h>
#include <stdbool.h>

/* True when --v is at least v (the check is a call so plugins built apart follow the live level). */
bool sk_log_enabled(int v);
/* One line; sev is 'I', 'W' or 'E'; kv_fmt may be "" or NULL. Thread-safe (one write per line). */
void sk_log_emit(char sev, const char *file, int line, const char *msg, const char *kv_fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* sk_log_emit with a va_list (what a module's sk_log_emit forwards to through the host table). */
void sk_log_emitv(char sev, const char *file, int line, const char *msg, const char *kv_fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

#define sk_log_info(v, msg, ...) \
	do { if (sk_log_enabled(v)) sk_log_emit('I', __FILE__, __LINE__, msg, "" __VA_ARGS__); } while (0)
#define sk_log_warning(msg, ...) sk_log_emit('W', __FILE__, __LINE__, msg, "" __VA_ARGS__)
#define sk_log_error(msg, ...) sk_log_emit('E', __FILE__, __LINE__, msg, "" __VA_ARGS__)

/* The kube/log.h spellings, for plugin code that logs the way the core does. */
#define klog_info(v, msg, ...) sk_log_info(v, msg, __VA_ARGS__)
#define klog_warning(msg, ...) sk_log_warning(msg, __VA_ARGS__)
#define klog_error(msg, ...) sk_log_error(msg, __VA_ARGS__)

#endif
