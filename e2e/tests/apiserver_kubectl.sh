#!/usr/bin/env bash
# End-to-end: drive bin/schedkit-apiserver with the real kubectl (v1.32) the way users do:
# apply -f (multi-document, CRD + custom resources + built-ins) with default validation, a second
# apply (3-way patches), get -o wide/yaml/json/jsonpath, CRD printer columns, get -w, label and
# field selectors, deletion held by a finalizer, patch --type merge/json/strategic, schema
# validation (422) and strict field validation (400). Prints TAP-style "ok"/"not ok" lines.
# Env: SK_BIN (binaries, default $SK_ROOT/bin), SK_ROOT (repo, default: this script's ../..).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
FIX=$SK_ROOT/e2e/fixtures/apiserver-kubectl
TMP=$(mktemp -d /tmp/sk-kubectl.XXXXXX)
SERVER_PID=
WATCH_PID=

cleanup() {
	[ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
# check DESC CMD...: ok when CMD succeeds; otherwise prints the captured output as comments.
diag() { sed 's/^/#   /' "$TMP/out" | head -40; }
check() {
	local desc=$1; shift
	if "$@" >"$TMP/out" 2>&1; then ok "$desc"; else notok "$desc"; diag; fi
}
# expect DESC PATTERN CMD...: ok when CMD's combined output matches the extended regex PATTERN.
expect() {
	local desc=$1 pat=$2; shift 2
	"$@" >"$TMP/out" 2>&1
	if grep -Eq -- "$pat" "$TMP/out"; then ok "$desc"; else notok "$desc (want /$pat/)"; diag; fi
}
# expect_fail DESC PATTERN CMD...: CMD must fail and print PATTERN.
expect_fail() {
	local desc=$1 pat=$2; shift 2
	if "$@" >"$TMP/out" 2>&1; then
		notok "$desc (command succeeded)"; diag
	elif grep -Eq -- "$pat" "$TMP/out"; then ok "$desc"
	else notok "$desc (want /$pat/)"; diag; fi
}

if ! command -v kubectl >/dev/null 2>&1; then
	echo "not ok - kubectl is installed"; exit 1
fi
if [ ! -x "$SK_BIN/schedkit-apiserver" ]; then
	echo "not ok - $SK_BIN/schedkit-apiserver exists (make bin/schedkit-apiserver)"; exit 1
fi

"$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$TMP/kubeconfig" >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
	[ -s "$TMP/kubeconfig" ] && break
	kill -0 "$SERVER_PID" 2>/dev/null || break
	sleep 0.1
done
if [ ! -s "$TMP/kubeconfig" ]; then
	echo "not ok - schedkit-apiserver writes its kubeconfig"; sed 's/^/#   /' "$TMP/server.log"; exit 1
fi
ok "schedkit-apiserver started and wrote its kubeconfig"

export KUBECONFIG=$TMP/kubeconfig
# A fresh discovery/OpenAPI cache per run, so every request really reaches the server.
k() { timeout 30 kubectl --cache-dir "$TMP/cache" --request-timeout=20s "$@"; }

# ---------------------------------------------------------------- apply
expect "apply -f CRD (default validation)" 'customresourcedefinition.apiextensions.k8s.io/widgets.example.com created' \
	k apply -f "$FIX/crd.yaml"
check "CRD becomes Established" k wait --for condition=established --timeout=20s crd/widgets.example.com

# CRD and custom resource in one file: like a real cluster, the first apply creates the CRD and
# the ConfigMap and reports the unknown kind; the second creates the custom resource. (kubectl
# only gets past validation of the unknown kind if GET /openapi/v2 answers with a parsable
# protobuf document, even an empty one.)
k apply -f "$FIX/crd-and-cr.yaml" >"$TMP/out" 2>&1
if grep -q 'customresourcedefinition.apiextensions.k8s.io/gadgets.example.com created' "$TMP/out" &&
	grep -q '^configmap/combo created' "$TMP/out" && grep -q 'ensure CRDs are installed first' "$TMP/out"
then ok "apply CRD + custom resource in one file: CRD and ConfigMap created, CR reported as not yet mapped"
else notok "apply CRD + custom resource in one file: CRD and ConfigMap created, CR reported as not yet mapped"; diag; fi
k wait --for condition=established --timeout=20s crd/gadgets.example.com >/dev/null 2>&1
expect "  ... a second apply creates the custom resource" '^gadget.example.com/g1 created$' k apply -f "$FIX/crd-and-cr.yaml"

k apply -f "$FIX/objects.yaml" >"$TMP/apply1" 2>&1
rc=$?
cp "$TMP/apply1" "$TMP/out"
n=$(grep -cE '^(widget.example.com/w1|deployment.apps/web|configmap/demo|pod/p1|node/node-a) created$' "$TMP/apply1")
if [ "$rc" = 0 ] && [ "$n" = 5 ]; then ok "apply -f multi-document: Widget, Deployment, ConfigMap, Pod, Node created"
else notok "apply -f multi-document: Widget, Deployment, ConfigMap, Pod, Node created ($n/5, rc=$rc)"; diag; fi
expect "defaults from the CRD schema applied (spec.mode=fast)" '^fast$' \
	k get widget w1 -o jsonpath='{.spec.mode}{"\n"}'

k apply -f "$FIX/objects-v2.yaml" >"$TMP/apply2" 2>&1
rc=$?
cp "$TMP/apply2" "$TMP/out"
n=$(grep -cE '^(widget.example.com/w1|deployment.apps/web|configmap/demo) configured$' "$TMP/apply2")
if [ "$rc" = 0 ] && [ "$n" = 3 ]; then ok "second apply patches the changed objects (configured)"
else notok "second apply patches the changed objects ($n/3 configured, rc=$rc)"; diag; fi
expect "strategic merge patch: containers merged by name, order from \$setElementOrder, env var deleted" \
	'^3 sidecar=side:1; app=web:2 A=1, B=2,;$' \
	k get deploy web -o jsonpath='{.spec.replicas}{range .spec.template.spec.containers[*]} {.name}={.image}{range .env[*]}{" "}{.name}={.value},{end};{end}{"\n"}'
expect "strategic merge patch: removed ConfigMap key deleted, changed key updated" '^\{"key":"two"\}$' \
	k get cm demo -o jsonpath='{.data}{"\n"}'
expect "merge patch on the custom resource (size, mode, list replaced)" '^5 slow \["green"\]$' \
	k get widget w1 -o jsonpath='{.spec.size} {.spec.mode} {.spec.colors}{"\n"}'
k apply -f "$FIX/objects-v2.yaml" >"$TMP/out" 2>&1
n=$(grep -c ' unchanged$' "$TMP/out")
if [ "$n" = 5 ]; then ok "third apply of the same file: everything unchanged"
else notok "third apply of the same file: everything unchanged ($n/5)"; diag; fi
expect "apply --dry-run=server" 'configmap/demo (configured|unchanged) \(server dry run\)' \
	k apply --dry-run=server -f "$FIX/objects.yaml"

# ---------------------------------------------------------------- get
expect "get pods -o wide: upstream columns" '^NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +NOMINATED NODE +READINESS GATES' \
	k get pods -o wide
expect "get pods: pending pod row" '^p1 +0/1 +Pending +0 +[0-9]+s' k get pods
expect "get nodes -o wide: status, roles, version, addresses, node info" \
	'^node-a +Ready,SchedulingDisabled +worker +[0-9]+s +v1.32.0 +10.0.0.7 +<none> +Debian GNU/Linux 12 +6.1.0 +containerd://1.7.0' \
	k get nodes -o wide
expect "uncordon (strategic merge patch through the typed client)" 'node/node-a uncordoned' k uncordon node-a
expect "  ... node shows Ready" '^node-a +Ready +worker ' k get nodes
expect "cordon" 'node/node-a cordoned' k cordon node-a
expect "  ... node shows Ready,SchedulingDisabled" '^node-a +Ready,SchedulingDisabled +worker ' k get nodes
expect "get deployments: Ready/Up-to-date/Available columns" '^NAME +READY +UP-TO-DATE +AVAILABLE +AGE' k get deploy
expect "get configmaps: DATA column" '^demo +1 +[0-9]+s' k get cm demo
expect "get -A adds the NAMESPACE column" '^default +p1 ' k get pods -A
expect "get -o yaml" '^  key: two$' k get cm demo -o yaml
k get deploy web -o json >"$TMP/out" 2>&1
if command -v jq >/dev/null 2>&1; then
	if jq -e '.kind == "Deployment" and .apiVersion == "apps/v1" and .spec.replicas == 3 and .metadata.generation >= 2' "$TMP/out" >/dev/null 2>&1
	then ok "get -o json"; else notok "get -o json"; diag; fi
else
	expect "get -o json" '"replicas": 3' cat "$TMP/out"
fi
expect "get -o jsonpath" '^node-a=10.0.0.7$' \
	k get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.addresses[?(@.type=="InternalIP")].address}{"\n"}{end}'
expect "get --show-labels" 'tier=gold' k get widgets --show-labels

# ---------------------------------------------------------------- printer columns
expect "custom resource printer columns" '^NAME +SIZE +MODE +READY +AGE$' k get widgets
expect "custom resource row (integer, string, missing status, date as age)" '^w1 +5 +slow +[0-9]+s$' k get widgets
expect "priority-1 printer column only with -o wide" '^w1 +5 +slow +green +[0-9]+s$' k get widgets -o wide
check "patch the status subresource (merge)" \
	k patch widget w1 --subresource=status --type merge -p '{"status":{"conditions":[{"type":"Synced","status":"False"},{"type":"Ready","status":"True"}]}}'
expect "printer column with a JSONPath filter (conditions[?(@.type==\"Ready\")])" '^w1 +5 +slow +True +[0-9]+s$' k get widgets
expect "short name resolves (wd)" '^w1 ' k get wd

# ---------------------------------------------------------------- watch
timeout 8 kubectl --cache-dir "$TMP/cache" get cm demo -w --output-watch-events >"$TMP/watch" 2>&1 &
WATCH_PID=$!
for _ in $(seq 1 50); do grep -q 'demo' "$TMP/watch" 2>/dev/null && break; sleep 0.1; done
k label cm demo watched=yes >/dev/null 2>&1
for _ in $(seq 1 50); do grep -q 'MODIFIED' "$TMP/watch" 2>/dev/null && break; sleep 0.1; done
kill "$WATCH_PID" 2>/dev/null; wait "$WATCH_PID" 2>/dev/null; WATCH_PID=
cp "$TMP/watch" "$TMP/out"
if grep -Eq '^ADDED +demo ' "$TMP/watch" && grep -Eq '^MODIFIED +demo ' "$TMP/watch"; then
	ok "get -w receives a later change (ADDED then MODIFIED rows)"
else notok "get -w receives a later change (ADDED then MODIFIED rows)"; diag; fi

timeout 8 kubectl --cache-dir "$TMP/cache" get widgets -w >"$TMP/watch2" 2>&1 &
WATCH_PID=$!
for _ in $(seq 1 50); do grep -q '^w1' "$TMP/watch2" 2>/dev/null && break; sleep 0.1; done
k patch widget w1 --type merge -p '{"spec":{"size":6}}' >/dev/null 2>&1
for _ in $(seq 1 50); do grep -Eq '^w1 +6 ' "$TMP/watch2" 2>/dev/null && break; sleep 0.1; done
kill "$WATCH_PID" 2>/dev/null; wait "$WATCH_PID" 2>/dev/null; WATCH_PID=
cp "$TMP/watch2" "$TMP/out"
if grep -Eq '^w1 +5 ' "$TMP/watch2" && grep -Eq '^w1 +6 ' "$TMP/watch2"; then
	ok "get -w on a custom resource prints printer-column rows for changes"
else notok "get -w on a custom resource prints printer-column rows for changes"; diag; fi

# ---------------------------------------------------------------- selectors
k get pods,cm -l app=web -o name >"$TMP/out" 2>&1
if [ "$(sort "$TMP/out" | tr '\n' ' ')" = "configmap/demo pod/p1 " ]; then ok "label selector across kinds"
else notok "label selector across kinds"; diag; fi
k get cm -l 'app=web,watched=yes' -o name >"$TMP/out" 2>&1
if [ "$(cat "$TMP/out")" = "configmap/demo" ]; then ok "label selector with two requirements"
else notok "label selector with two requirements"; diag; fi
if k get cm -l 'app notin (web)' -o name >"$TMP/out" 2>&1 && ! grep -q 'configmap/demo' "$TMP/out"
then ok "label selector notin excludes"; else notok "label selector notin excludes"; diag; fi
expect "field selector spec.schedulerName" '^pod/p1$' k get pods --field-selector spec.schedulerName=schedkit -o name
expect "field selector status.phase!=Pending matches nothing" 'No resources found' \
	k get pods --field-selector status.phase!=Pending
expect "field selector metadata.name on a custom resource" '^widget.example.com/w1$' \
	k get widgets --field-selector metadata.name=w1 -o name
expect_fail "unsupported field selector is a 400" 'field label not supported' \
	k get pods --field-selector spec.bogus=x

# ---------------------------------------------------------------- patch
expect "patch --type merge on a custom resource" 'widget.example.com/w1 patched' \
	k patch widget w1 --type merge -p '{"spec":{"size":7}}'
expect "  ... took effect" '^7$' k get widget w1 -o jsonpath='{.spec.size}{"\n"}'
expect "patch --type json" 'deployment.apps/web patched' \
	k patch deploy web --type json -p '[{"op":"replace","path":"/spec/replicas","value":4},{"op":"add","path":"/metadata/labels/extra","value":"x"}]'
expect "  ... took effect" '^4 x$' k get deploy web -o jsonpath='{.spec.replicas} {.metadata.labels.extra}{"\n"}'
expect_fail "patch --type json with a failing test op is rejected" 'test|Invalid|invalid' \
	k patch deploy web --type json -p '[{"op":"test","path":"/spec/replicas","value":99}]'
expect "patch (strategic, the default) merges a container by name" 'deployment.apps/web patched' \
	k patch deploy web -p '{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"C","value":"3"}]}]}}}}'
expect "  ... kept the other containers and env vars" '^sidecar app C=3,A=1,B=2,$' \
	k get deploy web -o jsonpath='{range .spec.template.spec.containers[*]}{.name} {end}{range .spec.template.spec.containers[1].env[*]}{.name}={.value},{end}{"\n"}'
expect_fail "strategic merge patch on a custom resource is 415" 'UnsupportedMediaType|not supported|unsupported' \
	k patch widget w1 -p '{"spec":{"size":2}}'

# ---------------------------------------------------------------- validation
# kubectl renders a 422 with several causes as "The Widget "bad" is invalid:" plus one "* cause"
# line each, built from details.causes; the one-line Status message is checked with curl below.
expect_fail "invalid custom resource rejected (422, maximum)" \
	'^\* spec.size: Invalid value: 20: spec.size in body should be less than or equal to 10$' \
	k apply -f "$FIX/invalid-widget.yaml"
expect_fail "invalid custom resource rejected (422, enum)" \
	'^\* spec.mode: Unsupported value: "medium": supported values: "fast", "slow"$' \
	k apply -f "$FIX/invalid-widget.yaml"
SERVER_URL=$(sed -n 's/^ *server: *//p' "$KUBECONFIG" | head -1)
code=$(curl -s -o "$TMP/out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"bad"},"spec":{"size":20,"mode":"medium"}}' \
	"$SERVER_URL/apis/example.com/v1/namespaces/default/widgets")
if [ "$code" = 422 ] && grep -qF '"message":"Widget.example.com \"bad\" is invalid: [spec.size: Invalid value: 20: spec.size in body should be less than or equal to 10, spec.mode: Unsupported value: \"medium\": supported values: \"fast\", \"slow\"]"' "$TMP/out" &&
	grep -qF '"reason":"FieldValueNotSupported"' "$TMP/out" && grep -qF '"field":"spec.size"' "$TMP/out"
then ok "422 Invalid Status body: upstream message and details.causes"
else notok "422 Invalid Status body: upstream message and details.causes (HTTP $code)"; diag; fi
expect_fail "missing required field" 'spec.size: Required value' \
	k patch widget w1 --type json -p '[{"op":"remove","path":"/spec/size"}]'
expect_fail "unknown field rejected under strict validation (built-in)" 'strict decoding error: unknown field "datta"' \
	k apply -f "$FIX/unknown-field-configmap.yaml"
expect_fail "unknown field rejected under strict validation (custom resource)" 'unknown field "spec.foo"' \
	k apply -f "$FIX/unknown-field-widget.yaml"
expect "--validate=false: the unknown field is pruned instead" 'widget.example.com/w-extra created' \
	k apply --validate=false -f "$FIX/unknown-field-widget.yaml"
expect "  ... and is gone from the stored object" '^\{"mode":"fast","size":2\}$' \
	k get widget w-extra -o jsonpath='{.spec}{"\n"}'

# ---------------------------------------------------------------- finalizers
expect "create an object held by a finalizer" 'configmap/held created' k apply -f "$FIX/finalizer-configmap.yaml"
expect "delete it (returns at once with --wait=false)" 'configmap "held" deleted' k delete cm held --wait=false
expect "it stays, with a deletionTimestamp" '^held [0-9]{4}-[0-9]{2}-[0-9]{2}T' \
	k get cm held -o jsonpath='{.metadata.name} {.metadata.deletionTimestamp}{"\n"}'
expect "removing the finalizer by patch" 'configmap/held patched' \
	k patch cm held --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]'
expect_fail "  ... deletes it" 'NotFound|not found' k get cm held

# ---------------------------------------------------------------- delete
expect "delete a deployment (kubectl waits for it to be gone)" 'deployment.apps "web" deleted' k delete deploy web
expect_fail "  ... and it is gone" 'NotFound|not found' k get deploy web
expect "delete by label selector" 'widget.example.com "w1" deleted' k delete widgets -l tier=gold
expect "delete a CRD removes its kind from discovery" 'customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted' \
	k delete crd widgets.example.com
expect_fail "  ... kubectl no longer knows widgets" "doesn't have a resource type|the server could not find" k get widgets

kill -0 "$SERVER_PID" 2>/dev/null && ok "server still running after the suite" || notok "server still running after the suite"
kill "$SERVER_PID" 2>/dev/null
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=
cp "$TMP/server.log" "$TMP/out"
if grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/server.log"; then
	notok "server log free of sanitizer reports"; diag
else ok "server log free of sanitizer reports"; fi
