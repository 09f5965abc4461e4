/* Computing a SchedulerProfile's status (see status.h). */
#include "operator/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "operator/history.h"
#include "operator/resources.h"

const char *op_lease_applied_hash(const cJSON *lease)
{
	if (!lease)
		return NULL;
	const char *holder = kube_obj_get_string(lease, "spec.holderIdentity");
	if (!holder || !*holder)
		return NULL;
	const char *h = kube_meta_annotation(lease, OP_CONFIG_HASH_ANNOTATION);
	return h && *h ? h : NULL;
}

const char *op_lease_rejected_error(const cJSON *lease, const char *config_hash)
{
	if (!lease || !config_hash || !*config_hash)
		return NULL;
	const char *h = kube_meta_annotation(lease, OP_REJECTED_HASH_ANNOTATION);
	if (!h || strcmp(h, config_hash))
		return NULL;
	const char *msg = kube_meta_annotation(lease, OP_REJECTED_ERROR_ANNOTATION);
	return msg && *msg ? msg : "schedkit-scheduler rejected the configuration (it gave no reason)";
}

static int add_int(cJSON *o, const char *k, int64_t v)
{
	cJSON *n = kube_json_create_int64(v);
	if (!n || !cJSON_AddItemToObject(o, k, n)) {
		cJSON_Delete(n);
		return -1;
	}
	return 0;
}

/* The hash of this profile in the configuration the leader runs: the rendered one when it runs the
 * configuration rendered now, else what the history says that configuration held; NULL when it
 * runs none, a configuration without this profile, or one the history does not know. */
static const char *applied_profile_hash(const struct op_profile_result *r, const struct op_plan *plan,
					const char *applied_hash)
{
	if (!applied_hash || !r->rendered_scheduler_name)
		return NULL;
	if (plan->config_yaml && !strcmp(applied_hash, plan->config_hash))
		return r->rendered_hash[0] ? r->rendered_hash : NULL;
	const char *h = NULL;
	return op_history_lookup(plan->history, applied_hash, r->rendered_scheduler_name, &h) == 1 ? h : NULL;
}

/* Applied: whether the leader runs this profile's rendered version (its own hash, so a change of
 * another profile does not move it). */
static void set_applied(cJSON *st, const struct op_profile_result *r, const struct op_plan *plan,
			const char *applied_hash, const char *running, const char *rejected_error,
			const char *lease_ref, const char *now)
{
	char msg[512];
	const char *status = "False", *reason;
	char hash12[13] = "", running12[13] = "";
	snprintf(hash12, sizeof hash12, "%.12s", r->rendered_hash);
	if (running)
		snprintf(running12, sizeof running12, "%.12s", running);
	bool rendered = r->source != OP_SOURCE_NONE && plan->config_yaml;
	bool runs_it = rendered && running && !strcmp(running, r->rendered_hash);
	/* The leader refused the configuration rendered now and kept its previous one; a profile whose
	 * version it still runs is Applied all the same, unless what it refused is the very
	 * configuration it runs (a plugin file changed under the same config.yaml: the leader keeps
	 * the old plugins). The scheduler removes the annotations once a reload succeeds. */
	bool rejected = rendered && rejected_error &&
			(!runs_it || (applied_hash && !strcmp(applied_hash, plan->config_hash)));
	if (rejected) {
		kube_condition_set(st, "Applied", "False", OP_APPLIED_CONFIG_REJECTED, rejected_error, r->generation,
				   now);
		return;
	}
	if (!rendered) {
		reason = OP_APPLIED_NOT_IN_CONFIG;
		snprintf(msg, sizeof msg, "the scheduler configuration does not hold this profile");
	} else if (runs_it) {
		status = "True";
		if (r->source == OP_SOURCE_CURRENT) {
			reason = OP_APPLIED_APPLIED;
			snprintf(msg, sizeof msg, "schedkit-scheduler runs this profile (%s)", hash12);
		} else {
			reason = OP_APPLIED_LAST_ACCEPTED;
			snprintf(msg, sizeof msg,
				 "schedkit-scheduler runs generation %lld of this profile (its last accepted version, %s)",
				 (long long)r->rendered_generation, hash12);
		}
	} else {
		reason = OP_APPLIED_PENDING;
		if (running)
			snprintf(msg, sizeof msg, "schedkit-scheduler runs an earlier version (%s); waiting for it to load %s",
				 running12, hash12);
		else if (applied_hash)
			snprintf(msg, sizeof msg, "waiting for schedkit-scheduler to load this profile (%s)", hash12);
		else
			snprintf(msg, sizeof msg, "waiting for a schedkit-scheduler leader to report its configuration on Lease %s",
				 lease_ref ? lease_ref : OP_SCHEDULER_NAME);
	}
	kube_condition_set(st, "Applied", status, reason, msg, r->generation, now);
}

/* Ready: the current spec is accepted and run; otherwise the reason and message of what is not. */
static void set_ready(cJSON *st, const struct op_profile_result *r, const char *now)
{
	const cJSON *conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
	const cJSON *acc = kube_condition_find(conds, "Accepted"), *app = kube_condition_find(conds, "Applied");
	const char *app_reason = kube_obj_get_string(app, "reason");
	if (r->accepted && app_reason && !strcmp(app_reason, OP_APPLIED_APPLIED)) {
		kube_condition_set(st, "Ready", "True", OP_READY_READY, "accepted, and run by schedkit-scheduler",
				   r->generation, now);
		return;
	}
	const cJSON *why = r->accepted ? app : acc;
	kube_condition_set(st, "Ready", "False", kube_obj_get_string(why, "reason"), kube_obj_get_string(why, "message"),
			   r->generation, now);
}

cJSON *op_status_desired(const cJSON *profile_obj, const struct op_profile_result *r, const struct op_plan *plan,
			 const char *applied_hash, const char *rejected_error, const char *lease_ref, const char *now)
{
	cJSON *st = cJSON_CreateObject();
	if (!st)
		return NULL;
	if (add_int(st, "observedGeneration", r->generation) ||
	    !cJSON_AddStringToObject(st, "schedulerName", r->scheduler_name))
		goto fail;
	bool rendered = r->source != OP_SOURCE_NONE && plan->config_yaml;
	const char *running = applied_profile_hash(r, plan, applied_hash);
	if (rendered && !cJSON_AddStringToObject(st, "renderedHash", r->rendered_hash))
		goto fail;
	if (running && !cJSON_AddStringToObject(st, "appliedHash", running))
		goto fail;
	if (r->translation && !cJSON_AddItemToObject(st, "translation", cJSON_Duplicate(r->translation, 1)))
		goto fail;
	/* keep the existing conditions so their transition times survive */
	cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
	if (!conds)
		goto fail;
	const cJSON *old = kube_obj_get(profile_obj, "status.conditions");
	static const char *const types[] = { "Accepted", "Applied", "Ready" };
	for (int i = 0; i < 3; i++) {
		const cJSON *c = cJSON_IsArray(old) ? kube_condition_find(old, types[i]) : NULL;
		cJSON *dup = c ? cJSON_Duplicate(c, 1) : NULL;
		if (c && (!dup || !cJSON_AddItemToArray(conds, dup))) {
			cJSON_Delete(dup);
			goto fail;
		}
	}
	kube_condition_set(st, "Accepted", r->accepted ? "True" : "False", r->reason, r->message, r->generation, now);
	set_applied(st, r, plan, applied_hash, running, rejected_error, lease_ref, now);
	set_ready(st, r, now);
	return st;
fail:
	cJSON_Delete(st);
	return NULL;
}

bool op_status_equal(const cJSON *a, const cJSON *b)
{
	bool ae = !a || cJSON_IsNull(a) || (cJSON_IsObject(a) && !a->child);
	bool be = !b || cJSON_IsNull(b) || (cJSON_IsObject(b) && !b->child);
	if (ae || be)
		return ae == be;
	return cJSON_Compare(a, b, 1);
}
