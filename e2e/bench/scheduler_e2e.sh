#!/usr/bin/env bash
# SchedulingBasic end to end: bin/schedkit-scheduler against bin/schedkit-apiserver (no simulated
# kubelet, like upstream scheduler_perf). 5,000 nodes (4 cpu, 32Gi, 110 pods) and 1,000 bound
# pods exist; then 10,000 pods (100m, 500Mi) are created as fast as the API server takes them
# (curl --parallel, one POST each). Prints pods/s from the first creation to the last binding
# (the scheduler's "Successfully bound" log timestamps), attempt latency and e2e SLI percentiles
# (histogram bucket bounds from /metrics), and the scheduler's peak RSS (VmHWM).
# Env: SK_BIN, SK_ROOT; SK_BENCH_NODES, SK_BENCH_EXISTING, SK_BENCH_PODS override the sizes;
# SK_BENCH_PERF=FILE records a perf profile of the scheduler during the placement phase.
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"
NODES=${SK_BENCH_NODES:-5000}
EXISTING=${SK_BENCH_EXISTING:-1000}
PODS=${SK_BENCH_PODS:-10000}

work=$(mktemp -d /tmp/sk-sched-bench.XXXXXX)
pids=()
cleanup() { # schedulers first (they flush events and release leases), the API server last
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
die() { echo "scheduler_e2e bench: $*" >&2; exit 1; }

"$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$work/kubeconfig" --history 200000 >"$work/apiserver.log" 2>&1 &
pids+=($!)
export KUBECONFIG=$work/kubeconfig
sk_wait_for 20 test -s "$work/kubeconfig" || die "API server did not start"
server=$(awk '$1 == "server:" {print $2; exit}' "$work/kubeconfig")
sk_wait_for 20 curl -sf "$server/readyz" -o /dev/null || die "API server not ready"

# post_all RESOURCE_PATH < generator-config: one POST per object, 8 in flight; fails on non-2xx.
post_all() {
  curl -s --no-progress-meter --parallel --parallel-max 8 -K "$1" | sort | uniq -c >"$work/codes.txt"
  awk '$2 !~ /^20[01]$/ {bad = 1} END {exit bad}' "$work/codes.txt" || die "create failed: $(cat "$work/codes.txt")"
}
gen_cfg() { # kind count prefix extra: curl config posting <count> objects
  awk -v s="$server" -v kind="$1" -v n="$2" -v prefix="$3" -v nodes="$NODES" 'BEGIN {
    for (i = 0; i < n; i++) {
      if (i) print "next"
      if (kind == "node") {
        path = "/api/v1/nodes"
        body = sprintf("{\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":\\\"Node\\\",\\\"metadata\\\":{\\\"name\\\":\\\"node-%05d\\\",\\\"labels\\\":{\\\"kubernetes.io/hostname\\\":\\\"node-%05d\\\"}},\\\"status\\\":{\\\"allocatable\\\":{\\\"cpu\\\":\\\"4\\\",\\\"memory\\\":\\\"32Gi\\\",\\\"pods\\\":\\\"110\\\"},\\\"capacity\\\":{\\\"cpu\\\":\\\"4\\\",\\\"memory\\\":\\\"32Gi\\\",\\\"pods\\\":\\\"110\\\"}}}", i, i)
      } else {
        path = "/api/v1/namespaces/default/pods"
        nn = (kind == "bound") ? sprintf("\\\"nodeName\\\":\\\"node-%05d\\\",", i % nodes) : ""
        body = sprintf("{\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":\\\"Pod\\\",\\\"metadata\\\":{\\\"name\\\":\\\"%s-%05d\\\"},\\\"spec\\\":{%s\\\"containers\\\":[{\\\"name\\\":\\\"pause\\\",\\\"image\\\":\\\"pause:3.9\\\",\\\"resources\\\":{\\\"requests\\\":{\\\"cpu\\\":\\\"100m\\\",\\\"memory\\\":\\\"500Mi\\\"}}}]}}", prefix, i, nn)
      }
      printf "url = \"%s%s\"\nheader = \"Content-Type: application/json\"\nwrite-out = \"%%{http_code}\\\\n\"\noutput = \"/dev/null\"\ndata = \"%s\"\n", s, path, body
    }
  }'
}
gen_cfg node "$NODES" node >"$work/nodes.cfg"
gen_cfg bound "$EXISTING" existing >"$work/existing.cfg"
gen_cfg pod "$PODS" pod >"$work/pods.cfg"
post_all "$work/nodes.cfg"
post_all "$work/existing.cfg"

cat >"$work/config.yaml" <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
clientConnection: {qps: 100000, burst: 100000}
EOF
port=$(sk_free_port)
"$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --kubeconfig "$KUBECONFIG" --secure-port "$port" --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics \
  --bind-address 127.0.0.1 --v=2 >"$work/scheduler.log" 2>&1 &
sched_pid=$!
pids+=($sched_pid)
sk_wait_for 60 curl -sfk "https://127.0.0.1:$port/readyz" -o /dev/null || die "scheduler not ready: $(tail -5 "$work/scheduler.log")"

scheduled() { curl -sfk "https://127.0.0.1:$port/metrics" |
  awk '$1 ~ /^scheduler_schedule_attempts_total\{.*result="scheduled"/ {s += $2} END {print s + 0}'; }
# SK_BENCH_PERF=FILE: profile the scheduler (perf record -g) while the pods are placed.
if [ -n "${SK_BENCH_PERF:-}" ]; then
  perf record -g -o "$SK_BENCH_PERF" -p "$sched_pid" >/dev/null 2>&1 &
  perf_pid=$!
fi
t0=$(date +%s.%N)
post_all "$work/pods.cfg"
t_created=$(date +%s.%N)
all_done() { [ "$(scheduled)" -ge "$PODS" ]; }
sk_wait_for 300 all_done || die "only $(scheduled) of $PODS pods scheduled"
if [ -n "${SK_BENCH_PERF:-}" ]; then kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null; fi
rss_kib=$(awk '$1 == "VmHWM:" {print $2}' "/proc/$sched_pid/status")
curl -sfk "https://127.0.0.1:$port/metrics" >"$work/metrics.txt"

# The last binding's wall-clock time from its klog line (Lmmdd hh:mm:ss.uuuuuu, UTC).
last=$(grep '"Successfully bound pod to node"' "$work/scheduler.log" | tail -1 | awk '{print $1, $2}')
year=$(date -u +%Y)
t_last=$(date -u -d "$year-${last:1:2}-${last:3:2} ${last#* }" +%s.%N)
nbound=$(grep -c '"Successfully bound pod to node"' "$work/scheduler.log")

# Percentile bounds from a cumulative histogram: the first bucket whose count reaches q*total.
pct() { # metric q
  awk -v m="$1" -v q="$2" '$1 ~ "^"m"_bucket" {
      le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le); c[le] += $2; if (!(le in seen)) { seen[le] = 1; order[n++] = le } }
    $1 ~ "^"m"_count" {t += $2}
    END { for (i = 0; i < n; i++) if (c[order[i]] >= q * t) { print order[i]; exit } }' "$work/metrics.txt"
}
awk -v t0="$t0" -v tc="$t_created" -v tl="$t_last" -v n="$PODS" -v nb="$nbound" -v rss="$rss_kib" \
    -v nodes="$NODES" -v ex="$EXISTING" \
    -v a50="$(pct scheduler_scheduling_attempt_duration_seconds 0.5)" \
    -v a99="$(pct scheduler_scheduling_attempt_duration_seconds 0.99)" \
    -v s50="$(pct scheduler_pod_scheduling_sli_duration_seconds 0.5)" \
    -v s99="$(pct scheduler_pod_scheduling_sli_duration_seconds 0.99)" 'BEGIN {
  printf "SchedulingBasic end to end: %d nodes, %d existing pods, %d pods through the local API server\n", nodes, ex, n
  printf "  creation: %.2f s (%.0f pods/s); bindings logged: %d\n", tc - t0, n / (tc - t0), nb
  printf "  throughput: %.0f pods/s first creation -> last binding, %.2f s (target >= 3000)\n", n / (tl - t0), tl - t0
  printf "  attempt latency (histogram bounds): p50 <= %s s, p99 <= %s s\n", a50, a99
  printf "  e2e scheduling SLI (histogram bounds): p50 <= %s s, p99 <= %s s\n", s50, s99
  printf "  scheduler peak RSS (VmHWM): %.1f MiB (target < 256)\n", rss / 1024
}'
