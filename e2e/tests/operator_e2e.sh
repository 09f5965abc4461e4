#!/usr/bin/env bash
# End-to-end: schedkit-operator against bin/schedkit-apiserver, driven with the real kubectl.
# CRD and profiles applied with kubectl -> ConfigMap whose config passes
# `schedkit-scheduler --config F --validate` and holds exactly the accepted profiles; Deployment,
# ServiceAccount, RBAC and Service present; `kubectl get sp` columns; an invalid profile shows the
# loader's error and leaves the others (and the ConfigMap) untouched; a conflict is reported; a
# broken update keeps the last accepted version; deleting a profile removes it from the config;
# the scheduler's Lease hash turns Applied True; changing, adding and deleting profiles is
# applied by the running scheduler without a restart (its --config is a kubelet-style ConfigMap
# volume kept in sync by e2e/lib/configmap_volume.sh); a restart (and --once) changes nothing; a
# hand-deleted or hand-edited owned object is restored. The API server enforces RBAC and the
# operator and the scheduler run with the tokens of their own ServiceAccounts (SK_E2E_RBAC=0: an
# open server), so the shipped RBAC is proven sufficient. Prints TAP-style "ok"/"not ok" lines.
# Env: SK_BIN (binaries, default $SK_ROOT/bin), SK_ROOT (repo, default: this script's ../..).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
NS=schedkit-system
# shellcheck source=../lib/suite_lib.sh
. "$SK_ROOT/e2e/lib/suite_lib.sh"
# shellcheck source=../lib/configmap_volume.sh
. "$SK_ROOT/e2e/lib/configmap_volume.sh"
sk_suite_begin sk-operator-e2e
export TMP NS
SK_SUITE_PIDS="SYNC_PID SCHED_PID OP_PID SERVER_PID"
SK_EVENTUALLY_TRIES=100 # 20 s
sk_need_bins schedkit-apiserver schedkit-operator schedkit-scheduler
export KUBECONFIG=$TMP/kubeconfig

# SK_E2E_RBAC=1 (the default): the API server enforces RBAC (--authorization-mode=RBAC), kubectl
# acts as the admin (system:masters), and the operator and the scheduler run with the tokens of
# their own ServiceAccounts (`kubectl create token`), so every request they make must be granted
# by manifests/operator/rbac.yaml and by the RBAC the operator renders for the scheduler.
# SK_E2E_RBAC=0: an open API server, as a quick local run.
SK_E2E_RBAC=${SK_E2E_RBAC:-1}
server_flags=()
[ "$SK_E2E_RBAC" = 1 ] && server_flags=(--tls --token "sk-admin-$RANDOM$RANDOM" --authorization-mode=RBAC)
"$SK_BIN/schedkit-apiserver" --port 0 "${server_flags[@]}" --write-kubeconfig "$KUBECONFIG" >"$TMP/apiserver.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
	[ -s "$KUBECONFIG" ] && break
	sleep 0.1
done
[ -s "$KUBECONFIG" ] || { echo "not ok - schedkit-apiserver started"; sed 's/^/#   /' "$TMP/apiserver.log"; exit 1; }
ok "schedkit-apiserver started"

# sa_kubeconfig NAME: a kubeconfig for ServiceAccount $NS/NAME (its token from the TokenRequest
# API), printed; the admin's KUBECONFIG itself without RBAC.
sa_kubeconfig() {
	if [ "$SK_E2E_RBAC" != 1 ]; then echo "$KUBECONFIG"; return 0; fi
	local t
	t=$(k -n $NS create token "$1" --duration=2h) || return 1
	sed "s/token: .*/token: $t/" "$KUBECONFIG" >"$TMP/$1.kubeconfig" && echo "$TMP/$1.kubeconfig"
}
OP_KUBECONFIG=
start_operator() { # extra flags...
	"$SK_BIN/schedkit-operator" --kubeconfig "$OP_KUBECONFIG" --namespace $NS --health-probe-bind-address=127.0.0.1:0 \
		--leader-elect=true --scheduler-settings="$TMP/settings.yaml" --v=4 "$@" >>"$TMP/operator.log" 2>&1 &
	OP_PID=$!
}
cfg() { k -n $NS get configmap schedkit-scheduler-config -o go-template='{{index .data "config.yaml"}}'; }
cond() { # profile type field
	k get sp "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}"
}
cond_is() { [ "$(cond "$1" "$2" "$3")" = "$4" ]; }
profile() { # name spec-yaml (indented two spaces)
	printf 'apiVersion: schedkit.io/v1alpha1\nkind: SchedulerProfile\nmetadata:\n  name: %s\nspec:\n%s\n' "$1" "$2"
}
rvs() { # resourceVersions of every owned object
	k -n $NS get configmap/schedkit-scheduler-config serviceaccount/schedkit-scheduler service/schedkit-scheduler \
		deployment/schedkit-scheduler role/schedkit-scheduler rolebinding/schedkit-scheduler \
		-o jsonpath='{range .items[*]}{.kind}/{.metadata.resourceVersion} {end}' &&
		k get clusterrole/schedkit-scheduler clusterrolebinding/schedkit-scheduler \
			-o jsonpath='{range .items[*]}{.kind}/{.metadata.resourceVersion} {end}'
}

# The installation's scheduler settings (docs/operator.md, "Scheduler settings").
cat >"$TMP/settings.yaml" <<'YAML'
priorityClassName: system-node-critical
resources:
  requests: {cpu: 150m, memory: 160Mi}
  limits: {memory: 640Mi}
nodeSelector: {kubernetes.io/os: linux}
tolerations:
- {key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}
volumes:
- {name: extra, emptyDir: {}}
volumeMounts:
- {name: extra, mountPath: /var/lib/extra, readOnly: true}
YAML

# ------------------------------------------------------------------ install and first profiles
check "kubectl apply -k manifests/ (CRD, namespace, operator RBAC and Deployment)" k apply -k "$SK_ROOT/manifests"
check "CRD becomes Established" k wait --for condition=established --timeout=20s crd/schedulerprofiles.schedkit.io
OP_KUBECONFIG=$(sa_kubeconfig schedkit-operator) || notok "a token for ServiceAccount schedkit-operator"
if [ "$SK_E2E_RBAC" = 1 ]; then
	expect "under enforced RBAC the operator's token may not read Secrets it was not granted" 'Forbidden|forbidden' \
		k --kubeconfig "$OP_KUBECONFIG" -n kube-system get secrets
fi
start_operator
check "kubectl apply -k manifests/samples/" k apply -k "$SK_ROOT/manifests/samples"
eventually "both sample profiles are Accepted" bash -c \
	"[ \"\$(kubectl --cache-dir $TMP/cache get sp -o jsonpath='{range .items[*]}{.status.conditions[?(@.type==\"Accepted\")].status}{end}')\" = TrueTrue ]"
eventually "ConfigMap holds both profiles" bash -c "$(declare -f k cfg); cfg | grep -q 'schedulerName: bin-packing' && cfg | grep -q 'schedulerName: spread'"

cfg >"$TMP/config.yaml"
check "the rendered config passes schedkit-scheduler --validate" "$SK_BIN/schedkit-scheduler" --config "$TMP/config.yaml" --validate
n=$(grep -c '^- schedulerName:' "$TMP/config.yaml")
if [ "$n" = 2 ]; then ok "the config holds exactly the accepted profiles (2)"; else notok "config holds $n profiles, want 2"; cp "$TMP/config.yaml" "$TMP/out"; diag; fi
expect "bin-packing renders NodeResourcesFit MostAllocated" 'type: MostAllocated' cat "$TMP/config.yaml"
hash=$(sha256sum "$TMP/config.yaml" | cut -c1-64)
expect "the ConfigMap's config-hash annotation is the sha256 of config.yaml" "^$hash\$" \
	k -n $NS get configmap schedkit-scheduler-config -o go-template='{{index .metadata.annotations "schedkit.io/config-hash"}}'
profile_hash_in_cm() { # config-hash schedulerName: the profile's hash in that configuration (ConfigMap history)
	k -n $NS get configmap schedkit-scheduler-config -o json |
		jq -r --arg h "$1" --arg n "$2" '.metadata.annotations["schedkit.io/profile-hashes"] | fromjson | .[$h][$n]'
}
expect "status.renderedHash is bin-packing's own hash, as the ConfigMap's history records it" \
	"^$(k get sp bin-packing -o jsonpath='{.status.renderedHash}')\$" profile_hash_in_cm "$hash" bin-packing

check "Deployment schedkit-scheduler exists" k -n $NS get deployment schedkit-scheduler
expect "Deployment: 2 replicas, RollingUpdate maxUnavailable 0 / maxSurge 1, --config and --leader-elect" \
	'^2 RollingUpdate 0 1 .*--config=/etc/schedkit/config.yaml.*--leader-elect=true' \
	k -n $NS get deployment schedkit-scheduler -o jsonpath='{.spec.replicas} {.spec.strategy.type} {.spec.strategy.rollingUpdate.maxUnavailable} {.spec.strategy.rollingUpdate.maxSurge} {.spec.template.spec.containers[0].args}'
expect "Deployment probes /healthz and /readyz, runs non-root with a read-only root" '^/healthz /readyz true true$' \
	k -n $NS get deployment schedkit-scheduler -o jsonpath='{.spec.template.spec.containers[0].livenessProbe.httpGet.path} {.spec.template.spec.containers[0].readinessProbe.httpGet.path} {.spec.template.spec.securityContext.runAsNonRoot} {.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem}'
expect "Deployment: the settings file's priority class, resources, nodeSelector, tolerations and extra volume" \
	'^system-node-critical 150m 640Mi linux Exists extra /var/lib/extra$' \
	k -n $NS get deployment schedkit-scheduler -o jsonpath='{.spec.template.spec.priorityClassName} {.spec.template.spec.containers[0].resources.requests.cpu} {.spec.template.spec.containers[0].resources.limits.memory} {.spec.template.spec.nodeSelector.kubernetes\.io/os} {.spec.template.spec.tolerations[0].operator} {.spec.template.spec.volumes[1].name} {.spec.template.spec.containers[0].volumeMounts[1].mountPath}'
expect "Deployment spreads its replicas across nodes and zones" '^kubernetes.io/hostname topology.kubernetes.io/zone$' \
	k -n $NS get deployment schedkit-scheduler -o jsonpath='{.spec.template.spec.topologySpreadConstraints[0].topologyKey} {.spec.template.spec.topologySpreadConstraints[1].topologyKey}'
expect "PodDisruptionBudget schedkit-scheduler: maxUnavailable 1 over the scheduler pods" '^1 schedkit-scheduler$' \
	k -n $NS get pdb schedkit-scheduler -o jsonpath='{.spec.maxUnavailable} {.spec.selector.matchLabels.app\.kubernetes\.io/name}'
check "ServiceAccount, Role, RoleBinding and Service exist" k -n $NS get serviceaccount/schedkit-scheduler role/schedkit-scheduler rolebinding/schedkit-scheduler service/schedkit-scheduler
check "ClusterRole and ClusterRoleBinding exist" k get clusterrole/schedkit-scheduler clusterrolebinding/schedkit-scheduler
expect "ClusterRole grants pods/binding create" 'pods/binding' k get clusterrole schedkit-scheduler -o jsonpath='{.rules[*].resources}'
expect "kubectl get sp shows the columns" '^NAME +SCHEDULER NAME +ACCEPTED +APPLIED +AGE' k get sp
expect "kubectl get sp -o wide adds provider and reason" 'bin-packing +bin-packing +True +False +ClusterAutoscaler +Accepted' k get sp -o wide

# ------------------------------------------------------------------ invalid profile
cm_rv=$(k -n $NS get configmap schedkit-scheduler-config -o jsonpath='{.metadata.resourceVersion}')
spread_rv=$(k get sp spread -o jsonpath='{.metadata.resourceVersion}')
profile broken '  plugins:
    score:
      enabled:
      - name: NodeResourceFit' | k apply -f - >/dev/null
eventually "an invalid profile gets Accepted=False reason Invalid" cond_is broken Accepted reason Invalid
expect "its status carries the loader's exact message" \
	'^spec\.plugins\.score\.enabled\[0\]: unknown plugin "NodeResourceFit"; did you mean "NodeResourcesFit"\?$' \
	cond broken Accepted message
sleep 0.5
if [ "$(k -n $NS get configmap schedkit-scheduler-config -o jsonpath='{.metadata.resourceVersion}')" = "$cm_rv" ] &&
	[ "$(k get sp spread -o jsonpath='{.metadata.resourceVersion}')" = "$spread_rv" ]; then
	ok "the invalid profile leaves the ConfigMap and the other profiles untouched"
else
	notok "the invalid profile leaves the ConfigMap and the other profiles untouched"
fi
expect "kubectl get sp shows it as not accepted" '^broken +broken +False +False' k get sp
expect "kubectl describe sp shows a Warning event with the message" 'Warning +Invalid .*unknown plugin "NodeResourceFit"' k describe sp broken

# ------------------------------------------------------------------ conflict
profile copycat '  schedulerName: spread' | k apply -f - >/dev/null
eventually "a second profile claiming schedulerName spread gets reason Conflict" cond_is copycat Accepted reason Conflict
expect "the conflict names the older owner" 'already used by SchedulerProfile "spread"' cond copycat Accepted message
check "the older profile keeps the name" cond_is spread Accepted status True
printf '%s\n' 'apiVersion: schedkit.io/v1alpha1' 'kind: SchedulerPlugin' 'metadata: {name: shadow}' \
	"spec: {image: 'x:1', files: [/p/x.so], plugins: [NodeName]}" | k apply -f - >/dev/null
eventually "a SchedulerPlugin shadowing an in-tree plugin gets Accepted=False (and changes no Deployment)" \
	bash -c "[ \"\$(kubectl --cache-dir $TMP/cache get splugin shadow -o jsonpath='{.status.conditions[?(@.type==\"Accepted\")].status}')\" = False ]"

# ------------------------------------------------------------------ scheduler reports the hash
# The scheduler reads the ConfigMap as a Deployment pod would: a mounted volume that kubelet
# refreshes (here e2e/lib/configmap_volume.sh, every 0.5 s).
VOL=$TMP/volume
sk_cm_volume_loop "$VOL" $NS schedkit-scheduler-config config.yaml 0.5 &
SYNC_PID=$!
eventually "the ConfigMap volume holds config.yaml" test -s "$VOL/config.yaml"
SCHED_KUBECONFIG=$(sa_kubeconfig schedkit-scheduler) || notok "a token for ServiceAccount schedkit-scheduler"
"$SK_BIN/schedkit-scheduler" --config "$VOL/config.yaml" --kubeconfig "$SCHED_KUBECONFIG" --leader-elect=true \
	--leader-elect-resource-namespace=$NS --leader-elect-resource-name=schedkit-scheduler --secure-port=0 \
	--config-configmap=$NS/schedkit-scheduler-config >"$TMP/scheduler.log" 2>&1 &
SCHED_PID=$!
eventually "with the scheduler leading on its Lease, the profiles become Applied=True" cond_is spread Applied status True
expect "appliedHash equals renderedHash" '^([0-9a-f]{64}) \1$' \
	k get sp spread -o jsonpath='{.status.appliedHash} {.status.renderedHash}'
expect "Ready=True once accepted and applied" '^True Ready$' \
	k get sp spread -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}'
eventually "kubectl describe sp spread shows the Ready transition as a Normal Ready event" bash -c \
	"kubectl --cache-dir $TMP/cache describe sp spread | grep -Eq 'Normal +Ready +.*accepted, and run by schedkit-scheduler'"
expect "conditions are a map keyed by type (listType=map)" '^map type$' \
	k get crd schedulerprofiles.schedkit.io -o jsonpath='{.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.conditions.x-kubernetes-list-type} {.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.conditions.x-kubernetes-list-map-keys[0]}'

# ------------------------------------------------------------------ reload without a restart
lease_hash() { k -n $NS get lease schedkit-scheduler -o go-template='{{index .metadata.annotations "schedkit.io/config-hash"}}'; }
applied_now() { # profile: Applied=True with its own rendered hash, and the leader runs the config rendered now
	local h
	h=$(cfg | sha256sum | cut -c1-64)
	cond_is "$1" Applied status True && [ "$(lease_hash)" = "$h" ] &&
		[ "$(k get sp "$1" -o jsonpath='{.status.appliedHash}')" = "$(k get sp "$1" -o jsonpath='{.status.renderedHash}')" ]
}
hash_before=$(k get sp spread -o jsonpath='{.status.appliedHash}')
# Watch every profile while one changes: only spread may show up (its status is per profile).
timeout 60 kubectl --cache-dir "$TMP/cache" get sp --watch-only -o custom-columns=NAME:.metadata.name,APPLIED:.status.conditions[?\(@.type==\"Applied\"\)].status \
	>"$TMP/watch.out" 2>&1 &
WATCH_PID=$!
sleep 1
k patch sp spread --type merge -p '{"spec":{"percentageOfNodesToScore":70}}' >/dev/null
eventually "a changed SchedulerProfile reaches the ConfigMap" bash -c "$(declare -f k cfg); cfg | grep -q 'percentageOfNodesToScore: 70'"
eventually "... and becomes Applied=True without restarting the scheduler" applied_now spread
sleep 1
kill "$WATCH_PID" 2>/dev/null
wait "$WATCH_PID" 2>/dev/null
if grep -q '^spread ' "$TMP/watch.out" && ! grep -v -e '^spread ' -e '^NAME ' "$TMP/watch.out" | grep -q .; then
	ok "kubectl get sp -w during the change shows spread only: no transition of the other profiles"
else
	notok "kubectl get sp -w during the change shows spread only"; cp "$TMP/watch.out" "$TMP/out"; diag
fi
if [ "$(k get sp spread -o jsonpath='{.status.appliedHash}')" != "$hash_before" ] && kill -0 "$SCHED_PID" 2>/dev/null &&
	[ "$(grep -c 'Starting schedkit-scheduler' "$TMP/scheduler.log")" = 1 ]; then
	ok "... by the same scheduler process (started once, a new applied hash)"
else
	notok "the same scheduler process applied the change"
fi
expect "the scheduler logged the reload" '"Configuration reloaded".*kept=\[bin-packing,spread\]' cat "$TMP/scheduler.log"
profile late '  schedulerName: late' | k apply -f - >/dev/null
eventually "a new SchedulerProfile becomes Applied=True without a restart" applied_now late
printf '%s\n' \
	'{"apiVersion":"v1","kind":"Node","metadata":{"name":"e2e-node"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"},"capacity":{"cpu":"4","memory":"8Gi","pods":"110"}}}' \
	'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"late-pod","namespace":"default"},"spec":{"schedulerName":"late","containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"100m"}}}]}}' |
	k apply -f - >/dev/null
eventually "... and the running scheduler binds its pods" \
	bash -c "[ \"\$(kubectl --cache-dir $TMP/cache get pod late-pod -o jsonpath='{.spec.nodeName}')\" = e2e-node ]"
# decision records (docs/explain.md): spread has decisionRecords; the leader's summary on its Lease
# becomes status.decisions
printf '%s\n' \
	'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"spread-ok","namespace":"default"},"spec":{"schedulerName":"spread","containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"100m"}}}]}}' \
	'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"spread-huge","namespace":"default"},"spec":{"schedulerName":"spread","containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"100"}}}]}}' |
	k apply -f - >/dev/null
decisions_ok() {
	k get sp spread -o json | jq -e '.status.decisions | .windowSeconds == 600 and .scheduled >= 1 and .unschedulable >= 1
		and .topReasons[0].reason == "Insufficient cpu"' >/dev/null
}
for _ in $(seq 1 80); do decisions_ok && break; sleep 0.5; done
if decisions_ok; then ok "status.decisions of spread: Scheduled and Unschedulable counts and the top reason"; else notok "status.decisions of spread"; diag; fi
expect "kubectl describe sp spread shows the decisions" 'Insufficient cpu' k describe sp spread
k delete pod spread-ok spread-huge --wait=false >/dev/null
k delete sp late >/dev/null
eventually "deleting it is applied without a restart too" applied_now spread

# ------------------------------------------------------------------ broken update keeps last good
before=$(cfg)
k patch sp bin-packing --type merge -p '{"spec":{"plugins":{"filter":{"enabled":[{"name":"NoSuchFilter"}]}}}}' >/dev/null
eventually "a broken update of an accepted profile: Accepted=False" cond_is bin-packing Accepted status False
expect "... and Applied says the last accepted version runs" '^LastAcceptedVersion$' cond bin-packing Applied reason
if [ "$(cfg)" = "$before" ]; then ok "... and the config keeps the last accepted version"; else notok "the config keeps the last accepted version"; fi
expect "the last accepted spec is stored on the profile" '"generation":1' \
	k get sp bin-packing -o jsonpath='{.metadata.annotations.schedkit\.io/last-accepted}'
k patch sp bin-packing --type json -p '[{"op":"remove","path":"/spec/plugins/filter"}]' >/dev/null
eventually "fixing it makes it Accepted again" cond_is bin-packing Accepted status True

# ------------------------------------------------------------------ delete
k delete sp spread >/dev/null
eventually "deleting a profile removes it from the config" bash -c "$(declare -f k cfg); ! cfg | grep -q 'percentageOfNodesToScore: 70'"
eventually "the profile that lost the conflict now takes the name" cond_is copycat Accepted status True
eventually "... and is Applied=True by the running scheduler" applied_now copycat
stop_pid "$SCHED_PID"; SCHED_PID=
eventually "a scheduler that released its Lease turns Applied back to Pending" cond_is bin-packing Applied reason Pending

# ------------------------------------------------------------------ restart: nothing changes
cfg >"$TMP/config.yaml"
check "the config still passes --validate" "$SK_BIN/schedkit-scheduler" --config "$TMP/config.yaml" --validate
sleep 0.5
rv_before=$(rvs)
sp_before=$(k get sp -o jsonpath='{range .items[*]}{.metadata.name}/{.metadata.resourceVersion} {end}')
stop_pid "$OP_PID"; OP_PID=
: >"$TMP/operator.log"
start_operator
eventually "the restarted operator reconciles" grep -q "Reconciled" "$TMP/operator.log"
sleep 0.5
if [ "$(rvs)" = "$rv_before" ]; then ok "restarting the operator changes no owned object (resourceVersions equal)"
else notok "restart changed owned objects"; echo "# before: $rv_before"; echo "# after:  $(rvs)"; fi
if [ "$(k get sp -o jsonpath='{range .items[*]}{.metadata.name}/{.metadata.resourceVersion} {end}')" = "$sp_before" ]; then
	ok "restarting the operator rewrites no SchedulerProfile"
else notok "restart rewrote SchedulerProfiles"; fi
expect "schedkit-operator --once changes nothing either" 'writes=0' \
	"$SK_BIN/schedkit-operator" --kubeconfig "$OP_KUBECONFIG" --namespace $NS --scheduler-settings="$TMP/settings.yaml" --once
if [ "$(rvs)" = "$rv_before" ]; then ok "... resourceVersions still equal"; else notok "--once changed owned objects"; fi

# ------------------------------------------------------------------ drift repair
k -n $NS delete configmap schedkit-scheduler-config >/dev/null
eventually "a hand-deleted ConfigMap is restored" bash -c "$(declare -f k cfg); cfg | grep -q 'schedulerName: bin-packing'"
k delete clusterrolebinding schedkit-scheduler >/dev/null 2>&1
eventually "a hand-deleted ClusterRoleBinding is restored" k get clusterrolebinding schedkit-scheduler
k -n $NS scale deployment schedkit-scheduler --replicas=5 >/dev/null 2>&1 ||
	k -n $NS patch deployment schedkit-scheduler --type merge -p '{"spec":{"replicas":5}}' >/dev/null
eventually "a hand-scaled Deployment goes back to 2 replicas" \
	bash -c "[ \"\$(kubectl --cache-dir $TMP/cache -n $NS get deployment schedkit-scheduler -o jsonpath='{.spec.replicas}')\" = 2 ]"
k -n $NS label configmap schedkit-scheduler-config app.kubernetes.io/managed-by- >/dev/null
eventually "an object stripped of its managed-by label is taken back" \
	bash -c "[ \"\$(kubectl --cache-dir $TMP/cache -n $NS get configmap schedkit-scheduler-config -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by}')\" = schedkit-operator ]"

k -n $NS patch deployment schedkit-scheduler --type merge -p '{"spec":{"template":{"spec":{"priorityClassName":"system-cluster-critical"}}}}' >/dev/null
eventually "a hand-changed setting goes back to the settings file's (drift repair respects the settings)" \
	bash -c "[ \"\$(kubectl --cache-dir $TMP/cache -n $NS get deployment schedkit-scheduler -o jsonpath='{.spec.template.spec.priorityClassName}')\" = system-node-critical ]"
# The settings file changes while the operator runs (a ConfigMap edit reaching the mount): it is
# re-read without a restart, and drift repair keeps the new value; a broken edit changes nothing.
op_pid_before=$OP_PID
deploy_field() { k -n $NS get deployment schedkit-scheduler -o jsonpath="{.spec.template.spec.$1}"; }
cp "$TMP/settings.yaml" "$TMP/settings.orig"
sed 's/^priorityClassName: .*/priorityClassName: system-cluster-critical/; s/cpu: 150m/cpu: 175m/' "$TMP/settings.orig" >"$TMP/settings.new"
mv "$TMP/settings.new" "$TMP/settings.yaml"
eventually "a changed settings file reaches the Deployment without restarting the operator" bash -c \
	"$(declare -f k deploy_field); [ \"\$(deploy_field priorityClassName) \$(deploy_field 'containers[0].resources.requests.cpu')\" = 'system-cluster-critical 175m' ]"
check "... by the same operator process, which logged the change" bash -c \
	"kill -0 $op_pid_before && grep -q 'Scheduler settings changed; reconciling' '$TMP/operator.log'"
k -n $NS patch deployment schedkit-scheduler --type merge -p '{"spec":{"template":{"spec":{"priorityClassName":"system-node-critical"}}}}' >/dev/null
eventually "drift repair now keeps the new settings" bash -c \
	"$(declare -f k deploy_field); [ \"\$(deploy_field priorityClassName)\" = system-cluster-critical ]"
printf 'replicas: 0\n' >"$TMP/settings.new" && mv "$TMP/settings.new" "$TMP/settings.yaml"
eventually "a broken settings file is logged with the field" \
	grep -q 'Invalid scheduler settings; keeping the current ones.*settings.yaml: replicas: Invalid value' "$TMP/operator.log"
sleep 1.5
expect "... and changes nothing (the previous settings stay in force)" '^system-cluster-critical 2$' \
	bash -c "$(declare -f k deploy_field); echo \$(deploy_field priorityClassName) \$(k -n $NS get deployment schedkit-scheduler -o jsonpath='{.spec.replicas}')"
mv "$TMP/settings.orig" "$TMP/settings.yaml"
eventually "restoring the file restores the Deployment" bash -c \
	"$(declare -f k deploy_field); [ \"\$(deploy_field priorityClassName)\" = system-node-critical ]"
owned_ns="serviceaccount/schedkit-scheduler service/schedkit-scheduler role/schedkit-scheduler rolebinding/schedkit-scheduler
	poddisruptionbudget/schedkit-scheduler deployment/schedkit-scheduler"
for o in $owned_ns; do k -n $NS label "$o" app.kubernetes.io/managed-by- >/dev/null; done
for o in clusterrole/schedkit-scheduler clusterrolebinding/schedkit-scheduler; do k label "$o" app.kubernetes.io/managed-by- >/dev/null; done
labelled() {
	[ "$(k -n $NS get $owned_ns -o jsonpath='{range .items[*]}{.metadata.labels.app\.kubernetes\.io/managed-by} {end}')" = \
		"schedkit-operator schedkit-operator schedkit-operator schedkit-operator schedkit-operator schedkit-operator " ] &&
	[ "$(k get clusterrole/schedkit-scheduler clusterrolebinding/schedkit-scheduler -o jsonpath='{range .items[*]}{.metadata.labels.app\.kubernetes\.io/managed-by} {end}')" = \
		"schedkit-operator schedkit-operator " ]
}
eventually "every other owned kind stripped of its label is taken back too" labelled
expect "the operator holds its leader Lease" '_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}$' \
	k -n $NS get lease schedkit-operator -o jsonpath='{.spec.holderIdentity}'

# ------------------------------------------------------------------ health endpoints
port=$(sed -n 's/.*"Serving" flag=--health-probe-bind-address port=\([0-9]*\).*/\1/p' "$TMP/operator.log" | tail -1)
if [ -n "$port" ]; then
	expect "/readyz is ok" '^ok$' curl -s "http://127.0.0.1:$port/readyz"
	expect "/metrics reports reconciles" 'schedkit_operator_reconcile_total\{result="success"\} [1-9]' curl -s "http://127.0.0.1:$port/metrics"
else
	notok "the operator logs its health port"
fi

# Under `make asan` the binaries are instrumented: any report lands in their logs (the scheduler
# has exited by now, so its leak check has run).
if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/scheduler.log" "$TMP/operator.log" 2>/dev/null; then
	notok "no sanitizer report in the scheduler and operator logs"
	grep -hE -A12 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/scheduler.log" "$TMP/operator.log" | head -40 | sed 's/^/#   /'
else
	ok "no sanitizer report in the scheduler and operator logs"
fi
