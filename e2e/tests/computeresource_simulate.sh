#!/usr/bin/env bash
# computeresource_simulate.sh — ComputeResource (plugins/contrib/ComputeResource/) through
# `simulate` as the scheduler loads it (docs/plugins.md, "Seed plugins: ComputeResource"): its
# scenario's outcomes from the JSON lines (the node above the threshold filtered with the reason,
# load-aware placement, a placed pod counted before the next sample, the stale node scored by
# requests and named on stderr), the same cluster without NodeMetrics (no node filtered; the plugin
# scores exactly as NodeResourcesFit), without thresholds, and `--validate` with bad args.
# Needs `make all` (OUT as for e2e/run-tests.sh). TAP-style output.
set -u
export LC_ALL=C
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
OUT=${OUT:-.}
SCHED=$SK_BIN/schedkit-scheduler
PLUGINS=$(cd "$SK_ROOT" && cd "$OUT" && pwd)/lib/schedkit/plugins
DIR=plugins/contrib/ComputeResource/simulate
WORK=$(mktemp -d /tmp/sk-cr-sim.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$SK_ROOT" || exit 1

n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | head -c 3000 | sed 's/^/#   /'; }
check() { local d=$1 detail=$2; shift 2; if "$@"; then ok "$d"; else notok "$d" "$detail"; fi; }
jqt() { jq -se "$@" >/dev/null 2>&1; }
REASON="node(s) had cpu usage above the load threshold"

# ---- the scenario ----
"$SCHED" simulate --config $DIR/config.yaml --cluster $DIR/cluster.yaml --plugin-dir "$PLUGINS" \
  >"$WORK/out.json" 2>"$WORK/err"
rc=$?
check "simulate runs the scenario" "rc=$rc $(cat "$WORK/err")" test "$rc" = 0
check "node-a (3500m of 4 cpu, threshold 80%) is filtered for every pod with the reason" "$(cat "$WORK/out.json")" \
  jqt --arg r "$REASON" '[.[] | .filter["node-a"].ComputeResource] == [$r, $r, $r]' "$WORK/out.json"
check "web-1 goes to the idle node-c, not by requests (all nodes request the same)" "$(cat "$WORK/out.json")" \
  jqt '.[0] | .pod == "default/web-1" and .node == "node-c" and .score["node-c"].ComputeResource == 70 and
       .score["node-b"].ComputeResource == 31 and .score["node-d"].ComputeResource == 56' "$WORK/out.json"
check "web-2 sees web-1's estimate on node-c (70 -> 51) and takes node-d" "$(cat "$WORK/out.json")" \
  jqt '.[1] | .node == "node-d" and .score["node-c"].ComputeResource == 51' "$WORK/out.json"
check "node-d (stale sample) is scored by its requests, as NodeResourcesFit" "$(cat "$WORK/out.json")" \
  jqt '[.[] | .score["node-d"] | select(.) | .ComputeResource == .NodeResourcesFit] | all' "$WORK/out.json"
check "stderr names the node scored without metrics once" "$(cat "$WORK/err")" \
  bash -c '[ "$(grep -c "nodes scored without metrics" "$1")" = 1 ] && grep -q "nodes=1 first=\"node-d\"" "$1"' _ "$WORK/err"

# ---- without NodeMetrics: neither filtered nor penalised ----
awk 'BEGIN { RS = "---\n"; ORS = "" } !/kind: NodeMetrics/ { print (n++ ? "---\n" : "") $0 }' \
  $DIR/cluster.yaml >"$WORK/nometrics.yaml"
"$SCHED" simulate --config $DIR/config.yaml --cluster "$WORK/nometrics.yaml" --plugin-dir "$PLUGINS" \
  >"$WORK/nm.json" 2>"$WORK/nm.err"
check "without NodeMetrics no node is filtered" "$(cat "$WORK/nm.json" "$WORK/nm.err")" \
  jqt '[.[] | .result == "Scheduled" and (.filter | length) == 0] | all' "$WORK/nm.json"
check "... and every node is scored as NodeResourcesFit scores it" "$(cat "$WORK/nm.json")" \
  jqt '[.[] | .score[] | .ComputeResource == .NodeResourcesFit] | all' "$WORK/nm.json"
check "... and stderr says four nodes were scored without metrics" "$(cat "$WORK/nm.err")" \
  grep -q 'nodes scored without metrics.*nodes=4 first="node-a"' "$WORK/nm.err"

# ---- without thresholds: nothing is filtered, node-a is scored low ----
sed 's/usageThresholds: {cpu: 80, memory: 90}/usageThresholds: {}/' $DIR/config.yaml >"$WORK/nothr.yaml"
"$SCHED" simulate --config "$WORK/nothr.yaml" --cluster $DIR/cluster.yaml --plugin-dir "$PLUGINS" >"$WORK/nt.json" 2>"$WORK/nt.err"
# node-a: cpu 3500m + the pod's 1000m is above 4 cpu -> 0, memory (16 - 4 - 2) / 16 -> 62: 31
check "without usageThresholds node-a is not filtered, and scores lowest (31: no cpu left)" "$(cat "$WORK/nt.json")" \
  jqt '.[0] | (.filter | length) == 0 and .score["node-a"].ComputeResource == 31 and
       ([.score[] | .ComputeResource] | min) == 31' "$WORK/nt.json"

# ---- args errors ----
sed 's/usageThresholds: {cpu: 80, memory: 90}/usageThresholds: {cpu: 150}\n          refreshSeconds: 300\n          resources: [{name: gpu, weight: 1}]/' \
  $DIR/config.yaml >"$WORK/bad.yaml"
out=$("$SCHED" --validate --config "$WORK/bad.yaml" --plugin-dir "$PLUGINS" 2>&1); rc=$?
check "--validate refuses bad ComputeResource args, each with its path" "rc=$rc $out" \
  bash -c '[ "$1" = 1 ] &&
    grep -qF "error: profiles[0].pluginConfig[0].args.metricsExpirationSeconds: Invalid value: 180: must be at least refreshSeconds (300)" <<<"$2" &&
    grep -qF "error: profiles[0].pluginConfig[0].args.usageThresholds.cpu: Invalid value: 150: must be in the range [0, 100]" <<<"$2" &&
    grep -qF "error: profiles[0].pluginConfig[0].args.resources[0].name: Unsupported value: \"gpu\"" <<<"$2"' _ "$rc" "$out"

echo "1..$n"
[ "$failed" = 0 ]
