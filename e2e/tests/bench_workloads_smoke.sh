#!/usr/bin/env bash
# The workload suite (e2e/bench/workloads.sh) at its tiny smoke sizes: every workload settles in
# process and end to end through the local API server (every measured pod bound, no error), and
# the in-process counters show each workload's point (3 victims per preemptor, gated pods never
# attempted, the churn ran). No timing is checked: speed figures live in `make bench`.
# Prints TAP-style ok / not ok lines. Env: SK_BIN, SK_ROOT, SK_BENCH_BIN (the bench binaries).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
if [ -z "${SK_BENCH_BIN:-}" ]; then
  SK_BENCH_BIN=$SK_BIN/../bench; [ -d "$SK_BENCH_BIN" ] || SK_BENCH_BIN=$SK_BIN/../build/bench
fi
export SK_BIN SK_ROOT SK_BENCH_BIN
WL=$SK_BENCH_BIN/scheduler_bench_workloads
out=$(mktemp /tmp/sk-wl-smoke.XXXXXX)
trap 'rm -f "$out"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }

if [ ! -x "$WL" ]; then notok "scheduler_bench_workloads is built ($WL)"; exit 1; fi
SK_BENCH_SMOKE=1 bash "$SK_ROOT/e2e/bench/workloads.sh" >"$out" 2>&1
rc=$?
check "the smoke suite exits 0" test "$rc" = 0
[ "$rc" = 0 ] || cat "$out"
row() { grep -A1 -E "^\| $1 +\| $2 " "$out"; }
settled() { row "$1" "$2" | head -1 | grep -q '| yes |$'; }
while read -r name; do
  check "$name settles in process" settled "$name" in-process
  check "$name settles end to end" settled "$name" e2e
done < <("$WL" --list)
check "Preemption: 3 victims per preemptor, each nominated" \
  bash -c "grep -A1 -E '^\| Preemption +\| in-process' '$out' | grep -q 'nominated 5, victims 15;'"
check "SchedulingWhileGated: the gated pods are never attempted, the init pods were deleted" \
  bash -c "grep -A1 -E '^\| SchedulingWhileGated +\| in-process' '$out' | grep -Eq 'attempts 10: scheduled 10, .*deleted [1-9]'"
check "SchedulingWithMixedChurn: the churn ran (its pods are unschedulable)" \
  bash -c "grep -A1 -E '^\| SchedulingWithMixedChurn +\| in-process' '$out' | grep -Eq 'unschedulable [1-9][0-9]*, .*churn steps [1-9]'"
check "Unschedulable: the large pods are attempted and stay unschedulable" \
  bash -c "grep -A1 -E '^\| Unschedulable +\| in-process' '$out' | grep -q 'attempts 12: scheduled 10, unschedulable 2,'"
