#!/usr/bin/env bash
# Runs every benchmark binary ($OUT/bench/*) and benchmark script (e2e/bench/*.sh); each prints its figures.
# ONLY=substr runs those whose name contains it; for the workload suite (e2e/bench/workloads.sh,
# which drives scheduler_bench_workloads itself, in process and end to end) ONLY may also be
# part of a workload's name (ONLY=NodeAffinity): then only the matching workloads run.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-.}
export SK_BIN=$(cd "$OUT" && pwd)/bin SK_ROOT=$(pwd)
rc=0
BLD=$([ "$OUT" = . ] && echo build || echo "$OUT")
export SK_BENCH_BIN=$(cd "$BLD" && pwd)/bench
WL=$BLD/bench/scheduler_bench_workloads
for b in "$BLD"/bench/*; do
  [ -x "$b" ] || continue
  [ "$b" = "$WL" ] && continue # run by e2e/bench/workloads.sh
  [ -n "${ONLY:-}" ] && [[ "$(basename "$b")" != *"$ONLY"* ]] && continue
  echo "=== $(basename "$b")"; "$b" || rc=1
done
for s in e2e/bench/*.sh; do
  [ -f "$s" ] || continue
  only=
  if [ -n "${ONLY:-}" ] && [[ "$(basename "$s")" != *"$ONLY"* ]]; then
    [ "$s" = e2e/bench/workloads.sh ] && [ -x "$WL" ] && "$WL" --list | grep -q -- "$ONLY" || continue
    only=$ONLY
  fi
  echo "=== $(basename "$s")"; SK_BENCH_ONLY=$only bash "$s" || rc=1
done
exit $rc
