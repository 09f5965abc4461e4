/* The version the three binaries report (--version, kubernetes_build_info): schedkit's own
 * release (equal to SK_VERSION of plugins/sdk/include/schedkit/version.h, which
 * scheduler/tests/test_flags_upstream.c checks) and the Kubernetes release whose scheduler
 * flags, configuration and metrics schedkit follows. */
#ifndef KUBE_VERSION_H
#define KUBE_VERSION_H

#define SCHEDKIT_VERSION "0.2.0"
#define SCHEDKIT_KUBE_MAJOR "1"
#define SCHEDKIT_KUBE_MINOR "34"
#define SCHEDKIT_KUBE_VERSION "v1.34.0"

/* "PROG v0.2.0 (Kubernetes v1.34.0)", as a string literal. */
#define SCHEDKIT_VERSION_LINE(prog) prog " v" SCHEDKIT_VERSION " (Kubernetes " SCHEDKIT_KUBE_VERSION ")"

#endif
