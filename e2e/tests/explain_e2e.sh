#!/usr/bin/env bash
# End to end: decision records and `kubectl schedkit` (docs/explain.md) with the real kubectl.
#  1. Four nodes (distinct sizes, one tainted), one existing pod, two pending pods of a recording
#     profile (web-1 fits, big fits nowhere) and one of a profile that does not record; a snapshot
#     of that cluster is taken before the scheduler starts.
#  2. The scheduler runs with decisionRecords on one profile; a Service and Endpoints point at it,
#     so the local API server's service proxy reaches it.
#  3. `kubectl schedkit explain web-1` shows exactly the block `simulate --explain` prints for the
#     same snapshot (same winner, same scores); `explain big` shows every node's reason (and the
#     same block as simulate).
#  4. The JSON through `kubectl get --raw` of the proxy: raw/normalized/weighted scores, chosen
#     node, timings; the list filtered by profile and result; 400 on a bad query, 404 for a pod
#     without records, no records for the profile that does not record.
#  5. `kubectl schedkit why-pending` lists big with its top reasons (and not web-1);
#     `kubectl schedkit simulate --explain` on the live cluster explains big the same way.
# Prints TAP-style ok / not ok lines. Env: SK_BIN (binaries), SK_ROOT (repo).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"

work=$(mktemp -d /tmp/sk-explain-e2e.XXXXXX)
pids=()
cleanup() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
check() { local d=$1; shift; if "$@" >/dev/null; then ok "$d"; else notok "$d"; fi; }
fatal() { notok "$*"; for f in "$work"/*.log; do echo "--- $f"; tail -20 "$f"; done; exit 1; }
# kubectl finds the plugin on PATH, as users install it
export PATH="$SK_BIN:$PATH"

"$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$work/kubeconfig" >"$work/apiserver.log" 2>&1 &
pids+=($!)
export KUBECONFIG=$work/kubeconfig
sk_wait_for 20 test -s "$work/kubeconfig" || fatal "local API server wrote its kubeconfig"
sk_wait_for 20 kubectl get --raw /readyz >/dev/null 2>&1 || fatal "local API server ready"
check "kubectl lists the schedkit plugin" bash -c 'kubectl plugin list 2>/dev/null | grep -q kubectl-schedkit'

# ---------------------------------------------------------------- 1. the cluster
node() { # name cpu memory [taint]
  local taints='[]'
  [ -n "${4:-}" ] && taints="[{\"key\":\"$4\",\"effect\":\"NoSchedule\"}]"
  printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":{"kubernetes.io/hostname":"%s"}},"spec":{"taints":%s},"status":{"allocatable":{"cpu":"%s","memory":"%s","pods":"110"},"capacity":{"cpu":"%s","memory":"%s","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}}\n' \
    "$1" "$1" "$taints" "$2" "$3" "$2" "$3"
}
pod() { # name scheduler cpu memory [node]
  local nn=""
  [ -n "${5:-}" ] && nn="\"nodeName\":\"$5\","
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default"},"spec":{%s"schedulerName":"%s","containers":[{"name":"c","image":"pause:3.9","resources":{"requests":{"cpu":"%s","memory":"%s"}}}]}}\n' \
    "$1" "$nn" "$2" "$3" "$4"
}
{
  node node-a 4 8Gi
  node node-b 8 16Gi
  node node-c 6 6Gi
  node node-d 16 32Gi dedicated
} >"$work/nodes.json"
{
  pod old-1 default-scheduler 1500m 1Gi node-b
  pod web-1 default-scheduler 500m 1Gi
  pod big default-scheduler 100 1Gi
} >"$work/pods.json"
kubectl create -f "$work/nodes.json" >/dev/null || fatal "create nodes"
kubectl create -f "$work/pods.json" >/dev/null || fatal "create pods"
kubectl get nodes,pods -A -o yaml >"$work/snapshot.yaml" || fatal "snapshot of the cluster"

cat >"$work/config.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 1s
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 1
profiles:
- schedulerName: default-scheduler
  decisionRecords:
    enabled: true
- schedulerName: quiet-scheduler
  decisionRecords:
    annotations: true
EOF
check "scheduler --validate accepts decisionRecords" "$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --validate
"$SK_BIN/schedkit-scheduler" simulate --config "$work/config.yaml" --cluster "$work/snapshot.yaml" --explain \
  >"$work/simulate.txt" 2>"$work/simulate.err" || fatal "simulate --explain on the snapshot"

# ---------------------------------------------------------------- 2. the scheduler and its Service
sk_start_scheduler_service "$work/config.yaml" --decision-records-per-pod 3 --v=2
bound() { [ -n "$(kubectl get pod web-1 -o jsonpath='{.spec.nodeName}')" ]; }
sk_wait_for 30 bound || fatal "web-1 is bound"
failed_big() { kubectl get pod big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}' | grep -q Unschedulable; }
sk_wait_for 30 failed_big || fatal "big is Unschedulable"
ok "web-1 bound to $(kubectl get pod web-1 -o jsonpath='{.spec.nodeName}'), big Unschedulable"
# a pod of the profile that does not record (after the snapshot: it would change web-1's scores)
{ pod quiet-1 quiet-scheduler 100m 128Mi; pod quiet-big quiet-scheduler 100 128Mi; } | kubectl create -f - >/dev/null ||
  fatal "create quiet-1 and quiet-big"
ann() { kubectl get pod "$1" -o json | jq -r --arg k "schedkit.io/decision-$2" '.metadata.annotations[$k] // ""'; }
quiet_done() { [ "$(ann quiet-1 result)" = Scheduled ] && [ "$(ann quiet-big result)" = Unschedulable ]; }
sk_wait_for 30 quiet_done || fatal "quiet-1 and quiet-big carry their result annotations"

# ---------------------------------------------------------------- 3. explain == simulate --explain
block() { # pod: its block of the simulate output (header to the blank line)
  awk -v h="Pod default/$1 " 'index($0, h) == 1 { on = 1 } on { print } on && $0 == "" { exit }' "$work/simulate.txt"
}
block web-1 >"$work/sim-web.txt"
block big >"$work/sim-big.txt"
kubectl schedkit explain web-1 >"$work/explain-web.txt" 2>"$work/explain-web.err" || fatal "kubectl schedkit explain web-1: $(cat "$work/explain-web.err")"
if diff -u "$work/sim-web.txt" "$work/explain-web.txt" >"$work/diff-web.txt"; then
  ok "kubectl schedkit explain web-1 shows the block simulate --explain shows (same winner and scores)"
else
  notok "kubectl schedkit explain web-1 differs from simulate --explain"; sed 's/^/# /' "$work/diff-web.txt"
fi
check "explain web-1 names the bound node as chosen" \
  grep -q "^  $(kubectl get pod web-1 -o jsonpath='{.spec.nodeName}') *chosen" "$work/explain-web.txt"
check "explain web-1 shows the tainted node's rejection" grep -q '^  node-d  TaintToleration: ' "$work/explain-web.txt"
check "explain web-1 has scored rows for the three untainted nodes" \
  test "$(grep -cE '^  node-[abc] +(chosen|feasible) ' "$work/explain-web.txt")" = 3

kubectl schedkit explain big -n default >"$work/explain-big.txt" 2>&1 || fatal "kubectl schedkit explain big"
every=1
for n in node-a node-b node-c node-d; do grep -qE "^  $n  [A-Za-z]+: .+" "$work/explain-big.txt" || every=0; done
check "explain big gives every node's reason" test "$every" = 1
check "explain big: NodeResourcesFit says Insufficient cpu on node-a" grep -q '^  node-a  NodeResourcesFit: Insufficient cpu' "$work/explain-big.txt"
if diff -u "$work/sim-big.txt" "$work/explain-big.txt" >"$work/diff-big.txt"; then
  ok "kubectl schedkit explain big shows the block simulate --explain shows"
else
  notok "kubectl schedkit explain big differs from simulate --explain"; sed 's/^/# /' "$work/diff-big.txt"
fi

# ---------------------------------------------------------------- 4. the JSON through the proxy
api=/api/v1/namespaces/schedkit-system/services/https:schedkit-scheduler:10259/proxy/debug/schedkit/v1/decisions
kubectl get --raw "$api?namespace=default&name=web-1" >"$work/web.json" 2>"$work/web.err" || fatal "GET decisions of web-1 through the service proxy: $(cat "$work/web.err")"
node=$(kubectl get pod web-1 -o jsonpath='{.spec.nodeName}')
check "record: kind PodDecisions, one Scheduled item on the bound node" \
  jq -e --arg n "$node" '.kind == "PodDecisions" and (.items | length) == 1 and .items[0].result == "Scheduled" and .items[0].node == $n and .items[0].chosen.node == $n' "$work/web.json"
check "record: raw, normalized and weighted scores per plugin, total = weighted sum + extenders" \
  jq -e '.items[0].score as $s | ($s.plugins | length) > 0 and ($s.nodes | length) == 3 and
    all($s.nodes[]; (.raw | length) == ($s.plugins | length) and (.normalized | length) == ($s.plugins | length)
      and .total == ((.weighted | add) + .extenders)
      and ([range(0; $s.plugins | length) as $i | .weighted[$i] == .normalized[$i] * $s.plugins[$i].weight] | all))' "$work/web.json"
check "record: the tainted node is in filter with plugin, code and reasons" \
  jq -e '.items[0].filter | any(.node == "node-d" and .plugin == "TaintToleration" and .code == "UnschedulableAndUnresolvable" and (.reasons | length) == 1)' "$work/web.json"
check "record: timings of PreFilter, Filter, Score, Bind" \
  jq -e '[.items[0].timings[].point] as $p | all(("PreFilter", "Filter", "Score", "Bind"); . as $x | $p | index($x) != null)' "$work/web.json"
check "record: preFilter all nodes, no nominated path, permit not waited" \
  jq -e '.items[0].preFilter.nodes == "all" and .items[0].nominatedNodePath == null and .items[0].permit.waited == false and .items[0].numAllNodes == 4' "$work/web.json"
kubectl get --raw "$api?profile=default-scheduler&result=Unschedulable" >"$work/list.json" || fatal "GET the list"
check "list: filtered by profile and result, summaries with reasons, store accounted" \
  jq -e '.kind == "DecisionList" and (.items | length) >= 1 and all(.items[]; .result == "Unschedulable" and .profile == "default-scheduler" and .pod.name == "big")
    and (.items[0].reasons | length) >= 1 and .store.bytes > 0 and .store.perPod == 3' "$work/list.json"
check "list: at most decision-records-per-pod records of big are kept" \
  jq -e '[.items[] | select(.pod.name == "big")] | length <= 3' "$work/list.json"
check "list: a bad result is a 400 naming the parameter" \
  bash -c 'kubectl get --raw "$1?result=Maybe" 2>&1 | grep -q "invalid query parameter result"' _ "$api"
check "the pod of the profile that does not record has no record (404)" \
  bash -c 'kubectl get --raw "$1?namespace=default&name=quiet-1" 2>&1 | grep -q "no decision recorded for pod default/quiet-1"' _ "$api"
check "kubectl schedkit explain of a pod without records fails and says so" \
  bash -c '! kubectl schedkit explain nope >/dev/null 2>"$1/nope.err" && grep -q "no decision recorded for pod default/nope" "$1/nope.err"' _ "$work"
check "kubectl schedkit explain -o json prints the record" \
  bash -c 'kubectl schedkit explain web-1 -o json | jq -e ".pod.name == \"web-1\" and .result == \"Scheduled\"" >/dev/null'
check "the proxy answers 503 for a Service without endpoints" \
  bash -c 'printf "%s\n" "apiVersion: v1" "kind: Service" "metadata: {name: lonely, namespace: default}" "spec: {ports: [{port: 80}]}" |
    kubectl apply -f - >/dev/null && kubectl get --raw /api/v1/namespaces/default/services/lonely:80/proxy/x 2>&1 | grep -q "no endpoints available for service \"lonely\""'

# ---------------------------------------------------------------- annotations (quiet-scheduler)
check "annotations: quiet-1 names its bound node" test "$(ann quiet-1 node)" = "$(kubectl get pod quiet-1 -o jsonpath='{.spec.nodeName}')"
check "annotations: quiet-1's score is JSON with a total per scored node, the chosen first" \
  bash -c '[ "$(kubectl get pod quiet-1 -o go-template="{{index .metadata.annotations \"schedkit.io/decision-score\"}}" | jq -r "keys_unsorted[0]")" = "$1" ]' _ "$(ann quiet-1 node)"
check "annotations: quiet-1's filter names the tainted node's plugin" \
  bash -c 'kubectl get pod quiet-1 -o go-template="{{index .metadata.annotations \"schedkit.io/decision-filter\"}}" | jq -e ".\"node-d\".TaintToleration" >/dev/null'
check "annotations: quiet-big has the FailedScheduling message and no node" \
  bash -c 'kubectl get pod quiet-big -o json | jq -e ".metadata.annotations | (.\"schedkit.io/decision-message\" | startswith(\"0/4 nodes are available:\")) and (has(\"schedkit.io/decision-node\") | not) and (has(\"schedkit.io/decision-truncated\") | not)"'
sleep 4
check "annotations do not requeue the unschedulable pod (at most 2 FailedScheduling events)" \
  bash -c '[ "$(kubectl get events -o json | jq "[.items[] | select(.involvedObject.name == \"quiet-big\" and .reason == \"FailedScheduling\") | (.count // 1)] | add // 0")" -le 2 ]'
check "annotations without decisionRecords.enabled keep no record" \
  bash -c 'kubectl get --raw "$1?namespace=default&name=quiet-big" 2>&1 | grep -q "no decision recorded"' _ "$api"

# ---------------------------------------------------------------- preemption in the record
# low-1 fills node-c; vip (higher priority) fits only there once low-1 is evicted
sel() { printf '"nodeSelector":{"kubernetes.io/hostname":"%s"},' "$1"; }
printf '%s\n' "apiVersion: scheduling.k8s.io/v1" "kind: PriorityClass" "metadata: {name: high}" "value: 1000" |
  kubectl apply -f - >/dev/null || fatal "PriorityClass high"
printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"low-1","namespace":"default"},"spec":{%s"schedulerName":"default-scheduler","containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"5"}}}]}}\n' "$(sel node-c)" |
  kubectl create -f - >/dev/null || fatal "create low-1"
sk_wait_for 30 bash -c '[ "$(kubectl get pod low-1 -o jsonpath={.spec.nodeName})" = node-c ]' || fatal "low-1 bound to node-c"
printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"vip","namespace":"default"},"spec":{%s"priorityClassName":"high","schedulerName":"default-scheduler","containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"4"}}}]}}\n' "$(sel node-c)" |
  kubectl create -f - >/dev/null || fatal "create vip"
preempted() { kubectl get --raw "$api?namespace=default&name=vip" 2>/dev/null |
  jq -e 'any(.items[]; .preemption.nominatedNode == "node-c" and .preemption.victims == ["default/low-1"] and .preemption.victimsTotal == 1)' >/dev/null; }
check "record: the preemption attempt names the nominated node and the victim" sk_wait_for 30 preempted
check "record: the preemption attempt lists its candidates (node-c, one victim, no PDB violated)" \
  bash -c 'kubectl get --raw "$1?namespace=default&name=vip" | jq -e "any(.items[]; .preemption.candidatesTotal == 1 and .preemption.candidates == [{\"node\":\"node-c\",\"victims\":1,\"pdbViolations\":0,\"droppedByExtenders\":false}])" >/dev/null' _ "$api"
check "record: the preemption attempt timed PostFilter" bash -c 'kubectl get --raw "$1?namespace=default&name=vip" | jq -e "any(.items[]; any(.timings[]; .point == \"PostFilter\"))" >/dev/null' _ "$api"
kubectl schedkit explain vip --all >"$work/explain-vip.txt" 2>&1
check "explain vip shows the nominated node and the preempted pod" \
  bash -c 'grep -q "(nominated node node-c)" "$1" && grep -q "^  preempted default/low-1$" "$1"' _ "$work/explain-vip.txt"

# ---------------------------------------------------------------- the profile summary
sum_api=${api%/decisions}/summary
kubectl get --raw "$sum_api" >"$work/summary.json" || fatal "GET the summary"
check "summary: per profile, Scheduled and Unschedulable counts with the top reason" \
  jq -e '.kind == "DecisionSummary" and .profiles["default-scheduler"].scheduled >= 1 and .profiles["default-scheduler"].unschedulable >= 1
    and .profiles["default-scheduler"].topReasons[0].reason == "Insufficient cpu" and .profiles["quiet-scheduler"].scheduled >= 1
    and .profiles["default-scheduler"].windowSeconds == 600' "$work/summary.json"
lease_summary() { kubectl -n kube-system get lease kube-scheduler -o json 2>/dev/null | jq -e '.metadata.annotations["schedkit.io/decision-summary"] | fromjson | .["default-scheduler"].unschedulable >= 1' >/dev/null; }
check "summary: the leader publishes it on its Lease (schedkit.io/decision-summary) for the operator" sk_wait_for 30 lease_summary

# ---------------------------------------------------------------- 5. why-pending, simulate
kubectl schedkit why-pending --profile default-scheduler >"$work/why.txt" 2>&1 || fatal "kubectl schedkit why-pending"
check "why-pending lists big with its top reason" grep -qE '^default +big +default-scheduler +[0-9]+ .*Insufficient cpu' "$work/why.txt"
check "why-pending leaves out the bound pod" bash -c '! grep -q "web-1" "$1"' _ "$work/why.txt"
kubectl schedkit simulate --explain >"$work/live-sim.txt" 2>"$work/live-sim.err" || fatal "kubectl schedkit simulate --explain: $(cat "$work/live-sim.err")"
awk 'index($0, "Pod default/big ") == 1 { on = 1 } on { print } on && $0 == "" { exit }' "$work/live-sim.txt" >"$work/live-big.txt"
check "kubectl schedkit simulate (live snapshot, running config) explains big as the record does" \
  diff -u "$work/explain-big.txt" "$work/live-big.txt"
check "kubectl schedkit simulate does not schedule the pods bound already" bash -c '! grep -q "Pod default/web-1 " "$1"' _ "$work/live-sim.txt"
check "/configz stays guarded: the proxy's anonymous request gets 403 (only /debug/schedkit/* is opened)" \
  test "$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$port/configz")" = 403
check "kubectl schedkit with a wrong Service name says which" \
  bash -c 'kubectl schedkit explain web-1 --scheduler-service nosuch 2>&1 | grep -q "services \\\"nosuch\\\" not found"'
