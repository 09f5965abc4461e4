#!/usr/bin/env bash
# End to end: the official Kubernetes Python client (Debian's python3-kubernetes, `make deps`)
# against bin/schedkit-apiserver over TLS with a token: list, watch from a list's
# resourceVersion (the client sends watch=True: query booleans are read as Go's
# strconv.ParseBool), create / patch / delete, and Leases (coordination.k8s.io/v1). Then the
# boolean forms with curl: 1 t T TRUE true True start a watch, 0 f F FALSE false False list, any
# other value is 400. TAP-style output.
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"
PY=/usr/bin/python3 # Debian's interpreter, where python3-kubernetes is installed

work=$(mktemp -d /tmp/sk-pyclient.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

if ! "$PY" -c 'import kubernetes' 2>/dev/null; then
  notok "python3-kubernetes is installed (make deps)"
  exit 1
fi
token=sk-py-$RANDOM$RANDOM
"$SK_BIN/schedkit-apiserver" --port 0 --tls --token "$token" --write-kubeconfig "$work/kubeconfig" >"$work/apiserver.log" 2>&1 &
pids+=($!)
sk_wait_for 20 test -s "$work/kubeconfig" || { notok "local API server wrote its kubeconfig"; exit 1; }

# The Python suite prints its own "ok -" / "not ok -" lines.
"$PY" - "$work/kubeconfig" <<'EOF'
import sys, threading, time
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
coord = client.CoordinationV1Api()
failed = 0

def check(desc, cond, detail=""):
    global failed
    if cond:
        print("ok - python client: " + desc)
    else:
        failed += 1
        print("not ok - python client: " + desc)
        if detail:
            print("#   " + str(detail)[:500])

def cm(name, data):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels={"suite": "py"}), data=data)

try:
    for i in range(3):
        v1.create_namespaced_config_map("default", cm("py-%d" % i, {"i": str(i)}))
    lst = v1.list_namespaced_config_map("default", label_selector="suite=py")
    check("list returns the 3 ConfigMaps created", sorted(x.metadata.name for x in lst.items) == ["py-0", "py-1", "py-2"],
          [x.metadata.name for x in lst.items])
    rv = lst.metadata.resource_version
    check("the list has a resourceVersion", bool(rv), rv)

    # watch from the list's resourceVersion: only what happens afterwards arrives
    events = []
    def watcher():
        w = watch.Watch()
        for ev in w.stream(v1.list_namespaced_config_map, "default", label_selector="suite=py",
                           resource_version=rv, timeout_seconds=10):
            events.append((ev["type"], ev["object"].metadata.name))
            if len(events) >= 3:
                w.stop()
    t = threading.Thread(target=watcher)
    t.start()
    time.sleep(0.5)
    v1.create_namespaced_config_map("default", cm("py-3", {"i": "3"}))
    patched = v1.patch_namespaced_config_map("py-0", "default", {"data": {"i": "patched"}})
    check("patch (merge) changes the data", patched.data == {"i": "patched"}, patched.data)
    v1.delete_namespaced_config_map("py-1", "default")
    t.join(15)
    check("watch from the list's resourceVersion streams ADDED, MODIFIED, DELETED in order",
          events == [("ADDED", "py-3"), ("MODIFIED", "py-0"), ("DELETED", "py-1")], events)
    try:
        v1.read_namespaced_config_map("py-1", "default")
        check("a deleted ConfigMap is gone (404)", False)
    except ApiException as e:
        check("a deleted ConfigMap is gone (404)", e.status == 404, e.status)
    try:
        v1.create_namespaced_config_map("default", cm("py-0", {}))
        check("creating an existing name is 409", False)
    except ApiException as e:
        check("creating an existing name is 409", e.status == 409, e.status)

    # leases, as a leader elector uses them
    lease = client.V1Lease(metadata=client.V1ObjectMeta(name="py-lock"),
                           spec=client.V1LeaseSpec(holder_identity="a", lease_duration_seconds=15))
    coord.create_namespaced_lease("kube-system", lease)
    got = coord.read_namespaced_lease("py-lock", "kube-system")
    check("lease create and read", got.spec.holder_identity == "a" and got.spec.lease_duration_seconds == 15, got.spec)
    got.spec.holder_identity = "b"
    upd = coord.replace_namespaced_lease("py-lock", "kube-system", got)
    check("lease replace (update) with its resourceVersion", upd.spec.holder_identity == "b", upd.spec)
    got.spec.holder_identity = "c"  # got still carries the old resourceVersion
    try:
        coord.replace_namespaced_lease("py-lock", "kube-system", got)
        check("a stale lease update is 409 Conflict", False)
    except ApiException as e:
        check("a stale lease update is 409 Conflict", e.status == 409, e.status)
    leases = coord.list_namespaced_lease("kube-system")
    check("lease list", "py-lock" in [x.metadata.name for x in leases.items])
    coord.delete_namespaced_lease("py-lock", "kube-system")
    check("lease delete", "py-lock" not in [x.metadata.name for x in coord.list_namespaced_lease("kube-system").items])
except Exception as e:  # an unexpected error fails the suite with its text
    failed += 1
    print("not ok - python client: unexpected error")
    print("#   " + repr(e)[:1000])
sys.exit(1 if failed else 0)
EOF
rc=$?
[ $rc = 0 ] && ok "the Python client suite ran without failures" || notok "the Python client suite ran without failures"

# query booleans with curl (the API server's CA and token from the kubeconfig)
server=$(awk '/server:/ {print $2; exit}' "$work/kubeconfig")
"$PY" -c 'import sys,yaml,base64; c=yaml.safe_load(open(sys.argv[1])); open(sys.argv[2],"wb").write(base64.b64decode(c["clusters"][0]["cluster"]["certificate-authority-data"]))' \
  "$work/kubeconfig" "$work/ca.crt"
kc() { curl -s --cacert "$work/ca.crt" -H "Authorization: Bearer $token" "$@"; }
for v in 1 t T TRUE true True; do
  # a watch streams (and times out after 1 s); a list would be one JSON object with items
  out=$(kc --max-time 3 "$server/api/v1/namespaces/default/configmaps?watch=$v&timeoutSeconds=1")
  if echo "$out" | head -1 | jq -e '.type == "ADDED"' >/dev/null 2>&1; then ok "watch=$v starts a watch"; else notok "watch=$v starts a watch"; echo "#   $(echo "$out" | head -c 300)"; fi
done
for v in 0 f F FALSE false False; do
  out=$(kc --max-time 3 "$server/api/v1/namespaces/default/configmaps?watch=$v")
  if echo "$out" | jq -e '.kind == "ConfigMapList"' >/dev/null 2>&1; then ok "watch=$v lists"; else notok "watch=$v lists"; fi
done
for v in yes 2 tRuE; do
  c=$(kc -o /dev/null -w '%{http_code}' --max-time 3 "$server/api/v1/namespaces/default/configmaps?watch=$v")
  if [ "$c" = 400 ]; then ok "watch=$v is 400 (not a Go boolean)"; else notok "watch=$v is 400 (got $c)"; fi
done
out=$(kc --max-time 3 "$server/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=maybe")
if echo "$out" | jq -e '.code == 400 and (.message | contains("allowWatchBookmarks"))' >/dev/null 2>&1; then ok "a bad allowWatchBookmarks is 400 naming it"; else notok "a bad allowWatchBookmarks is 400 naming it"; fi
