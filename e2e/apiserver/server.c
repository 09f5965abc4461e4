/* server.c — schedkit-apiserver's lifecycle: option defaults, the listening socket, TLS
 * material, the store and watch ring, bootstrap objects, background threads, kubeconfig
 * writing, and an orderly stop that closes every stream and frees everything. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <unistd.h>

#include "kube/log.h"
#include "e2e/apiserver/internal.h"

static int listen_on(const char *host, int port, int *bound_port, bool *ipv6)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	int rc = getaddrinfo(host, ps, &hints, &res);
	if (rc != 0) {
		klog_error("Cannot resolve bind address", " address=%s err=\"%s\"", host, gai_strerror(rc));
		return -1;
	}
	int fd = -1;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1024) == 0) {
			*ipv6 = a->ai_family == AF_INET6;
			break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		klog_error("Cannot listen", " address=%s port=%d err=\"%s\"", host, port, strerror(errno));
		return -1;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	*bound_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
					       : ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

int apis_server_write_kubeconfig(const struct apis_server *s, const char *path)
{
	char *tmp = NULL;
	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0)
		return -1;
	FILE *f = fopen(tmp, "w");
	if (!f) {
		klog_error("Cannot write kubeconfig", " path=%s err=\"%s\"", path, strerror(errno));
		free(tmp);
		return -1;
	}
	fchmod(fileno(f), 0600);
	fprintf(f, "apiVersion: v1\nkind: Config\nclusters:\n- name: schedkit\n  cluster:\n    server: %s\n", s->url);
	if (s->ca_pem) {
		char *b = apis_b64((const unsigned char *)s->ca_pem, strlen(s->ca_pem));
		if (b)
			fprintf(f, "    certificate-authority-data: %s\n", b);
		free(b);
	}
	fprintf(f, "contexts:\n- name: schedkit\n  context:\n    cluster: schedkit\n    user: schedkit\n    namespace: default\n"
		   "current-context: schedkit\nusers:\n- name: schedkit\n  user:");
	if (s->token)
		fprintf(f, "\n    token: %s\n", s->token);
	else
		fprintf(f, " {}\n");
	bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) < 0) {
		klog_error("Cannot write kubeconfig", " path=%s err=\"%s\"", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

static void server_free(struct apis_server *s)
{
	if (s->ring) {
		for (size_t i = 0; i < s->ring_cap; i++)
			apis_event_unref(s->ring[i]);
		free(s->ring);
	}
	apis_obj_unref(s->graveyard);
	apis_registry_free(s);
	cJSON_Delete(s->openapi_resources);
	free(s->openapi_index);
	SSL_CTX_free(s->ssl_ctx);
	free(s->ca_pem);
	free(s->bind_address);
	free(s->token);
	free(s->kubeconfig_path);
	apis_auth_free(s);
	pthread_mutex_destroy(&s->auth_mu);
	pthread_rwlock_destroy(&s->lock);
	pthread_mutex_destroy(&s->conns_mu);
	pthread_mutex_destroy(&s->ring_mu);
	pthread_mutex_destroy(&s->openapi_mu);
	pthread_mutex_destroy(&s->fault_mu);
	pthread_mutex_destroy(&s->ctl_mu);
	pthread_cond_destroy(&s->ctl_cond);
	free(s);
}

int apis_server_start(const struct apis_opts *opts, struct apis_server **out)
{
	*out = NULL;
	struct apis_server *s = calloc(1, sizeof *s);
	if (!s)
		return -1;
	s->opts = *opts;
	s->listen_fd = -1;
	pthread_rwlock_init(&s->lock, NULL);
	pthread_mutex_init(&s->conns_mu, NULL);
	pthread_mutex_init(&s->ring_mu, NULL);
	pthread_mutex_init(&s->openapi_mu, NULL);
	pthread_mutex_init(&s->fault_mu, NULL);
	pthread_mutex_init(&s->ctl_mu, NULL);
	pthread_cond_init(&s->ctl_cond, NULL);
	pthread_mutex_init(&s->auth_mu, NULL);
	s->bind_address = strdup(opts->bind_address && *opts->bind_address ? opts->bind_address : "127.0.0.1");
	s->token = opts->token && *opts->token ? strdup(opts->token) : NULL;
	s->kubeconfig_path = opts->kubeconfig_path ? strdup(opts->kubeconfig_path) : NULL;
	if (!s->bind_address || (opts->token && *opts->token && !s->token) || (opts->kubeconfig_path && !s->kubeconfig_path))
		goto fail;
	s->opts.bind_address = s->bind_address;
	s->opts.token = s->token;
	s->opts.kubeconfig_path = s->kubeconfig_path;
	if (!s->opts.max_body_bytes)
		s->opts.max_body_bytes = 3 * 1024 * 1024;
	if (s->opts.history_events <= 0)
		s->opts.history_events = 20000;
	if (s->opts.bookmark_interval_ms <= 0)
		s->opts.bookmark_interval_ms = 1000;
	if (s->opts.kubelet_delay_ms <= 0)
		s->opts.kubelet_delay_ms = 100;
	s->fault_rng = s->opts.fault_seed;
	s->ring_cap = (size_t)s->opts.history_events;
	s->ring = calloc(s->ring_cap, sizeof *s->ring);
	if (!s->ring)
		goto fail;
	apis_registry_init(s);
	if (!s->rd_pods || !s->rd_nodes || !s->rd_namespaces || !s->rd_crds || !s->rd_pcs || !s->rd_pdbs)
		goto fail;
	apis_bootstrap(s);
	if (s->opts.token_auth_file && apis_auth_load_token_file(s, s->opts.token_auth_file) != 0)
		goto fail;
	if (s->opts.tls && apis_tls_setup(s) < 0)
		goto fail;
	bool v6 = false;
	s->listen_fd = listen_on(s->bind_address, s->opts.port, &s->port, &v6);
	if (s->listen_fd < 0)
		goto fail;
	const char *host = s->bind_address;
	if (!strcmp(host, "0.0.0.0"))
		host = "127.0.0.1";
	else if (!strcmp(host, "::"))
		host = "::1";
	snprintf(s->url, sizeof s->url, "%s://%s%s%s:%d", s->opts.tls ? "https" : "http", v6 ? "[" : "", host, v6 ? "]" : "",
		 s->port);
	if (apis_controllers_start(s) < 0)
		goto fail;
	if (apis_http_start(s) < 0) {
		atomic_store(&s->stopping, true);
		apis_controllers_stop(s);
		goto fail;
	}
	if (s->kubeconfig_path && apis_server_write_kubeconfig(s, s->kubeconfig_path) < 0) {
		apis_server_stop(s);
		return -1;
	}
	klog_info(1, "Serving", " url=%s tls=%s auth=%s", s->url, s->opts.tls ? "true" : "false", s->token || s->opts.token_auth_file ? "token" : "none");
	*out = s;
	return 0;
fail:
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	server_free(s);
	return -1;
}

int apis_server_port(const struct apis_server *s) { return s->port; }
const char *apis_server_url(const struct apis_server *s) { return s->url; }
const char *apis_server_ca_pem(const struct apis_server *s) { return s->ca_pem; }

void apis_server_stop(struct apis_server *s)
{
	if (!s)
		return;
	apis_http_stop(s);
	close(s->listen_fd);
	apis_controllers_stop(s);
	server_free(s);
}
