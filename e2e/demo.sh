#!/usr/bin/env bash
# `make demo`: schedkit end to end on a local API server, driven with the real kubectl.
#   1. starts bin/schedkit-apiserver (simulated kubelet) and adds four Nodes of two sizes;
#   2. installs the CRD, namespace and operator RBAC with `kubectl apply -k manifests/`;
#   3. runs bin/schedkit-operator as the operator Deployment would (a local process);
#   4. applies the sample SchedulerProfiles (manifests/samples: bin-packing and spread);
#   5. starts two bin/schedkit-scheduler replicas from the rendered ConfigMap, as the
#      schedkit-scheduler Deployment would: --config names the ConfigMap's config.yaml in a
#      kubelet-style volume that e2e/lib/configmap_volume.sh keeps in sync (what kubelet does for
#      a mounted ConfigMap), leader election on its Lease: one leads, one stands by;
#   6. creates pods for both schedulerNames, waits until they run, shows where they landed, and
#      asks the scheduler why with `kubectl schedkit explain` (through the API server's service
#      proxy to the replicas, which serve on local ports listed in the Service's Endpoints);
#   7. changes a SchedulerProfile: the running scheduler reloads it (no restart) and the profile
#      turns Applied again;
#   8. adds an out-of-tree plugin without rebuilding schedkit: installs the SDK (make install into
#      the work directory), builds plugins/examples/sample with only pkg-config, "publishes"
#      sample.so as a local image directory, applies manifests/samples/sample-plugin.yaml (a
#      SchedulerPlugin) and sample-scheduler.yaml, then does what the Deployment's rollout would:
#      runs its init containers' copy into each replica's plugin dir (e2e/lib/deployment_runner.sh)
#      and restarts the replicas with the flags the Deployment now carries; sample-scheduler pods
#      land only on the nodes labelled schedkit.io/sample=true, annotated by the plugin's PreBind;
#   9. an HTTP extender for one profile: runs bin/schedkit-sample-extender (e2e/extender), applies
#      a SchedulerProfile whose spec.extenders names it; that profile's pods go where the extender
#      says (it rejects large-a, prefers small-b and binds them itself), and it never hears of the
#      other profiles' pods.
# Everything stops at the end; KEEP=1 leaves the cluster, operator, volume sync and scheduler
# running and prints the KUBECONFIG to export and how to stop them.
# Env: SK_BIN (binaries; default <repo>/bin, or $OUT/bin), KEEP=1, DEMO_DIR (work directory),
#      CM_SYNC (seconds between the ConfigMap volume's syncs, default 0.5; kubelet's is a minute or
#      more: with CM_SYNC=60 changes still run at once, through the API watch).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-.}
SK_BIN=${SK_BIN:-$(cd "$ROOT" && cd "$OUT" && pwd)/bin}
KEEP=${KEEP:-0}
CM_SYNC=${CM_SYNC:-0.5}
# shellcheck source=lib/deployment_runner.sh
. "$ROOT/e2e/lib/deployment_runner.sh"
DIR=${DEMO_DIR:-$(mktemp -d /tmp/schedkit-demo.XXXXXX)}
mkdir -p "$DIR"
export KUBECONFIG=$DIR/kubeconfig
PIDS=()
NS=schedkit-system

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() {
	printf '\ndemo failed: %s\n' "$*" >&2
	for f in apiserver operator volume-sync scheduler-1 scheduler-2 extender; do
		[ -s "$DIR/$f.log" ] && { echo "--- last lines of $DIR/$f.log" >&2; tail -n 15 "$DIR/$f.log" >&2; }
	done
	exit 1
}
k() { timeout 60 kubectl --cache-dir "$DIR/cache" --request-timeout=30s "$@"; }

cleanup() {
	local rc=$?
	if [ "$KEEP" = 1 ] && [ "$rc" = 0 ]; then
		echo "${PIDS[0]}" >"$DIR/apiserver.pid"
		echo "${PIDS[1]}" >"$DIR/operator.pid"
		echo "${PIDS[2]}" >"$DIR/volume-sync.pid"
		echo "${PIDS[3]}" >"$DIR/scheduler-1.pid"
		echo "${PIDS[4]}" >"$DIR/scheduler-2.pid"
		echo "${PIDS[5]:-}" >"$DIR/extender.pid"
		cat >"$DIR/stop.sh" <<EOF
#!/bin/sh
# Stops what \`KEEP=1 make demo\` left running (schedulers, the ConfigMap volume sync, the
# operator, then the API server) and removes its files.
for f in extender scheduler-2 scheduler-1 volume-sync operator apiserver; do
	pid=\$(cat "$DIR/\$f.pid" 2>/dev/null) || continue
	kill "\$pid" 2>/dev/null
	while kill -0 "\$pid" 2>/dev/null; do sleep 0.1; done
done
rm -rf "$DIR"
EOF
		chmod +x "$DIR/stop.sh"
		say "The cluster is still up (KEEP=1)"
		cat <<EOF
  export KUBECONFIG=$KUBECONFIG
  kubectl get schedulerprofiles          # or: kubectl get sp -o wide
  kubectl get pods -o wide
  kubectl apply -f my-profile.yaml       # the operator validates and renders it; the running
                                         # scheduler reloads it within ~2 s: APPLIED turns True
  logs:  $DIR/{apiserver,operator,scheduler-1,scheduler-2}.log
  the scheduler's --config (a kubelet-style ConfigMap volume, synced every $CM_SYNC s): $DIR/volume/config.yaml
  stop:  $DIR/stop.sh
EOF
		return
	fi
	local pid
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
		pid=${PIDS[i]}
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	[ -z "${DEMO_DIR:-}" ] && rm -rf "$DIR"
	if [ "$rc" = 0 ]; then
		echo
		echo "Everything is stopped. To keep the cluster up and play with it: KEEP=1 make demo"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for b in schedkit-apiserver schedkit-operator schedkit-scheduler schedkit-sample-extender; do
	[ -x "$SK_BIN/$b" ] || die "$SK_BIN/$b is missing (run make)"
done
command -v kubectl >/dev/null || die "kubectl is not installed"

# ------------------------------------------------------------------ 1. API server and nodes
say "Starting a local Kubernetes API server (bin/schedkit-apiserver --simulate-kubelet)"
"$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$KUBECONFIG" --simulate-kubelet >"$DIR/apiserver.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do
	[ -s "$KUBECONFIG" ] && break
	kill -0 "${PIDS[0]}" 2>/dev/null || break
	sleep 0.1
done
[ -s "$KUBECONFIG" ] || die "the API server did not start"
echo "KUBECONFIG=$KUBECONFIG ($(grep -m1 'server:' "$KUBECONFIG" | awk '{print $2}'))"

say "Adding four simulated nodes: two small (2 CPU, 4Gi), two large (8 CPU, 16Gi)"
node() { # name cpu memory zone size
	cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $1
  labels:
    kubernetes.io/hostname: $1
    kubernetes.io/os: linux
    topology.kubernetes.io/zone: $4
    node.schedkit.io/size: $5
status:
  capacity: {cpu: "$2", memory: $3, pods: "110"}
  allocatable: {cpu: "$2", memory: $3, pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: kubelet is ready}
EOF
}
{
	node small-a 2 4Gi zone-a small
	node small-b 2 4Gi zone-b small
	node large-a 8 16Gi zone-a large
	node large-b 8 16Gi zone-b large
} >"$DIR/nodes.yaml"
k apply -f "$DIR/nodes.yaml" || die "cannot create the nodes"

# ------------------------------------------------------------------ 2. install
say "Installing schedkit: kubectl apply -k manifests/"
k apply -k "$ROOT/manifests" || die "kubectl apply -k manifests failed"
k wait --for condition=established --timeout=30s crd/schedulerprofiles.schedkit.io >/dev/null ||
	die "the CRD did not become established"
echo "(this local cluster runs no containers: the operator Deployment stays at 0 pods, and the demo"
echo " runs the operator and the scheduler as local processes, with the same flags)"

# ------------------------------------------------------------------ 3. operator
say "Running schedkit-operator"
"$SK_BIN/schedkit-operator" --kubeconfig "$KUBECONFIG" --namespace "$NS" --leader-elect=true \
	--health-probe-bind-address=127.0.0.1:0 --plugin-dir="$SK_BIN/../lib/schedkit/plugins" >"$DIR/operator.log" 2>&1 &
PIDS+=($!)
echo "pid $!, log $DIR/operator.log"

# ------------------------------------------------------------------ 4. profiles
say "Applying the sample SchedulerProfiles: kubectl apply -k manifests/samples/"
k apply -k "$ROOT/manifests/samples" || die "cannot apply the sample profiles"
ok=
for _ in $(seq 1 100); do
	acc=$(k get sp -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Accepted")].status}{" "}{end}' 2>/dev/null)
	[ "$acc" = "True True " ] && { ok=1; break; }
	sleep 0.2
done
[ -n "$ok" ] || die "the profiles were not accepted"
k get sp

say "The operator rendered them into ConfigMap $NS/schedkit-scheduler-config and created the scheduler's objects"
k -n "$NS" get configmap,serviceaccount,service,deployment,role,rolebinding -l app.kubernetes.io/managed-by=schedkit-operator
k -n "$NS" get configmap schedkit-scheduler-config -o go-template='{{index .data "config.yaml"}}' >"$DIR/config.yaml" ||
	die "cannot read the rendered configuration"
echo
sed 's/^/    /' "$DIR/config.yaml"

# ------------------------------------------------------------------ 5. scheduler
say "Starting schedkit-scheduler from that ConfigMap, as the schedkit-scheduler Deployment would"
# No kubelet here: e2e/lib/configmap_volume.sh plays its part for the mounted ConfigMap (new
# content in a fresh directory, then an atomic swap of the ..data symlink, every $CM_SYNC s).
"$ROOT/e2e/lib/configmap_volume.sh" "$DIR/volume" "$NS" schedkit-scheduler-config config.yaml "$CM_SYNC" \
	>"$DIR/volume-sync.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do
	[ -s "$DIR/volume/config.yaml" ] && break
	sleep 0.1
done
[ -s "$DIR/volume/config.yaml" ] || die "the ConfigMap volume did not get config.yaml"
echo "ConfigMap volume: $DIR/volume/config.yaml -> ..data/config.yaml (kept in sync, pid ${PIDS[2]})"
cat >"$DIR/scheduler.sh" <<EOF
#!/bin/sh
# Runs schedkit-scheduler as the Deployment does: --config in the mounted ConfigMap (reloaded when
# it changes), the same ConfigMap watched through the API (reloaded at once), leader election;
# serving on port \$1 (a pod would serve on 10259 of its own IP), the debug paths open for the
# API server's service proxy (docs/explain.md).
exec "$SK_BIN/schedkit-scheduler" --config "$DIR/volume/config.yaml" --kubeconfig "$KUBECONFIG" --leader-elect=true \\
	--leader-elect-resource-namespace=$NS --leader-elect-resource-name=schedkit-scheduler --v=1 \\
	--config-configmap=$NS/schedkit-scheduler-config \\
	--bind-address=127.0.0.1 --secure-port=\$1 --authorization-always-allow-paths='/healthz,/readyz,/livez,/debug/schedkit/*'
EOF
chmod +x "$DIR/scheduler.sh"
free_port() { # a TCP port nobody listens on (best effort)
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 30000))
		(exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; return; }
	done
	echo 0
}
port1=$(free_port)
port2=$(free_port)
"$DIR/scheduler.sh" "$port1" >"$DIR/scheduler-1.log" 2>&1 &
PIDS+=($!)
echo "replica 1: pid $!, log $DIR/scheduler-1.log, port $port1"
k wait --for=condition=Applied --timeout=60s sp --all >/dev/null ||
	die "the scheduler did not report the rendered configuration on its Lease"
"$DIR/scheduler.sh" "$port2" >"$DIR/scheduler-2.log" 2>&1 &
PIDS+=($!)
echo "replica 2: pid $!, log $DIR/scheduler-2.log, port $port2 (standby: the Deployment runs 2 replicas, one leads)"
# What the endpoints controller would write for the operator's Service schedkit-scheduler (port
# 10259, targetPort "metrics"): the two replicas. kubectl schedkit reaches them through the API
# server's service proxy, as on a real cluster.
k apply -f - >/dev/null <<EOF || die "cannot write the scheduler's Endpoints"
apiVersion: v1
kind: Endpoints
metadata: {name: schedkit-scheduler, namespace: $NS}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [{name: metrics, port: $port1, protocol: TCP}]
- addresses: [{ip: 127.0.0.1}]
  ports: [{name: metrics, port: $port2, protocol: TCP}]
EOF
echo "Lease $NS/schedkit-scheduler: holder $(k -n $NS get lease schedkit-scheduler -o jsonpath='{.spec.holderIdentity}'),"
echo "config hash $(k -n $NS get lease schedkit-scheduler \
	-o go-template='{{index .metadata.annotations "schedkit.io/config-hash"}}' | cut -c1-12)...; both profiles are Applied:"
k get sp -o wide

# ------------------------------------------------------------------ 6. pods
say "Creating 4 pods with schedulerName bin-packing and 4 with schedulerName spread (500m CPU, 512Mi each)"
pod() { # name schedulerName
	cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
  labels: {app: schedkit-demo, profile: $2}
spec:
  schedulerName: $2
  containers:
  - name: app
    image: pause:3.10
    resources:
      requests: {cpu: 500m, memory: 512Mi}
EOF
}
{
	for i in 1 2 3 4; do pod "pack-$i" bin-packing; done
	for i in 1 2 3 4; do pod "spread-$i" spread; done
} >"$DIR/pods.yaml"
k apply -f "$DIR/pods.yaml" || die "cannot create the pods"
k wait --for=condition=Ready --timeout=60s pod -l app=schedkit-demo >/dev/null || {
	k get pods -o wide
	die "the pods did not all get scheduled and run"
}

say "kubectl get schedulerprofiles"
k get schedulerprofiles
say "kubectl get pods -o wide"
k get pods -o wide -L profile
echo
echo "bin-packing (MostAllocated) filled one small node; spread (LeastAllocated, balanced) put its"
echo "pods on the emptiest nodes. Per node:"
k get pods -o go-template='{{range .items}}{{.spec.nodeName}} {{.spec.schedulerName}}{{"\n"}}{{end}}' |
	sort | uniq -c | awk '{printf "  %-8s %-12s %s pod(s)\n", $2, $3, $1}'

say "Asking the scheduler why: kubectl schedkit explain spread-1 (the spread profile keeps decision records)"
# bin/ on PATH: kubectl finds the kubectl-schedkit plugin there (plugins take no kubectl flags first)
PATH="$SK_BIN:$PATH" timeout 60 kubectl schedkit explain spread-1 || die "kubectl schedkit explain spread-1 failed"
PATH="$SK_BIN:$PATH" timeout 60 kubectl schedkit why-pending --profile spread || die "kubectl schedkit why-pending failed"

# ------------------------------------------------------------------ 7. reload
say "Changing a profile while the scheduler runs: kubectl patch sp spread (percentageOfNodesToScore 50)"
old_hash=$(k -n $NS get lease schedkit-scheduler -o go-template='{{index .metadata.annotations "schedkit.io/config-hash"}}')
k patch sp spread --type merge -p '{"spec":{"percentageOfNodesToScore":50}}' || die "cannot patch the profile"
ok=
for _ in $(seq 1 150); do
	new_hash=$(k -n $NS get lease schedkit-scheduler -o go-template='{{index .metadata.annotations "schedkit.io/config-hash"}}')
	hashes=$(k get sp spread -o jsonpath='{.status.renderedHash} {.status.appliedHash}')
	applied=$(k get sp spread -o jsonpath='{.status.conditions[?(@.type=="Applied")].status}')
	if [ "$new_hash" != "$old_hash" ] && [ "${hashes% *}" = "${hashes#* }" ] && [ "$applied" = True ]; then ok=1; break; fi
	sleep 0.2
done
[ -n "$ok" ] || die "the scheduler did not reload the changed profile"
for r in 1 2; do kill -0 "${PIDS[$((r + 2))]}" 2>/dev/null || die "scheduler replica $r is gone"; done
echo "The operator rewrote the ConfigMap; both scheduler replicas saw it through their API watch (the"
echo "mounted config.yaml follows at the volume's next sync, every ${CM_SYNC} s) and"
echo "reloaded it without a restart (same pids ${PIDS[3]} ${PIDS[4]}):"
for r in 1 2; do
	grep -h '"Configuration reloaded"' "$DIR/scheduler-$r.log" | tail -1 |
		sed "s/.*\"Configuration reloaded\"/  replica $r: \"Configuration reloaded\"/; s/ config-hash=[0-9a-f]* previous=[0-9a-f]*//"
done
echo "Lease config hash ${old_hash:0:12}... -> ${new_hash:0:12}...; the profile is Applied again:"
k get sp
# ------------------------------------------------------------------ 8. an out-of-tree plugin
say "Building an out-of-tree plugin against the installed SDK: plugins/examples/sample (no schedkit rebuild)"
make -s --no-print-directory -C "$ROOT" install OUT="$OUT" PREFIX="$DIR/sdk" >"$DIR/sdk-install.log" 2>&1 ||
	die "make install PREFIX=$DIR/sdk failed (see $DIR/sdk-install.log)"
echo "make install PREFIX=$DIR/sdk: headers in $DIR/sdk/include/schedkit, $DIR/sdk/lib/pkgconfig/schedkit-plugin.pc"
rm -rf "$DIR/sample-src"
cp -r "$ROOT/plugins/examples/sample" "$DIR/sample-src"
rm -f "$DIR/sample-src/sample.so"
PKG_CONFIG_PATH=$DIR/sdk/lib/pkgconfig make -s -C "$DIR/sample-src" >"$DIR/sample-build.log" 2>&1 ||
	die "building the sample plugin failed (see $DIR/sample-build.log)"
echo "PKG_CONFIG_PATH=$DIR/sdk/lib/pkgconfig make -C <a copy of plugins/examples/sample> -> sample.so"
image=$(sed -n 's/^  image: *//p' "$ROOT/manifests/samples/sample-plugin.yaml")
imgdir=$(sk_image_dir "$DIR/images" "$image")
mkdir -p "$imgdir/plugins"
cp "$DIR/sample-src/sample.so" "$imgdir/plugins/sample.so"
echo "\"published\" as image $image: $imgdir/plugins/sample.so (the demo's stand-in for an OCI image)"

say "Installing it with a SchedulerPlugin, and the sample-scheduler profile that uses it"
hash_before=$(sk_deploy_plugins_hash "$NS")
k apply -f "$ROOT/manifests/samples/sample-plugin.yaml" -f "$ROOT/manifests/samples/sample-scheduler.yaml" ||
	die "cannot apply the SchedulerPlugin and its profile"
ok=
for _ in $(seq 1 100); do
	p=$(k get schedulerplugin sample -o jsonpath='{.status.conditions[?(@.type=="Accepted")].status}' 2>/dev/null)
	a=$(k get sp sample-scheduler -o jsonpath='{.status.conditions[?(@.type=="Accepted")].status}' 2>/dev/null)
	h=$(sk_deploy_plugins_hash "$NS")
	if [ "$p" = True ] && [ "$a" = True ] && [ -n "$h" ] && [ "$h" != "$hash_before" ]; then ok=1; break; fi
	sleep 0.2
done
[ -n "$ok" ] || die "the SchedulerPlugin or the sample-scheduler profile was not accepted"
k get schedulerplugins
echo
echo "The operator added to the Deployment an emptyDir, one init container per SchedulerPlugin and"
echo "--plugin-dir; its pod template's schedkit.io/plugins-hash changed (${h:0:12}...), so it rolls:"
k -n "$NS" get deployment schedkit-scheduler \
	-o go-template='{{range .spec.template.spec.initContainers}}  initContainer {{.name}}: {{.image}} {{.command}}{{"\n"}}{{end}}'
echo "  scheduler args: $(k -n "$NS" get deployment schedkit-scheduler -o jsonpath='{.spec.template.spec.containers[0].args}')"

say "Rolling the scheduler replicas as the Deployment would: the init containers' copy, then the new flags"
# Each replica has its own emptyDir ($DIR/plugins-N); scheduler.sh N runs replica N.
mapfile -t sargs < <(sk_deploy_scheduler_args "$NS" "$DIR/volume" "@PLUGIN_DIR@")
{
	echo '#!/bin/sh'
	echo '# Runs schedkit-scheduler replica $1 with the flags of the Deployment'"'"'s scheduler container'
	echo '# (paths mapped to this machine): --config in the mounted ConfigMap, --plugin-dir its emptyDir.'
	printf 'exec "%s"' "$SK_BIN/schedkit-scheduler"
	for a in "${sargs[@]}"; do
		[ "$a" = "--plugin-dir=@PLUGIN_DIR@" ] && a="--plugin-dir=$DIR/plugins-\$1"
		printf ' "%s"' "$a"
	done
	printf ' --kubeconfig "%s"\n' "$KUBECONFIG"
} >"$DIR/scheduler.sh"
chmod +x "$DIR/scheduler.sh"
for r in 1 2; do
	kill "${PIDS[$((r + 2))]}" 2>/dev/null
	wait "${PIDS[$((r + 2))]}" 2>/dev/null
	rm -rf "$DIR/plugins-$r"
	sk_deploy_run_init "$NS" "$DIR/images" "$DIR/plugins-$r" || die "the init containers' copy failed"
	"$DIR/scheduler.sh" "$r" >>"$DIR/scheduler-$r.log" 2>&1 &
	PIDS[$((r + 2))]=$!
	echo "replica $r: pid $!, plugin dir $DIR/plugins-$r: $(cd "$DIR/plugins-$r" && ls)"
done
k wait --for=condition=Applied --timeout=60s sp --all >/dev/null ||
	die "the restarted scheduler did not load the plugin and the new profile"
k get sp

say "Labelling small-b and large-a schedkit.io/sample=true; 4 pods with schedulerName sample-scheduler"
k label node small-b large-a schedkit.io/sample=true >/dev/null || die "cannot label the nodes"
for i in 1 2 3 4; do
	pod "sample-$i" sample-scheduler | sed 's/cpu: 500m, memory: 512Mi/cpu: 100m, memory: 128Mi/'
done >"$DIR/sample-pods.yaml"
k apply -f "$DIR/sample-pods.yaml" || die "cannot create the sample pods"
k wait --for=condition=Ready --timeout=60s pod -l profile=sample-scheduler >/dev/null || {
	k get pods -o wide -l profile=sample-scheduler
	die "the sample-scheduler pods did not all get scheduled and run"
}
k get nodes -L schedkit.io/sample
echo
printf '  %-10s %-9s %s\n' POD NODE "ANNOTATION schedkit.io/sample-prebind"
k get pods -l profile=sample-scheduler \
	-o go-template='{{range .items}}{{.metadata.name}} {{.spec.nodeName}} {{index .metadata.annotations "schedkit.io/sample-prebind"}}{{"\n"}}{{end}}' \
	>"$DIR/sample-placement.txt"
while read -r name node ann; do
	printf '  %-10s %-9s %s\n' "$name" "$node" "$ann"
	case $node in small-b | large-a) ;; *) die "$name landed on unlabelled node $node" ;; esac
	[ "$ann" = "$node" ] || die "$name lacks the PreBind annotation"
done <"$DIR/sample-placement.txt"
echo
echo "Sample's PreFilter and Filter kept the pods on the labelled nodes and its PreBind annotated"
echo "each with its node: a plugin built out of tree against the SDK, shipped as an image and"
echo "installed with a SchedulerPlugin, run by the same schedkit binaries as before."

# ------------------------------------------------------------------ 9. an extender for one profile
say "An HTTP extender for one profile only: bin/schedkit-sample-extender"
api=$(grep -m1 'server:' "$KUBECONFIG" | awk '{print $2}')
"$SK_BIN/schedkit-sample-extender" --port 0 --port-file "$DIR/extender.port" --log "$DIR/extender-calls.log" \
	--reject-node large-a --prefer-node small-b --apiserver "$api" >"$DIR/extender.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do
	[ -s "$DIR/extender.port" ] && break
	sleep 0.1
done
[ -s "$DIR/extender.port" ] || die "the sample extender did not start"
xport=$(cat "$DIR/extender.port")
echo "pid ${PIDS[5]}, port $xport: filter rejects large-a, prioritize prefers small-b (10 vs 1), bind POSTs the Binding"
cat >"$DIR/with-extender.yaml" <<EOF
apiVersion: schedkit.io/v1alpha1
kind: SchedulerProfile
metadata:
  name: with-extender
spec:
  extenders:                  # this profile's pods only (a schedkit extension)
  - urlPrefix: http://127.0.0.1:$xport/demo
    filterVerb: filter
    prioritizeVerb: prioritize
    weight: 10
    bindVerb: bind
    nodeCacheCapable: false   # full Node objects in every request
EOF
sed 's/^/    /' "$DIR/with-extender.yaml"
k apply -f "$DIR/with-extender.yaml" || die "cannot apply the with-extender profile"
k wait --for=condition=Applied --timeout=60s sp with-extender >/dev/null ||
	die "the scheduler did not load the with-extender profile"
k get sp
for i in 1 2 3; do
	pod "ext-$i" with-extender | sed 's/cpu: 500m, memory: 512Mi/cpu: 100m, memory: 128Mi/'
done >"$DIR/ext-pods.yaml"
k apply -f "$DIR/ext-pods.yaml" || die "cannot create the with-extender pods"
k wait --for=condition=Ready --timeout=60s pod -l profile=with-extender >/dev/null || {
	k get pods -o wide -l profile=with-extender
	die "the with-extender pods did not all get scheduled and run"
}
k get pods -o wide -l profile=with-extender
for i in 1 2 3; do
	[ "$(k get pod "ext-$i" -o jsonpath='{.spec.nodeName}')" = small-b ] || die "ext-$i did not land on small-b"
done
echo
echo "What the extender was asked (its log, $DIR/extender-calls.log):"
sed 's/^/  /' "$DIR/extender-calls.log"
grep -Eq 'pod=default/(pack|spread|sample)-' "$DIR/extender-calls.log" && die "the extender was sent another profile's pod"
echo
echo "Every call was about a with-extender pod: the bin-packing, spread and sample-scheduler pods"
echo "never reached it. It was sent the Node objects that passed the plugins (small-a is full of"
echo "bin-packing pods), turned down large-a, scored small-b highest, and bound each pod itself"
echo "(POST pods/<name>/binding)."
exit 0
