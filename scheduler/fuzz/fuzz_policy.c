/* libFuzzer target: the legacy translation (scheduler/config/legacy.h) from a buffer: a Policy
 * (JSON or YAML) through sk_policy_translate and sk_legacy_profile_to_v1, merged into a v1
 * configuration that is then loaded; and the same buffer as an old KubeSchedulerConfiguration
 * through sk_convert_config, whose output is loaded too (the v1 rules may still refuse either:
 * extender and args validation apply; nothing may crash or leak). A rejection always says why. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/log.h"
#include "kube/object.h"
#include "scheduler/config/config.h"
#include "scheduler/config/legacy.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	int fd = open("/dev/null", O_WRONLY);
	if (fd >= 0)
		kube_log_set_fd(fd);
	return 0;
}

/* A document produced by the translation, through the v1 loader. */
static void load(const cJSON *doc)
{
	char *text = kube_json_print(doc);
	if (!text)
		return;
	struct sk_errors errs = { 0 };
	struct sk_config *cfg = sk_config_load(text, strlen(text), &errs);
	sk_config_free(cfg);
	sk_errors_free(&errs);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64 * 1024)
		return 0;
	char *err = NULL;
	cJSON *doc = kube_yaml_parse_one((const char *)data, size, &err);
	free(err);
	if (!doc)
		return 0;
	struct sk_errors notes = { 0 }, errs = { 0 };
	cJSON *config = cJSON_CreateObject();
	if (config && cJSON_AddStringToObject(config, "apiVersion", "kubescheduler.config.k8s.io/v1") &&
	    cJSON_AddStringToObject(config, "kind", "KubeSchedulerConfiguration")) {
		if (sk_policy_merge(config, doc, "fuzz", &notes, &errs) == 0)
			load(config);
		else if (errs.n == 0)
			abort();
	}
	cJSON_Delete(config);
	sk_errors_free(&notes);
	sk_errors_free(&errs);
	cJSON *v1 = sk_convert_config(doc, NULL, &notes, &errs);
	if (!v1 && errs.n == 0)
		abort();
	if (v1)
		load(v1);
	cJSON_Delete(v1);
	sk_errors_free(&notes);
	sk_errors_free(&errs);
	cJSON_Delete(doc);
	return 0;
}
