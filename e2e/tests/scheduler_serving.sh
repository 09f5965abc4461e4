#!/usr/bin/env bash
# End to end: how bin/schedkit-scheduler serves, as kube-scheduler does — against the local API
# server with RBAC enforced (--authorization-mode=RBAC) and ServiceAccount tokens from
# `kubectl create token`:
#  1. HTTPS on --secure-port with a self-signed certificate (curl -k); /healthz /readyz /livez
#     open to anyone; /metrics and /configz 403 without a token, 401 with a bad one, 403 for a
#     ServiceAccount without the RBAC grant, 200 for one with it (its TokenReview and
#     SubjectAccessReview answered by the API server); no extender secret in /configz.
#  2. --cert-dir keeps the self-signed pair (reused by the next start); --tls-cert-file serves the
#     given certificate; --tls-min-version=VersionTLS13 refuses a TLS 1.2 client;
#     --tls-cipher-suites limits TLS 1.2 to the suites named.
#  3. Flags: --version on the three binaries; the flags that do not apply are named in one
#     warning line; an unknown feature gate, cipher suite or TLS version exits 2 with upstream's
#     words; --write-config-to writes the defaulted configuration; --logging-format=json.
#  4. The scheduler itself under enforced RBAC with its ServiceAccount's token and the RBAC the
#     operator renders for it: it binds a pod, holds its Lease and serves /metrics through its own
#     TokenReview and SubjectAccessReview, refused nothing; without pods/binding it is refused the
#     binding in upstream's words and the pod stays unbound.
# Prints TAP-style ok / not ok lines. Env: SK_BIN (binaries), SK_ROOT (repo).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"

work=$(mktemp -d /tmp/sk-serving.XXXXXX)
pids=()
cleanup() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
check() { local d=$1; shift; if "$@" >"$work/check.out" 2>&1; then ok "$d"; else notok "$d"; sed 's/^/#   /' "$work/check.out" | head -20; fi; }
fatal() { notok "$*"; for f in "$work"/*.log; do echo "--- $f"; tail -20 "$f"; done; exit 1; }
code() { curl -sk -o /dev/null -w '%{http_code}' "$@"; } # code [curl args] URL: the HTTP status

# ---------------------------------------------------------------- API server, RBAC enforced
admin=sk-admin-$RANDOM$RANDOM
"$SK_BIN/schedkit-apiserver" --port 0 --tls --token "$admin" --authorization-mode=RBAC \
  --write-kubeconfig "$work/kubeconfig" >"$work/apiserver.log" 2>&1 &
pids+=($!)
export KUBECONFIG=$work/kubeconfig
sk_wait_for 20 test -s "$work/kubeconfig" || fatal "local API server wrote its kubeconfig"
sk_wait_for 20 kubectl get --raw /readyz >/dev/null 2>&1 || fatal "local API server ready"

cat >"$work/rbac.yaml" <<'EOF'
apiVersion: v1
kind: ServiceAccount
metadata: {name: prometheus, namespace: default}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: nobody, namespace: default}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: scheduler, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: scheduler-metrics-reader}
rules:
- nonResourceURLs: ["/metrics", "/configz"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: prometheus-reads-scheduler}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: scheduler-metrics-reader}
subjects:
- {kind: ServiceAccount, name: prometheus, namespace: default}
---
# what the scheduler needs for delegation (upstream: system:auth-delegator)
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: delegator}
rules:
- apiGroups: ["authentication.k8s.io"]
  resources: ["tokenreviews"]
  verbs: ["create"]
- apiGroups: ["authorization.k8s.io"]
  resources: ["subjectaccessreviews"]
  verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: scheduler-delegates}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: delegator}
subjects:
- {kind: ServiceAccount, name: scheduler, namespace: kube-system}
EOF
kubectl apply -f "$work/rbac.yaml" >/dev/null || fatal "RBAC objects applied"
t_prom=$(kubectl create token prometheus) || fatal "kubectl create token prometheus"
t_nobody=$(kubectl create token nobody) || fatal "kubectl create token nobody"
t_sched=$(kubectl create token scheduler -n kube-system) || fatal "kubectl create token scheduler"
check "the API server enforces RBAC: a token without grants cannot list pods" \
  bash -c 'out=$(kubectl --token "$1" get pods 2>&1); test $? != 0 && echo "$out" | grep -q "cannot list resource \"pods\""' _ "$t_nobody"

check "kubectl auth can-i (SelfSubjectAccessReview): prometheus may get /metrics, nobody may not" \
  bash -c 'test "$(kubectl auth can-i get /metrics --token "$1")" = yes && test "$(kubectl auth can-i get /metrics --token "$2")" = no' _ "$t_prom" "$t_nobody"

# the delegation kubeconfig: the scheduler's own ServiceAccount token, not the admin's
sed "s/token: .*/token: $t_sched/" "$KUBECONFIG" >"$work/delegate.kubeconfig"
check "the delegation token may create TokenReviews and SubjectAccessReviews only" \
  bash -c '! kubectl --kubeconfig "$1" get pods >/dev/null 2>&1' _ "$work/delegate.kubeconfig"

# an extender with TLS secrets in the config: they must not leave through /configz
cat >"$work/config.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
extenders:
- urlPrefix: https://127.0.0.1:1/ext
  filterVerb: filter
  ignorable: true
  tlsConfig: {keyData: c2VjcmV0LWtleS1ieXRlcw==, certData: Y2VydC1ieXRlcw==, caData: Y2EtYnl0ZXM=}
EOF

start() { # name args...: a scheduler on a free port (retried on a taken port); sets <name>_port
  local name=$1; shift
  local p try
  for try in 1 2 3; do
    p=$(sk_free_port)
    "$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --kubeconfig "$KUBECONFIG" --bind-address 127.0.0.1 \
      --secure-port "$p" "$@" >"$work/$name.log" 2>&1 &
    local pid=$!
    pids+=($pid)
    if sk_wait_for 20 curl -sfk "https://127.0.0.1:$p/healthz" -o /dev/null; then eval "${name}_port=$p"; return 0; fi
    kill -0 "$pid" 2>/dev/null && break
  done
  fatal "scheduler $name serves HTTPS /healthz"
}

# ---------------------------------------------------------------- 1. HTTPS and delegation
start main --authentication-kubeconfig "$work/delegate.kubeconfig" --authorization-kubeconfig "$work/delegate.kubeconfig"
u="https://127.0.0.1:$main_port"
check "HTTPS /healthz with curl -k (self-signed certificate)" bash -c 'curl -sfk "$1/healthz" | grep -qx ok' _ "$u"
check "plain HTTP is not served on --secure-port" bash -c '! curl -sf "http://127.0.0.1:$1/healthz" >/dev/null' _ "$main_port"
check "the certificate is for localhost and 127.0.0.1" \
  bash -c 'echo | openssl s_client -connect "127.0.0.1:$1" 2>/dev/null | openssl x509 -noout -ext subjectAltName | grep -q "DNS:localhost, IP Address:127.0.0.1"' _ "$main_port"
for p in /healthz /readyz /livez; do
  check "$p is open without a token (always-allowed path)" test "$(code "$u$p")" = 200
done
for p in /metrics /configz; do
  check "$p without a token: 403" test "$(code "$u$p")" = 403
  check "$p with a bad token: 401" test "$(code -H "Authorization: Bearer not-a-token" "$u$p")" = 401
  check "$p with a ServiceAccount token without the grant: 403" test "$(code -H "Authorization: Bearer $t_nobody" "$u$p")" = 403
  check "$p with an authorized ServiceAccount token: 200" test "$(code -H "Authorization: Bearer $t_prom" "$u$p")" = 200
done
check "a bad token is 401 on /healthz too (never taken as anonymous)" test "$(code -H "Authorization: Bearer bad" "$u/healthz")" = 401
check "403 names the user and the path as upstream" \
  bash -c 'curl -sk -H "Authorization: Bearer $2" "$1/metrics" | jq -e ".reason == \"Forbidden\" and .message == \"forbidden: User \\\"system:serviceaccount:default:nobody\\\" cannot get path \\\"/metrics\\\"\"" >/dev/null' _ "$u" "$t_nobody"
check "/metrics serves scheduler metrics to the authorized token" \
  bash -c 'curl -sfk -H "Authorization: Bearer $2" "$1/metrics" | grep -q "^scheduler_pending_pods"' _ "$u" "$t_prom"
curl -sfk -H "Authorization: Bearer $t_prom" "$u/configz" >"$work/configz.json"
check "/configz has the extender, its tlsConfig redacted" \
  jq -e '.componentconfig.extenders[0].tlsConfig | .keyData == "--- REDACTED ---" and .certData == "--- REDACTED ---" and .caData == "--- REDACTED ---"' "$work/configz.json"
check "no secret in /configz" bash -c '! grep -q -e c2VjcmV0 -e secret-key "$1"' _ "$work/configz.json"

# ---------------------------------------------------------------- 2. certificates and TLS settings
mkdir -p "$work/certs"
start certdir --cert-dir "$work/certs" --authorization-always-allow-paths=/healthz,/metrics
check "--cert-dir: kube-scheduler.crt and kube-scheduler.key written, the key 0600" \
  bash -c 'test -s "$1/kube-scheduler.crt" && test "$(stat -c %a "$1/kube-scheduler.key")" = 600' _ "$work/certs"
check "--cert-dir: the served certificate is the file's" \
  bash -c 'a=$(echo | openssl s_client -connect "127.0.0.1:$1" 2>/dev/null | openssl x509 -noout -fingerprint); b=$(openssl x509 -in "$2/kube-scheduler.crt" -noout -fingerprint); test -n "$a" && test "$a" = "$b"' _ "$certdir_port" "$work/certs"
check "--authorization-always-allow-paths opens /metrics without a token" test "$(code "https://127.0.0.1:$certdir_port/metrics")" = 200
fp1=$(openssl x509 -in "$work/certs/kube-scheduler.crt" -noout -fingerprint)
start certdir2 --cert-dir "$work/certs"
check "--cert-dir: the next start reuses the pair" test "$(openssl x509 -in "$work/certs/kube-scheduler.crt" -noout -fingerprint)" = "$fp1"

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/own.key" -out "$work/own.crt" -days 1 -subj "/CN=own-cert" \
  -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
start own --tls-cert-file "$work/own.crt" --tls-private-key-file "$work/own.key"
check "--tls-cert-file: the given certificate is served" \
  bash -c 'echo | openssl s_client -connect "127.0.0.1:$1" 2>/dev/null | openssl x509 -noout -subject | grep -q own-cert' _ "$own_port"
check "--tls-cert-file: curl verifies it with --cacert" bash -c 'curl -sf --cacert "$2" "https://127.0.0.1:$1/healthz" | grep -qx ok' _ "$own_port" "$work/own.crt"

start tls13 --tls-min-version=VersionTLS13
check "--tls-min-version=VersionTLS13: TLS 1.3 is served" bash -c 'curl -sfk --tlsv1.3 "https://127.0.0.1:$1/healthz" >/dev/null' _ "$tls13_port"
check "--tls-min-version=VersionTLS13: a TLS 1.2 client is refused" bash -c '! curl -sfk --tls-max 1.2 "https://127.0.0.1:$1/healthz" >/dev/null 2>&1' _ "$tls13_port"
start ciphers --tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 --tls-min-version=VersionTLS12
check "--tls-cipher-suites: the suite named is negotiated (TLS 1.2)" \
  bash -c 'curl -sfk --tls-max 1.2 --ciphers ECDHE-RSA-AES256-GCM-SHA384 "https://127.0.0.1:$1/healthz" >/dev/null' _ "$ciphers_port"
check "--tls-cipher-suites: another TLS 1.2 suite is refused" \
  bash -c '! curl -sfk --tls-max 1.2 --ciphers ECDHE-RSA-AES128-GCM-SHA256 "https://127.0.0.1:$1/healthz" >/dev/null 2>&1' _ "$ciphers_port"

# ---------------------------------------------------------------- 3. flags
for b in scheduler operator apiserver; do
  check "schedkit-$b --version prints its version and exits 0" bash -c '"$1" --version | grep -Eq "^schedkit-$2 v[0-9]+\.[0-9]+\.[0-9]+ "' _ "$SK_BIN/schedkit-$b" "$b"
done
check "--version=false runs on (a flag error here proves the parse went on)" \
  bash -c '"$1" --version=false --no-such-flag 2>&1 | grep -q "unknown flag: --no-such-flag"' _ "$SK_BIN/schedkit-scheduler"
"$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --validate --profiling=false --contention-profiling \
  --permit-port-sharing --vmodule=x=2 >/dev/null 2>"$work/warn.txt"
check "the flags that do not apply: accepted, named in one warning line" \
  bash -c 'test "$(wc -l <"$1")" = 1 && grep -q "^W: flags accepted and ignored (they do not apply to schedkit): --permit-port-sharing, --profiling, --contention-profiling, --vmodule$" "$1"' _ "$work/warn.txt"
check "an unknown feature gate exits 2 as upstream words it" \
  bash -c '"$1" --feature-gates=NoSuchGate=true; test $? = 2 && "$1" --feature-gates=NoSuchGate=true 2>&1 | grep -q "unrecognized feature gate: NoSuchGate"' _ "$SK_BIN/schedkit-scheduler"
check "upstream gate names are accepted (with and without kube:)" \
  "$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --validate --feature-gates=SchedulerAsyncPreemption=false,kube:SchedulerPopFromBackoffQ=true
check "a bad gate value exits 2" bash -c '"$1" --feature-gates=SchedulerAsyncPreemption=maybe 2>&1; test $? = 2' _ "$SK_BIN/schedkit-scheduler"
check "an unknown cipher suite exits 2" \
  bash -c '"$1" --tls-cipher-suites=TLS_NOPE 2>&1 | grep -q "Cipher suite TLS_NOPE not supported or doesn.t exist"' _ "$SK_BIN/schedkit-scheduler"
check "an unknown TLS version exits 2" bash -c '"$1" --tls-min-version=VersionTLS99 2>&1 | grep -q "unknown tls version \"VersionTLS99\""' _ "$SK_BIN/schedkit-scheduler"
check "--write-config-to writes the defaulted configuration, which --config reads back" \
  bash -c '"$1" --write-config-to "$2/written.yaml" 2>/dev/null && jq -e ".profiles[0].schedulerName == \"default-scheduler\" and .percentageOfNodesToScore != null" "$2/written.yaml" >/dev/null && "$1" --config "$2/written.yaml" --validate >/dev/null' _ "$SK_BIN/schedkit-scheduler" "$work"
start json --logging-format=json --v=1
check "--logging-format=json: every log line is a JSON object with ts, caller, msg" \
  bash -c 'test -s "$1" && while read -r l; do echo "$l" | jq -e "has(\"ts\") and has(\"caller\") and has(\"msg\")" >/dev/null || exit 1; done <"$1"' _ "$work/json.log"
check "--kube-api-qps/--kube-api-burst/--kube-api-content-type are accepted" \
  "$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --validate --kube-api-qps=20.5 --kube-api-burst=30 --kube-api-content-type=application/vnd.kubernetes.protobuf

# ---------------------------------------------------------------- 4. the scheduler under RBAC, with its own token
# The RBAC the operator renders for the scheduler (operator/tests/golden/resources_*.yaml, kept
# equal to operator/resources.c by test_resources), its ServiceAccount's token, the installed
# Lease name: a pod is scheduled, with /metrics served through the reviews that RBAC allows.
g=$SK_ROOT/operator/tests/golden
kubectl create namespace schedkit-system >/dev/null || fatal "namespace schedkit-system"
for f in serviceaccount clusterrole clusterrolebinding role rolebinding; do
  kubectl apply -f "$g/resources_$f.yaml" >/dev/null || fatal "the operator's $f applied"
done
cat >"$work/rbac-node.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: rbac-node, labels: {kubernetes.io/hostname: rbac-node}}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
EOF
kubectl apply -f "$work/rbac-node.yaml" >/dev/null || fatal "node rbac-node"
t_runner=$(kubectl create token schedkit-scheduler -n schedkit-system) || fatal "kubectl create token schedkit-scheduler"
sed "s/token: .*/token: $t_runner/" "$KUBECONFIG" >"$work/runner.kubeconfig"
cat >"$work/runner.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: true, resourceName: schedkit-scheduler, resourceNamespace: schedkit-system}
profiles:
- schedulerName: rbac-scheduler
EOF
rp=$(sk_free_port)
"$SK_BIN/schedkit-scheduler" --config "$work/runner.yaml" --kubeconfig "$work/runner.kubeconfig" --secure-port "$rp" \
  --bind-address 127.0.0.1 --authentication-kubeconfig "$work/runner.kubeconfig" \
  --authorization-kubeconfig "$work/runner.kubeconfig" --v=2 >"$work/runner.log" 2>&1 &
pids+=($!)
kubectl run rbac-pod --image=x --restart=Never --overrides='{"spec":{"schedulerName":"rbac-scheduler"}}' >/dev/null ||
  fatal "pod for the RBAC-bound scheduler created"
check "with the operator's RBAC and its ServiceAccount token (RBAC enforced), the scheduler binds a pod" \
  sk_wait_for 30 bash -c 'test "$(kubectl get pod rbac-pod -o jsonpath={.spec.nodeName})" = rbac-node'
check "... holds its Lease" \
  sk_wait_for 10 bash -c 'kubectl get lease schedkit-scheduler -n schedkit-system -o jsonpath={.spec.holderIdentity} | grep -q .'
check "... serves /metrics to an authorized token through its own reviews" \
  sk_wait_for 10 bash -c 'test "$(curl -sk -o /dev/null -w %{http_code} -H "Authorization: Bearer $2" "https://127.0.0.1:$1/metrics")" = 200' _ "$rp" "$t_prom"
check "... and was refused nothing (no 403 in its log)" bash -c '! grep -q -i "forbidden" "$1"' _ "$work/runner.log"

# Without pods/binding the same scheduler is refused the binding: RBAC is really enforced.
kubectl get clusterrole schedkit-scheduler -o json | jq '.metadata = {name: "schedkit-runner-nobind"} |
  .rules |= map(select((.resources | index("pods/binding")) | not))' | kubectl apply -f - >/dev/null
kubectl create sa runner2 -n kube-system >/dev/null
cat >"$work/runner2-rbac.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: schedkit-runner-nobind}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: schedkit-runner-nobind}
subjects:
- {kind: ServiceAccount, name: runner2, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: runner2-lease, namespace: kube-system}
rules:
- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, create, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: runner2-lease, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: runner2-lease}
subjects:
- {kind: ServiceAccount, name: runner2, namespace: kube-system}
EOF
kubectl apply -f "$work/runner2-rbac.yaml" >/dev/null
t_runner2=$(kubectl create token runner2 -n kube-system)
sed "s/token: .*/token: $t_runner2/" "$KUBECONFIG" >"$work/runner2.kubeconfig"
sed 's/resourceName: schedkit-scheduler, resourceNamespace: schedkit-system/resourceName: rbac-runner2, resourceNamespace: kube-system/; s/rbac-scheduler/rbac-nobind/' \
  "$work/runner.yaml" >"$work/runner2.yaml"
"$SK_BIN/schedkit-scheduler" --config "$work/runner2.yaml" --kubeconfig "$work/runner2.kubeconfig" --secure-port 0 --v=2 \
  >"$work/runner2.log" 2>&1 &
pids+=($!)
kubectl run rbac-pod2 --image=x --restart=Never --overrides='{"spec":{"schedulerName":"rbac-nobind"}}' >/dev/null
check "without pods/binding the binding is refused with upstream's 403 words" \
  sk_wait_for 30 grep -qF 'pods "rbac-pod2" is forbidden: User "system:serviceaccount:kube-system:runner2" cannot create resource "pods/binding" in API group "" in the namespace "default"' "$work/runner2.log"
check "... and the pod stays unbound" test -z "$(kubectl get pod rbac-pod2 -o jsonpath={.spec.nodeName})"

# Under `make asan` the binaries are instrumented: stop the schedulers (leak reports come at exit),
# then any report lands in their logs.
for ((i = ${#pids[@]} - 1; i >= 1; i--)); do kill "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done
sanitizer=$(grep -lE 'AddressSanitizer|LeakSanitizer|runtime error:' "$work"/*.log 2>/dev/null)
check "no sanitizer report in the scheduler and API server logs" test -z "$sanitizer"
[ -z "$sanitizer" ] || grep -hE -A12 'AddressSanitizer|LeakSanitizer|runtime error:' $sanitizer | head -40 | sed 's/^/# /'
exit 0
