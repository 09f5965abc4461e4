#!/usr/bin/env bash
# contrib_simulate.sh — the contrib plugins (plugins/contrib/<Name>/) as the scheduler loads them:
#   1. every simulate scenario docs/plugins.md shows (a `<!-- simulate: DIR -->` line before a
#      fenced block) prints exactly that block: `simulate --config DIR/config.yaml --cluster
#      DIR/cluster.yaml --plugin-dir $OUT/lib/schedkit/plugins --explain`;
#   2. the outcomes themselves, from the JSON lines: LocalReplicas spreads a ReplicaSet one replica
#      per node and leaves ownerless pods alone; FitIPResource fills a node's addresses (allocatable
#      and podCIDR), rejects with its reason and lets hostNetwork pods through;
#   3. `--validate` with bad args of each names the field path.
# Needs `make all` (OUT as for e2e/run-tests.sh). TAP-style output.
set -u
export LC_ALL=C
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
OUT=${OUT:-.}
SCHED=$SK_BIN/schedkit-scheduler
PLUGINS=$(cd "$SK_ROOT" && cd "$OUT" && pwd)/lib/schedkit/plugins
DOC=$SK_ROOT/docs/plugins.md
WORK=$(mktemp -d /tmp/sk-contrib-sim.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$SK_ROOT" || exit 1

n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | head -c 3000 | sed 's/^/#   /'; }
check() { local d=$1 detail=$2; shift 2; if "$@"; then ok "$d"; else notok "$d" "$detail"; fi; }
jqt() { jq -se "$@" >/dev/null 2>&1; }
sim() { "$SCHED" simulate --config "$1/config.yaml" --cluster "$1/cluster.yaml" --plugin-dir "$PLUGINS" "${@:2}"; }

# ---- 1. the documented scenarios, byte for byte ----
ndoc=0
while IFS= read -r dir; do
  ndoc=$((ndoc + 1))
  # the fenced block right after the marker line
  awk -v d="$dir" '$0 == "<!-- simulate: " d " -->" {m = 1; next}
                   m == 1 && /^```/ {m = 2; next}
                   m == 2 && /^```/ {exit}
                   m == 2 {print}' "$DOC" >"$WORK/want"
  sim "$dir" --explain >"$WORK/got" 2>"$WORK/err"
  rc=$?
  # simulate ends its output with a blank line; the docs block does not.
  sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$WORK/got" >"$WORK/got.trim"
  check "docs/plugins.md shows the exact simulate output of $dir" \
    "rc=$rc $(cat "$WORK/err"; diff "$WORK/want" "$WORK/got.trim")" \
    bash -c '[ "$1" = 0 ] && [ -s "$2" ] && diff -q "$2" "$3" >/dev/null' _ "$rc" "$WORK/want" "$WORK/got.trim"
done < <(sed -n 's/^<!-- simulate: \(.*\) -->$/\1/p' "$DOC")
check "docs/plugins.md has simulate scenarios ($ndoc)" "" test "$ndoc" -ge 2

# ---- 2. outcomes ----
LR=plugins/contrib/LocalReplicas/simulate
sim $LR >"$WORK/lr.json" 2>"$WORK/lr.err"
check "LocalReplicas: web-1..3 land on three different nodes" "$(cat "$WORK/lr.json" "$WORK/lr.err")" \
  jqt '[.[] | select(.pod | test("web-[123]$")) | select(.result == "Scheduled") | .node] | unique | length == 3' "$WORK/lr.json"
check "LocalReplicas: web-4 is Unschedulable on every node with the plugin's reason" "$(cat "$WORK/lr.json")" \
  jqt '.[] | select(.pod == "default/web-4") | .result == "Unschedulable" and
       ([.filter[] | .LocalReplicas] == ["node(s) already run the maximum number of replicas of this workload",
         "node(s) already run the maximum number of replicas of this workload",
         "node(s) already run the maximum number of replicas of this workload"])' "$WORK/lr.json"
check "LocalReplicas: a pod without a controller is not limited" "$(cat "$WORK/lr.json")" \
  jqt '.[] | select(.pod == "default/debug") | .result == "Scheduled" and (.filter | length) == 0' "$WORK/lr.json"
sed 's/maxReplicasPerNode: 1/maxReplicasPerNode: 2/' $LR/config.yaml >"$WORK/lr2.yaml"
"$SCHED" simulate --config "$WORK/lr2.yaml" --cluster $LR/cluster.yaml --plugin-dir "$PLUGINS" >"$WORK/lr2.json" 2>&1
check "LocalReplicas: maxReplicasPerNode 2 places all four replicas" "$(cat "$WORK/lr2.json")" \
  jqt '[.[] | select(.pod | test("web-")) | .result] == ["Scheduled", "Scheduled", "Scheduled", "Scheduled"]' "$WORK/lr2.json"

FIP=plugins/contrib/FitIPResource/simulate
sim $FIP >"$WORK/fip.json" 2>"$WORK/fip.err"
check "FitIPResource: api-1 and api-2 take the last address of node-a and node-b" "$(cat "$WORK/fip.json")" \
  jqt '[.[] | select(.pod == "default/api-1" or .pod == "default/api-2") | .node] | sort == ["node-a", "node-b"]' "$WORK/fip.json"
check "FitIPResource: api-3 finds no address (Insufficient pod IPs on both pool nodes)" "$(cat "$WORK/fip.json")" \
  jqt '.[] | select(.pod == "default/api-3") | .result == "Unschedulable" and
       .filter["node-a"].FitIPResource == "Insufficient pod IPs" and .filter["node-b"].FitIPResource == "Insufficient pod IPs"' \
  "$WORK/fip.json"
check "FitIPResource: a hostNetwork pod needs no address" "$(cat "$WORK/fip.json")" \
  jqt '.[] | select(.pod == "default/agent-new") | .result == "Scheduled"' "$WORK/fip.json"
check "FitIPResource: the nodes without a capacity are named once on stderr" "$(cat "$WORK/fip.err")" \
  bash -c '[ "$(grep -c "nodes without a pod IP capacity are not limited" "$1")" = 1 ] &&
           grep -q "nodes=1 of=3 first=\"node-c\"" "$1"' _ "$WORK/fip.err"

# ---- 3. args errors at --validate ----
sed 's/maxReplicasPerNode: 1/maxReplicasPerNode: 0/' $LR/config.yaml >"$WORK/lr-bad.yaml"
out=$("$SCHED" --validate --config "$WORK/lr-bad.yaml" --plugin-dir "$PLUGINS" 2>&1); rc=$?
check "--validate: LocalReplicas maxReplicasPerNode 0 is refused with its path" "rc=$rc $out" \
  bash -c '[ "$1" = 1 ] && grep -q "^error: profiles\[0\].pluginConfig\[0\].args.maxReplicasPerNode" <<<"$2"' _ "$rc" "$out"
sed 's|resourceName: schedkit.io/pod-ips|resourceName: pods|' $FIP/config.yaml >"$WORK/fip-bad.yaml"
out=$("$SCHED" --validate --config "$WORK/fip-bad.yaml" --plugin-dir "$PLUGINS" 2>&1); rc=$?
check "--validate: FitIPResource resourceName pods is refused with its path" "rc=$rc $out" \
  bash -c '[ "$1" = 1 ] && grep -qF "error: profiles[0].pluginConfig[0].args.resourceName: Invalid value: \"pods\": must be an extended resource name" <<<"$2"' \
  _ "$rc" "$out"

echo "1..$n"
[ "$failed" = 0 ]
