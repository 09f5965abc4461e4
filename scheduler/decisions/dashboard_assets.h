/* The live web view's files (scheduler/decisions/web/), embedded in the binary at build time by
 * scheduler/decisions/web/embed.sh (the Makefile's generated dashboard_assets.c): the page needs no
 * file on disk and no network. */
#ifndef SK_DECISIONS_DASHBOARD_ASSETS_H
#define SK_DECISIONS_DASHBOARD_ASSETS_H

#include <stddef.h>

struct sk_dash_asset {
	const char *name;         /* file name: "index.html", "app.js", "style.css" */
	const char *content_type;
	const unsigned char *data; /* NUL-terminated; len excludes the NUL */
	size_t len;
};

extern const struct sk_dash_asset sk_dash_assets[];
extern const int sk_dash_nassets;

#endif
