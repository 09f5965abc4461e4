/* Idle curl easy handles of one extender, reused so that calls keep their HTTP/1.1 connection
 * open between attempts (each handle owns its connection cache; curl_easy_reset keeps it). A
 * handle is used by one call at a time; the pool takes a short mutex. Upstream's Go client keeps
 * connections alive the same way. */
#include <pthread.h>
#include <stdlib.h>

#include "scheduler/framework/extender_priv.h"

#define POOL_MAX 8

struct sk_extender_pool {
	pthread_mutex_t mu;
	int n;
	CURL *idle[POOL_MAX];
};

struct sk_extender_pool *sk_extender_pool_new(void)
{
	struct sk_extender_pool *p = calloc(1, sizeof(*p));
	if (p && pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

void sk_extender_pool_free(struct sk_extender_pool *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++)
		curl_easy_cleanup(p->idle[i]);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

CURL *sk_extender_pool_get(struct sk_extender_pool *p)
{
	CURL *c = NULL;
	if (p) {
		pthread_mutex_lock(&p->mu);
		if (p->n > 0)
			c = p->idle[--p->n];
		pthread_mutex_unlock(&p->mu);
	}
	return c ? c : curl_easy_init();
}

void sk_extender_pool_put(struct sk_extender_pool *p, CURL *c)
{
	if (!c)
		return;
	curl_easy_reset(c); /* options back to defaults; the open connection stays cached */
	if (p) {
		pthread_mutex_lock(&p->mu);
		if (p->n < POOL_MAX) {
			p->idle[p->n++] = c;
			c = NULL;
		}
		pthread_mutex_unlock(&p->mu);
	}
	if (c)
		curl_easy_cleanup(c);
}
