/* Test harness for the in-tree plugin tests (plugins/tests/test_*.c): builds a real framework
 * (scheduler/framework/framework.c) from a config, so plugin instances get their args, CycleState slots and
 * a handle whose snapshot and binder the test controls, then calls the plugin callbacks directly.
 * Linked into every test through lib/libtestsupport.a. */
#ifndef SK_PLUGINS_TEST_HARNESS_H
#define SK_PLUGINS_TEST_HARNESS_H

#include "scheduler/config/config.h"
#include "schedkit/plugin.h"
#include "scheduler/framework/runtime.h"
#include "schedkit/types.h"
#include "scheduler/api/workloads.h"

struct sk_volume_store;

struct ph {
	struct sk_config *cfg;
	struct sk_framework *fw;
	struct sk_snapshot *snap;      /* owned; what sk_handle_snapshot returns */
	struct sk_cycle_state *cs;     /* a fresh state per ph_reset_state */
	int bind_calls;
	const char *bind_error;        /* when set, the binder fails with this message */
	char bound[256];               /* "ns/name -> node" of the last bind */
	struct sk_volume_store *volumes; /* the storage listers (ph_put_storage) */
	int npatches;                  /* sk_handle_api_patch calls */
	char patched[8][256];          /* their paths (the first 8) */
	cJSON *patches;                /* their bodies, an array */
	const char *patch_error;       /* when set, api_patch fails with this message; else it answers
				        * an object at resourceVersion 1000 */
	/* what the handle's listers hold (ph_set_objects): Services, controllers, Namespaces */
	cJSON *objects;
	const cJSON **objv;
	struct sk_object_listers listers;
};

/* Contrib plugins (plugins/contrib/<Name>/tests/test_*.c): the Makefile links the plugin's objects
 * into the test with their hidden symbols made local, so the module's own forwarders
 * (schedkit/module.h) stay inside it. This hands the core's host table to that module's entry
 * point (pass sk_module_init) and registers its plugins, so profiles name them as they do once the
 * scheduler has loaded the .so. Idempotent; fails the test when the module refuses the host. */
struct sk_module;
struct sk_host_api;
void ph_use_module(const struct sk_module *(*init)(const struct sk_host_api *host, char *err, size_t errlen));

/* profile_yaml: the YAML text after "profiles:\n" of a KubeSchedulerConfiguration (NULL = the default
 * profile). Fails the test if the config does not load or the framework does not build. */
struct ph *ph_new(const char *profile_yaml);
void ph_free(struct ph *h);
/* The instance of plugin `name` in profile 0 (fails the test when absent). */
struct sk_plugin *ph_plugin(struct ph *h, const char *name);
/* Replaces the snapshot (takes ownership; NULL clears). */
void ph_set_snapshot(struct ph *h, struct sk_snapshot *snap);
/* One node of a cpu+memory table: its allocatable cpu and memory, and the score a test wants. */
struct ph_cpu_mem { const char *cpu, *mem; int64_t want; };
/* Replaces the snapshot with empty nodes n0, n1, ... (at most 10), node i allocatable cpu c[i].cpu,
 * memory c[i].mem and 32 pods. */
void ph_set_cpu_mem_nodes(struct ph *h, const struct ph_cpu_mem *c, int n);
/* Replaces what the handle's listers hold (sk_handle_default_selector, sk_handle_namespace_labels):
 * json is a JSON array of API objects (Services, ReplicaSets, Namespaces, ...), NULL or "[]" for
 * none. Fails the test when it does not parse. */
void ph_set_objects(struct ph *h, const char *json);
/* Drops the current CycleState and starts a new one. */
void ph_reset_state(struct ph *h);

/* Decodes each YAML document of text (PVCs, PVs, StorageClasses, CSINodes, CSIDrivers) into the
 * volume store the handle's listers read; fails the test on a decode error. */
void ph_put_storage(struct ph *h, const char *yaml);

/* Runs PreScore (when implemented; a Skip leaves every score 0), Score for every node of the
 * snapshot, then NormalizeScore when implemented. out[i] is the score of snapshot node i.
 * Returns the PreScore code (SK_SUCCESS or SK_SKIP); fails the test on any Error. */
enum sk_code ph_scores(struct ph *h, struct sk_plugin *pl, const struct sk_pod *pod, int64_t *out);
/* PreFilter (when implemented) then Filter on one node; returns the Filter status (or the PreFilter
 * one when it rejected or skipped). Caller sk_status_reset. */
struct sk_status ph_filter(struct ph *h, struct sk_plugin *pl, const struct sk_pod *pod, const struct sk_node_info *ni);
/* Filter message (reasons joined), "" for success; caller frees. Resets the status. */
char *ph_message(struct sk_status *s);
/* The queueing hint of the plugin's first event registration for `resource` (any of its bits);
 * *actions (if non-NULL) gets that registration's actions. Fails the test when there is none. */
sk_hint_fn ph_find_hint(struct sk_plugin *pl, uint32_t resource, uint32_t *actions);

#endif
