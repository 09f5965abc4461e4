#!/usr/bin/env bash
# End-to-end: an out-of-tree plugin installed through a SchedulerPlugin, with the real kubectl
# against bin/schedkit-apiserver, schedkit-operator and schedkit-scheduler as local processes.
# The SDK is installed into a temporary prefix and plugins/examples/sample built from a copy
# outside the tree with only PKG_CONFIG_PATH; sample.so is "published" as a local image directory;
# manifests/samples/sample-plugin.yaml -> Accepted=True and the Deployment gets its init container,
# --plugin-dir and plugins-hash; the init container's copy is emulated (e2e/lib/deployment_runner.sh)
# and the scheduler started with the Deployment's flags; manifests/samples/sample-scheduler.yaml ->
# Accepted and Applied; every sample-scheduler pod binds to a labelled node and carries
# schedkit.io/sample-prebind. Then a broken plugin file in the plugin dir: the scheduler keeps its
# previous configuration (pods of another profile still bind) and the profiles turn Applied=False
# ConfigRejected with the loader's message; removing it recovers. A SchedulerPlugin shadowing an
# in-tree plugin is Accepted=False and changes nothing. Prints TAP-style "ok"/"not ok" lines.
# Env: SK_BIN (binaries, default $SK_ROOT/bin), SK_ROOT (repo, default: this script's ../..), OUT.
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
OUT=${OUT:-.}
NS=schedkit-system
# shellcheck source=../lib/suite_lib.sh
. "$SK_ROOT/e2e/lib/suite_lib.sh"
# shellcheck source=../lib/configmap_volume.sh
. "$SK_ROOT/e2e/lib/configmap_volume.sh"
# shellcheck source=../lib/deployment_runner.sh
. "$SK_ROOT/e2e/lib/deployment_runner.sh"
sk_suite_begin sk-plugin-e2e
sk_need_bins schedkit-apiserver schedkit-operator schedkit-scheduler
export KUBECONFIG=$TMP/kubeconfig

# ------------------------------------------------------------------ build and publish the plugin
PREFIX=$TMP/sdk
if make -s --no-print-directory -C "$SK_ROOT" install OUT="$OUT" PREFIX="$PREFIX" >"$TMP/out" 2>&1; then
	ok "make install PREFIX=\$TMP/sdk (the SDK headers and schedkit-plugin.pc)"
else
	notok "make install PREFIX=\$TMP/sdk"; diag; exit 1
fi
cp -r "$SK_ROOT/plugins/examples/sample" "$TMP/sample-src"
rm -f "$TMP/sample-src/sample.so"
if PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig make -s -C "$TMP/sample-src" >"$TMP/out" 2>&1 && [ -f "$TMP/sample-src/sample.so" ]; then
	ok "sample.so builds out of tree with only PKG_CONFIG_PATH"
else
	notok "sample.so builds out of tree with only PKG_CONFIG_PATH"; diag; exit 1
fi
IMAGES=$TMP/images
image=$(sed -n 's/^  image: *//p' "$SK_ROOT/manifests/samples/sample-plugin.yaml")
mkdir -p "$(sk_image_dir "$IMAGES" "$image")/plugins"
cp "$TMP/sample-src/sample.so" "$(sk_image_dir "$IMAGES" "$image")/plugins/sample.so"
ok "published as image $image (a local directory standing for it)"

# ------------------------------------------------------------------ cluster, operator, resources
"$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$KUBECONFIG" >"$TMP/apiserver.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
	[ -s "$KUBECONFIG" ] && break
	sleep 0.1
done
[ -s "$KUBECONFIG" ] || bail "schedkit-apiserver started"
ok "schedkit-apiserver started"
check "kubectl apply -k manifests/" k apply -k "$SK_ROOT/manifests"
check "the SchedulerPlugin CRD becomes Established" k wait --for condition=established --timeout=20s \
	crd/schedulerplugins.schedkit.io crd/schedulerprofiles.schedkit.io
"$SK_BIN/schedkit-operator" --kubeconfig "$KUBECONFIG" --namespace $NS --health-probe-bind-address=127.0.0.1:0 \
	--v=1 >"$TMP/operator.log" 2>&1 &
OP_PID=$!
for i in 0 1 2 3; do
	label=
	[ "$i" -lt 2 ] && label=',"schedkit.io/sample":"true"'
	printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-%d","labels":{"kubernetes.io/hostname":"node-%d"%s}},"status":{"allocatable":{"cpu":"8","memory":"16Gi","pods":"110"},"capacity":{"cpu":"8","memory":"16Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}}\n' \
		"$i" "$i" "$label"
done >"$TMP/nodes.json"
check "four nodes, node-0 and node-1 labelled schedkit.io/sample=true" k apply -f "$TMP/nodes.json"
check "kubectl apply -k manifests/samples/ (the plain profiles)" k apply -k "$SK_ROOT/manifests/samples"
check "kubectl apply -f manifests/samples/sample-plugin.yaml" k apply -f "$SK_ROOT/manifests/samples/sample-plugin.yaml"
eventually "SchedulerPlugin sample is Accepted=True" cond_is schedulerplugin sample Accepted status True
expect "kubectl get splugin shows the columns" '^NAME +IMAGE +PLUGINS +ACCEPTED +AGE' k get splugin
expect "... and the plugin" '^sample +schedkit/sample-plugin:0\.2\.0 +\[Sample\] +True' k get splugin
check "kubectl apply -f manifests/samples/sample-scheduler.yaml" k apply -f "$SK_ROOT/manifests/samples/sample-scheduler.yaml"
eventually "the SchedulerProfile using Sample is Accepted=True" cond_is sp sample-scheduler Accepted status True
eventually "the Deployment carries the plugins-hash" test -n "$(sk_deploy_plugins_hash $NS)"
expect "the Deployment: init container plugin-sample copying /plugins/sample.so into the emptyDir" \
	'^plugin-sample schedkit/sample-plugin:0\.2\.0 \["cp","-f","/plugins/sample\.so","/var/lib/schedkit/plugins/"\] plugins$' \
	k -n $NS get deployment schedkit-scheduler -o jsonpath='{.spec.template.spec.initContainers[0].name} {.spec.template.spec.initContainers[0].image} {.spec.template.spec.initContainers[0].command} {.spec.template.spec.initContainers[0].volumeMounts[0].name}'
expect "... and --plugin-dir=/var/lib/schedkit/plugins on the scheduler" '--plugin-dir=/var/lib/schedkit/plugins' \
	k -n $NS get deployment schedkit-scheduler -o jsonpath='{.spec.template.spec.containers[0].args}'

# ------------------------------------------------------------------ run it as the Deployment would
VOL=$TMP/volume PLUGDIR=$TMP/plugins
sk_cm_volume_loop "$VOL" $NS schedkit-scheduler-config config.yaml 0.5 &
SYNC_PID=$!
eventually "the ConfigMap volume holds config.yaml" test -s "$VOL/config.yaml"
check "the init containers' copy (emulated) puts sample.so into the plugin dir" sk_deploy_run_init $NS "$IMAGES" "$PLUGDIR"
check "... byte for byte the built plugin" cmp "$TMP/sample-src/sample.so" "$PLUGDIR/sample.so"
mapfile -t SARGS < <(sk_deploy_scheduler_args $NS "$VOL" "$PLUGDIR")
"$SK_BIN/schedkit-scheduler" "${SARGS[@]}" --kubeconfig "$KUBECONFIG" >"$TMP/scheduler.log" 2>&1 &
SCHED_PID=$!
eventually "with the plugin loaded, the SchedulerProfile using Sample is Applied=True" \
	cond_is sp sample-scheduler Applied status True || bail "the scheduler runs the sample profile"
pod() { # name schedulerName
	printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default"},"spec":{"schedulerName":"%s","containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":"100m"}}}]}}\n' "$1" "$2"
}
for i in 1 2 3 4 5 6; do pod "sample-$i" sample-scheduler; done | k apply -f - >/dev/null
bound_labelled() { # pod...: each is bound to a labelled node and carries the PreBind annotation naming it
	local p node ann
	for p in "$@"; do
		node=$(k get pod "$p" -o jsonpath='{.spec.nodeName}')
		ann=$(k get pod "$p" -o jsonpath='{.metadata.annotations.schedkit\.io/sample-prebind}')
		case $node in node-0 | node-1) ;; *) echo "$p on '$node'"; return 1 ;; esac
		[ "$ann" = "$node" ] || { echo "$p: annotation '$ann', node $node"; return 1; }
	done
}
eventually "every sample-scheduler pod is bound to a labelled node, annotated schedkit.io/sample-prebind=<node>" \
	bound_labelled sample-1 sample-2 sample-3 sample-4 sample-5 sample-6
on_unlabelled() { k get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' | grep -E ' node-[23]$'; }
check "the unlabelled nodes got none" bash -c "$(declare -f k on_unlabelled); TMP=$TMP; ! on_unlabelled"

# ------------------------------------------------------------------ a broken plugin file
printf 'this is not a shared object\n' >"$PLUGDIR/zz-broken.so"
eventually "a broken plugin file: the profiles turn Applied=False, reason ConfigRejected" \
	cond_is sp sample-scheduler Applied reason ConfigRejected
expect "... with the loader's message naming the file" "plugin file \"$PLUGDIR/zz-broken.so\"" \
	cond sp sample-scheduler Applied message
check "... for every profile of that configuration" cond_is sp spread Applied reason ConfigRejected
check "the scheduler kept running" kill -0 "$SCHED_PID"
pod spread-after spread | k apply -f - >/dev/null
pod sample-after sample-scheduler | k apply -f - >/dev/null
eventually "the previous configuration keeps scheduling: a spread pod binds" \
	test -n "$(k get pod spread-after -o jsonpath='{.spec.nodeName}')"
eventually "... and Sample still filters: a new sample-scheduler pod lands on a labelled node" bound_labelled sample-after
rm -f "$PLUGDIR/zz-broken.so"
applied_again() { # prints what it saw (the diagnostic when it never holds)
	cond sp sample-scheduler Applied reason; echo
	k -n $NS get lease schedkit-scheduler -o jsonpath='{.metadata.annotations}'; echo
	grep -E 'reload|Reload' "$TMP/scheduler.log" | tail -5
	cond_is sp sample-scheduler Applied status True
}
eventually "removing the broken file: the scheduler reloads and the profile is Applied=True again" applied_again

# ------------------------------------------------------------------ a plugin name shadowing an in-tree one
hash_before=$(sk_deploy_plugins_hash $NS)
printf '%s\n' 'apiVersion: schedkit.io/v1alpha1' 'kind: SchedulerPlugin' 'metadata: {name: shadow}' \
	'spec: {image: "example/shadow:1", files: [/plugins/shadow.so], plugins: [NodeName]}' | k apply -f - >/dev/null
eventually "a SchedulerPlugin providing NodeName is Accepted=False" cond_is schedulerplugin shadow Accepted status False
expect "... saying it shadows an in-tree plugin" '^spec\.plugins\[0\]: Invalid value: "NodeName": shadows an in-tree plugin$' \
	cond schedulerplugin shadow Accepted message
sleep 0.5
if [ "$(sk_deploy_plugins_hash $NS)" = "$hash_before" ] &&
	[ "$(k -n $NS get deployment schedkit-scheduler -o jsonpath='{.spec.template.spec.initContainers[*].name}')" = plugin-sample ]; then
	ok "... and the Deployment is unchanged (no init container, same plugins-hash)"
else
	notok "the shadowing SchedulerPlugin left the Deployment unchanged"
fi

stop_pid "$SCHED_PID"; SCHED_PID=
if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/scheduler.log" "$TMP/operator.log" 2>/dev/null; then
	notok "no sanitizer report in the scheduler and operator logs"
	grep -hE -A12 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/scheduler.log" "$TMP/operator.log" | head -40 | sed 's/^/#   /'
else
	ok "no sanitizer report in the scheduler and operator logs"
fi
