/* klog-style line emitter. One formatted buffer, one write(2), so concurrent lines never interleave. */
#include "kube/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int kube_log_verbosity;
static int log_fd = 2;

void kube_log_set_verbosity(int v) { kube_log_verbosity = v < 0 ? 0 : v; }
void kube_log_set_fd(int fd) { log_fd = fd; }

void kube_log_emit(char sev, const char *file, int line, const char *msg, const char *kv_fmt, ...)
{
	char buf[4096];
	struct timeval tv;
	struct tm tm;
	const char *base = strrchr(file, '/');

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	int n = snprintf(buf, sizeof(buf), "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] \"%s\"", sev,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec,
			 (int)getpid(), base ? base + 1 : file, line, msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	if (kv_fmt && *kv_fmt) {
		va_list ap;
		va_start(ap, kv_fmt);
		int m = vsnprintf(buf + n, sizeof(buf) - 1 - n, kv_fmt, ap);
		va_end(ap);
		if (m > 0)
			n += ((size_t)m >= sizeof(buf) - 1 - n) ? (int)(sizeof(buf) - 2 - n) : m;
	}
	buf[n++] = '\n';
	ssize_t w = write(log_fd, buf, n);
	(void)w;
}
