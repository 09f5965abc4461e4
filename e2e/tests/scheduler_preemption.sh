#!/usr/bin/env bash
# End to end: DefaultPreemption in bin/schedkit-scheduler against the local API server.
# One 1-CPU node holds a low-priority pod; a high-priority pod that only fits if it goes gets it
# evicted (DisruptionTarget condition, then delete), is nominated, and is bound to that node.
# A preemptionPolicy: Never pod of the same priority preempts nothing and stays Unschedulable.
# Then three victims on a second node for one preemptor: all go, the preemptor binds there.
# SchedulerAsyncPreemption is on (v1.34's default): the victims are evicted off the scheduling
# path (the log says so); scheduler_preemption_sync.sh runs the same with
# SK_PREEMPT_FEATURE_GATES=SchedulerAsyncPreemption=false.
# Prints TAP-style ok / not ok lines. Env: SK_BIN (binaries), SK_ROOT (repo),
# SK_PREEMPT_FEATURE_GATES (a --feature-gates value, optional).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"

sk_e2e_begin sk-preempt-e2e
sk_start_apiserver

cat >"$work/config.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 1
profiles:
- schedulerName: default-scheduler
YAML

kubectl apply -f - >/dev/null <<'YAML' || fatal "create node and priority classes"
apiVersion: v1
kind: Node
metadata:
  name: only-node
  labels: {kubernetes.io/hostname: only-node}
status:
  allocatable: {cpu: "1", memory: 4Gi, pods: "10"}
  capacity: {cpu: "1", memory: 4Gi, pods: "10"}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high-never}
value: 1000
preemptionPolicy: Never
YAML

gates=${SK_PREEMPT_FEATURE_GATES:-}
async=true
case "$gates" in *SchedulerAsyncPreemption=false*) async=false ;; esac
"$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --kubeconfig "$KUBECONFIG" --secure-port 0 --v=2 \
  ${gates:+--feature-gates "$gates"} >"$work/scheduler.log" 2>&1 &
pids+=($!)

pod() { # name priorityClass(or "") cpu
  local pc=""
  [ -n "$2" ] && pc="\"priorityClassName\":\"$2\","
  echo "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\"},\"spec\":{$pc\"containers\":[{\"name\":\"c\",\"image\":\"pause\",\"resources\":{\"requests\":{\"cpu\":\"$3\"}}}]}}"
}
node_of() { kubectl get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }

pod low "" 700m | kubectl create -f - >/dev/null || fatal "create low"
sk_wait_for 20 bash -c '[ "$(kubectl get pod low -o jsonpath={.spec.nodeName})" = only-node ]' || fatal "low-priority pod bound"
ok "low-priority pod bound to only-node"

pod never high-never 700m | kubectl create -f - >/dev/null || fatal "create never"
sk_wait_for 20 bash -c 'kubectl get pod never -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}" | grep -q "not eligible due to preemptionPolicy=Never"'
check "a preemptionPolicy=Never pod reports 'not eligible due to preemptionPolicy=Never.'" \
  bash -c 'kubectl get pod never -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}" | grep -q "preemption: not eligible due to preemptionPolicy=Never."'
check "the low-priority pod is still there after the Never pod's attempt" bash -c '[ "$(kubectl get pod low -o jsonpath={.spec.nodeName})" = only-node ]'
kubectl delete pod never --wait=false >/dev/null

pod high high 700m | kubectl create -f - >/dev/null || fatal "create high"
sk_wait_for 30 bash -c '! kubectl get pod low >/dev/null 2>&1'
check "the low-priority victim was deleted" bash -c '! kubectl get pod low >/dev/null 2>&1'
sk_wait_for 30 bash -c '[ "$(kubectl get pod high -o jsonpath={.spec.nodeName})" = only-node ]'
check "the high-priority pod is bound to the node it preempted on" bash -c '[ "$(kubectl get pod high -o jsonpath={.spec.nodeName})" = only-node ]'
check "a Preempted event names the victim" bash -c 'kubectl get events -A -o json | jq -e "[.items[] | select(.reason == \"Preempted\" and .involvedObject.name == \"low\")] | length >= 1" >/dev/null'

# Three victims for one preemptor on a second node (the victims bound there directly).
kubectl apply -f - >/dev/null <<'YAML' || fatal "create multi-node"
apiVersion: v1
kind: Node
metadata:
  name: multi-node
  labels: {kubernetes.io/hostname: multi-node}
status:
  allocatable: {cpu: "1", memory: 4Gi, pods: "10"}
  capacity: {cpu: "1", memory: 4Gi, pods: "10"}
YAML
for i in 1 2 3; do
  echo "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"low$i\",\"namespace\":\"default\"},\"spec\":{\"nodeName\":\"multi-node\",\"containers\":[{\"name\":\"c\",\"image\":\"pause\",\"resources\":{\"requests\":{\"cpu\":\"300m\"}}}]}}" |
    kubectl create -f - >/dev/null || fatal "create low$i"
done
echo '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"high2","namespace":"default"},"spec":{"priorityClassName":"high","nodeSelector":{"kubernetes.io/hostname":"multi-node"},"containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"900m"}}}]}}' |
  kubectl create -f - >/dev/null || fatal "create high2"
sk_wait_for 30 bash -c '[ "$(kubectl get pod high2 -o jsonpath={.spec.nodeName})" = multi-node ]'
check "the preemptor of three victims is bound to their node" bash -c '[ "$(kubectl get pod high2 -o jsonpath={.spec.nodeName})" = multi-node ]'
check "its three victims were deleted" bash -c '! kubectl get pod low1 low2 low3 2>/dev/null | grep -q low'
if [ "$async" = true ]; then
  check "the victims were evicted asynchronously (SchedulerAsyncPreemption on)" \
    bash -c 'grep -q "Start the preemption asynchronously.*numVictimsToDelete=3" "$1" && grep -q "Async Preemption finished completely.*result=success" "$1"' _ "$work/scheduler.log"
else
  check "the victims were evicted in the scheduling cycle (SchedulerAsyncPreemption off)" \
    bash -c '! grep -q "preemption asynchronously" "$1" && grep -q "Preemptor Pod preempted victim Pod" "$1"' _ "$work/scheduler.log"
fi
check "no sanitizer report in the scheduler log" bash -c '! grep -q "ERROR: AddressSanitizer\|runtime error:" "$1"' _ "$work/scheduler.log"
