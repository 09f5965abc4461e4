#!/usr/bin/env bash
# End to end: the scheduler's live web view (docs/explain.md, "The live web view") in headless
# Chromium driven by Playwright (e2e/dashboard/dashboard.mjs), reached as a user would: real
# kubectl runs `kubectl schedkit dashboard`, which forwards through the local API server's
# service proxy (WebSocket upgrade included) to the scheduler.
#  1. Four nodes; a known backlog: 3 pods of default-scheduler that fit nowhere (unschedulable),
#     2 gated pods of batch-scheduler; the scheduler behind a Service and Endpoints.
#  2. The page and its files come from the binary (curl through the proxy: HTML, JS, CSS);
#     the WebSocket path refuses a plain GET and an upgrade without the subprotocol.
#  3. In Chromium: no console errors; the queue depths are the backlog; every node has a tile;
#     a new pod's decision appears in the feed within 2 s of its binding; clicking it shows its
#     per-node, per-plugin table (columns per score plugin, the chosen node, its total).
#     The screenshot is written to $SK_DASH_SCREENSHOT (default: a temp file; docs/images/dashboard.png
#     is this test's screenshot).
# Needs node, /usr/bin/chromium and e2e/dashboard/node_modules (`make deps` installs them):
# without them the test fails. Prints TAP-style ok / not ok lines. Env: SK_BIN, SK_ROOT.
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"
sk_e2e_begin sk-dashboard-e2e
export PATH="$SK_BIN:$PATH"

command -v node >/dev/null || fatal "node is installed (make deps)"
[ -x /usr/bin/chromium ] || fatal "/usr/bin/chromium is installed (make deps)"
[ -f "$SK_ROOT/e2e/dashboard/node_modules/playwright-core/package.json" ] ||
  fatal "playwright-core is installed in e2e/dashboard (make deps)"
ok "node $(node --version), $(/usr/bin/chromium --version 2>/dev/null | head -1), playwright-core $(jq -r .version "$SK_ROOT/e2e/dashboard/node_modules/playwright-core/package.json")"

sk_start_apiserver

# ---------------------------------------------------------------- 1. cluster and backlog
node() { # name cpu memory
  printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":{"kubernetes.io/hostname":"%s"}},"status":{"allocatable":{"cpu":"%s","memory":"%s","pods":"110"},"capacity":{"cpu":"%s","memory":"%s","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}}\n' \
    "$1" "$1" "$2" "$3" "$2" "$3"
}
pod() { # name scheduler cpu memory [node|gated]
  local nn="" gates=""
  case "${5:-}" in
  gated) gates='"schedulingGates":[{"name":"example.com/hold"}],' ;;
  ?*) nn="\"nodeName\":\"$5\"," ;;
  esac
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default"},"spec":{%s%s"schedulerName":"%s","containers":[{"name":"c","image":"pause:3.9","resources":{"requests":{"cpu":"%s","memory":"%s"}}}]}}\n' \
    "$1" "$nn" "$gates" "$2" "$3" "$4"
}
{
  node node-a 4 8Gi
  node node-b 8 16Gi
  node node-c 2 4Gi
  node node-d 16 32Gi
} | kubectl create -f - >/dev/null || fatal "create nodes"
{
  pod busy-1 default-scheduler 3 6Gi node-c
  pod busy-2 default-scheduler 2 4Gi node-a
  pod huge-1 default-scheduler 100 1Gi
  pod huge-2 default-scheduler 200 1Gi
  pod huge-3 default-scheduler 300 1Gi
  pod held-1 batch-scheduler 100m 128Mi gated
  pod held-2 batch-scheduler 100m 128Mi gated
} | kubectl create -f - >/dev/null || fatal "create the backlog"

cat >"$work/config.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 1
profiles:
- schedulerName: default-scheduler
  decisionRecords:
    enabled: true
- schedulerName: batch-scheduler
EOF
sk_start_scheduler_service "$work/config.yaml" --v=2
unsched() { kubectl get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}' | grep -q Unschedulable; }
all_unsched() { unsched huge-1 && unsched huge-2 && unsched huge-3; }
sk_wait_for 30 all_unsched || fatal "the three huge pods are Unschedulable"
ok "backlog in place: 3 unschedulable pods of default-scheduler, 2 gated pods of batch-scheduler"

# ---------------------------------------------------------------- 2. the page through the proxy
proxy=/api/v1/namespaces/schedkit-system/services/https:schedkit-scheduler:10259/proxy
kubectl get --raw "$proxy/debug/schedkit/v1/dashboard/" >"$work/index.html" 2>"$work/raw.err"
check "the page comes through the service proxy" grep -q '<script src="app.js">' "$work/index.html"
check "the page names no other host (assets are relative, embedded)" \
  bash -c "! grep -Eqi '(src|href)=\"(https?:)?//' '$work/index.html'"
kubectl get --raw "$proxy/debug/schedkit/v1/dashboard/app.js" >"$work/app.js" 2>>"$work/raw.err"
check "app.js is served from the binary, byte for byte" cmp -s "$work/app.js" "$SK_ROOT/scheduler/decisions/web/app.js"
kubectl get --raw "$proxy/debug/schedkit/v1/dashboard/style.css" >"$work/style.css" 2>>"$work/raw.err"
check "style.css is served from the binary, byte for byte" cmp -s "$work/style.css" "$SK_ROOT/scheduler/decisions/web/style.css"
ctype=$(curl -sk -o /dev/null -w '%{content_type}' "https://127.0.0.1:$port/debug/schedkit/v1/dashboard/app.js")
check "app.js is text/javascript ($ctype)" test "${ctype%%;*}" = text/javascript
code=$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$port/debug/schedkit/v1/dashboard/ws")
check "the WebSocket path without an upgrade is not a page ($code)" test "$code" != 200
code=$(curl -sk -o /dev/null -w '%{http_code}' --http1.1 -H 'Connection: Upgrade' -H 'Upgrade: websocket' \
  -H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' \
  "https://127.0.0.1:$port/debug/schedkit/v1/dashboard/ws" --max-time 3)
check "an upgrade without the schedkit.v1 subprotocol is refused ($code)" test "$code" != 101

# ---------------------------------------------------------------- 3. kubectl schedkit dashboard + Chromium
kubectl schedkit dashboard --port 0 >"$work/dashboard.log" 2>&1 &
pids+=($!)
sk_wait_for 10 grep -q '^Dashboard: http' "$work/dashboard.log" || fatal "kubectl schedkit dashboard prints its URL"
url=$(sed -n 's/^Dashboard: //p' "$work/dashboard.log" | head -1)
ok "kubectl schedkit dashboard serves $url"
code=$(curl -s -o /dev/null -w '%{http_code}' "${url%/debug/*}/")
check "the forwarder's / redirects to the dashboard ($code)" test "$code" = 302
code=$(curl -s -o /dev/null -w '%{http_code}' "${url%/debug/*}/api/v1/pods")
check "the forwarder forwards only the scheduler's /debug/schedkit/ paths ($code)" test "$code" = 404
check "the forwarder serves the page" bash -c "curl -sf '$url' | grep -q 'app.js'"

pod web-new default-scheduler 500m 512Mi >"$work/new-pod.json"
cat >"$work/expect.json" <<EOF
{"queues":[
  {"profile":"default-scheduler","queue":"unschedulable","count":3},
  {"profile":"default-scheduler","queue":"active","count":0},
  {"profile":"default-scheduler","queue":"backoff","count":0},
  {"profile":"batch-scheduler","queue":"gated","count":2},
  {"profile":"batch-scheduler","queue":"unschedulable","count":0}],
 "nodes":4,
 "newPod":{"file":"$work/new-pod.json","namespace":"default","name":"web-new"},
 "maxDelayMs":2000}
EOF
shot=${SK_DASH_SCREENSHOT:-$work/dashboard.png}
(cd "$SK_ROOT/e2e/dashboard" && timeout 120 node dashboard.mjs "$url" "$work/expect.json" "$shot") 2>&1 |
  tee "$work/browser.log" | grep -E '^(ok|not ok) - '
grep -q '^ok - screenshot saved' "$work/browser.log" || { notok "the browser run finished"; tail -20 "$work/browser.log"; }
check "the screenshot is a PNG" bash -c "head -c 8 '$shot' | od -An -c | grep -q 'P   N   G'"
