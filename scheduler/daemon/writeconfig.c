/* --write-config-to (cmd/kube-scheduler/app/server.go Setup, options.WriteConfigFile): the
 * configuration kube-scheduler would run with — --config or the defaults, every default filled
 * in — written to the file, then exit. The file is JSON, which is YAML; --config reads it back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/daemon/internal.h"
#include "kube/log.h"

int sk_dm_write_config(const struct sk_daemon_opts *o)
{
	char hash[65], *err = NULL;
	struct sk_config *cfg = sk_dm_load_config(o, hash, &err);
	if (!cfg) {
		fprintf(stderr, "Error: %s\n", err ? err : "cannot load the configuration");
		free(err);
		return 1;
	}
	cJSON *j = sk_config_to_json(cfg);
	char *text = j ? cJSON_Print(j) : NULL;
	cJSON_Delete(j);
	sk_config_free(cfg);
	FILE *f = text ? fopen(o->write_config_to, "w") : NULL;
	int rc = 0;
	if (!f || fprintf(f, "%s\n", text) < 0)
		rc = 1;
	if (f && fclose(f) != 0)
		rc = 1;
	if (rc || !text) {
		fprintf(stderr, "Error: writing %s: %s\n", o->write_config_to, text ? strerror(errno) : "out of memory");
		free(text);
		return 1;
	}
	free(text);
	klog_info(0, "Wrote configuration", " file=\"%s\"", o->write_config_to);
	return 0;
}
