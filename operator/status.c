/* Computing a SchedulerProfile's status (see status.h). */
#include "operator/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
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
	if (rendered && !cJSON_AddStringToObject(st, "renderedConfigHash", plan->config_hash))
		goto fail;
	if (rendered && applied_hash && !cJSON_AddStringToObject(st, "appliedConfigHash", applied_hash))
		goto fail;
	if (r->translation && !cJSON_AddItemToObject(st, "translation", cJSON_Duplicate(r->translation, 1)))
		goto fail;
	/* keep the existing Accepted/Applied conditions so their transition times survive */
	cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
	if (!conds)
		goto fail;
	const cJSON *old = kube_obj_get(profile_obj, "status.conditions");
	static const char *const types[] = { "Accepted", "Applied" };
	for (int i = 0; i < 2; i++) {
		const cJSON *c = cJSON_IsArray(old) ? kube_condition_find(old, types[i]) : NULL;
		cJSON *dup = c ? cJSON_Duplicate(c, 1) : NULL;
		if (c && (!dup || !cJSON_AddItemToArray(conds, dup))) {
			cJSON_Delete(dup);
			goto fail;
		}
	}
	kube_condition_set(st, "Accepted", r->accepted ? "True" : "False", r->reason, r->message, r->generation, now);

	char msg[512];
	const char *status, *reason;
	char hash12[13] = "", applied12[13] = "";
	snprintf(hash12, sizeof hash12, "%.12s", plan->config_hash);
	if (applied_hash)
		snprintf(applied12, sizeof applied12, "%.12s", applied_hash);
	if (rendered && rejected_error) {
		/* The leader refused this configuration and kept its previous one; say why, in the
		 * scheduler's words. This wins over an equal applied hash: a plugin file that changed
		 * under the same config.yaml is rejected with that config's hash while the leader keeps
		 * running it with the old plugins. The scheduler removes the annotations once a reload
		 * succeeds. */
		kube_condition_set(st, "Applied", "False", OP_APPLIED_CONFIG_REJECTED, rejected_error, r->generation,
				   now);
		return st;
	}
	if (!rendered) {
		status = "False";
		reason = OP_APPLIED_NOT_IN_CONFIG;
		snprintf(msg, sizeof msg, "the scheduler configuration does not hold this profile");
	} else if (applied_hash && !strcmp(applied_hash, plan->config_hash)) {
		status = "True";
		if (r->source == OP_SOURCE_CURRENT) {
			reason = OP_APPLIED_APPLIED;
			snprintf(msg, sizeof msg, "schedkit-scheduler runs configuration %s", hash12);
		} else {
			reason = OP_APPLIED_LAST_ACCEPTED;
			snprintf(msg, sizeof msg,
				 "schedkit-scheduler runs generation %lld of this profile (its last accepted version) in "
				 "configuration %s",
				 (long long)r->rendered_generation, hash12);
		}
	} else {
		status = "False";
		reason = OP_APPLIED_PENDING;
		if (applied_hash)
			snprintf(msg, sizeof msg, "schedkit-scheduler runs configuration %s; waiting for it to load %s",
				 applied12, hash12);
		else
			snprintf(msg, sizeof msg,
				 "waiting for a schedkit-scheduler leader to report configuration %s on Lease %s", hash12,
				 lease_ref ? lease_ref : OP_SCHEDULER_NAME);
	}
	kube_condition_set(st, "Applied", status, reason, msg, r->generation, now);
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
