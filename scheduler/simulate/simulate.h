/* `schedkit-scheduler simulate`: runs the configured profiles' frameworks offline over a
 * multi-document YAML of cluster objects and prints every scheduling attempt (docs/simulate.md,
 * the output format), or a readable table per attempt with --explain.
 *
 * Input objects: Nodes; Pods (bound ones, spec.nodeName set, are existing; unbound ones whose
 * spec.schedulerName names a profile are scheduled in queue order; other pods are ignored);
 * PriorityClasses (resolve spec.priority from priorityClassName or the global default, as the
 * API server's admission does); PodDisruptionBudgets (read by DefaultPreemption); `kind: List`
 * wrappers. Other kinds are ignored with a warning. Preemption runs in memory: the victims leave
 * the cluster at once and are listed in the attempt's "victims" (as "ns/name"), with
 * "nominatedNode" set to the chosen node; the preemptor is retried after the deletions.
 * Binding is in memory: a bound pod joins its node before the next attempt. An unschedulable pod
 * is retried only when a later event moves it out of the unschedulable set (queueing hints); an
 * Error attempt is not retried. Pods that never reach an attempt (scheduling gates) get one
 * final Unschedulable line. Single-threaded apart from the profiles' worker pool. */
#ifndef SK_SIMULATE_H
#define SK_SIMULATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "scheduler/config/config.h"

struct sk_simulate_opts {
	bool explain;      /* readable table per attempt instead of JSON lines */
	uint64_t seed;     /* tie-break RNG seed (deterministic output for a given seed) */
};

/* Simulates cluster (YAML/JSON text, one or more documents) under cfg, writing attempts to out.
 * Returns 0, or -1 with *err (caller frees) naming the document and field that could not be
 * used (malformed YAML, undecodable node/pod, duplicate object, unknown PriorityClass is not an
 * error: that pod gets an Error line, as admission would have refused it). */
int sk_simulate(const struct sk_config *cfg, const char *cluster, size_t len, const struct sk_simulate_opts *opts,
		FILE *out, char **err);

/* The `simulate` subcommand: argv[0] is "simulate". Parses --config, --cluster, --explain,
 * --seed, --plugin-dir (repeatable; both --flag=value and --flag value), loads the plugin
 * modules and the files and runs sk_simulate. An attempt whose plugins called
 * sk_handle_patch_pod_annotation carries "annotations": {key: value} in its line (and
 * "annotated key=value" lines with --explain).
 * Returns the process exit code: 0 done, 1 bad config/cluster, 2 bad usage. */
int sk_simulate_main(int argc, char **argv, FILE *out, FILE *errout);

#endif
