/* Status values returned by plugins (pkg/scheduler/framework/interface.go (Code)) and the collected config/args validation
 * errors (struct sk_errors). Both are plain values: a status owns only the reasons whose bit is set
 * in `owned`; an sk_errors owns every message. */
#include <stdarg.h>
#include <stddef.h>
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

/* Reasons past the sixth, within the 1.0 layout of struct sk_status (its size is part of the plugin
 * ABI: plugins return it by value, so it cannot grow). The sixth slot then points at the text of an
 * overflow block, which holds that sixth reason and every later one; bit SK_STATUS_OVERFLOW of
 * `owned` says so. A plugin reading reasons[0..nreasons) directly still sees six valid strings;
 * sk_status_reason_count / sk_status_reason (the host's) see them all. */
#define SK_STATUS_OVERFLOW 0x80u
#define LAST (SK_STATUS_MAX_REASONS - 1)

struct overflow {
	int n;         /* reasons after the sixth */
	char **more;   /* [n], each malloc'd */
	char text[];   /* the sixth reason */
};

static struct overflow *overflow_of(const struct sk_status *s)
{
	if (!(s->owned & SK_STATUS_OVERFLOW) || s->nreasons != SK_STATUS_MAX_REASONS)
		return NULL;
	return (struct overflow *)(void *)((char *)s->reasons[LAST] - offsetof(struct overflow, text));
}

/* Appends msg (malloc'd, taken) past the inline reasons; on ENOMEM msg is freed and dropped. */
static void add_more(struct sk_status *s, char *msg)
{
	struct overflow *o = overflow_of(s);
	if (!o) {
		const char *sixth = s->reasons[LAST];
		size_t len = strlen(sixth);
		if (!(o = malloc(sizeof(*o) + len + 1))) {
			free(msg);
			return;
		}
		o->n = 0;
		o->more = NULL;
		memcpy(o->text, sixth, len + 1);
		if (s->owned & (1u << LAST))
			free((char *)sixth);
		s->owned = (uint8_t)((s->owned & ~(1u << LAST)) | SK_STATUS_OVERFLOW);
		s->reasons[LAST] = o->text;
	}
	char **m = realloc(o->more, (size_t)(o->n + 1) * sizeof(*m));
	if (!m) {
		free(msg);
		return;
	}
	o->more = m;
	o->more[o->n++] = msg;
}

static void free_overflow(struct overflow *o)
{
	if (!o)
		return;
	for (int i = 0; i < o->n; i++)
		free(o->more[i]);
	free(o->more);
	free(o);
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
	if (!s->owned) { /* static reasons only (the common failure statuses) */
		memset(s, 0, sizeof(*s));
		return;
	}
	struct overflow *o = overflow_of(s);
	for (int i = 0; i < s->nreasons; i++)
		if (s->owned & (1u << i))
			free((char *)s->reasons[i]);
	free_overflow(o);
	memset(s, 0, sizeof(*s));
}

int sk_status_reason_count(const struct sk_status *s)
{
	const struct overflow *o = overflow_of(s);
	return s->nreasons + (o ? o->n : 0);
}

const char *sk_status_reason(const struct sk_status *s, int i)
{
	if (i < 0)
		return NULL;
	if (i < s->nreasons)
		return s->reasons[i];
	const struct overflow *o = overflow_of(s);
	return o && i - s->nreasons < o->n ? o->more[i - s->nreasons] : NULL;
}

struct sk_status sk_status_copy(const struct sk_status *src)
{
	struct sk_status s = *src;
	const struct overflow *o = overflow_of(src);
	s.owned = 0;
	for (int i = 0; i < src->nreasons; i++) {
		if (!(src->owned & (1u << i)) && !(o && i == LAST))
			continue;
		char *d = strdup(src->reasons[i]);
		if (d) {
			s.reasons[i] = d;
			s.owned |= (uint8_t)(1u << i);
		} else {
			s.reasons[i] = oom_reason;
		}
	}
	for (int i = 0; o && i < o->n; i++) {
		char *d = strdup(o->more[i]);
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
