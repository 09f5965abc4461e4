#!/usr/bin/env bash
# End-to-end: the install files as a user applies them, with the real kubectl against
# bin/schedkit-apiserver: install.yaml is exactly `kubectl kustomize manifests/` (regenerate it
# with `make install.yaml`); `kubectl apply -f crds/` applies the CRDs alone (no kustomization
# file in the way) and `kubectl apply -f install.yaml` the whole install; every field of the
# CRDs' schemas has a description, shown by `kubectl explain`; conditions are listType=map.
# Prints TAP-style "ok"/"not ok" lines.
# Env: SK_BIN (binaries, default $SK_ROOT/bin), SK_ROOT (repo, default: this script's ../..).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
# shellcheck source=../lib/suite_lib.sh
. "$SK_ROOT/e2e/lib/suite_lib.sh"
sk_suite_begin sk-manifests
sk_need_bins schedkit-apiserver
export KUBECONFIG=$TMP/kubeconfig

# ------------------------------------------------------------------ install.yaml
kubectl kustomize "$SK_ROOT/manifests" >"$TMP/kustomized.yaml" 2>"$TMP/out" || { notok "kubectl kustomize manifests/"; diag; }
if cmp -s "$TMP/kustomized.yaml" "$SK_ROOT/install.yaml"; then
	ok "install.yaml equals kubectl kustomize manifests/"
else
	notok "install.yaml equals kubectl kustomize manifests/ (run make install.yaml)"
	diff "$SK_ROOT/install.yaml" "$TMP/kustomized.yaml" >"$TMP/out"; diag
fi

"$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$KUBECONFIG" >"$TMP/apiserver.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
	[ -s "$KUBECONFIG" ] && break
	sleep 0.1
done
[ -s "$KUBECONFIG" ] || { echo "not ok - schedkit-apiserver started"; sed 's/^/#   /' "$TMP/apiserver.log"; exit 1; }
ok "schedkit-apiserver started"

# ------------------------------------------------------------------ crds/
k apply -f "$SK_ROOT/crds/" >"$TMP/out" 2>&1
rc=$?
if [ $rc = 0 ] && [ "$(grep -c ' created$' "$TMP/out")" = 2 ] && [ "$(wc -l <"$TMP/out")" = 2 ]; then
	ok "kubectl apply -f crds/ applies exactly the two CRDs"
else
	notok "kubectl apply -f crds/ applies exactly the two CRDs (exit $rc)"; diag
fi
check "kubectl apply -k crds/ still works (crds/Kustomization)" k apply -k "$SK_ROOT/crds/"
check "the CRDs become Established" k wait --for condition=established --timeout=20s \
	crd/schedulerprofiles.schedkit.io crd/schedulerplugins.schedkit.io

# Every property of every schema has a description (kubectl explain shows them).
undescribed() { # crd: the paths of properties without a description
	k get crd "$1" -o json | jq -r '
		def walk_props(p): (.properties // {} | to_entries[] | .key as $k |
			(if .value.description then empty else p + $k end),
			(.value | walk_props(p + $k + "."))),
			(.items // empty | walk_props(p));
		.spec.versions[].schema.openAPIV3Schema | walk_props("")'
}
nprops() { # crd: how many properties its schema has
	k get crd "$1" -o json | jq '[.spec.versions[0].schema.openAPIV3Schema | .. | objects | .properties? // empty | keys[]] | length'
}
for crd in schedulerprofiles.schedkit.io schedulerplugins.schedkit.io; do
	undescribed "$crd" >"$TMP/out" 2>&1
	n=$(nprops "$crd")
	if [ ! -s "$TMP/out" ] && [ "${n:-0}" -gt 10 ]; then ok "$crd: all $n schema fields have a description"
	else notok "$crd: every schema field has a description (of ${n:-?})"; diag; fi
done
expect "kubectl explain describes a deep field (sp.spec.plugins.score.enabled.weight)" 'Score weight' \
	k explain schedulerprofiles.spec.plugins.score.enabled.weight
expect "kubectl explain describes the status conditions" 'Accepted .*Applied .*Ready' \
	bash -c "$(declare -f k); k explain schedulerprofiles.status.conditions | tr '\n' ' '"
for crd in schedulerprofiles.schedkit.io schedulerplugins.schedkit.io; do
	expect "$crd: status.conditions is listType=map keyed by type" '^map type$' k get crd "$crd" \
		-o jsonpath='{.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.conditions.x-kubernetes-list-type} {.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.conditions.x-kubernetes-list-map-keys[0]}'
done

# ------------------------------------------------------------------ install.yaml applies
check "kubectl apply -f install.yaml" k apply -f "$SK_ROOT/install.yaml"
check "it installed the namespace, the operator's ServiceAccount, RBAC and Deployment" \
	k -n schedkit-system get serviceaccount/schedkit-operator deployment/schedkit-operator role/schedkit-operator \
	rolebinding/schedkit-operator
check "... and its cluster RBAC" k get clusterrole/schedkit-operator clusterrolebinding/schedkit-operator
