/* libFuzzer target: the KubeSchedulerConfiguration loader (scheduler/config/) from a buffer, YAML or
 * JSON: decode, defaults, plugin args, validation. An accepted config is also rendered back to
 * JSON (/configz) and that rendering must load again: the loader's own output is a valid config. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/log.h"
#include "scheduler/config/config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Warnings about unavailable plugins would flood the fuzzer's output. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	int fd = open("/dev/null", O_WRONLY);
	if (fd >= 0)
		kube_log_set_fd(fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64 * 1024)
		return 0;
	struct sk_errors errs = { 0 };
	struct sk_config *cfg = sk_config_load((const char *)data, size, &errs);
	if (!cfg) {
		if (errs.n == 0)
			abort(); /* a rejection always says why */
		sk_errors_free(&errs);
		return 0;
	}
	sk_errors_free(&errs);
	cJSON *j = sk_config_to_json(cfg);
	char *text = j ? cJSON_PrintUnformatted(j) : NULL;
	if (text) {
		struct sk_errors e2 = { 0 };
		struct sk_config *again = sk_config_load(text, strlen(text), &e2);
		if (!again)
			abort(); /* the defaulted form of a valid config must load */
		sk_config_free(again);
		sk_errors_free(&e2);
	}
	free(text);
	cJSON_Delete(j);
	sk_config_free(cfg);
	return 0;
}
