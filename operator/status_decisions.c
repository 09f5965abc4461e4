/* SchedulerProfile status.decisions from the scheduler's Lease (status_decisions.h). */
#include "operator/status_decisions.h"

#include <string.h>

#include "kube/object.h"

int op_status_add_decisions(cJSON *st, const cJSON *lease, const char *scheduler_name)
{
	const char *a = lease && scheduler_name ? kube_meta_annotation(lease, OP_DECISION_SUMMARY_ANNOTATION) : NULL;
	cJSON *all = a ? cJSON_Parse(a) : NULL;
	const cJSON *mine = cJSON_IsObject(all) ? cJSON_GetObjectItemCaseSensitive(all, scheduler_name) : NULL;
	int rc = 0;
	if (cJSON_IsObject(mine)) {
		cJSON *dup = cJSON_Duplicate(mine, 1);
		if (!dup || !cJSON_AddItemToObject(st, "decisions", dup)) {
			cJSON_Delete(dup);
			rc = -1;
		}
	}
	cJSON_Delete(all);
	return rc;
}

bool op_lease_decisions_changed(const cJSON *old_lease, const cJSON *new_lease)
{
	const char *a = old_lease ? kube_meta_annotation(old_lease, OP_DECISION_SUMMARY_ANNOTATION) : NULL;
	const char *b = new_lease ? kube_meta_annotation(new_lease, OP_DECISION_SUMMARY_ANNOTATION) : NULL;
	return !((!a && !b) || (a && b && !strcmp(a, b)));
}
