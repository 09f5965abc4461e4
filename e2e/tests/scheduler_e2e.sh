#!/usr/bin/env bash
# End to end: bin/schedkit-scheduler against the local API server (bin/schedkit-apiserver).
#  1. 100 nodes (varied capacity, zones, labels, taints), 2,000 pods across two profiles
#     (requests, tolerations, node affinity, host ports) plus 50 pods of a third schedulerName:
#     every pod of ours ends bound where its constraints allow (each binding checked with jq),
#     or Unschedulable with a FailedScheduling event and PodScheduled=False; the third
#     schedulerName's pods are untouched; one Scheduled event per pod, no binding conflict.
#  2. A node added later makes the waiting pods schedule.
#  3. Two active instances racing on the same pods: each pod is bound once; 409s are counted.
#  4. Config reload under load: --config is a kubelet-style ConfigMap volume; while 600 pods are
#     created, profiles are added, changed and removed (and one invalid config is rejected):
#     every pod is bound exactly once, without a restart.
#  5. Leader election with two instances: only the leader binds; killing it hands over; SIGTERM
#     releases the lease (and exits 0); the Lease carries the config hash.
#  6. SIGTERM still stops the scheduler promptly when the API server has gone away.
# Prints TAP-style ok / not ok lines. Env: SK_BIN (binaries), SK_ROOT (repo).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"
. "$SK_ROOT/e2e/lib/configmap_volume.sh"

work=$(mktemp -d /tmp/sk-sched-e2e.XXXXXX)
pids=()
cleanup() { # schedulers first (they flush events and release leases), the API server last
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
fatal() { notok "$*"; for f in "$work"/*.log; do echo "--- $f"; tail -20 "$f"; done; exit 1; }

# ---------------------------------------------------------------- API server
# With a token: the scheduler's /metrics and /configz authenticate callers by TokenReview against
# this server (the token's user is in system:masters), so curl below sends it; TLS, since kubectl
# sends no token over plain HTTP.
SK_TOKEN=sk-e2e-$RANDOM$RANDOM
export SK_TOKEN
"$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$work/kubeconfig" --simulate-kubelet \
  --kubelet-delay-ms 50 --tls --token "$SK_TOKEN" >"$work/apiserver.log" 2>&1 &
pids+=($!)
export KUBECONFIG=$work/kubeconfig
sk_wait_for 20 test -s "$work/kubeconfig" || fatal "local API server wrote its kubeconfig"
sk_wait_for 20 kubectl get --raw /readyz >/dev/null 2>&1 || fatal "local API server ready"

cat >"$work/config.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  qps: 5000
  burst: 5000
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 2
profiles:
- schedulerName: default-scheduler
- schedulerName: batch-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
EOF
check "scheduler --validate accepts the e2e config" bash -c '"$1" --config "$2" --validate >/dev/null' _ "$SK_BIN/schedkit-scheduler" "$work/config.yaml"

# scurl URL...: the scheduler's HTTPS endpoints (self-signed: -k) with the API server's token.
scurl() { curl -sfk -H "Authorization: Bearer $SK_TOKEN" "$@"; }
export -f scurl
start_scheduler() { # name config extra-args...: starts an instance, logs to $work/<name>.log
  local name=$1 cfg=$2; shift 2
  "$SK_BIN/schedkit-scheduler" --config "$cfg" --kubeconfig "$KUBECONFIG" --bind-address 127.0.0.1 --v=2 \
    --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" "$@" \
    >"$work/$name.log" 2>&1 &
  local pid=$!
  pids+=($pid)
  eval "${name}_pid=$pid"
}
start_serving() { # name config: starts an instance on a free port and waits for /readyz; sets <name>_port.
  # Another suite may take the port between the probe and the bind: the instance then exits and is
  # started again on another port.
  local name=$1 cfg=$2 p pid try
  for try in 1 2 3; do
    p=$(sk_free_port)
    start_scheduler "$name" "$cfg" --secure-port "$p"
    pid=${name}_pid
    if sk_wait_for 20 curl -sfk "https://127.0.0.1:$p/readyz" -o /dev/null; then eval "${name}_port=$p"; return 0; fi
    kill -0 "${!pid}" 2>/dev/null && break
    echo "# $name did not start on port $p (try $try): $(tail -1 "$work/$name.log")"
  done
  fatal "$name serves /readyz"
}

# ---------------------------------------------------------------- 1. 2,000 pods on 100 nodes
sk_gen_nodes 100 >"$work/nodes.json"
sk_gen_pods 1000 0 default-scheduler >"$work/pods-a.json"
sk_gen_pods 1000 1000 batch-scheduler >"$work/pods-b.json"
sk_gen_pods 50 5000 someone-else other >"$work/pods-other.json"
kubectl create -f "$work/nodes.json" >/dev/null || fatal "create 100 nodes"
start_serving main "$work/config.yaml"
port=$main_port
ok "scheduler started, /readyz is ok"
for f in pods-a pods-b pods-other; do kubectl create -f "$work/$f.json" >/dev/null || fatal "create $f"; done

ours='(.spec.schedulerName == "default-scheduler" or .spec.schedulerName == "batch-scheduler")'
undecided() { # pods of ours neither bound nor marked PodScheduled=False
  kubectl get pods -o json | jq "[.items[] | select($ours) | select((.spec.nodeName // \"\") == \"\")
    | select([.status.conditions[]? | select(.type == \"PodScheduled\" and .status == \"False\")] | length == 0)] | length"
}
settled() { [ "$(undecided)" = 0 ]; }
sk_wait_for 180 settled || fatal "every pod of ours is bound or Unschedulable (undecided: $(undecided))"
ok "every pod of ours was decided (bound or PodScheduled=False)"

kubectl get nodes -o json >"$work/nodes-now.json"
kubectl get pods -o json >"$work/pods-now.json"
kubectl get events -A -o json >"$work/events.json"

# jq helpers: quantities, tolerations, node affinity (In / NotIn / Exists / DoesNotExist).
JQ_LIB='
def cpu_m: if type == "number" then . * 1000 elif endswith("m") then (.[:-1] | tonumber) else (tonumber * 1000) end;
def mem_b: if endswith("Ki") then (.[:-2] | tonumber * 1024) elif endswith("Mi") then (.[:-2] | tonumber * 1048576)
  elif endswith("Gi") then (.[:-2] | tonumber * 1073741824) else tonumber end;
def tolerates($t): (.operator // "Equal") as $op
  | ((.key // "") == "" and $op == "Exists" or .key == $t.key)
  and ($op == "Exists" or (.value // "") == ($t.value // ""))
  and ((.effect // "") == "" or .effect == $t.effect);
def expr_ok($labels): .operator as $op | ($labels[.key]) as $v
  | if $op == "In" then ($v != null and (.values | index($v)) != null)
    elif $op == "NotIn" then ($v == null or (.values | index($v)) == null)
    elif $op == "Exists" then $v != null elif $op == "DoesNotExist" then $v == null else false end;
def affinity_ok($node): (.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms // null) as $terms
  | if $terms == null then true
    else any($terms[]; (.matchExpressions // []) | all(expr_ok($node.metadata.labels // {}))) end;
def num: .metadata.name | capture("-(?<n>[0-9]+)$").n | tonumber;
def impossible: num as $j | ($j % 97 == 0) or ($j % 11 == 0 and $j % 5 != 0);
'

violations=$(jq -rn --slurpfile N "$work/nodes-now.json" --slurpfile P "$work/pods-now.json" "$JQ_LIB"'
  ($N[0].items | map({key: .metadata.name, value: .}) | from_entries) as $nodes
  | [$P[0].items[] | select('"$ours"') | select(.spec.nodeName)] as $bound
  | ( $bound[] | . as $p | $nodes[$p.spec.nodeName] as $n
      | if $n == null then "\($p.metadata.name): bound to unknown node \($p.spec.nodeName)"
        else
          ( ($n.spec.taints // [])[] | select(.effect == "NoSchedule" or .effect == "NoExecute") | . as $t
            | select(($p.spec.tolerations // []) | any(tolerates($t)) | not)
            | "\($p.metadata.name): taint \($t.key) on \($n.metadata.name) not tolerated" ),
          ( select(($p | affinity_ok($n)) | not) | "\($p.metadata.name): node affinity not met by \($n.metadata.name)" )
        end ),
    ( $bound | map(. as $p | [.spec.containers[].ports[]? | select(.hostPort) | "\($p.spec.nodeName):\(.hostPort)"][])
      | group_by(.) | .[] | select(length > 1) | "host port \(.[0]) used by \(length) pods" ),
    ( [$P[0].items[] | select(.spec.nodeName)] | group_by(.spec.nodeName)[] | . as $ps | $nodes[$ps[0].spec.nodeName] as $n
      | ([$ps[].spec.containers[].resources.requests.cpu // "0" | cpu_m] | add) as $cpu
      | ([$ps[].spec.containers[].resources.requests.memory // "0" | mem_b] | add) as $mem
      | select($cpu > ($n.status.allocatable.cpu | cpu_m) or $mem > ($n.status.allocatable.memory | mem_b))
      | "node \($n.metadata.name) overcommitted: cpu \($cpu)m memory \($mem)" )')
if [ -z "$violations" ]; then ok "every binding respects taints, node affinity, host ports and capacity"
else notok "every binding respects taints, node affinity, host ports and capacity"; echo "$violations" | head -20 | sed 's/^/# /'; fi

nbound=$(jq "[.items[] | select($ours) | select(.spec.nodeName)] | length" "$work/pods-now.json")
echo "# bound: $nbound of 2000"
wrong=$(jq -r "$JQ_LIB"'[.items[] | select('"$ours"') | select(((.spec.nodeName // "") == "") != impossible) | .metadata.name] | join(" ")' "$work/pods-now.json")
if [ -z "$wrong" ]; then ok "pods are unbound exactly when no node can take them ($nbound bound)"
else notok "pods are unbound exactly when no node can take them"; echo "# mismatched: ${wrong:0:400}"; fi

bad_cond=$(jq -r '[.items[] | select('"$ours"') | select((.spec.nodeName // "") == "")
  | select([.status.conditions[]? | select(.type == "PodScheduled" and .status == "False" and .reason == "Unschedulable"
      and (.message | startswith("0/100 nodes are available: ")))] | length != 1) | .metadata.name] | join(" ")' "$work/pods-now.json")
check "unschedulable pods carry PodScheduled=False/Unschedulable with the FitError message" test -z "$bad_cond"
jq -r '[.items[] | select('"$ours"') | select((.spec.nodeName // "") == "")][0].status.conditions[]? | select(.type == "PodScheduled") | "# e.g. \(.message)"' "$work/pods-now.json"

missing_ev=$(jq -rn --slurpfile P "$work/pods-now.json" --slurpfile E "$work/events.json" '
  ([$E[0].items[] | select(.reason == "FailedScheduling") | .involvedObject.name] | unique) as $ev
  | [$P[0].items[] | select('"$ours"') | select((.spec.nodeName // "") == "") | .metadata.name
     | select(. as $n | $ev | index($n) | not)] | join(" ")')
check "every unschedulable pod has a FailedScheduling event" test -z "$missing_ev"

dup_sched=$(jq -r '[.items[] | select(.reason == "Scheduled") | .involvedObject.name] | group_by(.) | map(select(length > 1) | .[0]) | join(" ")' "$work/events.json")
nsched_ev=$(jq '[.items[] | select(.reason == "Scheduled")] | length' "$work/events.json")
check "one Scheduled event per bound pod ($nsched_ev events, $nbound bound)" test -z "$dup_sched" -a "$nsched_ev" = "$nbound"

theirs=$(jq -r '[.items[] | select(.spec.schedulerName == "someone-else")
  | select((.spec.nodeName // "") != "" or ([.status.conditions[]? | select(.type == "PodScheduled")] | length > 0)) | .metadata.name] | join(" ")' "$work/pods-now.json")
their_ev=$(jq '[.items[] | select(.involvedObject.name | startswith("other-"))] | length' "$work/events.json")
ntheirs=$(jq '[.items[] | select(.spec.schedulerName == "someone-else")] | length' "$work/pods-now.json")
check "the 50 pods of a third schedulerName are untouched (no binding, condition or event)" \
  test -z "$theirs" -a "$their_ev" = 0 -a "$ntheirs" = 50

scurl "https://127.0.0.1:$port/metrics" >"$work/metrics.txt"
conflicts=$(awk '$1 == "schedkit_scheduler_binding_conflicts_total" {print $2}' "$work/metrics.txt")
check "no binding conflict (schedkit_scheduler_binding_conflicts_total=${conflicts:-?})" test "${conflicts:-x}" = 0
check "/metrics has attempts for both profiles" \
  bash -c 'grep -q "scheduler_schedule_attempts_total{profile=\"batch-scheduler\",result=\"scheduled\"}" "$1" &&
           grep -q "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"unschedulable\"}" "$1" &&
           grep -q "^scheduler_pending_pods{queue=\"unschedulable\"}" "$1" &&
           grep -q "^scheduler_pod_scheduling_sli_duration_seconds_bucket" "$1"' _ "$work/metrics.txt"
# metric_sum FILE NAME LABEL-SUBSTRING: the sum of the NAME series whose labels contain it
metric_sum() { awk -v n="$2" -v l="$3" 'index($1, n "{") == 1 && index($1, l) { s += $2 } END { print s + 0 }' "$1"; }
check "/metrics: plugin evaluations, event handling, goroutines, in-flight events and REST client sizes moved" \
  bash -c "$(declare -f metric_sum)"'
    f=$1
    [ "$(metric_sum "$f" scheduler_plugin_evaluation_total "extension_point=\"Filter\",plugin=\"NodeResourcesFit\",profile=\"default-scheduler\"")" -gt 0 ] &&
    [ "$(metric_sum "$f" scheduler_plugin_evaluation_total "extension_point=\"Score\"")" -gt 0 ] &&
    [ "$(metric_sum "$f" scheduler_event_handling_duration_seconds_count "event=\"NodeAdd\"")" -gt 0 ] &&
    [ "$(metric_sum "$f" scheduler_event_handling_duration_seconds_count "event=\"PodAdd\"")" -gt 0 ] &&
    grep -q "^scheduler_goroutines{operation=\"binding\"} " "$f" &&
    grep -q "^scheduler_inflight_events{event=\"PodPopped\"} " "$f" &&
    [ "$(metric_sum "$f" rest_client_request_size_bytes_count "verb=\"POST\"")" -gt 0 ] &&
    [ "$(metric_sum "$f" rest_client_response_size_bytes_count "verb=\"POST\"")" -gt 0 ] &&
    [ "$(metric_sum "$f" rest_client_rate_limiter_duration_seconds_count "verb=\"POST\"")" -gt 0 ]' _ "$work/metrics.txt"
check "/configz serves the defaulted config and the unavailable default plugins" \
  bash -c 'scurl "https://127.0.0.1:$1/configz" | jq -e ".componentconfig.profiles | length == 2" >/dev/null &&
           scurl "https://127.0.0.1:$1/configz" | jq -e ".unavailableDefaultPlugins | type == \"array\"" >/dev/null' _ "$port"
check "the startup log lists unavailable default plugins" grep -q "not available in this build" "$work/main.log"

# ---------------------------------------------------------------- 2. a node added later
waiting_gpu() { kubectl get pods -o json | jq "$JQ_LIB"'[.items[] | select('"$ours"') | select((.spec.nodeName // "") == "")
  | select(num % 97 != 0)] | length'; }
before=$(waiting_gpu)
cat <<'EOF' | kubectl create -f - >/dev/null
{"apiVersion":"v1","kind":"Node","metadata":{"name":"late-gpu","labels":{"tier":"gpu","disk":"ssd","kubernetes.io/hostname":"late-gpu"}},
 "status":{"allocatable":{"cpu":"64","memory":"256Gi","pods":"250"},"capacity":{"cpu":"64","memory":"256Gi","pods":"250"}}}
EOF
gpu_done() { [ "$(waiting_gpu)" = 0 ]; }
if sk_wait_for 60 gpu_done; then
  on_late=$(kubectl get pods -o json | jq '[.items[] | select(.spec.nodeName == "late-gpu")] | length')
  ok "a node added later schedules the $before waiting pods it can take ($on_late now on late-gpu)"
else
  notok "a node added later schedules the waiting pods ($(waiting_gpu) of $before still waiting)"
fi
big_left=$(kubectl get pods -o json | jq "$JQ_LIB"'[.items[] | select('"$ours"') | select((.spec.nodeName // "") == "") | select(num % 97 == 0)] | length')
check "pods no node can take stay Unschedulable ($big_left)" test "$big_left" = 21
scurl "https://127.0.0.1:$port/metrics" >"$work/metrics2.txt"
check "/metrics: the node added later ran the rejecting plugins' queueing hints" \
  bash -c "$(declare -f metric_sum)"'; [ "$(metric_sum "$1" scheduler_queueing_hint_execution_duration_seconds_count "event=\"NodeAdd\"")" -gt 0 ]' _ "$work/metrics2.txt"

kill -TERM "$main_pid"; wait "$main_pid"; rc=$?
check "SIGTERM stops the scheduler with exit code 0 (got $rc)" test "$rc" = 0

# ---------------------------------------------------------------- 3. two active instances race
cat >"$work/race.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
clientConnection: {qps: 5000, burst: 5000}
profiles:
- schedulerName: race-scheduler
EOF
start_serving race1 "$work/race.yaml"; port_r1=$race1_port
start_serving race2 "$work/race.yaml"; port_r2=$race2_port
awk 'BEGIN { for (i = 0; i < 300; i++) printf "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"race-%03d\"},\"spec\":{\"schedulerName\":\"race-scheduler\",\"tolerations\":[{\"operator\":\"Exists\"}],\"containers\":[{\"name\":\"c\",\"image\":\"pause:3.9\",\"resources\":{\"requests\":{\"cpu\":\"1m\"}}}]}}\n", i }' \
  | kubectl create -f - >/dev/null
race_unbound() { kubectl get pods -o json | jq '[.items[] | select(.spec.schedulerName == "race-scheduler") | select((.spec.nodeName // "") == "")] | length'; }
race_done() { [ "$(race_unbound)" = 0 ]; }
sk_wait_for 60 race_done
check "two active instances: all 300 racing pods bound" race_done
c1=$(scurl "https://127.0.0.1:$port_r1/metrics" | awk '$1 == "schedkit_scheduler_binding_conflicts_total" {print $2}')
c2=$(scurl "https://127.0.0.1:$port_r2/metrics" | awk '$1 == "schedkit_scheduler_binding_conflicts_total" {print $2}')
b1=$(grep -c '"Successfully bound pod to node"' "$work/race1.log"); b2=$(grep -c '"Successfully bound pod to node"' "$work/race2.log")
kubectl get events -o json >"$work/events-race.json"
dup_race=$(jq -r '[.items[] | select(.reason == "Scheduled" and (.involvedObject.name | startswith("race-"))) | .involvedObject.name] | group_by(.) | map(select(length > 1) | .[0]) | join(" ")' "$work/events-race.json")
check "no pod bound twice: successful bindings $b1 + $b2 = 300, 409 conflicts counted ${c1:-?} + ${c2:-?}, one Scheduled event each" \
  test "$((b1 + b2))" = 300 -a -z "$dup_race" -a -n "${c1:-}" -a -n "${c2:-}"
sleep 1 # let queued status patches land before looking for stray conditions
false_cond=$(kubectl get pods -o json | jq '[.items[] | select(.spec.schedulerName == "race-scheduler")
  | select([.status.conditions[]? | select(.type == "PodScheduled" and .status == "False")] | length > 0)] | length')
check "the instance that lost a race never marks the pod PodScheduled=False ($false_cond)" test "$false_cond" = 0
kill -TERM "$race1_pid" "$race2_pid"; wait "$race1_pid" "$race2_pid"

# ---------------------------------------------------------------- 4. config reload under load
rl_config() { # profiles (YAML lines after "profiles:")
  printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection: {leaderElect: false}\nclientConnection: {qps: 5000, burst: 5000}\nprofiles:\n%s\n' "$1"
}
rl_publish() { # config text: into ConfigMap default/rl-config, then one kubelet-style volume sync
  printf '%s' "$1" >"$work/rl-next.yaml"
  kubectl create configmap rl-config --from-file=config.yaml="$work/rl-next.yaml" --dry-run=client -o yaml |
    kubectl apply -f - >/dev/null && sk_cm_volume_sync "$work/rl-vol" default rl-config config.yaml
}
rl_logged() { [ "$(grep -c "$1" "$work/rl.log")" = "$2" ]; } # pattern count
rl_publish "$(rl_config '- schedulerName: rl-a')"
start_serving rl "$work/rl-vol/config.yaml"; port_rl=$rl_port
( for b in 0 1 2 3 4 5; do
    awk -v b="$b" 'BEGIN { for (i = b * 100; i < b * 100 + 100; i++) printf "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"rl-%03d\"},\"spec\":{\"schedulerName\":\"%s\",\"tolerations\":[{\"operator\":\"Exists\"}],\"containers\":[{\"name\":\"c\",\"image\":\"pause:3.9\",\"resources\":{\"requests\":{\"cpu\":\"1m\"}}}]}}\n", i, (i % 2 ? "rl-b" : "rl-a") }' |
      kubectl create -f - >/dev/null
    sleep 0.5
  done ) &
creator=$!
reloads=0 rejected=0
for v in \
  '- schedulerName: rl-a
- schedulerName: rl-b' \
  '- schedulerName: rl-a
  percentageOfNodesToScore: 20
- schedulerName: rl-b' \
  '- schedulerName: rl-a
  plugins: {filter: {enabled: [{name: NoSuchPlugin}]}}' \
  '- schedulerName: rl-b
  plugins: {score: {disabled: [{name: ImageLocality}]}}
- schedulerName: rl-c
- schedulerName: rl-a' \
  '- schedulerName: rl-a
- schedulerName: rl-b
  percentageOfNodesToScore: 50'; do
  rl_publish "$(rl_config "$v")"
  if [[ "$v" == *NoSuchPlugin* ]]; then rejected=$((rejected + 1)); sk_wait_for 10 rl_logged '"Configuration reload rejected' "$rejected"
  else reloads=$((reloads + 1)); sk_wait_for 10 rl_logged '"Configuration reloaded"' "$reloads"; fi
done
wait "$creator"
rl_unbound() { kubectl get pods -o json | jq '[.items[] | select(.metadata.name | startswith("rl-")) | select((.spec.nodeName // "") == "")] | length'; }
rl_done() { [ "$(rl_unbound)" = 0 ]; }
sk_wait_for 60 rl_done
check "reload under load: all 600 pods of the reloaded profiles bound ($(rl_unbound) unbound)" rl_done
scurl "https://127.0.0.1:$port_rl/metrics" >"$work/rl-metrics.txt"
rl_ok=$(awk '$1 == "schedkit_config_reloads_total{result=\"success\"}" {print $2}' "$work/rl-metrics.txt")
rl_bad=$(awk '$1 == "schedkit_config_reloads_total{result=\"failure\"}" {print $2}' "$work/rl-metrics.txt")
rl_last=$(awk '$1 == "schedkit_config_last_reload_successful" {print $2}' "$work/rl-metrics.txt")
check "... 4 reloads applied and 1 invalid config rejected by the same process (metrics: ${rl_ok:-?} / ${rl_bad:-?}, last ok ${rl_last:-?})" \
  test "${rl_ok:-}" = 4 -a "${rl_bad:-}" = 1 -a "${rl_last:-}" = 1 -a "$(grep -c 'Starting schedkit-scheduler' "$work/rl.log")" = 1
rl_bound=$(grep -o '"Successfully bound pod to node" pod=default/rl-[0-9]*' "$work/rl.log" | sort)
rl_twice=$(printf '%s\n' "$rl_bound" | uniq -d | wc -l)
rl_conf=$(awk '$1 == "schedkit_scheduler_binding_conflicts_total" {print $2}' "$work/rl-metrics.txt")
kubectl get events -o json >"$work/events-rl.json"
dup_rl=$(jq -r '[.items[] | select(.reason == "Scheduled" and (.involvedObject.name | startswith("rl-"))) | .involvedObject.name] | group_by(.) | map(select(length > 1) | .[0]) | join(" ")' "$work/events-rl.json")
check "... each bound exactly once ($(printf '%s\n' "$rl_bound" | grep -c .) bindings, $rl_twice twice, ${rl_conf:-?} conflicts, one Scheduled event each)" \
  test "$(printf '%s\n' "$rl_bound" | grep -c .)" = 600 -a "$rl_twice" = 0 -a "${rl_conf:-x}" = 0 -a -z "$dup_rl"
check "... and /configz shows the last configuration" \
  bash -c 'scurl "https://127.0.0.1:$1/configz" | jq -e "[.componentconfig.profiles[].schedulerName] == [\"rl-a\", \"rl-b\"]" >/dev/null' _ "$port_rl"
kill -TERM "$rl_pid"; wait "$rl_pid"

# ---------------------------------------------------------------- 5. leader election
cat >"$work/le.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceName: e2e-scheduler
  resourceNamespace: kube-system
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 500ms
clientConnection: {qps: 5000, burst: 5000}
profiles:
- schedulerName: le-scheduler
EOF
start_scheduler le1 "$work/le.yaml" --secure-port 0
start_scheduler le2 "$work/le.yaml" --secure-port 0 --leader-elect=true
holder() { kubectl get lease -n kube-system e2e-scheduler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
has_holder() { [ -n "$(holder)" ]; }
sk_wait_for 30 has_holder || fatal "a leader holds lease kube-system/e2e-scheduler"
le_pods() { # prefix count
  awk -v p="$1" -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-%03d\"},\"spec\":{\"schedulerName\":\"le-scheduler\",\"tolerations\":[{\"operator\":\"Exists\"}],\"containers\":[{\"name\":\"c\",\"image\":\"pause:3.9\",\"resources\":{\"requests\":{\"cpu\":\"1m\"}}}]}}\n", p, i }' \
    | kubectl create -f - >/dev/null
}
le_unbound() { kubectl get pods -o json | jq --arg p "$1" '[.items[] | select(.metadata.name | startswith($p)) | select((.spec.nodeName // "") == "")] | length'; }
le_done() { [ "$(le_unbound "$1")" = 0 ]; }
le_pods lea 40
sk_wait_for 60 le_done lea- || notok "leader binds the first 40 pods ($(le_unbound lea-) left)"
n1=$(grep -c '"Successfully bound pod to node" pod=default/lea-' "$work/le1.log")
n2=$(grep -c '"Successfully bound pod to node" pod=default/lea-' "$work/le2.log")
if [ "$n1" = 40 ] && [ "$n2" = 0 ]; then leader=le1; follower=le2
elif [ "$n2" = 40 ] && [ "$n1" = 0 ]; then leader=le2; follower=le1
else leader=""; fi
check "only the leader binds (instance 1: $n1, instance 2: $n2)" test -n "$leader"
[ -n "$leader" ] || { leader=le1; follower=le2; }
want_hash=$(sha256sum "$work/le.yaml" | cut -d' ' -f1)
got_hash=$(kubectl get lease -n kube-system e2e-scheduler -o json | jq -r '.metadata.annotations["schedkit.io/config-hash"] // ""')
check "the leader's Lease carries schedkit.io/config-hash = sha256 of its config" test "$got_hash" = "$want_hash"
old_holder=$(holder)
leader_pid_var=${leader}_pid; follower_pid_var=${follower}_pid
kill -KILL "${!leader_pid_var}"; wait "${!leader_pid_var}" 2>/dev/null
changed() { local h; h=$(holder); [ -n "$h" ] && [ "$h" != "$old_holder" ]; }
check "killing the leader hands the lease over" sk_wait_for 30 changed
le_pods leb 40
sk_wait_for 60 le_done leb-
nb=$(grep -c '"Successfully bound pod to node" pod=default/leb-' "$work/$follower.log")
check "the new leader binds the next 40 pods ($nb)" test "$nb" = 40
kill -TERM "${!follower_pid_var}"; wait "${!follower_pid_var}"; rc=$?
check "SIGTERM on the leader exits 0 (got $rc)" test "$rc" = 0
check "SIGTERM released the lease (holderIdentity empty)" test -z "$(holder)"
# ---------------------------------------------------------------- 6. shutdown with the API server gone
cat >"$work/gone.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
clientConnection: {qps: 5000, burst: 5000}
profiles:
- schedulerName: gone-scheduler
EOF
start_scheduler gone "$work/gone.yaml" --secure-port 0
sleep 1
awk 'BEGIN { for (i = 0; i < 500; i++) printf "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"gone-%03d\"},\"spec\":{\"schedulerName\":\"gone-scheduler\",\"tolerations\":[{\"operator\":\"Exists\"}],\"containers\":[{\"name\":\"c\",\"image\":\"pause:3.9\"}]}}\n", i }' \
  | kubectl create -f - >/dev/null
kill -KILL "${pids[0]}"; wait "${pids[0]}" 2>/dev/null
kill -TERM "$gone_pid"
stopped=1
for _ in $(seq 1 120); do kill -0 "$gone_pid" 2>/dev/null || { stopped=0; break; }; sleep 0.5; done
check "SIGTERM with the API server gone still stops the scheduler within 60 s" test "$stopped" = 0

# Under `make asan` the binaries are instrumented: any report lands in their logs.
sanitizer=$(grep -lE 'AddressSanitizer|LeakSanitizer|runtime error:' "$work"/main.log "$work"/race*.log "$work"/rl.log "$work"/le*.log "$work"/gone.log 2>/dev/null)
check "no sanitizer report in the scheduler logs" test -z "$sanitizer"
[ -z "$sanitizer" ] || grep -hE -A12 'AddressSanitizer|LeakSanitizer|runtime error:' $sanitizer | head -40 | sed 's/^/# /'
exit 0
