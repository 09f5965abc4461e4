#!/usr/bin/env bash
# End-to-end: the seed plugins (LocalReplicas, FitIPResource, ComputeResource; modules of the
# scheduler image, lib/schedkit/plugins here) through manifests/samples/seed-profile.yaml, with the
# real kubectl against bin/schedkit-apiserver --simulate-kubelet (which serves metrics.k8s.io),
# schedkit-operator (its --plugin-dir = the image's modules: the profile is validated by the
# plugins' own args decoders) and schedkit-scheduler run with the Deployment's flags (its
# --plugin-dir=/usr/lib/schedkit/plugins mapped by e2e/lib/deployment_runner.sh).
#   - ComputeResource: node-0 (schedkit.io/simulated-load=8) is at 100% CPU and node-1 (load 30,
#     but the fewest requests) at 77%; `kubectl top nodes` shows it; pods avoid both (node-0 is
#     filtered, above the profile's 90% threshold, node-1 scores low) and a pod pinned to node-0
#     is Unschedulable with the plugin's reason;
#   - LocalReplicas: four pods of one ReplicaSet (controller ownerReference to a ReplicaSet object;
#     the local API server runs no ReplicaSet controller) on three feasible nodes: three land one
#     per node, the fourth waits with the plugin's reason and binds where a replica is deleted;
#   - FitIPResource: node-ip advertises 2 pod IPs and runs one pod and a hostNetwork pod: one more
#     pod binds, the next is Unschedulable "Insufficient pod IPs", a hostNetwork pod still binds.
# A profile with bad ComputeResource args is Accepted=False with the plugin's message; a control
# profile without the seed plugins puts the same pod on node-1 (by requests).
# Prints TAP-style "ok"/"not ok" lines. Env: SK_BIN (default $SK_ROOT/bin), SK_ROOT, OUT;
# SK_KEEP=1 keeps the work directory (logs) for a look after a failure.
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
NS=schedkit-system
MODULES=$SK_BIN/../lib/schedkit/plugins
# shellcheck source=../lib/suite_lib.sh
. "$SK_ROOT/e2e/lib/suite_lib.sh"
# shellcheck source=../lib/configmap_volume.sh
. "$SK_ROOT/e2e/lib/configmap_volume.sh"
# shellcheck source=../lib/deployment_runner.sh
. "$SK_ROOT/e2e/lib/deployment_runner.sh"
sk_suite_begin sk-seed-e2e
SK_EVENTUALLY_TRIES=200 # 40 s
sk_need_bins schedkit-apiserver schedkit-operator schedkit-scheduler
for m in localreplicas fitipresource computeresource; do
	[ -f "$MODULES/$m.so" ] || { echo "not ok - $MODULES/$m.so exists (make)"; exit 1; }
done
export KUBECONFIG=$TMP/kubeconfig
node_of() { k get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound() { [ -n "$(node_of "$1")" ]; }
on_node() { [ "$(node_of "$1")" = "$2" ] || { echo "$1 on '$(node_of "$1")': $(why "$1")"; return 1; }; }
# pod NAME [EXTRA_SPEC_JSON [EXTRA_METADATA_JSON]]: a seed-scheduler pod requesting 100m CPU
pod() {
	printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default"%s},"spec":{"schedulerName":"seed-scheduler"%s,"containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"%s"}}}]}}\n' \
		"$1" "${3:+,$3}" "${2:+,$2}" "${CPU:-100m}"
}
# why NAME: the PodScheduled=False message of a pending pod
why() { k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }
unschedulable_with() { # NAME TEXT
	[ "$(k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ] &&
		why "$1" | grep -qF -- "$2"
}

# ------------------------------------------------------------------ cluster, operator
"$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$KUBECONFIG" --simulate-kubelet --kubelet-delay-ms 20 \
	>"$TMP/apiserver.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
	[ -s "$KUBECONFIG" ] && break
	sleep 0.1
done
[ -s "$KUBECONFIG" ] || bail "schedkit-apiserver started"
ok "schedkit-apiserver --simulate-kubelet started"
check "kubectl apply -k manifests/" k apply -k "$SK_ROOT/manifests"
check "the CRDs become Established" k wait --for condition=established --timeout=20s \
	crd/schedulerplugins.schedkit.io crd/schedulerprofiles.schedkit.io
"$SK_BIN/schedkit-operator" --kubeconfig "$KUBECONFIG" --namespace $NS --health-probe-bind-address=127.0.0.1:0 \
	--plugin-dir="$MODULES" --v=1 >"$TMP/operator.log" 2>&1 &
OP_PID=$!
eventually "the operator loaded the image's plugin modules (its --plugin-dir)" \
	grep -qE '"Loaded plugin modules".* plugins=3' "$TMP/operator.log" || bail "the operator loads the modules"

# node-0..node-3: 4 CPU, 8Gi; node-ip: tainted pool=ip, 2 pod IPs (schedkit.io/pod-ips)
node() { # NAME EXTRA_METADATA EXTRA_SPEC EXTRA_ALLOCATABLE
	local alloc="\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"$4"
	printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":{"kubernetes.io/hostname":"%s"}%s},"spec":{%s},"status":{"allocatable":{%s},"capacity":{%s},"conditions":[{"type":"Ready","status":"True"}]}}\n' \
		"$1" "$1" "$2" "$3" "$alloc" "$alloc"
}
{
	for i in 0 1 2 3; do node "node-$i" "" "" ""; done
	node node-ip "" '"taints":[{"key":"pool","value":"ip","effect":"NoSchedule"}]' ',"schedkit.io/pod-ips":"2"'
} >"$TMP/nodes.json"
check "five nodes (node-ip: taint pool=ip, allocatable schedkit.io/pod-ips: 2)" k apply -f "$TMP/nodes.json"
check "kubectl annotate node node-0 schedkit.io/simulated-load=8" k annotate node node-0 schedkit.io/simulated-load=8
check "kubectl annotate node node-1 schedkit.io/simulated-load=30" k annotate node node-1 schedkit.io/simulated-load=30

# Pods already running (bound by name, run by the simulated kubelet): node-0 a 500m "hog"
# (x8: 4.1 cores, capped at 4), node-1 a 100m "warm" (x30: 3.1 cores), node-2 and node-3 a 500m
# "filler" each (x1: 0.6 cores) -- node-1 has the fewest requests but the most measured load.
existing() { # NAME NODE CPU [EXTRA_SPEC]
	printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default"},"spec":{"nodeName":"%s"%s,"containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"%s"}}}]}}\n' \
		"$1" "$2" "${4:+,$4}" "$3"
}
{
	existing hog node-0 500m
	existing warm node-1 100m
	existing filler-2 node-2 500m
	existing filler-3 node-3 500m
	existing ip-existing node-ip 100m
	existing ip-agent node-ip 100m '"hostNetwork":true'
} >"$TMP/existing.json"
check "existing pods bound by name (hog on node-0, warm on node-1, fillers, two on node-ip)" k apply -f "$TMP/existing.json"
all_running() { [ "$(k get pods --field-selector=status.phase=Running -o name | wc -l)" -eq 6 ]; }
eventually "the simulated kubelet runs them" all_running

# ------------------------------------------------------------------ kubectl top: the simulated load
top_cpu_pct() { # NODE: CPU% column of kubectl top nodes, without %
	k top node "$1" --no-headers | awk '{sub("%","",$3); print $3}'
}
expect "kubectl top nodes: node-0 at 4000m (100%): 100m idle + 8 x 500m, capped at capacity" \
	'^node-0 +4000m +100%' k top nodes
expect "... node-1 at 3100m (77%): 100m idle + 30 x 100m" '^node-1 +3100m +77%' k top nodes
expect "... node-2 at 600m (15%): 100m idle + 500m" '^node-2 +600m +15%' k top nodes
expect "kubectl top pods: hog uses 4000m (8 x its 500m request)" '^hog +4000m' k top pods
expect "kubectl get --raw NodeMetrics: usage in nanocores and KiB, as metrics-server writes it" \
	'"usage":\{"cpu":"4000000000n","memory":"262144Ki"\}' k get --raw /apis/metrics.k8s.io/v1beta1/nodes/node-0

expect_top() { k top node "$1" --no-headers | grep -qE "^$1 +$2 "; }

# ------------------------------------------------------------------ the profile and the scheduler
sed 's/refreshSeconds: 15 /refreshSeconds: 1  /' "$SK_ROOT/manifests/samples/seed-profile.yaml" >"$TMP/seed-profile.yaml"
check "manifests/samples/seed-profile.yaml (refreshSeconds 1 for the test) is applied" k apply -f "$TMP/seed-profile.yaml"
eventually "the seed-scheduler SchedulerProfile is Accepted=True (the operator knows the modules)" \
	cond_is sp seed-scheduler Accepted status True || bail "seed-scheduler accepted: $(cond sp seed-scheduler Accepted message)"
printf '%s\n' 'apiVersion: schedkit.io/v1alpha1' 'kind: SchedulerProfile' 'metadata: {name: seed-bad}' \
	'spec:' '  plugins: {filter: {enabled: [{name: ComputeResource}]}}' \
	'  pluginConfig: [{name: ComputeResource, args: {usageThresholds: {cpu: 150}}}]' | k apply -f - >/dev/null
eventually "a profile with ComputeResource usageThresholds.cpu 150 is Accepted=False" cond_is sp seed-bad Accepted status False
expect "... with the plugin's own args message" 'usageThresholds\.cpu: Invalid value: 150' cond sp seed-bad Accepted message
printf '%s\n' 'apiVersion: schedkit.io/v1alpha1' 'kind: SchedulerProfile' 'metadata: {name: plain}' \
	'spec: {provider: Default}' | k apply -f - >/dev/null
eventually "a control profile plain (the default plugins only) is Accepted=True" cond_is sp plain Accepted status True
expect "the Deployment passes --plugin-dir=/usr/lib/schedkit/plugins (no SchedulerPlugin needed)" \
	'"--plugin-dir=/usr/lib/schedkit/plugins"' \
	k -n $NS get deployment schedkit-scheduler -o jsonpath='{.spec.template.spec.containers[0].args}'
VOL=$TMP/volume
sk_cm_volume_loop "$VOL" $NS schedkit-scheduler-config config.yaml 0.5 &
SYNC_PID=$!
eventually "the ConfigMap volume holds config.yaml" test -s "$VOL/config.yaml"
mapfile -t SARGS < <(sk_deploy_scheduler_args $NS "$VOL" "$TMP/unused-plugin-dir")
expect "the runner maps the image's plugin dir to the built modules" "^--plugin-dir=$MODULES\$" printf '%s\n' "${SARGS[@]}"
"$SK_BIN/schedkit-scheduler" "${SARGS[@]}" --kubeconfig "$KUBECONFIG" >"$TMP/scheduler.log" 2>&1 &
SCHED_PID=$!
eventually "the scheduler runs it: seed-scheduler is Applied=True" cond_is sp seed-scheduler Applied status True ||
	bail "seed-scheduler applied"

# ------------------------------------------------------------------ ComputeResource
for i in 1 2 3 4; do pod "load-$i"; done | k apply -f - >/dev/null
all_bound() { local p; for p in "$@"; do bound "$p" || { echo "$p pending: $(why "$p")"; return 1; }; done; }
eventually "four load-* pods are bound" all_bound load-1 load-2 load-3 load-4
placed() { k get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' | grep "^$1"; }
not_on_loaded() { ! placed load- | grep -E ' node-[01]$'; }
check "... none on node-0 (filtered: 100% CPU) nor node-1 (the fewest requests, but 77% measured)" not_on_loaded
pod control '"schedulerName":"plain"' | sed 's/"schedulerName":"seed-scheduler",//' | k apply -f - >/dev/null
eventually "the control: the same pod under the plain profile goes by requests, to node-1" on_node control node-1
# it runs 30 x 100m on node-1 now: removed, and ComputeResource's next reads (every second) see it gone
check "... deleted again" k delete pod control --grace-period=0 --force
eventually "... and kubectl top shows node-1 back at 3100m" expect_top node-1 3100m
sleep 3
pod pinned '"nodeSelector":{"kubernetes.io/hostname":"node-0"}' | k apply -f - >/dev/null
eventually "a pod pinned to node-0 is Unschedulable: node(s) had cpu usage above the load threshold" \
	unschedulable_with pinned "node(s) had cpu usage above the load threshold"
expect "... and kubectl top nodes shows why: node-0 above the profile's 90%" '^node-0 +[0-9]+m +(9[1-9]|100)%' k top nodes
k delete pod pinned --wait=false >/dev/null 2>&1

# ------------------------------------------------------------------ LocalReplicas
rs='{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":4,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"schedulerName":"seed-scheduler","containers":[{"name":"c","image":"pause"}]}}}}'
apply_json() { printf '%s\n' "$1" | k apply -f -; }
check "a ReplicaSet object web (no controller runs it here)" apply_json "$rs"
uid=$(k get rs web -o jsonpath='{.metadata.uid}')
owner="\"labels\":{\"app\":\"web\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web\",\"uid\":\"$uid\",\"controller\":true}]"
for i in 1 2 3 4; do CPU=10m pod "web-$i" "" "$owner"; done | k apply -f - >/dev/null
three_spread() { # three of web-1..4 bound, on three different nodes; prints the placement
	k get pods -l app=web -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
		tee /dev/stderr | awk '$2 != "" {n++; seen[$2]++} END {for (x in seen) if (seen[x] > 1) exit 1; exit !(n == 3)}'
}
eventually "replicas of one ReplicaSet land one per node: three bound on three nodes" three_spread
pending=
for i in 1 2 3 4; do bound "web-$i" || pending=web-$i; done
eventually "the fourth ($pending) is Unschedulable: node(s) already run the maximum number of replicas of this workload" \
	unschedulable_with "${pending:-web-4}" "node(s) already run the maximum number of replicas of this workload"
victim= vnode=
for i in 1 2 3 4; do
	n=$(node_of "web-$i")
	case $n in node-2 | node-3) victim=web-$i vnode=$n; break ;; esac
done
check "deleting the replica $victim on $vnode" k delete pod "$victim" --grace-period=0 --force
eventually "... the waiting replica binds there (the delete of its workload's pod requeues it)" \
	on_node "${pending:-web-4}" "$vnode"

# ------------------------------------------------------------------ FitIPResource
tol='"tolerations":[{"key":"pool","operator":"Equal","value":"ip","effect":"NoSchedule"}],"nodeSelector":{"kubernetes.io/hostname":"node-ip"}'
pod ip-1 "$tol" | k apply -f - >/dev/null
eventually "node-ip (2 pod IPs, one used; the hostNetwork pod uses none) takes ip-1" on_node ip-1 node-ip
pod ip-2 "$tol" | k apply -f - >/dev/null
eventually "a node at its IP capacity takes no more: ip-2 is Unschedulable, Insufficient pod IPs" \
	unschedulable_with ip-2 "Insufficient pod IPs"
pod ip-host "$tol,\"hostNetwork\":true" | k apply -f - >/dev/null
eventually "... while a hostNetwork pod (no pod IP) still lands there" on_node ip-host node-ip
check "ip-2 is still pending" on_node ip-2 ""

stop_pid "$SCHED_PID"; SCHED_PID=
if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/scheduler.log" "$TMP/operator.log" 2>/dev/null; then
	notok "no sanitizer report in the scheduler and operator logs"
	grep -hE -A12 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/scheduler.log" "$TMP/operator.log" | head -40 | sed 's/^/#   /'
else
	ok "no sanitizer report in the scheduler and operator logs"
fi
