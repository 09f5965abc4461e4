#!/usr/bin/env bash
# End to end: SchedulerProfile.spec.extenders through schedkit-operator (docs/operator.md,
# "Extenders with TLS"), with real kubectl against bin/schedkit-apiserver. A profile whose
# extender takes its client certificate from a Secret is Accepted; the rendered ConfigMap names
# the mounted files and holds no key; the config passes `schedkit-scheduler --validate`, which
# notes the per-profile extenders; the Deployment mounts the Secret read-only; inline keyData is
# refused (Accepted=False naming the field, the ConfigMap unchanged, the key nowhere); removing
# the extender removes the volume. The API server enforces RBAC and the operator runs with its
# own ServiceAccount's token (SK_E2E_RBAC=0: an open server). Prints TAP-style "ok"/"not ok" lines.
# Env: SK_BIN (binaries, default $SK_ROOT/bin), SK_ROOT (repo, default: this script's ../..).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
NS=schedkit-system
# shellcheck source=../lib/suite_lib.sh
. "$SK_ROOT/e2e/lib/suite_lib.sh"
sk_suite_begin sk-opext-e2e
SK_SUITE_PIDS="OP_PID SERVER_PID"
SK_EVENTUALLY_TRIES=100 # 20 s
export KUBECONFIG=$TMP/kubeconfig
# SK_E2E_RBAC=1 (the default): RBAC enforced, the operator runs with its ServiceAccount's token
# (as operator_e2e.sh): it renders the Secret volume without reading the Secret.
SK_E2E_RBAC=${SK_E2E_RBAC:-1}
server_flags=()
[ "$SK_E2E_RBAC" = 1 ] && server_flags=(--tls --token "sk-admin-$RANDOM$RANDOM" --authorization-mode=RBAC)
"$SK_BIN/schedkit-apiserver" --port 0 "${server_flags[@]}" --write-kubeconfig "$KUBECONFIG" >"$TMP/apiserver.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do [ -s "$KUBECONFIG" ] && break; sleep 0.1; done
[ -s "$KUBECONFIG" ] || { notok "schedkit-apiserver started"; exit 1; }
check "kubectl apply -k manifests/ (CRD, namespace, operator RBAC)" k apply -k "$SK_ROOT/manifests"
check "CRD becomes Established" k wait --for condition=established --timeout=20s crd/schedulerprofiles.schedkit.io
OP_KUBECONFIG=$KUBECONFIG
if [ "$SK_E2E_RBAC" = 1 ]; then
	t=$(k -n $NS create token schedkit-operator --duration=2h) || notok "a token for ServiceAccount schedkit-operator"
	OP_KUBECONFIG=$TMP/operator.kubeconfig
	sed "s/token: .*/token: $t/" "$KUBECONFIG" >"$OP_KUBECONFIG"
fi
"$SK_BIN/schedkit-operator" --kubeconfig "$OP_KUBECONFIG" --namespace $NS --health-probe-bind-address=127.0.0.1:0 \
	--v=4 >"$TMP/operator.log" 2>&1 &
OP_PID=$!

cfg() { k -n $NS get configmap schedkit-scheduler-config -o go-template='{{index .data "config.yaml"}}'; }
cond_is() { [ "$(k get sp "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}")" = "$4" ]; }

k apply -f - >"$TMP/out" 2>&1 <<EOF || { notok "create the Secret"; diag; }
apiVersion: v1
kind: Secret
metadata: {name: gpu-ext-client, namespace: $NS}
type: kubernetes.io/tls
data: {tls.crt: Y2VydA==, tls.key: c2VjcmV0LWtleS1ieXRlcw==, ca.crt: Y2E=}
EOF
profile_gpu() { # tlsConfig (flow YAML)
	k apply -f - <<EOF
apiVersion: schedkit.io/v1alpha1
kind: SchedulerProfile
metadata: {name: gpu}
spec:
  extenders:
  - urlPrefix: https://gpu-extender.kube-system:8443/scheduler
    filterVerb: filter
    enableHTTPS: true
    tlsConfig: $1
EOF
}
check "kubectl apply a SchedulerProfile whose extender names the Secret" \
	profile_gpu '{secretName: gpu-ext-client, caKey: ca.crt, certKey: tls.crt, keyKey: tls.key}'
eventually "the profile with a Secret-backed extender is Accepted" cond_is gpu Accepted status True
files_rendered() {
	local c
	c=$(cfg) || return 1
	grep -q "certFile: /etc/schedkit-extender-tls/gpu-ext-client/tls.crt" <<<"$c" &&
		grep -q "keyFile: /etc/schedkit-extender-tls/gpu-ext-client/tls.key" <<<"$c" &&
		grep -q "caFile: /etc/schedkit-extender-tls/gpu-ext-client/ca.crt" <<<"$c"
}
eventually "the ConfigMap names the mounted files" files_rendered
no_secret() { cfg >"$TMP/c" && ! grep -Eq 'keyData|certData|secretName|c2VjcmV0' "$TMP/c"; }
check "the ConfigMap holds no key material and no secretName" no_secret
cfg >"$TMP/config.yaml"
validate_notes() {
	"$SK_BIN/schedkit-scheduler" --config "$TMP/config.yaml" --validate &&
		"$SK_BIN/schedkit-scheduler" --config "$TMP/config.yaml" --validate |
		grep -q '^note: profiles\[0\].extenders (profile "gpu", 1 extender): a schedkit extension'
}
check "the rendered config passes schedkit-scheduler --validate, which notes the per-profile extenders" validate_notes
mounts() {
	k -n $NS get deployment schedkit-scheduler -o jsonpath='{range .spec.template.spec.volumes[*]}{.name}={.secret.secretName}{" "}{end}|{range .spec.template.spec.containers[0].volumeMounts[*]}{.name}:{.mountPath}:{.readOnly}{" "}{end}'
}
mounts_are() { [ "$(mounts)" = "$1" ]; }
eventually "the Deployment mounts the Secret read-only where the config says" mounts_are \
	"config= extender-tls-0=gpu-ext-client |config:/etc/schedkit:true extender-tls-0:/etc/schedkit-extender-tls/gpu-ext-client:true "

# inline key material is refused; the accepted version keeps running
cp "$TMP/config.yaml" "$TMP/before.yaml"
check "kubectl apply the same profile with an inline keyData" profile_gpu '{keyData: c2VjcmV0LWlubGluZQ==, certFile: /x}'
eventually "it is Accepted=False naming the field" bash -c '
	k() { timeout 30 kubectl --request-timeout=20s "$@"; }
	[ "$(k get sp gpu -o jsonpath="{.status.conditions[?(@.type==\"Accepted\")].status}")" = False ] &&
	k get sp gpu -o jsonpath="{.status.conditions[?(@.type==\"Accepted\")].message}" |
		grep -q "spec.extenders\[0\].tlsConfig.keyData: Forbidden: secret material is not accepted"'
same_config() { cfg >"$TMP/now.yaml" && cmp -s "$TMP/before.yaml" "$TMP/now.yaml"; }
check "the ConfigMap still holds the last accepted version" same_config
key_nowhere() {
	! k -n $NS get configmap,deployment -o yaml | grep -q 'c2VjcmV0LWlubGluZQ==' &&
		! k get sp gpu -o jsonpath='{.status}' | grep -q 'c2VjcmV0LWlubGluZQ=='
}
check "the inline key is in no ConfigMap, Deployment or status" key_nowhere

# without the extender the volume goes
k apply -f - >"$TMP/out" 2>&1 <<'EOF'
apiVersion: schedkit.io/v1alpha1
kind: SchedulerProfile
metadata: {name: gpu}
spec: {percentageOfNodesToScore: 50}
EOF
eventually "without the extender the Deployment has only the config volume" mounts_are "config= |config:/etc/schedkit:true "
check "no sanitizer report in the operator log" bash -c '! grep -q "ERROR: AddressSanitizer\|runtime error:" "$1"' _ "$TMP/operator.log"
