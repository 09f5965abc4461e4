#!/usr/bin/env bash
# End-to-end: least-privilege RBAC. Runs the operator suite (operator_e2e.sh: the operator and
# the scheduler in the installed layout), the preemption suite (scheduler_preemption.sh:
# victims deleted, PDBs read) and the volume suite (scheduler_volumes.sh: the storage informers,
# VolumeBinding's claim and PV patches) with schedkit-apiserver's access log on (SK_APISERVER_AUDIT_LOG,
# e2e/apiserver/audit.c), then compares every request each binary made (told apart by its
# User-Agent) with what it is granted: manifests/operator/rbac.yaml for schedkit-operator, the
# ClusterRole and Role the operator renders (operator/tests/golden/resources_{clusterrole,role}.yaml,
# which test_resources keeps equal to operator/resources.c) for schedkit-scheduler. A request
# not granted, or a grant never used, fails (e2e/lib/rbac_check.py; the few grants the suites
# cannot reach are listed there with the code that uses them). Prints TAP-style lines.
# Env: SK_BIN (binaries, default $SK_ROOT/bin), SK_ROOT (repo, default: this script's ../..).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
TMP=$(mktemp -d /tmp/sk-rbac.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export SK_ROOT SK_BIN

command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null ||
	{ echo "not ok - python3 with yaml is installed (make deps)"; exit 1; }

run_suite() { # log suite
	SK_APISERVER_AUDIT_LOG=$1 bash "$SK_ROOT/e2e/tests/$2" >"$TMP/$2.out" 2>&1
	local rc=$?
	if [ $rc = 0 ] && ! grep -q '^not ok' "$TMP/$2.out" && [ -s "$1" ]; then
		echo "ok - $2 ran with the access log ($(wc -l <"$1") requests)"
	else
		echo "not ok - $2 ran with the access log (exit $rc)"
		grep '^not ok' "$TMP/$2.out" | head -10 | sed 's/^/#   /'
	fi
}
run_suite "$TMP/operator.log" operator_e2e.sh
run_suite "$TMP/preemption.log" scheduler_preemption.sh
run_suite "$TMP/volumes.log" scheduler_volumes.sh
python3 "$SK_ROOT/e2e/lib/rbac_check.py" "$SK_ROOT" "$TMP/operator.log" "$TMP/preemption.log" "$TMP/volumes.log"
