/* libFuzzer target: the watch stream decoder (kube/watch.h). The first two input bytes seed the
 * chunk sizes; the rest is fed in chunks of 1..256 bytes, as the network delivers them. The same
 * bytes fed in one piece must give the same events and the same outcome: chunk boundaries are
 * invisible to the decoder. And the events decoder (kube_watch_decoder_feed_events, which frames
 * plain lines without a tree) must give the same events, objects and outcome as the tree one. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EVENTS 4096

struct rec {
	int n;
	unsigned char types[MAX_EVENTS];
	char *last; /* the last event's object, printed */
};

static int on_event(void *ctx, enum kube_watch_event_type type, cJSON *obj)
{
	struct rec *r = ctx;
	if (!obj)
		abort(); /* documented: every event has its object */
	if (r->n < MAX_EVENTS)
		r->types[r->n] = (unsigned char)type;
	r->n++;
	free(r->last);
	r->last = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	return 0;
}

/* The events decoder's callback: the object from its tree or parsed from its bytes. */
static int on_event_bytes(void *ctx, struct kube_watch_event *ev)
{
	cJSON *obj = ev->obj;
	ev->obj = NULL;
	if (!obj && !(obj = cJSON_ParseWithLength(ev->json, ev->len)))
		abort(); /* framed bytes are always an object cJSON parses */
	return on_event(ctx, ev->type, obj);
}

/* Feeds data in chunks (sizes from seed, or all at once when seed is 0); returns the decoder's
 * last result (0, or -1 at the first malformed event, where feeding stops). */
static int run(const uint8_t *data, size_t size, unsigned seed, struct rec *r, bool bytes)
{
	struct kube_watch_decoder *d = kube_watch_decoder_new();
	if (!d)
		abort();
	int rc = 0;
	size_t off = 0;
	while (off < size && rc == 0) {
		size_t k = size - off;
		if (seed) {
			seed = seed * 1103515245u + 12345u;
			size_t c = 1 + (seed >> 16) % 256;
			if (c < k)
				k = c;
		}
		char *err = NULL;
		rc = bytes ? kube_watch_decoder_feed_events(d, (const char *)data + off, k, on_event_bytes, r, &err)
			   : kube_watch_decoder_feed(d, (const char *)data + off, k, on_event, r, &err);
		if (rc < 0 && !err)
			abort();
		free(err);
		off += k;
	}
	if (rc == 0 && kube_watch_decoder_pending(d) > size)
		abort();
	kube_watch_decoder_free(d);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size > 256 * 1024)
		return 0;
	unsigned seed = (unsigned)data[0] << 8 | data[1] | 1u;
	data += 2;
	size -= 2;
	struct rec a = { 0 }, b = { 0 }, c = { 0 };
	int rca = run(data, size, seed, &a, false);
	int rcb = run(data, size, 0, &b, false);
	int rcc = run(data, size, seed, &c, true);
	if (rca != rcb || a.n != b.n || rca != rcc || a.n != c.n)
		abort();
	int n = a.n < MAX_EVENTS ? a.n : MAX_EVENTS;
	if (memcmp(a.types, b.types, (size_t)n) != 0 || memcmp(a.types, c.types, (size_t)n) != 0)
		abort();
	if ((a.last == NULL) != (b.last == NULL) || (a.last && strcmp(a.last, b.last) != 0))
		abort();
	if ((a.last == NULL) != (c.last == NULL) || (a.last && strcmp(a.last, c.last) != 0))
		abort();
	free(a.last);
	free(b.last);
	free(c.last);
	return 0;
}
