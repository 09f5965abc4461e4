/* Status values returned by plugins (pkg/scheduler/framework/interface.go (Code)) and the collected config/args validation
 * errors (struct sk_errors). Both are plain values: a status owns only the reasons whose bit is set
 * in `owned`; an sk_errors owns every message. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedkit/plugin.h"

const char *sk_code_string(enum sk_code c)
{
	switch (c) {
	case SK_SUCCESS: return "Success";
	case SK_ERROR: return "Error";
	case SK_UNSCHEDULABLE: return "Unschedulable";
	case SK_UNSCHEDULABLE_AND_UNRESOLVABLE: return "UnschedulableAndUnresolvable";
	case SK_WAIT: return "Wait";
	case SK_SKIP: return "Skip";
	case SK_PENDING: return "Pending";
	}
	return "Unknown";
}

/* Used when a formatted reason cannot be allocated: the status keeps its code and says why. */
static const char oom_reason[] = "out of memory formatting status reason";

/* Appends msg (malloc'd, taken) past the inline reasons; on ENOMEM msg is freed and dropped. */
static void add_more(struct sk_status *s, char *msg)
{
	char **m = realloc(s->more, (size_t)(s->nmore + 1) * sizeof(*m));
	if (!m) {
		free(msg);
		return;
	}
	s->more = m;
	s->more[s->nmore++] = msg;
}

void sk_status_add(struct sk_status *s, const char *static_reason)
{
	if (!static_reason)
		return;
	if (s->nreasons < SK_STATUS_MAX_REASONS) {
		s->reasons[s->nreasons++] = static_reason;
		return;
	}
	char *d = strdup(static_reason);
	if (d)
		add_more(s, d);
}

static void status_vaddf(struct sk_status *s, const char *fmt, va_list ap)
{
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0) {
		if (s->nreasons < SK_STATUS_MAX_REASONS)
			s->reasons[s->nreasons++] = oom_reason;
		return;
	}
	if (s->nreasons >= SK_STATUS_MAX_REASONS) {
		add_more(s, msg);
		return;
	}
	s->owned |= (uint8_t)(1u << s->nreasons);
	s->reasons[s->nreasons++] = msg;
}

void sk_status_addf(struct sk_status *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	status_vaddf(s, fmt, ap);
	va_end(ap);
}

void sk_status_addv(struct sk_status *s, const char *fmt, va_list ap)
{
	status_vaddf(s, fmt, ap);
}

struct sk_status sk_status(enum sk_code code, const char *static_reason)
{
	struct sk_status s = { 0 };
	s.code = code;
	sk_status_add(&s, static_reason);
	return s;
}

struct sk_status sk_statusf(enum sk_code code, const char *fmt, ...)
{
	struct sk_status s = { 0 };
	va_list ap;
	s.code = code;
	va_start(ap, fmt);
	status_vaddf(&s, fmt, ap);
	va_end(ap);
	return s;
}

struct sk_status sk_statusv(enum sk_code code, const char *fmt, va_list ap)
{
	struct sk_status s = { 0 };
	s.code = code;
	status_vaddf(&s, fmt, ap);
	return s;
}

void sk_status_reset(struct sk_status *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nreasons; i++)
		if (s->owned & (1u << i))
			free((char *)s->reasons[i]);
	for (int i = 0; i < s->nmore; i++)
		free(s->more[i]);
	free(s->more);
	memset(s, 0, sizeof(*s));
}

int sk_status_reason_count(const struct sk_status *s)
{
	return s->nreasons + s->nmore;
}

const char *sk_status_reason(const struct sk_status *s, int i)
{
	if (i < 0)
		return NULL;
	if (i < s->nreasons)
		return s->reasons[i];
	return i - s->nreasons < s->nmore ? s->more[i - s->nreasons] : NULL;
}

struct sk_status sk_status_copy(const struct sk_status *src)
{
	struct sk_status s = *src;
	s.owned = 0;
	for (int i = 0; i < src->nreasons; i++) {
		if (!(src->owned & (1u << i)))
			continue;
		char *d = strdup(src->reasons[i]);
		if (d) {
			s.reasons[i] = d;
			s.owned |= (uint8_t)(1u << i);
		} else {
			s.reasons[i] = oom_reason;
		}
	}
	s.nmore = 0;
	s.more = NULL;
	for (int i = 0; i < src->nmore; i++) {
		char *d = strdup(src->more[i]);
		if (d)
			add_more(&s, d);
	}
	return s;
}

char *sk_status_message(const struct sk_status *s)
{
	int n = sk_status_reason_count(s);
	size_t len = 1;
	for (int i = 0; i < n; i++)
		len += strlen(sk_status_reason(s, i)) + 2;
	char *out = malloc(len);
	if (!out)
		return NULL;
	char *p = out;
	for (int i = 0; i < n; i++) {
		const char *r = sk_status_reason(s, i);
		size_t l = strlen(r);
		if (i) {
			memcpy(p, ", ", 2);
			p += 2;
		}
		memcpy(p, r, l);
		p += l;
	}
	*p = '\0';
	return out;
}

/* ---------- sk_errors ---------- */

void sk_errors_addf(struct sk_errors *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sk_errors_addv(e, fmt, ap);
	va_end(ap);
}

void sk_errors_addv(struct sk_errors *e, const char *fmt, va_list ap)
{
	char *msg = NULL;
	int r = vasprintf(&msg, fmt, ap);
	if (r < 0)
		msg = NULL;
	if (e->n == e->cap) {
		int ncap = e->cap ? e->cap * 2 : 8;
		char **nm = realloc(e->msgs, (size_t)ncap * sizeof(*nm));
		if (!nm) {
			free(msg);
			return;
		}
		e->msgs = nm;
		e->cap = ncap;
	}
	/* An unformattable message still counts as an error, so callers never see n == 0 by mistake. */
	e->msgs[e->n++] = msg ? msg : strdup(oom_reason);
}

void sk_errors_free(struct sk_errors *e)
{
	if (!e)
		return;
	for (int i = 0; i < e->n; i++)
		free(e->msgs[i]);
	free(e->msgs);
	e->msgs = NULL;
	e->n = e->cap = 0;
}

char *sk_errors_join(const struct sk_errors *e, const char *sep)
{
	size_t seplen = strlen(sep), len = 1;
	for (int i = 0; i < e->n; i++)
		len += (e->msgs[i] ? strlen(e->msgs[i]) : 0) + seplen;
	char *out = malloc(len);
	if (!out)
		return NULL;
	char *p = out;
	for (int i = 0; i < e->n; i++) {
		if (i) {
			memcpy(p, sep, seplen);
			p += seplen;
		}
		if (e->msgs[i]) {
			size_t l = strlen(e->msgs[i]);
			memcpy(p, e->msgs[i], l);
			p += l;
		}
	}
	*p = '\0';
	return out;
}
