/* A plugin module for the loader's tests (scheduler/tests/test_loader.c), compiled by the test
 * into .so files with -DPLUGIN_NAME, -DVARIANT and -DBEHAVIOUR: a good module, or one broken in
 * exactly one way. Not part of any library (the Makefile's wildcards do not reach this folder). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <schedkit/plugin.h>
#include <schedkit/module.h>

#ifndef PLUGIN_NAME
#define PLUGIN_NAME "LoaderTest"
#endif
/* 0 good; 1 module ABI major 2; 2 module ABI minor + 1; 3 descriptor size too small; 4 layout
 * signature of another build; 5 no entry point at all; 6 a module of ABI 1.0. */
#ifndef VARIANT
#define VARIANT 0
#endif
/* Which reason Filter gives and which score Score returns: tells two builds of one file apart. */
#ifndef BEHAVIOUR
#define BEHAVIOUR 1
#endif

#if VARIANT == 5
int loader_test_not_a_module(void);
int loader_test_not_a_module(void) { return 5; }
#else

struct lt_args {
	char *label; /* a node label key the node must carry */
};

static void lt_args_free(void *p)
{
	struct lt_args *a = p;
	if (a)
		free(a->label);
	free(a);
}

static int lt_args_decode(const cJSON *json, void **out, struct sk_errors *errs, const char *path)
{
	static const char *const allowed[] = { "label", NULL };
	struct lt_args *a = calloc(1, sizeof(*a));
	if (!a)
		return -1;
	bool present = false;
	int before = errs->n;
	if (json) {
		sk_args_check_type_meta(json, PLUGIN_NAME "Args", path, errs);
		sk_json_check_object(json, path, allowed, true, errs);
		sk_json_string(json, "label", path, &a->label, &present, errs);
		if (present && a->label && !*a->label) {
			char *p = sk_path_child(path, "label");
			sk_err_invalid_str(errs, p ? p : path, "", "must not be empty");
			free(p);
		}
	}
	if (!present && errs->n == before)
		a->label = strdup("loader-test");
	if (errs->n != before || !a->label) {
		lt_args_free(a);
		return -1;
	}
	*out = a;
	return 0;
}

static int lt_init(struct sk_plugin *self, const void *args, char **err)
{
	const struct lt_args *a = args;
	(void)err;
	self->priv = strdup(a ? a->label : "loader-test");
	return self->priv ? 0 : -1;
}

static void lt_fini(struct sk_plugin *self) { free(self->priv); }

static struct sk_status lt_filter(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				  const struct sk_node_info *ni)
{
	(void)cs, (void)pod;
	if (ni->node && sk_labels_get(&ni->node->labels, self->priv))
		return sk_ok();
	return sk_statusf(SK_UNSCHEDULABLE, "loader test v%d: node(s) lack the label %s", BEHAVIOUR,
			  (const char *)self->priv);
}

/* filter over a run of nodes (ABI 1.3): set in every variant's descriptor, so that a descriptor
 * whose size ends before the field (variants 6 to 8) shows the loader reading it as NULL. */
static void lt_filter_batch(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
			    const struct sk_node_info *const *nodes, int n, uint8_t *ok, struct sk_status *st)
{
	for (int i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		struct sk_status s = lt_filter(self, cs, pod, nodes[i]);
		if (s.code != SK_SUCCESS) {
			ok[i] = 0;
			st[i] = s;
		}
	}
}

static struct sk_status lt_score(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				 const struct sk_node_info *ni, int64_t *score)
{
	(void)self, (void)cs, (void)pod, (void)ni;
	*score = BEHAVIOUR * 10;
	return sk_ok();
}

static struct sk_status lt_pre_bind(struct sk_plugin *self, struct sk_cycle_state *cs, const struct sk_pod *pod,
				    const char *node_name)
{
	(void)self, (void)cs;
	char *err = NULL;
	if (sk_handle_patch_pod_annotation(self->handle, pod, "schedkit.io/loader-test", node_name, &err) != 0) {
		struct sk_status s = sk_statusf(SK_ERROR, "annotating: %s", err ? err : "failed");
		free(err);
		return s;
	}
	return sk_ok();
}

static const struct sk_plugin_desc lt_plugin = {
#if VARIANT == 3
	.abi_major = SK_ABI_MAJOR, .abi_minor = SK_ABI_MINOR, .size = offsetof(struct sk_plugin_desc, score_batch) - 8,
#elif VARIANT == 6
	/* as a module built with the 1.0 headers says: its descriptor ended before score_batch */
	.abi_major = 1, .abi_minor = 0, .size = offsetof(struct sk_plugin_desc, score_batch),
#elif VARIANT == 7
	/* as a module built with the 1.1 headers says: its descriptor ended after score_batch */
	.abi_major = 1, .abi_minor = 1, .size = offsetof(struct sk_plugin_desc, score_batch) + sizeof(void (*)(void)),
#elif VARIANT == 8
	/* as a module built with the 1.2 headers says: its descriptor ended before filter_batch */
	.abi_major = 1, .abi_minor = 2, .size = offsetof(struct sk_plugin_desc, filter_batch),
#else
	SK_PLUGIN_HEADER,
#endif
	.name = PLUGIN_NAME,
	.args_kind = PLUGIN_NAME "Args",
	.args_decode = lt_args_decode,
	.args_free = lt_args_free,
	.init = lt_init,
	.fini = lt_fini,
	.filter = lt_filter,
	.filter_batch = lt_filter_batch,
	.score = lt_score,
	.pre_bind = lt_pre_bind,
};

#if VARIANT == 0 || VARIANT == 3
SK_MODULE("loader-test", &lt_plugin);
#else
/* A module broken on purpose (variants 1, 2, 4): the forwarders of SK_MODULE, and an entry point
 * returning a module header the scheduler must refuse. Variant 6 is a module as the ABI 1.0 headers
 * built it (their layout signature, written out here), which a 1.x scheduler must load; it calls
 * nothing appended after 1.0. Variants 7 and 8 are the same for the 1.1 and 1.2 headers. */
#define LAYOUT_SIGNATURE_1_0 0x1211bdfea04318afULL
#define LAYOUT_SIGNATURE_1_1 0x3524af74a8f42ea7ULL
#define LAYOUT_SIGNATURE_1_2 0x88311f5892749f4fULL
SK_MODULE_FORWARDERS();
static const struct sk_plugin_desc *const lt_plugins[] = { &lt_plugin };
static const struct sk_module lt_module = {
	.abi_major = VARIANT == 1 ? SK_ABI_MAJOR + 1 : SK_ABI_MAJOR,
	.abi_minor = VARIANT == 2 ? SK_ABI_MINOR + 1 : VARIANT == 6 ? 0 : VARIANT == 7 ? 1 : VARIANT == 8 ? 2 : SK_ABI_MINOR,
	.size = sizeof(struct sk_module),
	.layout_signature = VARIANT == 4   ? SK_LAYOUT_SIGNATURE ^ 0x5a5aULL
			    : VARIANT == 6 ? LAYOUT_SIGNATURE_1_0
			    : VARIANT == 7 ? LAYOUT_SIGNATURE_1_1
			    : VARIANT == 8 ? LAYOUT_SIGNATURE_1_2
					   : SK_LAYOUT_SIGNATURE,
	.name = "loader-test-broken",
	.nplugins = 1,
	.plugins = lt_plugins,
};
__attribute__((visibility("default"))) const struct sk_module *sk_module_init(const struct sk_host_api *host,
									      char *err, size_t errlen)
{
	(void)err, (void)errlen;
	sk__module_host = host;
	return &lt_module;
}
#endif
#endif
