/* The operator's control loop: informers on SchedulerProfiles, SchedulerPlugins, the owned objects (selected by
 * the managed-by label) and the scheduler's Lease; one rate-limited work queue with a single key
 * (everything aggregates into one configuration, so every event means "reconcile"); a
 * level-based, idempotent reconcile that plans (plan.h), creates or repairs the owned objects
 * (resources.h), records last accepted specs and writes each profile's status only when it
 * changed.
 *
 * Threads: informer threads only enqueue; one worker thread runs reconciles; c->mu guards the
 * started/stopping flags and counters. No lock is held across an HTTP call. */
#ifndef OP_CONTROLLER_H
#define OP_CONTROLLER_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/rest.h"
#include "operator/resources.h"

struct kube_metrics_registry;
struct kube_event_recorder;

struct sk_module_set;

struct op_controller_opts {
	struct op_resources_opts res;          /* namespace, scheduler image, replicas, requests */
	int resync_seconds;                    /* informer resync; 0: 600 */
	struct kube_metrics_registry *metrics; /* may be NULL; must outlive the controller */
	struct kube_event_recorder *events;    /* may be NULL; Events on SchedulerProfiles when their
						  Accepted or Applied condition changes, and on
						  SchedulerPlugins when Accepted does */
	struct sk_module_set *modules;         /* may be NULL; the modules of the operator's
						  --plugin-dir (the scheduler image's plugins):
						  profiles may name them, their args are validated;
						  SchedulerPlugins may not provide their names.
						  Must outlive the controller */
};

/* What a reconcile reads: the live objects. */
struct op_snapshot {
	cJSON *profiles;                 /* JSON array of SchedulerProfile objects */
	cJSON *splugins;                 /* JSON array of SchedulerPlugin objects (NULL = none) */
	cJSON *owned[OP_OBJ_COUNT];      /* the live object of each owned kind, or NULL when absent */
	cJSON *lease;                    /* the scheduler's Lease, or NULL */
};
void op_snapshot_free(struct op_snapshot *s);
/* Fills s with direct LIST/GET calls (no informers; --once). 0, or -1 with *e. */
int op_snapshot_fetch(struct kube_client *client, const char *ns, struct op_snapshot *s, struct kube_error *e);

struct op_reconcile_result {
	int writes;                      /* create/update/patch calls that succeeded */
	int profiles, accepted, invalid, conflict, rendered;
	int plugins, plugins_accepted;   /* SchedulerPlugins, and those rendered into the Deployment */
	char config_hash[65];
};

/* One level-based pass over snapshot s. Every owned object and status is attempted even after a
 * failure; returns 0, or -1 with *err naming the first failure (caller frees). */
int op_reconcile(struct kube_client *client, const struct op_controller_opts *opts, const struct op_snapshot *s,
		 struct op_reconcile_result *res, char **err);

struct op_controller;

/* Copies opts. Returns 0 and *out, or -1 and *err (caller frees). */
int op_controller_new(struct kube_client *client, const struct op_controller_opts *opts, struct op_controller **out,
		      char **err);
/* Starts the informers (they only fill caches and enqueue). 0 or -1 with *err. */
int op_controller_start_informers(struct op_controller *c, char **err);
bool op_controller_synced(struct op_controller *c);
/* Starts the worker (call once leading): waits for the caches, then reconciles on every event
 * and retries failures with the queue's rate limiter. 0 or -1. */
int op_controller_run(struct op_controller *c);
/* Stops the worker and the informers; idempotent. */
void op_controller_stop(struct op_controller *c);
void op_controller_free(struct op_controller *c); /* stops first; NULL is a no-op */
/* A new version of the scheduler settings (the --scheduler-settings file re-read), with the image
 * and replicas resolved from it and the flags: *s is moved in (left empty), image copied. The
 * worker takes it before its next reconcile, which is enqueued now, so drift repair applies the
 * new settings from then on. Thread-safe. 0, or -1 on ENOMEM (*s freed, nothing changes). */
struct op_settings;
int op_controller_set_settings(struct op_controller *c, struct op_settings *s, const char *image, int replicas);
/* Reconciles completed without error so far (tests and metrics). */
uint64_t op_controller_reconciles(struct op_controller *c);

#endif
