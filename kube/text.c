/* Shared immutable text (text.h). */
#include "kube/text.h"

#include <stdlib.h>
#include <string.h>

struct kube_text *kube_text_new(const char *s, size_t len)
{
	struct kube_text *t = malloc(sizeof(*t) + len + 1);
	if (!t)
		return NULL;
	atomic_init(&t->refs, 1);
	t->len = len;
	if (len)
		memcpy(t->s, s, len);
	t->s[len] = 0;
	return t;
}

struct kube_text *kube_text_adopt(char *s)
{
	struct kube_text *t = s ? kube_text_new(s, strlen(s)) : NULL;
	free(s);
	return t;
}

struct kube_text *kube_text_ref(struct kube_text *t)
{
	if (t)
		atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
	return t;
}

void kube_text_unref(struct kube_text *t)
{
	if (t && atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
		free(t);
}
