/* --feature-gates as upstream parses it (k8s.io/component-base/featuregate, with the component
 * prefix of k8s.io/component-base/compatibility: "kube:Name=true", the "kube:" optional): the
 * gate names kube-scheduler v1.34 lists in its --help (alpha and beta gates), the scheduler's GA
 * gates that v1.34 still knows (locked to true), and the GA and deprecated gates of the other
 * components registered into the same gate (pkg/features, k8s.io/apiserver, apiextensions; the
 * list of upstream's v1.33 table that v1.34 still carries, locked or not as there), each with its
 * stage and default. An unknown gate or a bad value is an error worded as upstream's; setting a
 * GA or deprecated gate logs upstream's warning ("Setting GA feature gate X=true. It will be
 * removed in a future release."), setting a locked gate to the other value is an error. schedkit reads one of them to change
 * behaviour, SchedulerAsyncPreemption (DefaultPreemption, via sk_handle_feature_enabled); the others
 * are validated so that a manifest written for kube-scheduler starts, and shown
 * with their values in the start-up log at --v=1. */
#ifndef KUBE_FEATUREGATE_H
#define KUBE_FEATUREGATE_H

#include <stdbool.h>
#include <stddef.h>

struct kube_feature_gate {
	const char *name;
	char stage;    /* 'A' alpha, 'B' beta, 'G' GA, 'D' deprecated */
	bool def;      /* the default */
	bool locked;   /* LockToDefault: only the default may be set */
};

/* The table (the scheduler's GA gates first, then the other GA and deprecated gates sorted by name,
 * then the alpha and beta ones sorted by name) and its length. */
extern const struct kube_feature_gate kube_feature_gates[];
extern const size_t kube_nfeature_gates;

/* Checks a --feature-gates value ("A=true,kube:B=false", repeatable flag: call once per value).
 * With set != NULL (kube_nfeature_gates entries, -1 = not given), records the values. 0, or -1 and
 * *err ("unrecognized feature gate: X", "invalid value of X=Y, err: strconv.ParseBool: ...",
 * "missing bool value for X", "unrecognized component: C", "cannot set feature gate X to false,
 * feature is locked to true"). A GA or deprecated gate given a valid value logs one warning line. */
int kube_feature_gates_parse(const char *value, int *set, char **err);
/* Whether the gate is on: given a value, or its default. false for an unknown name. */
bool kube_feature_gate_enabled(const int *set, const char *name);

#endif
