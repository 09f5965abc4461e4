/* The framework's private structs, shared by its files (framework.c: build and the extension
 * points; cycle_state.c: CycleState; handle.c: the plugin handle). Nothing outside
 * scheduler/framework/ includes this; the rest of the scheduler sees runtime.h. */
#ifndef SK_FRAMEWORK_FW_INTERNAL_H
#define SK_FRAMEWORK_FW_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "scheduler/framework/runtime.h"

struct sk_handle {
	struct sk_framework *fw;
};

struct plugin_events {
	int n;
	struct sk_event_registration *regs;
};

struct sk_framework {
	atomic_int refs;
	const struct sk_config *cfg;
	const struct sk_profile_config *profile;
	struct sk_framework_env env;
	struct sk_handle handle;
	const char *name;             /* profile->scheduler_name */
	int nplugins;
	struct sk_plugin *inst;       /* [nplugins], stable addresses */
	void **owned_args;            /* defaults decoded here when the profile had none */
	bool *inited;
	struct plugin_events *events; /* [nplugins] */
	int n[SK_EP_COUNT];
	struct sk_plugin **pts[SK_EP_COUNT];
	int32_t *weights;             /* per score plugin */
	struct sk_waiting_pods *waiting;
	/* HTTP extenders: the top-level ones then the profile's own, ignorable ones last (immutable) */
	int nextenders;
	struct sk_extender **extenders;
	/* Modules (--plugin-dir) whose descriptors run here: one reference each, dropped after every
	 * fini and args_free, so a reload never dlclose's code a framework in flight still calls. */
	int nmodules;
	struct sk_loaded_module **modules;
};

struct cs_slot {
	void *data;
	const struct sk_state_ops *ops;
	bool borrowed; /* shared with the state it was cloned from: never freed here */
	bool listed;   /* in its state's used list (cycle_state.c) */
};

#define SKIP_FILTER 1u
#define SKIP_SCORE 2u

struct sk_cycle_state {
	int nslots;
	struct cs_slot *slots;
	/* the slots given data since the state was made, each once ([nused], room for nslots): every
	 * slot holding data is listed, so clone and free visit these, not all nslots */
	int nused;
	int *used;
	uint8_t *skip;
	bool record_plugin_metrics;
	/* Filter plugins not skipped at PreFilter, in order (built by sk_fw_run_pre_filter so the
	 * per-node Filter loop needs no skip test); nfilters < 0: not built, use pts + skip. Written
	 * only by the scheduling thread before Filter runs. */
	int nfilters;
	struct sk_plugin **filters;
	bool filters_batched; /* a plugin of filters has filter_batch (the block loop, filter_blocks.c) */
	/* PreFilter plugins with an AddPod or RemovePod extension not skipped at PreFilter, in order
	 * (built with filters: the dry runs' extension calls visit these, not every PreFilter
	 * plugin); nexts < 0: not built. Room for every plugin. */
	int nexts;
	struct sk_plugin **exts;
	pthread_mutex_t mu; /* guards activate */
	int nactivate, capactivate;
	char **activate;
};

#endif
