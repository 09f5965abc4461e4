#include "scheduler/tests/https_get.h"

#include <stdio.h>
#include <stdlib.h>

#include <curl/curl.h>

static size_t collect(char *ptr, size_t size, size_t nmemb, void *u)
{
	return fwrite(ptr, size, nmemb, (FILE *)u);
}

char *sk_test_https_get(int port, const char *path, const char *bearer, long *code)
{
	char url[256], auth[256], *buf = NULL;
	size_t len = 0;
	long status = 0;
	snprintf(url, sizeof url, "https://127.0.0.1:%d%s", port, path);
	FILE *f = open_memstream(&buf, &len);
	CURL *h = f ? curl_easy_init() : NULL;
	struct curl_slist *hdrs = NULL;
	if (!h) {
		if (f)
			fclose(f);
		free(buf);
		if (code)
			*code = 0;
		return NULL;
	}
	if (bearer) {
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", bearer);
		hdrs = curl_slist_append(NULL, auth);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	}
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
	CURLcode rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	fclose(f);
	if (code)
		*code = status;
	if (rc != CURLE_OK) {
		fprintf(stderr, "GET %s: %s\n", url, curl_easy_strerror(rc));
		free(buf);
		return NULL;
	}
	return buf;
}
