#!/usr/bin/env bash
# End-to-end: the legacy scheduler Policy and the algorithm providers, with the real kubectl
# against bin/schedkit-apiserver. A SchedulerProfile with spec.legacyPolicy is Accepted with its
# translation in status.translation, reaches Applied=True with the running scheduler, and its pods
# land where the translated plugins put them (a labelsPresence predicate keeps them off the
# unlabelled node, MostRequestedPriority packs them onto the busy node) while a default profile's
# pod lands on the emptiest node; a Policy that does not translate is Accepted=False naming the
# predicate; provider ClusterAutoscalerProvider is translated; the scheduler's own
# --policy-config-file works for --validate, simulate and the daemon; `convert` writes a file
# --validate accepts; a changed Policy file alone reloads (a bad one is rejected, the good one
# stays); --policy-configmap is read through the API (a missing ConfigMap stops the start, a
# kubectl apply of a new policy.cfg reloads, a bad one is rejected). Prints TAP-style "ok"/"not ok" lines.
# Env: SK_BIN (binaries, default $SK_ROOT/bin), SK_ROOT (repo, default: this script's ../..).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
NS=schedkit-system
# shellcheck source=../lib/suite_lib.sh
. "$SK_ROOT/e2e/lib/suite_lib.sh"
# shellcheck source=../lib/configmap_volume.sh
. "$SK_ROOT/e2e/lib/configmap_volume.sh"
sk_suite_begin sk-legacy-e2e
export TMP NS
DAEMON_PID=
SK_SUITE_PIDS="DAEMON_PID SYNC_PID SCHED_PID OP_PID SERVER_PID"
sk_need_bins schedkit-apiserver schedkit-operator schedkit-scheduler
export KUBECONFIG=$TMP/kubeconfig

# ------------------------------------------------------------------ the Policy
# GeneralPredicates + taints + "the node has a zone label"; bin packing; NodePreferAvoidPods
# (not in v1: a note). Written as an old Policy file would be.
cat >"$TMP/policy.json" <<'EOF'
{
  "kind": "Policy",
  "apiVersion": "v1",
  "predicates": [
    {"name": "GeneralPredicates"},
    {"name": "PodToleratesNodeTaints"},
    {"name": "zone-present", "argument": {"labelsPresence": {"labels": ["zone"], "presence": true}}}
  ],
  "priorities": [
    {"name": "MostRequestedPriority", "weight": 5},
    {"name": "NodePreferAvoidPodsPriority", "weight": 10000}
  ],
  "hardPodAffinitySymmetricWeight": 10
}
EOF

# ------------------------------------------------------------------ the scheduler alone
expect "schedkit-scheduler --policy-config-file P --validate: valid, the note as a warning" \
	'^warning: policy file ".*policy.json": plugin NodePreferAvoidPods: not carried over' \
	"$SK_BIN/schedkit-scheduler" --policy-config-file "$TMP/policy.json" --validate
echo '{"predicates":[{"name":"PodFitsEverything"}]}' >"$TMP/bad-policy.json"
"$SK_BIN/schedkit-scheduler" --policy-config-file "$TMP/bad-policy.json" --validate >"$TMP/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q 'error: policy file ".*bad-policy.json": predicates\[0\].name: predicate type not found for "PodFitsEverything"' "$TMP/out"; then
	ok "--validate of a bad Policy exits 1 naming the predicate"
else
	notok "--validate of a bad Policy exits 1 naming the predicate (rc $rc)"; diag
fi
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: x\n' >"$TMP/with-profiles.yaml"
expect "--config with profiles plus a Policy is refused as upstream refused it" 'profiles and policy config both set' \
	"$SK_BIN/schedkit-scheduler" --config "$TMP/with-profiles.yaml" --policy-config-file "$TMP/policy.json" --validate

cat >"$TMP/cluster.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: zone-a, labels: {zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: zone-b, labels: {zone: b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: no-zone}
status: {allocatable: {cpu: "16", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: resident, namespace: default}
spec:
  nodeName: zone-b
  containers: [{name: c, image: pause, resources: {requests: {cpu: "2", memory: 1Gi}}}]
EOF
{
	cat "$TMP/cluster.yaml"
	printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: packed, namespace: default}\nspec:\n'
	printf '  containers: [{name: c, image: pause, resources: {requests: {cpu: 500m, memory: 256Mi}}}]\n'
} >"$TMP/simulate.yaml"
expect "simulate --policy-config-file: the pod lands on the busy zone-labelled node" \
	'"pod":"default/packed".*"result":"Scheduled","node":"zone-b"' \
	"$SK_BIN/schedkit-scheduler" simulate --policy-config-file "$TMP/policy.json" --cluster "$TMP/simulate.yaml"
expect "simulate without it (v1 defaults): the same pod lands on the emptiest node" \
	'"pod":"default/packed".*"result":"Scheduled","node":"no-zone"' \
	"$SK_BIN/schedkit-scheduler" simulate --cluster "$TMP/simulate.yaml"
check "convert --policy writes a v1 file" "$SK_BIN/schedkit-scheduler" convert --policy "$TMP/policy.json" --output "$TMP/converted.yaml"
check "... that schedkit-scheduler --validate accepts" "$SK_BIN/schedkit-scheduler" --config "$TMP/converted.yaml" --validate
expect "... and that names what it could not carry over" '^# note: policy: plugin NodePreferAvoidPods' cat "$TMP/converted.yaml"

# ------------------------------------------------------------------ API server and operator
"$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$KUBECONFIG" >"$TMP/apiserver.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
	[ -s "$KUBECONFIG" ] && break
	sleep 0.1
done
[ -s "$KUBECONFIG" ] || { echo "not ok - schedkit-apiserver started"; sed 's/^/#   /' "$TMP/apiserver.log"; exit 1; }
ok "schedkit-apiserver started"
check "kubectl apply -k manifests/" k apply -k "$SK_ROOT/manifests"
check "CRD becomes Established" k wait --for condition=established --timeout=20s crd/schedulerprofiles.schedkit.io
"$SK_BIN/schedkit-operator" --kubeconfig "$KUBECONFIG" --namespace $NS --health-probe-bind-address=127.0.0.1:0 \
	--v=4 >>"$TMP/operator.log" 2>&1 &
OP_PID=$!

cond() { k get sp "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}"; }
cond_is() { [ "$(cond "$1" "$2" "$3")" = "$4" ]; }

# the Policy as spec.legacyPolicy (kubectl takes the JSON inside YAML as it is)
{
	printf 'apiVersion: schedkit.io/v1alpha1\nkind: SchedulerProfile\nmetadata:\n  name: legacy\nspec:\n  legacyPolicy:\n'
	sed 's/^/    /' "$TMP/policy.json"
} >"$TMP/legacy-sp.yaml"
check "kubectl apply a SchedulerProfile with spec.legacyPolicy" k apply -f "$TMP/legacy-sp.yaml"
printf 'apiVersion: schedkit.io/v1alpha1\nkind: SchedulerProfile\nmetadata:\n  name: plain\nspec: {}\n' | k apply -f - >/dev/null
eventually "the legacyPolicy profile is Accepted=True" cond_is legacy Accepted status True
expect "... its message says it was translated" 'translated from legacyPolicy' cond legacy Accepted message
expect "status.translation lists the filters (the zone label became NodeAffinity)" \
	'^NodeUnschedulable NodeResourcesFit NodeName NodePorts NodeAffinity TaintToleration$' \
	k get sp legacy -o jsonpath='{.status.translation.plugins.filter[*]}'
expect "... the score plugins with their weights (MostRequestedPriority -> NodeResourcesFit:5)" '^NodeResourcesFit:5$' \
	k get sp legacy -o jsonpath='{.status.translation.plugins.score[*]}'
expect "... and what did not carry over" 'NodePreferAvoidPods' k get sp legacy -o jsonpath='{.status.translation.notes[*]}'
cm() { k -n $NS get configmap schedkit-scheduler-config -o go-template='{{index .data "config.yaml"}}'; }
eventually "the ConfigMap holds the translated profile" bash -c "$(declare -f k cm); cm | grep -q 'key: zone'"
cm >"$TMP/config.yaml"
check "the rendered configuration passes schedkit-scheduler --validate" "$SK_BIN/schedkit-scheduler" --config "$TMP/config.yaml" --validate

printf 'apiVersion: schedkit.io/v1alpha1\nkind: SchedulerProfile\nmetadata:\n  name: bad-legacy\nspec:\n  legacyPolicy:\n    predicates: [{name: PodFitsEverything}]\n' | k apply -f - >/dev/null
eventually "a Policy that does not translate: Accepted=False, reason Invalid" cond_is bad-legacy Accepted reason Invalid
expect "... naming the predicate" '^spec\.legacyPolicy\.predicates\[0\]\.name: predicate type not found for "PodFitsEverything"$' \
	cond bad-legacy Accepted message
check "kubectl apply -f manifests/samples/legacy-policy.yaml" k apply -f "$SK_ROOT/manifests/samples/legacy-policy.yaml"
eventually "... the sample legacyPolicy profile is Accepted" cond_is legacy-packing Accepted status True
expect "... InterPodAffinityPriority kept its weight and hardPodAffinitySymmetricWeight reached InterPodAffinityArgs" \
	'InterPodAffinity:2' k get sp legacy-packing -o jsonpath='{.status.translation.plugins.score[*]}'
eventually "... the ConfigMap holds hardPodAffinityWeight: 10" bash -c "$(declare -f k cm); cm | grep -q 'hardPodAffinityWeight: 10'"
printf 'apiVersion: schedkit.io/v1alpha1\nkind: SchedulerProfile\nmetadata:\n  name: ca\nspec:\n  provider: ClusterAutoscalerProvider\n' | k apply -f - >/dev/null
eventually "provider ClusterAutoscalerProvider is Accepted" cond_is ca Accepted status True
expect "... and translated (status.translation.source)" '^provider ClusterAutoscalerProvider$' \
	k get sp ca -o jsonpath='{.status.translation.source}'
eventually "... with MostAllocated in the ConfigMap" bash -c "$(declare -f k cm); cm | grep -q 'type: MostAllocated'"

# ------------------------------------------------------------------ the scheduler runs it
VOL=$TMP/volume
sk_cm_volume_loop "$VOL" $NS schedkit-scheduler-config config.yaml 0.5 &
SYNC_PID=$!
eventually "the ConfigMap volume holds config.yaml" test -s "$VOL/config.yaml"
"$SK_BIN/schedkit-scheduler" --config "$VOL/config.yaml" --kubeconfig "$KUBECONFIG" --leader-elect=true \
	--leader-elect-resource-namespace=$NS --leader-elect-resource-name=schedkit-scheduler --secure-port=0 \
	>"$TMP/scheduler.log" 2>&1 &
SCHED_PID=$!
eventually "the legacyPolicy profile reaches Applied=True" cond_is legacy Applied status True

node_of() { k get pod "$1" -o jsonpath='{.spec.nodeName}'; }
k apply -f "$TMP/cluster.yaml" >/dev/null
pod() { # name schedulerName
	printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default"},"spec":{"schedulerName":"%s","containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"500m","memory":"256Mi"}}}]}}\n' "$1" "$2"
}
pod legacy-pod legacy | k apply -f - >/dev/null
pod plain-pod plain | k apply -f - >/dev/null
eventually "the legacyPolicy pod is bound" bash -c "$(declare -f k node_of); [ -n \"\$(node_of legacy-pod)\" ]"
expect "... on zone-b: zone-labelled (labelsPresence) and the most requested (MostRequestedPriority)" '^zone-b$' node_of legacy-pod
eventually "the default profile's pod is bound" bash -c "$(declare -f k node_of); [ -n \"\$(node_of plain-pod)\" ]"
expect "... on no-zone, the emptiest node (v1 LeastAllocated, no label predicate)" '^no-zone$' node_of plain-pod
printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"big-unlabelled"},"status":{"allocatable":{"cpu":"64","memory":"128Gi","pods":"110"}}}\n' | k apply -f - >/dev/null
pod legacy-pod-2 legacy | k apply -f - >/dev/null
eventually "a second legacyPolicy pod is bound" bash -c "$(declare -f k node_of); [ -n \"\$(node_of legacy-pod-2)\" ]"
expect "... still on zone-b, never on the unlabelled nodes" '^zone-b$' node_of legacy-pod-2
stop_pid "$SCHED_PID"; SCHED_PID=

# ------------------------------------------------------------------ the daemon with --policy-config-file
"$SK_BIN/schedkit-scheduler" --policy-config-file "$TMP/policy.json" --kubeconfig "$KUBECONFIG" --leader-elect=false \
	--secure-port=0 >"$TMP/daemon.log" 2>&1 &
DAEMON_PID=$!
pod default-pod default-scheduler | k apply -f - >/dev/null
eventually "schedkit-scheduler --policy-config-file binds a default-scheduler pod" \
	bash -c "$(declare -f k node_of); [ -n \"\$(node_of default-pod)\" ]"
expect "... where the Policy says (zone-b)" '^zone-b$' node_of default-pod
expect "... and logged what the Policy could not carry over" 'Legacy Policy translation.*NodePreferAvoidPods' cat "$TMP/daemon.log"
stop_pid "$DAEMON_PID"; DAEMON_PID=

# ------------------------------------------------------------------ a changed Policy alone reloads
# The spreading Policy: no zone predicate, LeastRequestedPriority: the emptiest node (big-unlabelled).
cat >"$TMP/spread-policy.json" <<'EOF'
{"kind": "Policy", "apiVersion": "v1", "predicates": [{"name": "GeneralPredicates"}],
 "priorities": [{"name": "LeastRequestedPriority", "weight": 1}]}
EOF
printf '{"kind": "Policy", "apiVersion": "v1", "predicates": [{"name": "NoSuchPredicate"}]}\n' >"$TMP/bad-policy.cfg"
lands() { # pod node: the pod is bound there
	[ "$(k get pod "$1" -o jsonpath='{.spec.nodeName}')" = "$2" ]
}
cp "$TMP/policy.json" "$TMP/live-policy.json"
"$SK_BIN/schedkit-scheduler" --policy-config-file "$TMP/live-policy.json" --kubeconfig "$KUBECONFIG" --leader-elect=false \
	--secure-port=0 >"$TMP/daemon-file.log" 2>&1 &
DAEMON_PID=$!
pod file-pod-1 default-scheduler | k apply -f - >/dev/null
eventually "--policy-config-file: a pod lands where the Policy says (zone-b)" lands file-pod-1 zone-b
cp "$TMP/spread-policy.json" "$TMP/live-policy.json"
eventually "... the Policy file changed alone (no --config): reloaded" grep -q 'the Policy changed; loading it' "$TMP/daemon-file.log"
pod file-pod-2 default-scheduler | k apply -f - >/dev/null
eventually "... the next pod follows the new Policy (big-unlabelled, the emptiest)" lands file-pod-2 big-unlabelled
cp "$TMP/bad-policy.cfg" "$TMP/live-policy.json"
eventually "... a bad Policy file is rejected" grep -q 'Configuration reload rejected.*NoSuchPredicate' "$TMP/daemon-file.log"
pod file-pod-3 default-scheduler | k apply -f - >/dev/null
eventually "... and the good one keeps running (big-unlabelled)" lands file-pod-3 big-unlabelled
stop_pid "$DAEMON_PID"; DAEMON_PID=

# ------------------------------------------------------------------ --policy-configmap, read through the API
k delete pod default-pod file-pod-1 file-pod-2 file-pod-3 --wait=false >/dev/null 2>&1 # room on zone-b again
"$SK_BIN/schedkit-scheduler" --policy-configmap sched-policy --kubeconfig "$KUBECONFIG" --leader-elect=false \
	--secure-port=0 >"$TMP/daemon-nocm.log" 2>&1
expect "--policy-configmap naming a missing ConfigMap: the scheduler does not start, naming it" \
	'failed to get policy config map kube-system/sched-policy' cat "$TMP/daemon-nocm.log"
check "kubectl create configmap sched-policy --from-file=policy.cfg (kube-system)" \
	k -n kube-system create configmap sched-policy --from-file=policy.cfg="$TMP/policy.json"
"$SK_BIN/schedkit-scheduler" --policy-configmap sched-policy --policy-configmap-namespace kube-system \
	--kubeconfig "$KUBECONFIG" --leader-elect=false --secure-port=0 >"$TMP/daemon-cm.log" 2>&1 &
DAEMON_PID=$!
pod cm-pod-1 default-scheduler | k apply -f - >/dev/null
eventually "--policy-configmap: a pod lands where the ConfigMap's Policy says (zone-b)" lands cm-pod-1 zone-b
expect "... the Policy was read from the ConfigMap (the translation notes name it)" \
	'policy config map kube-system/sched-policy' cat "$TMP/daemon-cm.log"
set_policy_cm() { # file
	k -n kube-system create configmap sched-policy --from-file=policy.cfg="$1" --dry-run=client -o yaml | k apply -f - >/dev/null 2>&1
}
set_policy_cm "$TMP/spread-policy.json"
eventually "... kubectl apply of a new policy.cfg: reloaded without a restart" grep -q 'the Policy changed; loading it' "$TMP/daemon-cm.log"
pod cm-pod-2 default-scheduler | k apply -f - >/dev/null
eventually "... the next pod follows it (big-unlabelled)" lands cm-pod-2 big-unlabelled
set_policy_cm "$TMP/bad-policy.cfg"
eventually "... a bad policy.cfg is rejected, naming the ConfigMap and the predicate" \
	grep -q 'Configuration reload rejected.*policy config map kube-system/sched-policy.*NoSuchPredicate' "$TMP/daemon-cm.log"
pod cm-pod-3 default-scheduler | k apply -f - >/dev/null
eventually "... and the good Policy keeps running (big-unlabelled)" lands cm-pod-3 big-unlabelled
k -n kube-system patch configmap sched-policy --type merge -p '{"data":{"policy.cfg":null}}' >/dev/null 2>&1
eventually "... the key removed: logged, the running Policy stays" grep -q 'missing policy config map value at key' "$TMP/daemon-cm.log"
stop_pid "$DAEMON_PID"; DAEMON_PID=

if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP"/*.log 2>/dev/null; then
	notok "no sanitizer report in the logs"
	grep -hE -A12 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP"/*.log | head -40 | sed 's/^/#   /'
else
	ok "no sanitizer report in the logs"
fi
