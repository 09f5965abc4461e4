# Helpers shared by the scheduler e2e suites and benchmarks (sourced, not run: the runner only
# runs *.sh files that print TAP lines, and this one prints nothing on its own).
# Cluster generators print kubectl-ready objects on stdout: one JSON object per line (a JSON stream).

# sk_gen_nodes N [prefix]: N nodes with varied capacity, zones, labels and taints:
#   cpu (i%4+1)*2, memory (i%4+1)*4Gi, zone z(i%3), disk=ssd on even i, tier=gpu + taint
#   dedicated=gpu:NoSchedule when i%10==0, taint maintenance:NoSchedule when i%25==7.
sk_gen_nodes() {
  awk -v n="$1" -v prefix="${2:-node}" 'BEGIN {
    for (i = 0; i < n; i++) {
      c = (i % 4 + 1) * 2; m = (i % 4 + 1) * 4
      tier = (i % 10 == 0) ? "gpu" : "general"
      disk = (i % 2 == 0) ? ",\"disk\":\"ssd\"" : ""
      taints = ""
      if (i % 10 == 0) taints = "{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}"
      if (i % 25 == 7) taints = (taints == "" ? "" : taints ",") "{\"key\":\"maintenance\",\"effect\":\"NoSchedule\"}"
      printf "%s{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s-%03d\",\"labels\":{\"kubernetes.io/hostname\":\"%s-%03d\",\"topology.kubernetes.io/zone\":\"z%d\",\"tier\":\"%s\"%s}},", "", prefix, i, prefix, i, i % 3, tier, disk
      printf "\"spec\":{\"taints\":[%s]},\"status\":{\"allocatable\":{\"cpu\":\"%d\",\"memory\":\"%dGi\",\"pods\":\"110\"},\"capacity\":{\"cpu\":\"%d\",\"memory\":\"%dGi\",\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}\n", taints, c, m, c, m
    }
  }'
}

# sk_gen_pods N FIRST SCHED [prefix]: pods FIRST..FIRST+N-1 for schedulerName SCHED:
#   cpu (j%4+1)*50m, memory (j%4+1)*64Mi; toleration of dedicated=gpu when j%5==0;
#   required node affinity disk=ssd when j%7==0 and tier=gpu when j%11==0 (unschedulable
#   until a gpu node without the taint exists, unless tolerating); hostPort 8080+(j%3) when
#   j%13==0 and j%11!=0; cpu 1000 (never fits) when j%97==0.
sk_gen_pods() {
  awk -v n="$1" -v first="$2" -v sched="$3" -v prefix="${4:-pod}" 'BEGIN {
    for (k = 0; k < n; k++) {
      j = first + k
      cpu = ((j % 4 + 1) * 50) "m"; mem = ((j % 4 + 1) * 64) "Mi"
      if (j % 97 == 0) cpu = "1000"
      tol = (j % 5 == 0) ? "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}]," : ""
      exprs = ""
      if (j % 7 == 0) exprs = "{\"key\":\"disk\",\"operator\":\"In\",\"values\":[\"ssd\"]}"
      if (j % 11 == 0) exprs = (exprs == "" ? "" : exprs ",") "{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"gpu\"]}"
      aff = (exprs == "") ? "" : "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[" exprs "]}]}}},"
      ports = (j % 13 == 0 && j % 11 != 0) ? ",\"ports\":[{\"containerPort\":80,\"hostPort\":" (8080 + j % 3) "}]" : ""
      printf "%s{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-%04d\",\"namespace\":\"default\",\"labels\":{\"app\":\"e2e\"}},", "", prefix, j
      printf "\"spec\":{\"schedulerName\":\"%s\",%s%s\"containers\":[{\"name\":\"c\",\"image\":\"pause:3.9\",\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"%s\"}}%s}]}}\n", sched, tol, aff, cpu, mem, ports
    }
  }'
}

# sk_free_port: a TCP port nobody listens on (best effort).
sk_free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 30000))
    (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; return; }
  done
  echo 0
}

# sk_wait_for SECONDS CMD...: polls CMD every 0.5 s until it succeeds; 1 on timeout.
sk_wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.5
  done
}

# sk_e2e_begin PREFIX: the frame every scheduler suite shares — $work (a temp dir named PREFIX),
# $pids (killed in reverse order at exit, then $work removed), and the TAP helpers ok, notok,
# check DESC CMD..., fatal MSG (prints the tail of every $work/*.log and exits 1).
sk_e2e_begin() {
  work=$(mktemp -d "/tmp/$1.XXXXXX")
  pids=()
  trap sk_e2e_cleanup EXIT
  trap 'exit 1' INT TERM
}
sk_e2e_cleanup() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done
  rm -rf "$work"
}
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
fatal() { notok "$*"; for f in "$work"/*.log; do echo "--- $f"; tail -30 "$f"; done; exit 1; }

# sk_start_apiserver: bin/schedkit-apiserver with its simulated kubelet (50 ms), logging to
# $work/apiserver.log; exports KUBECONFIG and returns once it answers /readyz (fatal otherwise).
sk_start_apiserver() {
  "$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$work/kubeconfig" --simulate-kubelet \
    --kubelet-delay-ms 50 >"$work/apiserver.log" 2>&1 &
  pids+=($!)
  export KUBECONFIG=$work/kubeconfig
  sk_wait_for 20 test -s "$work/kubeconfig" || fatal "local API server wrote its kubeconfig"
  sk_wait_for 20 kubectl get --raw /readyz >/dev/null 2>&1 || fatal "local API server ready"
}

# sk_start_scheduler_service CONFIG [FLAG...]: schedkit-scheduler with CONFIG on a free port
# ($port, pid $spid), logging to $work/scheduler.log. HTTPS with a self-signed certificate; the
# service proxy sends no credentials (as kube-apiserver's), so the debug paths are opened as
# docs/explain.md says. Then the Service and Endpoints schedkit-system/schedkit-scheduler (port
# 10259, https) name it, so the API server's service proxy and `kubectl schedkit` reach it.
sk_start_scheduler_service() {
  local config=$1 try
  shift
  port=0
  for try in 1 2 3; do
    port=$(sk_free_port)
    "$SK_BIN/schedkit-scheduler" --config "$config" --kubeconfig "$KUBECONFIG" --bind-address 127.0.0.1 \
      --secure-port "$port" --authorization-always-allow-paths '/healthz,/readyz,/livez,/debug/schedkit/*' \
      "$@" >"$work/scheduler.log" 2>&1 &
    spid=$!
    pids+=($spid)
    sk_wait_for 20 curl -sfk "https://127.0.0.1:$port/readyz" -o /dev/null && break
    kill -0 "$spid" 2>/dev/null && fatal "scheduler serves /readyz"
  done
  kubectl create namespace schedkit-system >/dev/null || fatal "namespace schedkit-system"
  kubectl apply -f - >/dev/null <<EOF || fatal "scheduler Service and Endpoints"
apiVersion: v1
kind: Service
metadata: {name: schedkit-scheduler, namespace: schedkit-system}
spec:
  ports: [{name: https, port: 10259, targetPort: $port, protocol: TCP}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: schedkit-scheduler, namespace: schedkit-system}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [{name: https, port: $port, protocol: TCP}]
EOF
}
