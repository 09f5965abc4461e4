/* Decision records as text, and the `kubectl schedkit` plugin (docs/explain.md). */
#ifndef SK_DECISIONS_EXPLAIN_H
#define SK_DECISIONS_EXPLAIN_H

#include <stdio.h>

#include <cjson/cJSON.h>

/* One record (the JSON of sk_decision_json) in the `simulate --explain` layout: header, message,
 * victims, the scored nodes with each plugin's normalised score and weight, then the rejected
 * nodes with plugin and reasons; a blank line ends it. -1 when rec is not a record object. */
int sk_decision_explain(FILE *f, const cJSON *rec);
/* The why-pending table of list items (sk_decision_summary_json): namespace, name, profile,
 * attempts, time of the last attempt and the top reasons ("3 Insufficient cpu, ..."). */
void sk_decisions_why_pending(FILE *f, const cJSON *const *items, int n);

/* `kubectl-schedkit` (argv[0] is the program): explain, why-pending, simulate. Returns the exit
 * code: 0 done, 1 failure (message on errout), 2 bad usage. */
int sk_kubectl_schedkit_main(int argc, char **argv, FILE *out, FILE *errout);

#endif
