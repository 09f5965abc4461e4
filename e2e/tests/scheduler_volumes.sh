#!/usr/bin/env bash
# End to end: the volume plugins in bin/schedkit-scheduler against the local API server and its PV
# controller (e2e/apiserver/pvcontroller.c), with real kubectl. Two zones, a node each, plus a
# third node in zone b with a CSI attach limit of 1:
# - a claim bound (by the PV controller, Immediate class) to a PV pinned to zone b: the pod lands
#   in zone b (VolumeBinding's bound-PV node affinity, VolumeZone's labels);
# - WaitForFirstConsumer static: a PV available only on node-a; the scheduler binds the claim to
#   it (PreBind patches the PV's claimRef) and the pod lands on node-a; the claim ends Bound;
# - WaitForFirstConsumer provisioned: the scheduler sets volume.kubernetes.io/selected-node, the
#   controller provisions, the claim ends Bound to a PV of the chosen node's zone;
# - a ReadWriteOncePod claim in use: a second pod naming it is Unschedulable with upstream's
#   reason and is bound once the first pod is deleted;
# - a CSI attach limit of 1 on node-c: a second volume of that driver does not go there;
# - an Immediate claim without a PV: the pod waits (UU) and is requeued when the claim is bound;
# - storage capacity (a CSIDriver with storageCapacity: true, CSIStorageCapacity per zone): the
#   nodes of the zone without room are avoided; a claim too big for every zone is Unschedulable
#   with "node(s) did not have enough free storage" and is bound once a capacity grows;
# - a VolumeAttachment on node-a fills its attach limit of 1: the pod goes to node-b instead, and
#   one pinned to node-a is Unschedulable with "node(s) exceed max volume count".
# Prints TAP-style ok / not ok lines. Env: SK_BIN (binaries), SK_ROOT (repo).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"

sk_e2e_begin sk-volumes-e2e
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
  - name: VolumeBinding
    args: {bindTimeoutSeconds: 30}
YAML

node() { # name zone
  cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  labels: {kubernetes.io/hostname: $1, topology.kubernetes.io/zone: $2, topology.kubernetes.io/region: r1}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "20"}
  capacity: {cpu: "4", memory: 8Gi, pods: "20"}
---
EOF
}
{ node node-a zone-a; node node-b zone-b; node node-c zone-b; } | kubectl apply -f - >/dev/null || fatal "create nodes"

kubectl apply -f - >/dev/null <<'YAML' || fatal "create storage classes, PVs and claims"
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: manual}
provisioner: kubernetes.io/no-provisioner
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-wffc}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: csi-wffc}
provisioner: disk.csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-zone-b
  labels: {topology.kubernetes.io/zone: zone-b, topology.kubernetes.io/region: r1}
spec:
  storageClassName: manual
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /tmp/b}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-b]}]
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-local-a}
spec:
  storageClassName: local-wffc
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  local: {path: /mnt/disk}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-a]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: zonal, namespace: default}
spec:
  storageClassName: manual
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: static, namespace: default}
spec:
  storageClassName: local-wffc
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 2Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: provisioned, namespace: default}
spec:
  storageClassName: csi-wffc
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 3Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: solo, namespace: default}
spec:
  storageClassName: csi-wffc
  accessModes: [ReadWriteOncePod]
  resources: {requests: {storage: 1Gi}}
YAML

pod() { # name claim [nodeSelector-json]
  echo "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\"},\"spec\":{${3:-}\"containers\":[{\"name\":\"c\",\"image\":\"pause\"}],\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"$2\"}}]}}"
}
node_of() { kubectl get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
phase_of() { kubectl get pvc "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
claim() { # name class size: a ReadWriteOnce claim in default, as a YAML document
  printf -- '---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: %s, namespace: default}\n' "$1"
  printf 'spec: {storageClassName: %s, accessModes: [ReadWriteOnce], resources: {requests: {storage: %s}}}\n' "$2" "$3"
}

# The Immediate claim is bound by the PV controller before any pod exists.
sk_wait_for 20 bash -c '[ "$(kubectl get pvc zonal -o jsonpath={.spec.volumeName})" = pv-zone-b ]'
check "the Immediate claim is bound to the zone-b PV by the PV controller" bash -c '[ "$(kubectl get pvc zonal -o jsonpath={.status.phase})" = Bound ]'
check "a PV without a claim becomes Available" bash -c '[ "$(kubectl get pv pv-local-a -o jsonpath={.status.phase})" = Available ]'

"$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --kubeconfig "$KUBECONFIG" --secure-port 0 --v=2 \
  >"$work/scheduler.log" 2>&1 &
pids+=($!)

# 1. Bound PV with zone affinity.
pod zonal-pod zonal | kubectl create -f - >/dev/null || fatal "create zonal-pod"
sk_wait_for 30 bash -c '[ -n "$(kubectl get pod zonal-pod -o jsonpath={.spec.nodeName})" ]'
check "a pod whose bound PV is pinned to zone-b lands in zone-b ($(node_of zonal-pod))" \
  bash -c 'case "$(kubectl get pod zonal-pod -o jsonpath={.spec.nodeName})" in node-b|node-c) true;; *) false;; esac'

# 2. WaitForFirstConsumer, static.
pod static-pod static | kubectl create -f - >/dev/null || fatal "create static-pod"
sk_wait_for 30 bash -c '[ "$(kubectl get pod static-pod -o jsonpath={.spec.nodeName})" = node-a ]'
check "a WaitForFirstConsumer pod goes to the node of the only matching local PV" bash -c '[ "$(kubectl get pod static-pod -o jsonpath={.spec.nodeName})" = node-a ]'
check "its claim ends Bound to that PV" bash -c '[ "$(kubectl get pvc static -o jsonpath={.spec.volumeName}/{.status.phase})" = pv-local-a/Bound ]'
check "the PV's claimRef was set by the scheduler with bound-by-controller" \
  bash -c '[ "$(kubectl get pv pv-local-a -o jsonpath="{.spec.claimRef.name} {.metadata.annotations.pv\.kubernetes\.io/bound-by-controller}")" = "static yes" ]'

# 3. WaitForFirstConsumer, provisioned; pinned to zone-a by a node selector.
pod prov-pod provisioned '"nodeSelector":{"topology.kubernetes.io/zone":"zone-a"},' | kubectl create -f - >/dev/null || fatal "create prov-pod"
sk_wait_for 30 bash -c '[ "$(kubectl get pod prov-pod -o jsonpath={.spec.nodeName})" = node-a ]'
check "the provisioning pod is bound to node-a" bash -c '[ "$(kubectl get pod prov-pod -o jsonpath={.spec.nodeName})" = node-a ]'
check "the scheduler set volume.kubernetes.io/selected-node=node-a" \
  bash -c '[ "$(kubectl get pvc provisioned -o jsonpath="{.metadata.annotations.volume\.kubernetes\.io/selected-node}")" = node-a ]'
check "the provisioned claim ends Bound" bash -c '[ "$(kubectl get pvc provisioned -o jsonpath={.status.phase})" = Bound ]'
check "its PV is pinned to zone-a" bash -c 'pv=$(kubectl get pvc provisioned -o jsonpath={.spec.volumeName}); [ "$(kubectl get pv "$pv" -o jsonpath="{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}")" = zone-a ]'

# 4. ReadWriteOncePod.
pod solo-1 solo '"nodeSelector":{"kubernetes.io/hostname":"node-b"},' | kubectl create -f - >/dev/null || fatal "create solo-1"
sk_wait_for 30 bash -c '[ "$(kubectl get pod solo-1 -o jsonpath={.spec.nodeName})" = node-b ]' || fatal "solo-1 bound"
ok "the first pod of a ReadWriteOncePod claim is bound"
pod solo-2 solo | kubectl create -f - >/dev/null || fatal "create solo-2"
rwop="node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
sk_wait_for 30 bash -c 'kubectl get pod solo-2 -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}" | grep -q "$1"' _ "$rwop"
check "a second pod of the claim is Unschedulable: '$rwop'" \
  bash -c 'kubectl get pod solo-2 -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}" | grep -q "0/3 nodes are available: 3 $1."' _ "$rwop"
kubectl delete pod solo-1 --wait=false >/dev/null
sk_wait_for 40 bash -c '[ -n "$(kubectl get pod solo-2 -o jsonpath={.spec.nodeName})" ]'
check "it is bound once the first pod is gone" bash -c '[ -n "$(kubectl get pod solo-2 -o jsonpath={.spec.nodeName})" ]'

# 5. CSI attach limit: node-c takes one volume of the driver.
kubectl apply -f - >/dev/null <<'YAML' || fatal "create the CSINode and claims"
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-c}
spec:
  drivers: [{name: disk.csi.example.com, nodeID: node-c, allocatable: {count: 1}}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: lim-1, namespace: default}
spec:
  storageClassName: csi-wffc
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: lim-2, namespace: default}
spec:
  storageClassName: csi-wffc
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
YAML
pod lim-1 lim-1 '"nodeSelector":{"kubernetes.io/hostname":"node-c"},' | kubectl create -f - >/dev/null || fatal "create lim-1"
sk_wait_for 30 bash -c '[ "$(kubectl get pod lim-1 -o jsonpath={.spec.nodeName})" = node-c ]'
check "the first CSI volume pod is bound to node-c" bash -c '[ "$(kubectl get pod lim-1 -o jsonpath={.spec.nodeName})" = node-c ]'
sk_wait_for 30 bash -c '[ "$(kubectl get pvc lim-1 -o jsonpath={.status.phase})" = Bound ]'
pod lim-2 lim-2 '"nodeSelector":{"kubernetes.io/hostname":"node-c"},' | kubectl create -f - >/dev/null || fatal "create lim-2"
limit="node(s) exceed max volume count"
sk_wait_for 30 bash -c 'kubectl get pod lim-2 -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}" | grep -q "$1"' _ "$limit"
check "a second CSI volume does not fit node-c's limit of 1: '$limit'" \
  bash -c 'kubectl get pod lim-2 -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}" | grep -q "$1"' _ "$limit"
check "lim-2 is not bound" bash -c '[ -z "$(kubectl get pod lim-2 -o jsonpath={.spec.nodeName})" ]'

# 6. An Immediate claim without a PV yet: UU at PreFilter; the PV's arrival (bound by the PV
# controller, a PersistentVolumeClaimUpdate for the scheduler's informer) requeues the pod.
kubectl apply -f - >/dev/null <<'YAML' || fatal "create the late claim"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: late, namespace: default}
spec:
  storageClassName: manual
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
YAML
pod late-pod late | kubectl create -f - >/dev/null || fatal "create late-pod"
unbound="pod has unbound immediate PersistentVolumeClaims"
sk_wait_for 30 bash -c 'kubectl get pod late-pod -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}" | grep -q "$1"' _ "$unbound"
want="0/3 nodes are available: $unbound. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
check "a pod whose Immediate claim has no PV yet: '$want'" \
  bash -c '[ "$(kubectl get pod late-pod -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}")" = "$1" ]' _ "$want"
kubectl apply -f - >/dev/null <<'YAML' || fatal "create the late PV"
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-late}
spec:
  storageClassName: manual
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /tmp/late}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-b]}]
YAML
sk_wait_for 30 bash -c '[ "$(kubectl get pod late-pod -o jsonpath={.spec.nodeName})" = node-b ]'
check "once the controller binds the claim to the new PV, the pod is requeued and lands on its node" \
  bash -c '[ "$(kubectl get pod late-pod -o jsonpath={.spec.nodeName})" = node-b ]'

# 7. Storage capacity tracking: zone-a has 10Gi for the class, zone-b 1Gi.
kubectl apply -f - >/dev/null <<'YAML' || fatal "create the capacity objects"
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: cap.csi.example.com}
spec: {attachRequired: false, storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: cap-wffc}
provisioner: cap.csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-zone-a, namespace: default}
storageClassName: cap-wffc
capacity: 10Gi
nodeTopology: {matchLabels: {topology.kubernetes.io/zone: zone-a}}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-zone-b, namespace: default}
storageClassName: cap-wffc
capacity: 1Gi
nodeTopology: {matchLabels: {topology.kubernetes.io/zone: zone-b}}
YAML
{ claim cap-5g cap-wffc 5Gi; claim cap-20g cap-wffc 20Gi; } | kubectl apply -f - >/dev/null || fatal "create the capacity claims"
check "kubectl lists the CSIStorageCapacities" bash -c '[ "$(kubectl get csistoragecapacities -o name | wc -l)" = 2 ]'
pod cap-pod cap-5g | kubectl create -f - >/dev/null || fatal "create cap-pod"
sk_wait_for 30 bash -c '[ -n "$(kubectl get pod cap-pod -o jsonpath={.spec.nodeName})" ]'
check "a 5Gi claim goes to the zone with room (node-a), not zone-b's 1Gi ($(node_of cap-pod))" \
  bash -c '[ "$(kubectl get pod cap-pod -o jsonpath={.spec.nodeName})" = node-a ]'
sk_wait_for 30 bash -c '[ "$(kubectl get pvc cap-5g -o jsonpath={.status.phase})" = Bound ]'
pod cap-big cap-20g | kubectl create -f - >/dev/null || fatal "create cap-big"
space="node(s) did not have enough free storage"
sk_wait_for 30 bash -c 'kubectl get pod cap-big -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}" | grep -q "$1"' _ "$space"
check "a 20Gi claim fits no zone: '0/3 nodes are available: 3 $space.'" \
  bash -c 'kubectl get pod cap-big -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}" | grep -q "^0/3 nodes are available: 3 $1\."' _ "$space"
kubectl patch csistoragecapacity cap-zone-b --type=merge -p '{"capacity":"50Gi"}' >/dev/null || fatal "grow cap-zone-b"
sk_wait_for 30 bash -c '[ -n "$(kubectl get pod cap-big -o jsonpath={.spec.nodeName})" ]'
check "once zone-b's capacity grows (CSIStorageCapacityUpdate), the pod lands in zone-b ($(node_of cap-big))" \
  bash -c 'case "$(kubectl get pod cap-big -o jsonpath={.spec.nodeName})" in node-b|node-c) true;; *) false;; esac'

# 8. A VolumeAttachment counts toward the attach limit: node-a and node-b take one volume of
# va.csi.example.com each, and node-a already has one attached.
kubectl apply -f - >/dev/null <<'YAML' || fatal "create the attachment objects"
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: va-wffc}
provisioner: va.csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-a}
spec:
  drivers: [{name: va.csi.example.com, nodeID: node-a, allocatable: {count: 1}}]
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-b}
spec:
  drivers: [{name: va.csi.example.com, nodeID: node-b, allocatable: {count: 1}}]
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-attached}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  csi: {driver: va.csi.example.com, volumeHandle: vol-attached}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-node-a}
spec:
  attacher: va.csi.example.com
  nodeName: node-a
  source: {persistentVolumeName: pv-attached}
YAML
{ claim va-1 va-wffc 1Gi; claim va-2 va-wffc 1Gi; } | kubectl apply -f - >/dev/null || fatal "create the attachment claims"
check "kubectl lists the VolumeAttachment" bash -c '[ "$(kubectl get volumeattachments -o name)" = volumeattachment.storage.k8s.io/va-node-a ]'
ab='"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["node-a","node-b"]}]}]}}},'
pod va-pod va-1 "$ab" | kubectl create -f - >/dev/null || fatal "create va-pod"
sk_wait_for 30 bash -c '[ -n "$(kubectl get pod va-pod -o jsonpath={.spec.nodeName})" ]'
check "node-a's attachment fills its limit: the pod goes to node-b ($(node_of va-pod))" \
  bash -c '[ "$(kubectl get pod va-pod -o jsonpath={.spec.nodeName})" = node-b ]'
pod va-pinned va-2 '"nodeSelector":{"kubernetes.io/hostname":"node-a"},' | kubectl create -f - >/dev/null || fatal "create va-pinned"
sk_wait_for 30 bash -c 'kubectl get pod va-pinned -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}" | grep -q "$1"' _ "$limit"
check "a pod pinned to node-a is Unschedulable: '$limit'" \
  bash -c 'kubectl get pod va-pinned -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].message}" | grep -q "1 $1"' _ "$limit"

check "every claim of a bound pod ends Bound" bash -c '
  for c in zonal static provisioned solo lim-1 late cap-5g cap-20g va-1; do [ "$(kubectl get pvc $c -o jsonpath={.status.phase})" = Bound ] || exit 1; done'
check "no sanitizer report in the scheduler and API server logs" \
  bash -c '! grep -q "ERROR: AddressSanitizer\|runtime error:" "$1" "$2"' _ "$work/scheduler.log" "$work/apiserver.log"
