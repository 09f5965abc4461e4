/* The core side of schedkit/log.h: plugin log lines go through kube/log.h's logger, so they share
 * its format, its --v level and its output descriptor with the rest of the scheduler. */
#include <stdarg.h>
#include <stdio.h>

#include "schedkit/log.h"

/* schedkit/log.h's klog_* aliases would clash with kube/log.h's definitions of the same names. */
#undef klog_info
#undef klog_warning
#undef klog_error
#include "kube/log.h"

bool sk_log_enabled(int v)
{
	return kube_log_enabled(v);
}

void sk_log_emit(char sev, const char *file, int line, const char *msg, const char *kv_fmt, ...)
{
	va_list ap;
	va_start(ap, kv_fmt);
	sk_log_emitv(sev, file, line, msg, kv_fmt, ap);
	va_end(ap);
}

void sk_log_emitv(char sev, const char *file, int line, const char *msg, const char *kv_fmt, va_list ap)
{
	if (!kv_fmt || !*kv_fmt) {
		kube_log_emit(sev, file, line, msg, "");
		return;
	}
	/* kube_log_emit has no va_list form: format here. A line is at most 4 KiB there too, so the
	 * pairs it prints are the same. */
	char kv[4096];
	int n = vsnprintf(kv, sizeof(kv), kv_fmt, ap);
	kube_log_emit(sev, file, line, msg, "%s", n < 0 ? "" : kv);
}
