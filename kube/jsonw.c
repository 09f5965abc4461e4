/* JSON text writer for request bodies (see kube/jsonw.h). */
#include "kube/jsonw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(struct kube_jsonw *w, size_t more)
{
	if (w->oom)
		return false;
	if (w->len + more + 1 <= w->cap)
		return true;
	size_t ncap = w->cap ? w->cap : 512;
	while (ncap < w->len + more + 1)
		ncap *= 2;
	char *np = realloc(w->p, ncap);
	if (!np) {
		w->oom = true;
		return false;
	}
	w->p = np;
	w->cap = ncap;
	return true;
}

static void append(struct kube_jsonw *w, const char *s, size_t n)
{
	if (!reserve(w, n))
		return;
	memcpy(w->p + w->len, s, n);
	w->len += n;
	w->p[w->len] = 0;
}

void kube_jsonw_raw(struct kube_jsonw *w, const char *s) { append(w, s, strlen(s)); }

/* The escape for byte c, or NULL when c stands for itself. */
static const char *escape_of(unsigned char c, char u[8])
{
	static const char *const named[] = { ['"'] = "\\\"", ['\\'] = "\\\\", ['\b'] = "\\b", ['\f'] = "\\f",
					     ['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t" };
	if (c < sizeof named / sizeof named[0] && named[c])
		return named[c];
	if (c >= 0x20)
		return NULL;
	snprintf(u, 8, "\\u%04x", c);
	return u;
}

void kube_jsonw_str(struct kube_jsonw *w, const char *s)
{
	if (!s) {
		append(w, "null", 4);
		return;
	}
	append(w, "\"", 1);
	const char *run = s;
	for (const char *p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;   /* the common case: the byte stands for itself */
		char u[8];
		const char *esc = escape_of(ch, u);
		append(w, run, (size_t)(p - run));
		append(w, esc, strlen(esc));
		run = p + 1;
	}
	append(w, run, strlen(run));
	append(w, "\"", 1);
}

void kube_jsonw_int(struct kube_jsonw *w, long long v)
{
	char num[24];
	int n = snprintf(num, sizeof num, "%lld", v);
	append(w, num, (size_t)n);
}

char *kube_jsonw_finish(struct kube_jsonw *w)
{
	if (w->oom || !w->p) {
		bool oom = w->oom;
		free(w->p);
		*w = (struct kube_jsonw){0};
		return oom ? NULL : strdup("");
	}
	char *p = w->p;
	*w = (struct kube_jsonw){0};
	return p;
}
