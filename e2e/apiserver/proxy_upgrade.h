/* The service proxy's upgrade pass-through (proxy_upgrade.c), used by proxy.c for a request that
 * carries an Upgrade header. */
#ifndef APIS_PROXY_UPGRADE_H
#define APIS_PROXY_UPGRADE_H

struct apis_conn;
struct apis_req;

/* Sends r to scheme://host:port with target (path and query) and copies bytes both ways until
 * either side closes; the connection is closed afterwards. Answers 503 when the endpoint cannot
 * be reached. */
void apis_proxy_upgrade(struct apis_conn *c, const struct apis_req *r, const char *scheme, const char *host, int port,
			const char *target);

#endif
