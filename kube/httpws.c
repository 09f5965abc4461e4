/* The WebSocket channel of kube/httpws.h. Threads: publishers append to the channel's pending list
 * under ch->mu and wake the service thread (lws_cancel_service); everything else (the connection
 * list, each connection's queue, the writes) belongs to the server's service thread, so only
 * `pending`, `retained` and the counters are shared. A message is one reference-counted buffer
 * with LWS_PRE bytes of headroom, shared by every connection that still has to send it. */
#include "kube/httpserver_ws.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"

struct ws_msg {
	atomic_int refs;
	size_t len;
	struct ws_msg *next; /* on ch->pending */
	unsigned char buf[]; /* LWS_PRE + len */
};

enum conn_state { CONN_WAITING, CONN_OPEN, CONN_REFUSED };

/* Per-connection state (lws allocates it: per_session_data_size). */
struct ws_conn {
	struct lws *wsi;
	struct kube_ws_channel *ch;
	enum conn_state state;
	void *job;                           /* the guard's job while WAITING */
	char reason[124];                    /* close reason when REFUSED (a control frame holds 125) */
	struct ws_msg *q[KUBE_WS_QUEUE];     /* ring: q[(head + i) % KUBE_WS_QUEUE] */
	int head, n;
	size_t off;                          /* bytes of q[head] already sent */
	struct ws_conn *next, *prev;         /* ch->conns */
};

struct kube_ws_channel {
	struct kube_http_server *srv;
	char *path;
	pthread_mutex_t mu;                  /* guards pending and retained */
	struct ws_msg *pending, *pending_tail;
	struct ws_msg *retained;
	struct ws_conn *conns;               /* service thread only */
	atomic_int clients;
	atomic_uint_fast64_t dropped;
};

static void msg_unref(struct ws_msg *m)
{
	if (m && atomic_fetch_sub(&m->refs, 1) == 1)
		free(m);
}

static struct ws_msg *msg_ref(struct ws_msg *m)
{
	atomic_fetch_add(&m->refs, 1);
	return m;
}

int kube_http_add_websocket(struct kube_http_server *srv, const char *path, struct kube_ws_channel **out)
{
	if (!srv || !path || path[0] != '/' || kube_http_ws_channel(srv))
		return -1;
	struct kube_ws_channel *ch = calloc(1, sizeof *ch);
	if (!ch || !(ch->path = strdup(path))) {
		free(ch);
		return -1;
	}
	ch->srv = srv;
	pthread_mutex_init(&ch->mu, NULL);
	if (kube_http_set_ws_channel(srv, ch) != 0) {
		kube_ws_channel_free(ch);
		return -1;
	}
	if (out)
		*out = ch;
	return 0;
}

void kube_ws_channel_free(struct kube_ws_channel *ch)
{
	if (!ch)
		return;
	while (ch->pending) {
		struct ws_msg *m = ch->pending;
		ch->pending = m->next;
		msg_unref(m);
	}
	msg_unref(ch->retained);
	pthread_mutex_destroy(&ch->mu);
	free(ch->path);
	free(ch);
}

int kube_ws_publish(struct kube_ws_channel *ch, const char *msg, size_t len, bool retain)
{
	if (!ch || !msg)
		return -1;
	struct ws_msg *m = malloc(sizeof *m + LWS_PRE + len);
	if (!m)
		return -1;
	atomic_init(&m->refs, 1);
	m->len = len;
	m->next = NULL;
	memcpy(m->buf + LWS_PRE, msg, len);
	pthread_mutex_lock(&ch->mu);
	if (retain) {
		msg_unref(ch->retained);
		ch->retained = msg_ref(m);
	}
	if (ch->pending_tail)
		ch->pending_tail->next = m;
	else
		ch->pending = m;
	ch->pending_tail = m;
	pthread_mutex_unlock(&ch->mu);
	lws_cancel_service(kube_http_lws_context(ch->srv));
	return 0;
}

int kube_ws_clients(const struct kube_ws_channel *ch)
{
	return ch ? atomic_load(&ch->clients) : 0;
}

uint64_t kube_ws_dropped(const struct kube_ws_channel *ch)
{
	return ch ? atomic_load(&ch->dropped) : 0;
}

size_t kube_ws_session_size(void)
{
	return sizeof(struct ws_conn);
}

/* ---- service thread ---- */

static void conn_push(struct ws_conn *c, struct ws_msg *m)
{
	if (c->n == KUBE_WS_QUEUE) {
		/* the oldest goes, unless it is half sent (a frame sequence must be finished) */
		int victim = c->off ? (c->head + 1) % KUBE_WS_QUEUE : c->head;
		msg_unref(c->q[victim]);
		if (victim == c->head) {
			c->head = (c->head + 1) % KUBE_WS_QUEUE;
		} else {
			for (int i = 1; i + 1 < c->n; i++)
				c->q[(c->head + i) % KUBE_WS_QUEUE] = c->q[(c->head + i + 1) % KUBE_WS_QUEUE];
		}
		c->n--;
		atomic_fetch_add(&c->ch->dropped, 1);
	}
	c->q[(c->head + c->n) % KUBE_WS_QUEUE] = msg_ref(m);
	c->n++;
	lws_callback_on_writable(c->wsi);
}

static void conn_open(struct ws_conn *c)
{
	c->state = CONN_OPEN;
	atomic_fetch_add(&c->ch->clients, 1);
	pthread_mutex_lock(&c->ch->mu);
	struct ws_msg *r = c->ch->retained ? msg_ref(c->ch->retained) : NULL;
	pthread_mutex_unlock(&c->ch->mu);
	if (r) {
		conn_push(c, r);
		msg_unref(r);
	}
}

/* Hands the published messages to the open connections. */
static void distribute(struct kube_ws_channel *ch)
{
	pthread_mutex_lock(&ch->mu);
	struct ws_msg *m = ch->pending;
	ch->pending = ch->pending_tail = NULL;
	pthread_mutex_unlock(&ch->mu);
	while (m) {
		struct ws_msg *next = m->next;
		for (struct ws_conn *c = ch->conns; c; c = c->next)
			if (c->state == CONN_OPEN)
				conn_push(c, m);
		msg_unref(m);
		m = next;
	}
}

void kube_ws_guard_done(void *conn, int status, const char *msg)
{
	struct ws_conn *c = conn;
	c->job = NULL;
	if (status == 0) {
		conn_open(c);
		return;
	}
	c->state = CONN_REFUSED;
	snprintf(c->reason, sizeof c->reason, "%s", msg ? msg : "forbidden");
	lws_callback_on_writable(c->wsi);
}

/* Writes at most one frame of the head message. -1 closes the connection. */
static int conn_write(struct ws_conn *c)
{
	if (c->state == CONN_REFUSED) {
		lws_close_reason(c->wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char *)c->reason, strlen(c->reason));
		return -1;
	}
	if (c->state != CONN_OPEN || c->n == 0)
		return 0;
	if (lws_send_pipe_choked(c->wsi)) {
		lws_callback_on_writable(c->wsi);
		return 0;
	}
	struct ws_msg *m = c->q[c->head];
	size_t n = m->len - c->off;
	if (n > KUBE_WS_FRAME)
		n = KUBE_WS_FRAME;
	bool first = c->off == 0, last = c->off + n == m->len;
	int flags = lws_write_ws_flags(LWS_WRITE_TEXT, first, last);
	/* lws writes the frame header into the LWS_PRE bytes before the payload: a copy, since the
	 * message is shared with the other connections */
	unsigned char frame[LWS_PRE + KUBE_WS_FRAME];
	memcpy(frame + LWS_PRE, m->buf + LWS_PRE + c->off, n);
	if (lws_write(c->wsi, frame + LWS_PRE, n, (enum lws_write_protocol)flags) < (int)n)
		return -1;
	c->off += n;
	if (last) {
		msg_unref(m);
		c->head = (c->head + 1) % KUBE_WS_QUEUE;
		c->n--;
		c->off = 0;
	}
	if (c->n)
		lws_callback_on_writable(c->wsi);
	return 0;
}

static void conn_close(struct ws_conn *c)
{
	if (!c->ch)
		return;
	if (c->job)
		kube_http_guard_ws_cancel(c->job);
	c->job = NULL;
	if (c->state == CONN_OPEN)
		atomic_fetch_sub(&c->ch->clients, 1);
	while (c->n) {
		msg_unref(c->q[c->head]);
		c->head = (c->head + 1) % KUBE_WS_QUEUE;
		c->n--;
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		c->ch->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->ch = NULL;
}

/* The request's path without its query: the GET line's, or an HTTP/2 :path (RFC 8441). */
static int request_path(struct lws *wsi, char *path, size_t plen)
{
	if (lws_hdr_copy(wsi, path, (int)plen, WSI_TOKEN_GET_URI) <= 0 &&
	    lws_hdr_copy(wsi, path, (int)plen, WSI_TOKEN_HTTP_COLON_PATH) <= 0)
		return -1;
	char *q = strchr(path, '?');
	if (q)
		*q = 0;
	return 0;
}

/* The request's path, and its Authorization header ("" when none). */
static int request_info(struct lws *wsi, char *path, size_t plen, char *authz, size_t alen)
{
	if (request_path(wsi, path, plen) != 0)
		return -1;
	authz[0] = 0;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) > 0 &&
	    lws_hdr_copy(wsi, authz, (int)alen, WSI_TOKEN_HTTP_AUTHORIZATION) < 0)
		authz[0] = 0;
	return 0;
}

static int on_established(struct kube_http_server *srv, struct kube_ws_channel *ch, struct lws *wsi, struct ws_conn *c)
{
	char path[1024], authz[8192];
	memset(c, 0, sizeof *c);
	if (request_info(wsi, path, sizeof path, authz, sizeof authz) != 0)
		return -1;
	c->wsi = wsi;
	c->ch = ch;
	c->next = ch->conns;
	if (ch->conns)
		ch->conns->prev = c;
	ch->conns = c;
	if (!kube_http_needs_guard(srv, path, authz)) {
		conn_open(c);
		return 0;
	}
	c->state = CONN_WAITING;
	if (!(c->job = kube_http_guard_ws(srv, c, path, authz))) {
		conn_close(c);
		return -1;
	}
	return 0;
}

int kube_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	(void)in;
	(void)len;
	struct kube_http_server *srv = lws_context_user(lws_get_context(wsi));
	struct kube_ws_channel *ch = kube_http_ws_channel(srv);
	struct ws_conn *c = user;
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
		/* only the channel's path; the guard comes once the connection is up */
		char path[1024];
		if (!ch || request_path(wsi, path, sizeof path) != 0)
			return -1;
		if (strcmp(path, ch->path) != 0) {
			klog_info(2, "WebSocket refused: unknown path", " path=\"%s\"", path);
			return -1;
		}
		return 0;
	}
	case LWS_CALLBACK_ESTABLISHED:
		if (!ch || !c)
			return -1;
		return on_established(srv, ch, wsi, c);
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return c && c->ch ? conn_write(c) : 0;
	case LWS_CALLBACK_RECEIVE:
		return 0; /* the channel only sends */
	case LWS_CALLBACK_CLOSED:
		if (c)
			conn_close(c);
		return 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (ch)
			distribute(ch);
		return 0;
	default:
		return 0;
	}
}
