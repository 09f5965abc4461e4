/* klog-style line emitter. One formatted buffer, one write(2), so concurrent lines never interleave. */
#include "kube/log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int kube_log_verbosity;
static int log_fd = 2;
static int log_format; /* KUBE_LOG_TEXT or KUBE_LOG_JSON */

void kube_log_set_format(int format) { log_format = format; }

/* Appends s (n bytes) to b as JSON string content. */
static size_t json_str(char *b, size_t off, size_t cap, const char *s, size_t n)
{
	for (size_t i = 0; i < n && off + 8 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			b[off++] = '\\';
			b[off++] = (char)c;
		} else if (c < 0x20) {
			off += (size_t)snprintf(b + off, cap - off, "\\u%04x", c);
		} else {
			b[off++] = (char)c;
		}
	}
	return off;
}

/* The klog-style " key=value key=\"quoted\"" pairs as JSON members (component-base/logs/json):
 * a quoted value is unquoted (its \" \\ \n \t escapes undone), a bare one is a string, except
 * integers, which stay numbers. */
static size_t json_pairs(char *b, size_t off, size_t cap, const char *kv)
{
	const char *p = kv;
	while (*p && off + 16 < cap) {
		while (*p == ' ')
			p++;
		const char *eq = strchr(p, '=');
		if (!*p || !eq)
			break;
		b[off++] = ',';
		b[off++] = '"';
		off = json_str(b, off, cap, p, (size_t)(eq - p));
		b[off++] = '"';
		b[off++] = ':';
		p = eq + 1;
		if (*p == '"') {
			char val[2048];
			size_t vn = 0;
			for (p++; *p && *p != '"' && vn + 1 < sizeof val; p++) {
				if (*p == '\\' && p[1]) {
					p++;
					val[vn++] = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
					continue;
				}
				val[vn++] = *p;
			}
			if (*p == '"')
				p++;
			b[off++] = '"';
			off = json_str(b, off, cap, val, vn);
			b[off++] = '"';
		} else {
			size_t n = strcspn(p, " ");
			size_t d = p[0] == '-' ? 1 : 0;
			while (d < n && p[d] >= '0' && p[d] <= '9')
				d++;
			bool num = n > (p[0] == '-' ? 1u : 0u) && d == n && n < 19;
			if (!num)
				b[off++] = '"';
			off = json_str(b, off, cap, p, n);
			if (!num)
				b[off++] = '"';
			p += n;
		}
	}
	return off;
}

static void emit_json(char sev, const char *file, int line, const char *msg, const char *kv)
{
	char buf[8192];
	struct timeval tv;
	gettimeofday(&tv, NULL);
	const char *base = strrchr(file, '/');
	size_t cap = sizeof buf - 4;
	size_t off = (size_t)snprintf(buf, cap, "{\"ts\":%ld.%03ld,\"caller\":\"%s:%d\",\"msg\":\"", (long)tv.tv_sec,
				      (long)(tv.tv_usec / 1000), base ? base + 1 : file, line);
	off = json_str(buf, off, cap, msg, strlen(msg));
	buf[off++] = '"';
	if (sev == 'I' && off + 16 < cap)
		off += (size_t)snprintf(buf + off, cap - off, ",\"v\":0");
	off = json_pairs(buf, off, cap, kv);
	buf[off++] = '}';
	buf[off++] = '\n';
	ssize_t w = write(log_fd, buf, off);
	(void)w;
}

void kube_log_set_verbosity(int v) { kube_log_verbosity = v < 0 ? 0 : v; }
void kube_log_set_fd(int fd) { log_fd = fd; }

void kube_log_emit(char sev, const char *file, int line, const char *msg, const char *kv_fmt, ...)
{
	char buf[4096];
	struct timeval tv;
	struct tm tm;
	const char *base = strrchr(file, '/');

	if (log_format == KUBE_LOG_JSON) {
		char kv[4096] = "";
		if (kv_fmt && *kv_fmt) {
			va_list ap;
			va_start(ap, kv_fmt);
			vsnprintf(kv, sizeof kv, kv_fmt, ap);
			va_end(ap);
		}
		emit_json(sev, file, line, msg, kv);
		return;
	}
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
