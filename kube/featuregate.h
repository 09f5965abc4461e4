/* --feature-gates as upstream parses it (k8s.io/component-base/featuregate, with the component
 * prefix of k8s.io/component-base/compatibility: "kube:Name=true", the "kube:" optional): the
 * gate names kube-scheduler v1.34 lists in its --help (alpha and beta gates) and the scheduler's
 * GA gates that v1.34 still knows, locked to true (others of the GA and deprecated gates are not
 * known here), each with its stage and default. An unknown
 * gate or a bad value is an error worded as upstream's. schedkit reads one of them to change
 * behaviour, SchedulerAsyncPreemption (DefaultPreemption, via sk_handle_feature_enabled); the
 * others are validated so that a manifest written for kube-scheduler starts, and shown with their
 * values in the start-up log at --v=1. */
#ifndef KUBE_FEATUREGATE_H
#define KUBE_FEATUREGATE_H

#include <stdbool.h>
#include <stddef.h>

struct kube_feature_gate {
	const char *name;
	char stage;    /* 'A' alpha, 'B' beta, 'G' GA (locked to its default, true) */
	bool def;      /* the default */
};

/* The table (the GA gates first, then the others sorted by name) and its length. */
extern const struct kube_feature_gate kube_feature_gates[];
extern const size_t kube_nfeature_gates;

/* Checks a --feature-gates value ("A=true,kube:B=false", repeatable flag: call once per value).
 * With set != NULL (kube_nfeature_gates entries, -1 = not given), records the values. 0, or -1 and
 * *err ("unrecognized feature gate: X", "invalid value of X=Y, err: strconv.ParseBool: ...",
 * "missing bool value for X", "unrecognized component: C", "cannot set feature gate X to false,
 * feature is locked to true"). */
int kube_feature_gates_parse(const char *value, int *set, char **err);
/* Whether the gate is on: given a value, or its default. false for an unknown name. */
bool kube_feature_gate_enabled(const int *set, const char *name);

#endif
