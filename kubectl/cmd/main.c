/* bin/kubectl-schedkit: the kubectl plugin (on PATH it runs as `kubectl schedkit`); the commands
 * are scheduler/decisions/kubectl_schedkit.c, docs/explain.md. */
#include <stdio.h>

#include "kube/log.h"
#include "scheduler/decisions/explain.h"

int main(int argc, char **argv)
{
	return sk_kubectl_schedkit_main(argc, argv, stdout, stderr);
}
