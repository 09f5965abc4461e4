/* The helpers of util.h: error message formatting, the monotonic clock, Go durations and
 * strconv-style parsing. Nothing here keeps state. */
#include "kube/util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void verrf(char **err, const char *fmt, va_list ap)
{
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	free(*err);
	*err = msg;
}

int kube_errf(char **err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		verrf(err, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int kube_errf_first(char **err, const char *fmt, ...)
{
	if (err && !*err) {
		va_list ap;
		va_start(ap, fmt);
		verrf(err, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int64_t kube_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---------- Go durations ---------- */

/* The unit at p: its length in *len and its size in ns, or 0 when p holds no unit. */
static double duration_unit(const char *p, size_t *len)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, { "\xce\xbcs", 1e3 }, /* U+00B5, U+03BC */
		{ "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 },
	};
	/* Two-letter units first: "ms" is not "m" followed by garbage. */
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		size_t l = strlen(units[i].name);
		if (!strncmp(p, units[i].name, l)) {
			*len = l;
			return units[i].ns;
		}
	}
	return 0;
}

int kube_duration_parse_ms(const char *s, int64_t *ms)
{
	/* [-+]?([0-9]*(\.[0-9]*)?unit)+ or "0". Summed in nanoseconds as a double (durations we
	 * read are far below 2^53 ns), then truncated to milliseconds. */
	if (!s || !*s)
		return -1;
	const char *p = s;
	int sign = 1;
	if (*p == '-' || *p == '+')
		sign = *p++ == '-' ? -1 : 1;
	if (!strcmp(p, "0")) {
		*ms = 0;
		return 0;
	}
	if (!*p)
		return -1;
	double total_ns = 0;
	while (*p) {
		if (!isdigit((unsigned char)*p) && *p != '.')
			return -1;
		char *end;
		double v = strtod(p, &end);
		if (end == p)
			return -1;
		size_t ulen = 0;
		double unit = duration_unit(end, &ulen);
		if (unit == 0)
			return -1;
		total_ns += v * unit;
		p = end + ulen;
	}
	if (total_ns > 9.2e18)
		return -1;
	*ms = sign * (int64_t)(total_ns / 1e6);
	return 0;
}

void kube_duration_format_ms(int64_t ms, char *buf, size_t n)
{
	if (ms == 0) {
		snprintf(buf, n, "0s");
		return;
	}
	const char *sign = ms < 0 ? "-" : "";
	uint64_t u = ms < 0 ? -(uint64_t)ms : (uint64_t)ms;
	if (u < 1000) {
		snprintf(buf, n, "%s%" PRIu64 "ms", sign, u);
		return;
	}
	uint64_t h = u / 3600000, m = u / 60000 % 60, s = u / 1000 % 60, frac = u % 1000;
	char sec[32];
	if (frac) {
		snprintf(sec, sizeof sec, "%" PRIu64 ".%03" PRIu64, s, frac);
		size_t l = strlen(sec);
		while (sec[l - 1] == '0')
			sec[--l] = '\0';
	} else {
		snprintf(sec, sizeof sec, "%" PRIu64, s);
	}
	if (h)
		snprintf(buf, n, "%s%" PRIu64 "h%" PRIu64 "m%ss", sign, h, m, sec);
	else if (m)
		snprintf(buf, n, "%s%" PRIu64 "m%ss", sign, m, sec);
	else
		snprintf(buf, n, "%s%ss", sign, sec);
}

/* ---------- strconv ---------- */

int kube_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
	for (size_t i = 0; s && i < sizeof yes / sizeof yes[0]; i++) {
		if (!strcmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

int kube_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}
