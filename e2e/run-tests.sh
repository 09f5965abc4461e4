#!/usr/bin/env bash
# Runs every unit test binary ($OUT/tests/*, cmocka) and every end-to-end suite (e2e/tests/*.sh,
# TAP-style "ok"/"not ok" lines), then prints one summary line: "N passed, N failed".
# A binary or suite that dies without reporting (crash, sanitizer abort, timeout) counts as one failure.
# ONLY=<substring> restricts the run to tests whose file name contains it; SKIP_E2E=1 runs the unit
# tests only (the clang pass of .ci/run).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-.}
export SK_BIN=$(cd "$OUT" && pwd)/bin
export SK_ROOT=$(pwd)
passed=0; failed=0; failures=()
logdir=$(mktemp -d /tmp/schedkit-tests.XXXXXX)

count() { # $1 = name, $2 = log, $3 = exit code, $4 = kind
  local p=0 f=0
  if [ "$4" = cmocka ]; then
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$2" | awk '{s+=$1} END {print s+0}')
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$2" | awk '{s+=$1} END {print s+0}')
  else
    p=$(grep -c '^ok ' "$2"); f=$(grep -c '^not ok ' "$2")
  fi
  if [ "$3" != 0 ] && [ "$f" = 0 ]; then f=1; echo "!! $1 exited with status $3 without reporting a failure"; fi
  passed=$((passed + p)); failed=$((failed + f))
  [ "$f" != 0 ] && failures+=("$1")
}

BLD=$([ "$OUT" = . ] && echo build || echo "$OUT")
for t in "$BLD"/tests/*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  [ -n "${ONLY:-}" ] && [[ "$name" != *"$ONLY"* ]] && continue
  log="$logdir/$name.log"
  timeout 300 "$t" >"$log" 2>&1; rc=$?
  cat "$log"
  count "$name" "$log" "$rc" cmocka
done

for s in e2e/tests/*.sh; do
  [ -f "$s" ] || continue
  [ "${SKIP_E2E:-0}" = 1 ] && break
  name=$(basename "$s")
  [ -n "${ONLY:-}" ] && [[ "$name" != *"$ONLY"* ]] && continue
  log="$logdir/$name.log"
  echo "=== e2e $name"
  timeout 900 bash "$s" >"$log" 2>&1; rc=$?
  cat "$log"
  count "$name" "$log" "$rc" tap
done

[ ${#failures[@]} -gt 0 ] && echo "failing: ${failures[*]}"
echo "$passed passed, $failed failed"
rm -rf "$logdir"
[ "$failed" = 0 ]
