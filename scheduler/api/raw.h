/* The object as the API server served it, kept next to the decoded view (scheduler/api/decode.c)
 * for the HTTP extenders, which upstream sends full v1.Pod and v1.Node objects
 * (pkg/scheduler/extender.go; docs/extenders.md "What is sent"). The JSON is kept with
 * metadata.managedFields dropped, as upstream's informers drop it
 * (cmd/kube-scheduler/app/server.go: TransformStripManagedFields): in the daemon it is the pod
 * informer's stored text, shared (the bytes the API server sent); elsewhere cJSON's compact
 * print. Private to the core: plugins never see it. */
#ifndef SK_API_RAW_H
#define SK_API_RAW_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube/jsonspan.h"
#include "kube/text.h"
#include "schedkit/types.h"

struct sk_obj_raw {
	char *json;               /* NUL-terminated, never modified; NULL when not kept */
	size_t len;
	const char *node_name;    /* pods: spec.nodeName at decode time (interned) */
	int nlimit_names;         /* pods: resources.limits keys of init and regular containers */
	const char **limit_names; /* interned */
	struct kube_text *shared; /* when json is the informer's text (sk_obj_raw_offer), its owner */
};

/* Fills r from obj (pod: also the limit names). 0, or -1 on ENOMEM (r then empty). */
int sk_obj_raw_keep(struct sk_obj_raw *r, const cJSON *obj, bool pod);
void sk_obj_raw_free(struct sk_obj_raw *r);
/* The next sk_obj_raw_keep of obj on this thread takes a reference to t instead of printing obj
 * (t must be obj's JSON without metadata.managedFields — the bytes it was parsed from or its
 * print: the scheduler's informers, whose transform strips them, kube_informer_text_of). sk_obj_raw_offer(NULL, NULL) withdraws
 * the offer; the offer holds no reference. */
void sk_obj_raw_offer(const cJSON *obj, struct kube_text *t);
/* The next sk_obj_raw_keep of obj on this thread keeps no JSON (json NULL; a pod's node name and
 * limit names as always): for a view that is never sent, such as a deleted pod's, which only
 * leaves the cache, the queue and the nominator. Withdrawn as an offer is. */
void sk_obj_raw_offer_none(const cJSON *obj);

/* The kept object of a decoded pod or node (for a pod made by sk_pod_with_node: its root's);
 * NULL when none was kept. */
const struct sk_obj_raw *sk_pod_raw(const struct sk_pod *p);
const struct sk_obj_raw *sk_node_raw(const struct sk_node *n);

/* The pod's JSON as it should be sent: the kept object, with spec.nodeName set to p->node_name
 * when the view was rebound (an assumed copy). Caller frees; NULL when nothing is kept or ENOMEM. */
char *sk_pod_raw_json(const struct sk_pod *p);
/* A binding's echo without a decode: the view of the pod whose JSON is text, when text differs
 * from the text base's root was decoded from (its kept object) only in what sk_pod_decode carries
 * as it is or does not read — metadata.resourceVersion, spec.nodeName (a non-empty string in
 * text) and status.conditions without a PodResizePending condition — i.e. exactly
 * sk_pod_decode(text)'s view: base's root with node_name, resource_version and the kept object
 * (a reference to text) of text. m: those members (sk_pod_echo_paths, in that order) as
 * kube_json_find found them in text, or NULL to find them here. NULL when anything else differs
 * (or sits elsewhere), text is not plain JSON, nothing was kept, or on ENOMEM: then decode text.
 * Caller unrefs. */
#define SK_POD_ECHO_NPATHS 3
extern const char *const *const sk_pod_echo_paths[SK_POD_ECHO_NPATHS];
struct sk_pod *sk_pod_decode_echo(const struct sk_pod *base, struct kube_text *text, const struct kube_json_member *m);
/* Whether some init or regular container of the pod lists `name` under resources.limits. */
bool sk_pod_limits_name(const struct sk_pod *p, const char *name);

#endif
