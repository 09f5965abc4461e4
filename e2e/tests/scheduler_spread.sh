#!/usr/bin/env bash
# End to end: PodTopologySpread's default constraints with upstream's selectors, and
# InterPodAffinity's namespaceSelector, in bin/schedkit-scheduler against the local API server with
# real kubectl. A Service selects pods app=web; an unowned web pod bound to node-a counts for the
# next web pod (hard default constraint on the hostname, maxSkew 1), so that one lands on node-b.
# Prints TAP-style ok / not ok lines. Env: SK_BIN (binaries), SK_ROOT (repo).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"

sk_e2e_begin sk-spread-e2e
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
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}
YAML

kubectl apply -f - >/dev/null <<'YAML' || fatal "create nodes, namespaces and the Service"
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "20"}, capacity: {cpu: "4", memory: 8Gi, pods: "20"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "20"}, capacity: {cpu: "4", memory: 8Gi, pods: "20"}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {team: a}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b, labels: {team: b}}
YAML

"$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --kubeconfig "$KUBECONFIG" --secure-port 0 --v=2 \
  >"$work/scheduler.log" 2>&1 &
pids+=($!)

node_of() { kubectl get pod "$1" -n "${2:-default}" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
bound_to() { [ "$(node_of "$1" "${3:-default}")" = "$2" ]; }

# an unowned web pod, already on node-a (its nodeName set by hand, as a kubelet-static pod would be),
# and a busy pod on node-b, so that without the spreading node-a would score higher
kubectl apply -f - >/dev/null <<'YAML' || fatal "create the existing pods"
apiVersion: v1
kind: Pod
metadata: {name: web-old, namespace: default, labels: {app: web}}
spec: {nodeName: node-a, containers: [{name: c, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: busy, namespace: default}
spec: {nodeName: node-b, containers: [{name: c, image: pause, resources: {requests: {cpu: "3", memory: 6Gi}}}]}
YAML
kubectl apply -f - >/dev/null <<'YAML' || fatal "create the new web pod"
apiVersion: v1
kind: Pod
metadata: {name: web-new, namespace: default, labels: {app: web}}
spec: {containers: [{name: c, image: pause}]}
YAML
if sk_wait_for 20 bound_to web-new node-b; then
  ok "an unowned pod matching the Service's selector is counted: the new web pod goes to node-b"
else
  notok "new web pod on node-b (got '$(node_of web-new)')"
fi
# control: a pod no Service selects has no default constraints and takes the emptier node-a
kubectl apply -f - >/dev/null <<'YAML' || fatal "create the api pod"
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: default, labels: {app: api}}
spec: {containers: [{name: c, image: pause}]}
YAML
if sk_wait_for 20 bound_to api node-a; then
  ok "a pod no Service selects is not spread: it takes the emptier node-a"
else
  notok "api pod on node-a (got '$(node_of api)')"
fi

# InterPodAffinity namespaceSelector: required anti-affinity to app=db pods in team=a namespaces
kubectl apply -f - >/dev/null <<'YAML' || fatal "create the db pod in team-a"
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: team-a, labels: {app: db}}
spec: {nodeName: node-a, containers: [{name: c, image: pause}]}
YAML
client() { # name team
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {app: client}}
spec:
  containers: [{name: c, image: pause}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector: {matchLabels: {app: db}}
        namespaceSelector: {matchLabels: {team: $2}}
YAML
}
client client-a a | kubectl apply -f - >/dev/null || fatal "create client-a"
if sk_wait_for 20 bound_to client-a node-b; then
  ok "namespaceSelector team=a selects team-a's db pod: client-a avoids node-a"
else
  notok "client-a on node-b (got '$(node_of client-a)')"
fi
client client-b b | kubectl apply -f - >/dev/null || fatal "create client-b"
if sk_wait_for 20 bound_to client-b node-a; then
  ok "namespaceSelector team=b selects no db pod: client-b takes the emptier node-a"
else
  notok "client-b on node-a (got '$(node_of client-b)')"
fi
