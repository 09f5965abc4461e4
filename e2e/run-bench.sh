#!/usr/bin/env bash
# Runs every benchmark binary ($OUT/bench/*) and benchmark script (e2e/bench/*.sh); each prints its figures.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-.}
export SK_BIN=$(cd "$OUT" && pwd)/bin SK_ROOT=$(pwd)
rc=0
BLD=$([ "$OUT" = . ] && echo build || echo "$OUT")
for b in "$BLD"/bench/*; do
  [ -x "$b" ] || continue
  [ -n "${ONLY:-}" ] && [[ "$(basename "$b")" != *"$ONLY"* ]] && continue
  echo "=== $(basename "$b")"; "$b" || rc=1
done
for s in e2e/bench/*.sh; do
  [ -f "$s" ] || continue
  [ -n "${ONLY:-}" ] && [[ "$(basename "$s")" != *"$ONLY"* ]] && continue
  echo "=== $(basename "$s")"; bash "$s" || rc=1
done
exit $rc
