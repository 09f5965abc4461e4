/* bin/schedkit-sample-extender: a scheduler extender (the kube-scheduler HTTP extender protocol,
 * docs/extenders.md) for the e2e suite, the demo and the benchmark. It answers POST .../filter,
 * .../prioritize, .../bind and .../preempt (the last path segment picks the verb, so any
 * urlPrefix works) and GET /healthz; what it decides is set by flags:
 *
 *   --reject-node N        filter: N goes to FailedNodes ("rejected by the sample extender")
 *   --unresolvable-node N  filter: N goes to FailedAndUnresolvableNodes
 *   --reject-taint KEY     filter: nodes with a taint KEY (read from the Node objects, so only
 *                          with nodeCacheCapable: false) go to FailedNodes
 *   --prefer-node N        prioritize: N scores 10, every other node 1
 *   --veto-node N          preempt: N is dropped from the candidates (the others keep their victims)
 *   --apiserver URL        bind: POST the Binding there (--token T: bearer token); without it,
 *                          bind answers an Error
 *   --fail VERB            answer VERB with HTTP 500
 *   --delay-ms MS          wait before every answer
 *   --log FILE             one line per call: "<verb> pod=<ns>/<name> containers=<n> nodes=<a,b>"
 *                          (preempt: "candidates=<node:uid+uid,...>"; bind: "node=<n>")
 *   --port P (0: any), --port-file F (the bound port is written there), --bind-address A
 *
 * Every list flag may be repeated. One thread per connection (not per request), HTTP/1.1
 * keep-alive; the filter and prioritize answers are written straight into one buffer. */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define MAX_LIST 32
#define MAX_BODY (256u << 20)

struct list {
	int n;
	const char *v[MAX_LIST];
};

static struct {
	struct list reject, unresolvable, taints, prefer, veto, fail;
	const char *apiserver, *token, *log_path, *port_file, *bind_address;
	int port, delay_ms;
} opt = { .bind_address = "127.0.0.1" };

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_f;

static bool in_list(const struct list *l, const char *s)
{
	for (int i = 0; s && i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

static void logf_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_line(const char *fmt, ...)
{
	if (!log_f)
		return;
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&log_mu);
	vfprintf(log_f, fmt, ap);
	fputc('\n', log_f);
	fflush(log_f);
	pthread_mutex_unlock(&log_mu);
	va_end(ap);
}

/* Go's decoder: exact key, else case-insensitive. */
static const cJSON *get(const cJSON *o, const char *k)
{
	if (!cJSON_IsObject(o))
		return NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return v ? v : cJSON_GetObjectItem(o, k);
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = get(get(o, a), b);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static void pod_desc(const cJSON *pod, char *buf, size_t n)
{
	const cJSON *cs = get(get(pod, "spec"), "containers");
	snprintf(buf, n, "pod=%s/%s containers=%d", str_at(pod, "metadata", "namespace"), str_at(pod, "metadata", "name"),
		 cJSON_IsArray(cs) ? cJSON_GetArraySize(cs) : 0);
}

static bool has_taint(const cJSON *node)
{
	const cJSON *t = get(get(node, "spec"), "taints");
	for (const cJSON *x = cJSON_IsArray(t) ? t->child : NULL; x; x = x->next) {
		const cJSON *k = get(x, "key");
		if (cJSON_IsString(k) && in_list(&opt.taints, k->valuestring))
			return true;
	}
	return false;
}

/* ---------- output: replies written straight into one buffer (no cJSON trees for the large
 * node lists; the sample's own speed is part of the extender benchmark) ---------- */

struct out {
	char *p;
	size_t n, cap;
	bool oom;
};

static void out_put(struct out *o, const char *s, size_t k)
{
	if (o->oom)
		return;
	if (o->n + k + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap < o->n + k + 1)
			cap *= 2;
		char *x = realloc(o->p, cap);
		if (!x) {
			o->oom = true;
			return;
		}
		o->p = x;
		o->cap = cap;
	}
	memcpy(o->p + o->n, s, k);
	o->n += k;
	o->p[o->n] = '\0';
}

static void out_s(struct out *o, const char *s) { out_put(o, s, strlen(s)); }

/* A JSON string literal (RFC 8259 escapes). */
static void out_str(struct out *o, const char *s)
{
	out_put(o, "\"", 1);
	const char *run = s;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		out_put(o, run, (size_t)(s - run));
		char esc[8] = { '\\', (char)c, 0 };
		if (c < 0x20)
			snprintf(esc, sizeof(esc), "\\u%04x", c);
		out_s(o, esc);
		run = s + 1;
	}
	out_put(o, run, (size_t)(s - run));
	out_put(o, "\"", 1);
}

static void out_json(struct out *o, const cJSON *v)
{
	char *t = cJSON_PrintUnformatted(v);
	if (!t)
		o->oom = true;
	else
		out_s(o, t);
	free(t);
}

/* The comma-separated node names of the --log line (only built when logging). */
static void log_name(struct out *names, const char *name)
{
	if (!log_f)
		return;
	if (names->n)
		out_put(names, ",", 1);
	out_s(names, name);
}

/* ---------- verbs ---------- */

static void do_filter(const cJSON *args, struct out *o)
{
	char pd[512];
	struct out names = { 0 }, failed = { 0 }, unres = { 0 };
	pod_desc(get(args, "Pod"), pd, sizeof(pd));
	const cJSON *nn = get(args, "NodeNames");
	const cJSON *items = get(get(args, "Nodes"), "items");
	bool cache = cJSON_IsArray(nn);
	out_s(o, cache ? "{\"NodeNames\":[" : "{\"Nodes\":{\"metadata\":{},\"items\":[");
	bool first = true;
	for (const cJSON *x = cache ? nn->child : cJSON_IsArray(items) ? items->child : NULL; x; x = x->next) {
		const char *name = cache ? (cJSON_IsString(x) ? x->valuestring : "") : str_at(x, "metadata", "name");
		log_name(&names, name);
		struct out *to = NULL;
		const char *why = NULL;
		if (in_list(&opt.unresolvable, name))
			to = &unres, why = "unresolvable for the sample extender";
		else if (in_list(&opt.reject, name))
			to = &failed, why = "rejected by the sample extender";
		else if (!cache && has_taint(x))
			to = &failed, why = "tainted node rejected by the sample extender";
		if (to) {
			out_s(to, to->n ? "," : "{");
			out_str(to, name);
			out_put(to, ":", 1);
			out_str(to, why);
			continue;
		}
		if (!first)
			out_put(o, ",", 1);
		first = false;
		if (cache)
			out_str(o, name);
		else
			out_json(o, x);
	}
	out_s(o, cache ? "],\"FailedNodes\":" : "]},\"FailedNodes\":");
	out_s(o, failed.n ? failed.p : "{");
	out_s(o, "},\"FailedAndUnresolvableNodes\":");
	out_s(o, unres.n ? unres.p : "{");
	out_s(o, "},\"Error\":\"\"}");
	if (failed.oom || unres.oom)
		o->oom = true;
	logf_line("filter %s nodes=%s mode=%s", pd, names.n ? names.p : "", cache ? "names" : "objects");
	free(names.p);
	free(failed.p);
	free(unres.p);
}

static void do_prioritize(const cJSON *args, struct out *o)
{
	char pd[512];
	struct out names = { 0 };
	pod_desc(get(args, "Pod"), pd, sizeof(pd));
	const cJSON *nn = get(args, "NodeNames");
	const cJSON *items = get(get(args, "Nodes"), "items");
	bool cache = cJSON_IsArray(nn);
	out_put(o, "[", 1);
	for (const cJSON *x = cache ? nn->child : cJSON_IsArray(items) ? items->child : NULL; x; x = x->next) {
		const char *name = cache ? (cJSON_IsString(x) ? x->valuestring : "") : str_at(x, "metadata", "name");
		log_name(&names, name);
		out_s(o, x == (cache ? nn->child : items->child) ? "{\"Host\":" : ",{\"Host\":");
		out_str(o, name);
		out_s(o, in_list(&opt.prefer, name) ? ",\"Score\":10}" : ",\"Score\":1}");
	}
	out_put(o, "]", 1);
	logf_line("prioritize %s nodes=%s", pd, names.n ? names.p : "");
	free(names.p);
}

static size_t discard(char *p, size_t s, size_t n, void *u)
{
	(void)p;
	(void)u;
	return s * n;
}

static cJSON *do_bind(const cJSON *args)
{
	const char *name = cJSON_IsString(get(args, "PodName")) ? get(args, "PodName")->valuestring : "";
	const char *ns = cJSON_IsString(get(args, "PodNamespace")) ? get(args, "PodNamespace")->valuestring : "";
	const char *uid = cJSON_IsString(get(args, "PodUID")) ? get(args, "PodUID")->valuestring : "";
	const char *node = cJSON_IsString(get(args, "Node")) ? get(args, "Node")->valuestring : "";
	cJSON *res = cJSON_CreateObject();
	char msg[512] = "";
	if (!opt.apiserver) {
		snprintf(msg, sizeof(msg), "the sample extender has no --apiserver to bind with");
	} else {
		char url[2048], *body = NULL, auth[1024];
		snprintf(url, sizeof(url), "%s/api/v1/namespaces/%s/pods/%s/binding", opt.apiserver, ns, name);
		cJSON *b = cJSON_CreateObject();
		cJSON_AddStringToObject(b, "apiVersion", "v1");
		cJSON_AddStringToObject(b, "kind", "Binding");
		cJSON *md = cJSON_AddObjectToObject(b, "metadata");
		cJSON_AddStringToObject(md, "name", name);
		cJSON_AddStringToObject(md, "namespace", ns);
		cJSON_AddStringToObject(md, "uid", uid);
		cJSON *t = cJSON_AddObjectToObject(b, "target");
		cJSON_AddStringToObject(t, "kind", "Node");
		cJSON_AddStringToObject(t, "name", node);
		body = cJSON_PrintUnformatted(b);
		cJSON_Delete(b);
		CURL *c = curl_easy_init();
		struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
		if (opt.token) {
			snprintf(auth, sizeof(auth), "Authorization: Bearer %s", opt.token);
			h = curl_slist_append(h, auth);
		}
		long code = 0;
		CURLcode rc = CURLE_FAILED_INIT;
		if (c && body && h) {
			curl_easy_setopt(c, CURLOPT_URL, url);
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
			curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
			curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
			curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
			curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
			curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
			rc = curl_easy_perform(c);
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		}
		if (rc != CURLE_OK)
			snprintf(msg, sizeof(msg), "binding %s/%s: %s", ns, name, curl_easy_strerror(rc));
		else if (code != 201 && code != 200)
			snprintf(msg, sizeof(msg), "binding %s/%s: the API server answered %ld", ns, name, code);
		curl_slist_free_all(h);
		if (c)
			curl_easy_cleanup(c);
		free(body);
	}
	cJSON_AddStringToObject(res, "Error", msg);
	logf_line("bind pod=%s/%s node=%s%s%s", ns, name, node, *msg ? " error=" : "", msg);
	return res;
}

/* Victims -> MetaVictims, vetoed nodes dropped. Full pods (NodeNameToVictims) give their uid. */
static cJSON *do_preempt(const cJSON *args)
{
	char pd[512], cands[4096] = "";
	pod_desc(get(args, "Pod"), pd, sizeof(pd));
	const cJSON *meta = get(args, "NodeNameToMetaVictims");
	const cJSON *full = get(args, "NodeNameToVictims");
	bool cache = cJSON_IsObject(meta);
	const cJSON *m = cache ? meta : full;
	cJSON *res = cJSON_CreateObject();
	cJSON *out = cJSON_AddObjectToObject(res, "NodeNameToMetaVictims");
	for (const cJSON *x = cJSON_IsObject(m) ? m->child : NULL; x; x = x->next) {
		snprintf(cands + strlen(cands), sizeof(cands) - strlen(cands), "%s%s:", *cands ? "," : "", x->string);
		cJSON *mv = cJSON_CreateObject(), *pods = cJSON_AddArrayToObject(mv, "Pods");
		const cJSON *ps = get(x, "Pods");
		int k = 0;
		for (const cJSON *p = cJSON_IsArray(ps) ? ps->child : NULL; p; p = p->next, k++) {
			const char *uid = cache ? (cJSON_IsString(get(p, "UID")) ? get(p, "UID")->valuestring : "")
						: str_at(p, "metadata", "uid");
			snprintf(cands + strlen(cands), sizeof(cands) - strlen(cands), "%s%s", k ? "+" : "", uid);
			cJSON *mp = cJSON_CreateObject();
			cJSON_AddStringToObject(mp, "UID", uid);
			cJSON_AddItemToArray(pods, mp);
		}
		const cJSON *pdb = get(x, "NumPDBViolations");
		cJSON_AddNumberToObject(mv, "NumPDBViolations", cJSON_IsNumber(pdb) ? pdb->valuedouble : 0);
		if (in_list(&opt.veto, x->string))
			cJSON_Delete(mv);
		else
			cJSON_AddItemToObject(out, x->string, mv);
	}
	logf_line("preempt %s candidates=%s mode=%s", pd, cands, cache ? "uids" : "pods");
	return res;
}

/* ---------- HTTP ---------- */

static void reply(int fd, int status, const char *ctype, const char *body, bool keep)
{
	char head[256];
	size_t n = strlen(body);
	int h = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: %s\r\n\r\n",
			 status, status == 200 ? "OK" : status == 404 ? "Not Found" : status == 400 ? "Bad Request" : "Error",
			 ctype, n, keep ? "keep-alive" : "close");
	/* one write: a second small segment would wait for the delayed ACK (Nagle) on keep-alive */
	char *all = malloc((size_t)h + n);
	if (!all)
		return;
	memcpy(all, head, (size_t)h);
	memcpy(all + h, body, n);
	for (size_t off = 0, total = (size_t)h + n; off < total;) {
		ssize_t w = write(fd, all + off, total - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	free(all);
}

static const char *verb_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Answers one request (body already read); returns the verb's reply sent. */
static void serve(int fd, const char *method, const char *path, char *body, bool keep)
{
	if (!strcmp(method, "GET") && !strcmp(path, "/healthz")) {
		reply(fd, 200, "text/plain", "ok", keep);
		return;
	}
	if (strcmp(method, "POST")) {
		reply(fd, 404, "text/plain", "404 page not found", keep);
		return;
	}
	const char *verb = verb_of(path);
	cJSON *args = cJSON_Parse(body);
	if (opt.delay_ms > 0) {
		struct timespec ts = { opt.delay_ms / 1000, (long)(opt.delay_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	cJSON *res = NULL;
	struct out o = { 0 };
	if (in_list(&opt.fail, verb)) {
		logf_line("%s failed-by-flag", verb);
		reply(fd, 500, "text/plain", "failing on purpose (--fail)", keep);
	} else if (!args) {
		reply(fd, 400, "text/plain", "request body is not JSON", keep);
	} else if (!strcmp(verb, "filter")) {
		do_filter(args, &o);
	} else if (!strcmp(verb, "prioritize")) {
		do_prioritize(args, &o);
	} else if (!strcmp(verb, "bind")) {
		res = do_bind(args);
	} else if (!strcmp(verb, "preempt")) {
		res = do_preempt(args);
	} else {
		reply(fd, 404, "text/plain", "404 page not found", keep);
	}
	if (res) {
		out_json(&o, res);
		cJSON_Delete(res);
	}
	if (o.oom)
		reply(fd, 500, "text/plain", "out of memory", keep);
	else if (o.n)
		reply(fd, 200, "application/json", o.p, keep);
	free(o.p);
	cJSON_Delete(args);
}

/* HTTP/1.1 with keep-alive: requests one after the other on fd until the client closes it or
 * asks for Connection: close. */
static void handle(int fd)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap + 1);
	if (!buf)
		return;
	buf[0] = '\0';
	for (;;) {
		char *end;
		while (!(end = strstr(buf, "\r\n\r\n"))) {
			if (len == cap)
				goto out;
			ssize_t r = read(fd, buf + len, cap - len);
			if (r <= 0)
				goto out;
			len += (size_t)r;
			buf[len] = '\0';
		}
		char method[16] = "", path[1024] = "";
		if (sscanf(buf, "%15s %1023s", method, path) != 2)
			goto out;
		size_t clen = 0;
		bool keep = true;
		for (char *l = strstr(buf, "\r\n"); l && l < end; l = strstr(l + 2, "\r\n")) {
			if (!strncasecmp(l + 2, "Content-Length:", 15))
				clen = strtoul(l + 17, NULL, 10);
			if (!strncasecmp(l + 2, "Connection: close", 17))
				keep = false;
			if (!strncasecmp(l + 2, "Expect: 100-continue", 20) && write(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
				goto out;
		}
		if (clen > MAX_BODY)
			goto out;
		size_t hlen = (size_t)(end + 4 - buf), have = len - hlen;
		char *body = malloc(clen + 1);
		if (!body)
			goto out;
		size_t take = have < clen ? have : clen;
		memcpy(body, buf + hlen, take);
		for (size_t got = take; got < clen;) {
			ssize_t r = read(fd, body + got, clen - got);
			if (r <= 0) {
				free(body);
				goto out;
			}
			got += (size_t)r;
		}
		body[clen] = '\0';
		/* what follows this request stays in buf */
		size_t rest = have - take;
		memmove(buf, buf + hlen + take, rest);
		len = rest;
		buf[len] = '\0';
		serve(fd, method, path, body, keep);
		free(body);
		if (!keep)
			break;
	}
out:
	free(buf);
}

static void *conn_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	handle(fd);
	close(fd);
	return NULL;
}

static int add(struct list *l, const char *v)
{
	if (l->n == MAX_LIST) {
		fprintf(stderr, "schedkit-sample-extender: at most %d values per flag\n", MAX_LIST);
		return -1;
	}
	l->v[l->n++] = v;
	return 0;
}

static int parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		struct list *l = !strcmp(a, "--reject-node")	   ? &opt.reject
				 : !strcmp(a, "--unresolvable-node") ? &opt.unresolvable
				 : !strcmp(a, "--reject-taint")	   ? &opt.taints
				 : !strcmp(a, "--prefer-node")	   ? &opt.prefer
				 : !strcmp(a, "--veto-node")	   ? &opt.veto
				 : !strcmp(a, "--fail")		   ? &opt.fail
								   : NULL;
		const char **s = !strcmp(a, "--apiserver")	? &opt.apiserver
				 : !strcmp(a, "--token")	? &opt.token
				 : !strcmp(a, "--log")		? &opt.log_path
				 : !strcmp(a, "--port-file")	? &opt.port_file
				 : !strcmp(a, "--bind-address") ? &opt.bind_address
								: NULL;
		int *n = !strcmp(a, "--port") ? &opt.port : !strcmp(a, "--delay-ms") ? &opt.delay_ms : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("usage: schedkit-sample-extender [--port P] [--port-file F] [--bind-address A] [--log F]\n"
			       "  [--reject-node N] [--unresolvable-node N] [--reject-taint KEY] [--prefer-node N]\n"
			       "  [--veto-node N] [--apiserver URL [--token T]] [--fail VERB] [--delay-ms MS]\n");
			exit(0);
		}
		if (!l && !s && !n) {
			fprintf(stderr, "schedkit-sample-extender: unknown flag %s (see --help)\n", a);
			return -1;
		}
		if (!v) {
			fprintf(stderr, "schedkit-sample-extender: %s needs a value\n", a);
			return -1;
		}
		if (l && add(l, v) < 0)
			return -1;
		if (s)
			*s = v;
		if (n) {
			char *e = NULL;
			long x = strtol(v, &e, 10);
			if (!*v || *e || x < 0 || x > 65535000) {
				fprintf(stderr, "schedkit-sample-extender: %s: invalid number \"%s\"\n", a, v);
				return -1;
			}
			*n = (int)x;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (parse_args(argc, argv) < 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_ALL);
	if (opt.log_path && !(log_f = fopen(opt.log_path, "a"))) {
		fprintf(stderr, "schedkit-sample-extender: --log %s: %s\n", opt.log_path, strerror(errno));
		return 1;
	}
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port) };
	if (ls < 0 || inet_pton(AF_INET, opt.bind_address, &sa.sin_addr) != 1 ||
	    bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 128) < 0) {
		fprintf(stderr, "schedkit-sample-extender: listen on %s:%d: %s\n", opt.bind_address, opt.port, strerror(errno));
		return 1;
	}
	socklen_t sl = sizeof(sa);
	getsockname(ls, (struct sockaddr *)&sa, &sl);
	int port = ntohs(sa.sin_port);
	printf("schedkit-sample-extender listening on %s:%d\n", opt.bind_address, port);
	fflush(stdout);
	if (opt.port_file) {
		FILE *f = fopen(opt.port_file, "w");
		if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0) {
			fprintf(stderr, "schedkit-sample-extender: --port-file %s: %s\n", opt.port_file, strerror(errno));
			return 1;
		}
	}
	for (;;) {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
				continue;
			break;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, conn_main, (void *)(intptr_t)fd) != 0)
			close(fd);
		pthread_attr_destroy(&at);
	}
	return 1;
}
