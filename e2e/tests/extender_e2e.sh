#!/usr/bin/env bash
# End to end: HTTP extenders scoped to one profile (docs/extenders.md), with the C sample extender
# (bin/schedkit-sample-extender) and real kubectl against the local API server.
#   profile ext-sched: extender A (filter, prioritize, bind, preempt; full objects) and extender B
#                      (filter only, nodeCacheCapable, managedResources example.com/fpga)
#   profile plain:     no extender
# Checks: --validate names the extension; A rejects the node with its taint (read from the full
# Node it was sent), prefers ext-2 and binds through the API server; B only sees the pod whose
# container sets example.com/fpga in limits (the API server defaults the request from it); pods
# of the plain profile never reach either extender; preemption goes through A, which vetoes
# ext-1 and ext-3, so the victim is the pod on ext-2; /configz redacts tlsConfig.keyData;
# /metrics has the extender call durations per verb.
# Prints TAP-style ok / not ok lines. Env: SK_BIN (binaries), SK_ROOT (repo).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"

work=$(mktemp -d /tmp/sk-extender-e2e.XXXXXX)
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
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
fatal() { notok "$*"; for f in "$work"/*.log; do echo "--- $f"; tail -20 "$f"; done; exit 1; }

"$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$work/kubeconfig" --simulate-kubelet \
  --kubelet-delay-ms 50 >"$work/apiserver.log" 2>&1 &
pids+=($!)
export KUBECONFIG=$work/kubeconfig
sk_wait_for 20 test -s "$work/kubeconfig" || fatal "local API server wrote its kubeconfig"
sk_wait_for 20 kubectl get --raw /readyz >/dev/null 2>&1 || fatal "local API server ready"
api=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')

"$SK_BIN/schedkit-sample-extender" --port 0 --port-file "$work/a.port" --log "$work/a.calls" \
  --reject-taint sample.schedkit.io/reject --prefer-node ext-2 --veto-node ext-1 --veto-node ext-3 \
  --apiserver "$api" >"$work/extender-a.log" 2>&1 &
pids+=($!)
"$SK_BIN/schedkit-sample-extender" --port 0 --port-file "$work/b.port" --log "$work/b.calls" \
  >"$work/extender-b.log" 2>&1 &
pids+=($!)
sk_wait_for 10 test -s "$work/a.port" || fatal "extender A listening"
sk_wait_for 10 test -s "$work/b.port" || fatal "extender B listening"
pa=$(cat "$work/a.port"); pb=$(cat "$work/b.port")
touch "$work/a.calls" "$work/b.calls"

cat >"$work/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 1
profiles:
- schedulerName: plain
- schedulerName: ext-sched
  extenders:
  - urlPrefix: http://127.0.0.1:$pa/sched
    filterVerb: filter
    prioritizeVerb: prioritize
    weight: 5
    bindVerb: bind
    preemptVerb: preempt
    httpTimeout: 5s
  - urlPrefix: http://127.0.0.1:$pb
    filterVerb: filter
    nodeCacheCapable: true
    tlsConfig: {keyData: bm90LWEtcmVhbC1rZXktZTJl}   # unused over http; /configz must not show it
    managedResources:
    - {name: example.com/fpga, ignoredByScheduler: true}
YAML

"$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --validate >"$work/validate.out" 2>&1
check "--validate accepts the file and says profiles[1].extenders is a schedkit extension" \
  grep -q '^note: profiles\[1\].extenders (profile "ext-sched", 2 extenders): a schedkit extension' "$work/validate.out"

kubectl apply -f - >/dev/null <<'YAML' || fatal "create nodes and priority classes"
apiVersion: v1
kind: Node
metadata: {name: ext-1, labels: {kubernetes.io/hostname: ext-1}}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "10"}, capacity: {cpu: "1", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: ext-2, labels: {kubernetes.io/hostname: ext-2}}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "10"}, capacity: {cpu: "1", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: ext-3, labels: {kubernetes.io/hostname: ext-3}}
spec:
  taints: [{key: sample.schedkit.io/reject, value: "yes", effect: PreferNoSchedule}]
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "10"}, capacity: {cpu: "1", memory: 4Gi, pods: "10"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
YAML

sport=$(sk_free_port)
# HTTPS with a self-signed certificate (curl -k); this suite's plain-HTTP API server has no
# tokens to review, so /configz and /metrics are opened the upstream way, by the always-allowed
# paths (docs/scheduler.md; scheduler_serving.sh covers the authenticated endpoints)
"$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --kubeconfig "$KUBECONFIG" --secure-port "$sport" \
  --bind-address 127.0.0.1 --v=2 --authorization-always-allow-paths=/healthz,/readyz,/livez,/configz,/metrics \
  >"$work/scheduler.log" 2>&1 &
pids+=($!)
sk_wait_for 30 curl -sfk "https://127.0.0.1:$sport/readyz" -o /dev/null || fatal "scheduler ready"
curl -sfk "https://127.0.0.1:$sport/configz" >"$work/configz.json"
check "/configz redacts the extender's tlsConfig.keyData" \
  bash -c 'grep -q "REDACTED" "$1" && ! grep -q "bm90LWEtcmVhbC1rZXktZTJl" "$1"' _ "$work/configz.json"

pod() { # name scheduler cpu [extra container fields] [priorityClass] [nodeName]
  local pc="" nn=""
  [ -n "${5:-}" ] && pc="\"priorityClassName\":\"$5\","
  [ -n "${6:-}" ] && nn="\"nodeName\":\"$6\","
  echo "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\",\"annotations\":{\"e2e\":\"extender\"}},\"spec\":{\"schedulerName\":\"$2\",$pc$nn\"containers\":[{\"name\":\"c\",\"image\":\"pause\",\"resources\":{\"requests\":{\"cpu\":\"$3\"}${4:-}}}]}}"
}
node_of() { kubectl get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
bound_to() { [ "$(node_of "$1")" = "$2" ]; }

# --- filter, prioritize, bind through the profile's extender
pod p1 ext-sched 100m | kubectl create -f - >/dev/null || fatal "create p1"
sk_wait_for 30 bound_to p1 ext-2
check "an ext-sched pod lands on the node extender A prefers (ext-2)" bound_to p1 ext-2
check "extender A was sent the full objects: it rejected ext-3 by its taint" \
  grep -q '^filter pod=default/p1 containers=1 nodes=ext-1,ext-2,ext-3 mode=objects$' "$work/a.calls"
check "extender A prioritized the remaining nodes" grep -q '^prioritize pod=default/p1 containers=1 nodes=ext-1,ext-2$' "$work/a.calls"
check "extender A bound the pod through the API server" grep -q '^bind pod=default/p1 node=ext-2$' "$work/a.calls"
check "a Scheduled event names the node" bash -c 'kubectl get events -o json | jq -e "[.items[] | select(.reason == \"Scheduled\" and .involvedObject.name == \"p1\")] | length >= 1" >/dev/null'
check "extender B (managedResources) was not asked about p1" bash -c '! grep -q "default/p1 " "$1"' _ "$work/b.calls"

# --- interest by limits: the API server defaults the request from the limit
pod f1 ext-sched 100m ',"limits":{"cpu":"100m","example.com/fpga":"1"}' | kubectl create -f - >/dev/null || fatal "create f1"
sk_wait_for 30 bash -c '[ -n "$(kubectl get pod f1 -o jsonpath={.spec.nodeName})" ]'
check "the API server defaulted requests from limits" \
  bash -c '[ "$(kubectl get pod f1 -o jsonpath="{.spec.containers[0].resources.requests.example\.com/fpga}")" = 1 ]'
check "extender B saw the pod whose limits name its resource (names mode)" \
  grep -q '^filter pod=default/f1 containers=1 nodes=ext-1,ext-2 mode=names$' "$work/b.calls"
check "the fpga pod is bound (NodeResourcesFit ignores the resource: ignoredByScheduler)" bound_to f1 ext-2

# --- the other profile's pods never reach the extenders
pod q1 plain 100m | kubectl create -f - >/dev/null || fatal "create q1"
sk_wait_for 30 bash -c '[ -n "$(kubectl get pod q1 -o jsonpath={.spec.nodeName})" ]'
check "a plain-profile pod is scheduled" bash -c '[ -n "$(kubectl get pod q1 -o jsonpath={.spec.nodeName})" ]'
check "no plain-profile pod was sent to extender A or B" bash -c '! grep -q "default/q1" "$1" "$2"' _ "$work/a.calls" "$work/b.calls"

# --- preemption through extender A: ext-1 and ext-3 vetoed, so the victim is on ext-2
kubectl delete pod p1 f1 q1 --wait=false >/dev/null
sk_wait_for 30 bash -c '[ -z "$(kubectl get pods -o name 2>/dev/null)" ]' || fatal "pods gone"
for i in 1 2 3; do pod "low$i" plain 900m "" "" "ext-$i" | kubectl create -f - >/dev/null || fatal "create low$i"; done
sk_wait_for 20 bash -c '[ "$(kubectl get pods -o jsonpath="{.items[*].status.phase}")" = "Running Running Running" ]'
pod high ext-sched 900m "" high | kubectl create -f - >/dev/null || fatal "create high"
sk_wait_for 40 bound_to high ext-2
check "the high-priority pod is bound to ext-2, the only node extender A kept" bound_to high ext-2
check "the victim on ext-2 was evicted" bash -c '! kubectl get pod low2 >/dev/null 2>&1'
check "the pods on the vetoed nodes stay" bash -c 'kubectl get pod low1 >/dev/null 2>&1 && kubectl get pod low3 >/dev/null 2>&1'
check "extender A was sent every candidate with its victim as a full pod" \
  bash -c 'grep "^preempt pod=default/high " "$1" | grep -q "mode=pods" && grep "^preempt pod=default/high " "$1" | grep "ext-1:" | grep "ext-2:" | grep -q "ext-3:"' _ "$work/a.calls"
curl -sfk "https://127.0.0.1:$sport/metrics" >"$work/metrics.txt"
check "/metrics has the extenders' call durations per verb" \
  bash -c 'for v in filter prioritize bind preempt; do grep -q "^scheduler_extender_request_duration_seconds_count{extender=\"http://127.0.0.1:$2/sched\",verb=\"$v\"} [1-9]" "$1" || exit 1; done' \
  _ "$work/metrics.txt" "$pa"
check "... and no extender errors" bash -c '! grep -q "^scheduler_extender_errors_total" "$1"' _ "$work/metrics.txt"
check "no sanitizer report in the scheduler log" bash -c '! grep -q "ERROR: AddressSanitizer\|runtime error:" "$1"' _ "$work/scheduler.log"
