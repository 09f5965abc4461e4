/* Finding a member's value bytes in JSON text without building a tree (jsonspan.h). */
#include "kube/jsonspan.h"

#include <stdbool.h>
#include <string.h>

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
		i++;
	return i;
}

/* i at an opening '"': the index after the closing one, or n when unterminated. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return n;
}

/* i at the start of a value: the index after it, or n when malformed. */
static size_t skip_value(const char *s, size_t n, size_t i)
{
	if (i >= n)
		return n;
	if (s[i] == '"')
		return skip_string(s, n, i);
	if (s[i] == '{' || s[i] == '[') {
		int depth = 0;
		while (i < n) {
			char c = s[i];
			if (c == '"') {
				i = skip_string(s, n, i);
				continue;
			}
			if (c == '{' || c == '[')
				depth++;
			else if ((c == '}' || c == ']') && --depth == 0)
				return i + 1;
			i++;
		}
		return n;
	}
	while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' &&
	       s[i] != '\n')
		i++; /* number, true, false, null */
	return i;
}

const char *kube_json_member_span(const char *s, size_t n, const char *key, size_t *len)
{
	size_t klen = strlen(key);
	size_t i = skip_ws(s, n, 0);
	if (i >= n || s[i] != '{')
		return NULL;
	i = skip_ws(s, n, i + 1);
	while (i < n && s[i] == '"') {
		size_t kstart = i + 1, kend = skip_string(s, n, i);
		if (kend >= n)
			return NULL;
		bool match = kend - 1 - kstart == klen && memcmp(s + kstart, key, klen) == 0;
		i = skip_ws(s, n, kend);
		if (i >= n || s[i] != ':')
			return NULL;
		size_t vstart = skip_ws(s, n, i + 1), vend = skip_value(s, n, vstart);
		if (vend >= n || vend == vstart) /* inside an object a value never ends the text */
			return NULL;
		if (match) {
			*len = vend - vstart;
			return s + vstart;
		}
		i = skip_ws(s, n, vend);
		if (i < n && s[i] == ',')
			i = skip_ws(s, n, i + 1);
		else
			break;
	}
	return NULL;
}
