/* bin/schedkit-scheduler: `simulate` and `convert` subcommands, or the daemon (flags as upstream kube-scheduler;
 * --config F --validate checks a configuration file). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "kube/log.h"
#include "scheduler/config/legacy.h"
#include "scheduler/daemon/daemon.h"
#include "scheduler/simulate/simulate.h"

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "simulate"))
		return sk_simulate_main(argc - 1, argv + 1, stdout, stderr);
	if (argc > 1 && !strcmp(argv[1], "convert")) {
		/* convert reports through its own lines; the loader's start-up warnings (plugins not in
		 * this build) would only repeat the notes */
		int null_fd = open("/dev/null", O_WRONLY);
		if (null_fd >= 0)
			kube_log_set_fd(null_fd);
		return sk_convert_main(argc - 1, argv + 1, stdout, stderr);
	}
	struct sk_daemon_opts opts;
	int rc = sk_daemon_parse_args(argc, argv, &opts, stdout, stderr);
	if (rc == 0)
		rc = sk_daemon_run(&opts);
	else if (rc == 1)
		rc = 0;
	sk_daemon_opts_free(&opts);
	return rc;
}
