#!/usr/bin/env bash
# One filter+prioritize HTTP extender (bin/schedkit-sample-extender, the C sample) in front of
# bin/schedkit-scheduler, end to end through bin/schedkit-apiserver (no simulated kubelet):
# 1,000 nodes (4 cpu, 32Gi), then pods (100m, 500Mi) created as fast as the API server takes
# them, once with nodeCacheCapable: true (node names on the wire) and once with false (full
# Node objects). Prints per mode pods/s from the first creation to the last binding, attempt
# latency percentiles (histogram bounds from /metrics), the extender's own call latency
# (scheduler_extender_request_duration_seconds) and the scheduler's peak RSS.
# Env: SK_BIN, SK_ROOT; SK_BENCH_NODES (1000), SK_BENCH_PODS_NAMES (5000), SK_BENCH_PODS_OBJECTS (300);
# SK_BENCH_PERF=PREFIX records a perf profile of the scheduler per mode (PREFIX.true, PREFIX.false).
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"
NODES=${SK_BENCH_NODES:-1000}

work=$(mktemp -d /tmp/sk-ext-bench.XXXXXX)
pids=()
stop_all() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done
  pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
die() { echo "extender_e2e bench: $*" >&2; exit 1; }

post_all() { # curl config file: one POST per object, 8 in flight; fails on non-2xx
  curl -s --no-progress-meter --parallel --parallel-max 8 -K "$1" | sort | uniq -c >"$work/codes.txt"
  awk '$2 !~ /^20[01]$/ {bad = 1} END {exit bad}' "$work/codes.txt" || die "create failed: $(cat "$work/codes.txt")"
}
gen_cfg() { # server kind count
  awk -v s="$1" -v kind="$2" -v n="$3" 'BEGIN {
    for (i = 0; i < n; i++) {
      if (i) print "next"
      if (kind == "node") {
        path = "/api/v1/nodes"
        body = sprintf("{\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":\\\"Node\\\",\\\"metadata\\\":{\\\"name\\\":\\\"node-%05d\\\",\\\"labels\\\":{\\\"kubernetes.io/hostname\\\":\\\"node-%05d\\\",\\\"topology.kubernetes.io/zone\\\":\\\"z%d\\\"}},\\\"status\\\":{\\\"allocatable\\\":{\\\"cpu\\\":\\\"4\\\",\\\"memory\\\":\\\"32Gi\\\",\\\"pods\\\":\\\"110\\\"},\\\"capacity\\\":{\\\"cpu\\\":\\\"4\\\",\\\"memory\\\":\\\"32Gi\\\",\\\"pods\\\":\\\"110\\\"},\\\"conditions\\\":[{\\\"type\\\":\\\"Ready\\\",\\\"status\\\":\\\"True\\\"}]}}", i, i, i % 3)
      } else {
        path = "/api/v1/namespaces/default/pods"
        body = sprintf("{\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":\\\"Pod\\\",\\\"metadata\\\":{\\\"name\\\":\\\"pod-%05d\\\"},\\\"spec\\\":{\\\"containers\\\":[{\\\"name\\\":\\\"pause\\\",\\\"image\\\":\\\"pause:3.9\\\",\\\"resources\\\":{\\\"requests\\\":{\\\"cpu\\\":\\\"100m\\\",\\\"memory\\\":\\\"500Mi\\\"}}}]}}", i)
      }
      printf "url = \"%s%s\"\nheader = \"Content-Type: application/json\"\nwrite-out = \"%%{http_code}\\\\n\"\noutput = \"/dev/null\"\ndata = \"%s\"\n", s, path, body
    }
  }'
}
# Percentile bound from a cumulative histogram in $work/metrics.txt: the first bucket reaching q*total
# (series whose labels contain the optional third argument).
pct() { # metric q [label text]
  awk -v m="$1" -v q="$2" -v sel="${3:-}" 'index($1, sel) == 0 {next} $1 ~ "^"m"_bucket" {
      le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le); c[le] += $2; if (!(le in seen)) { seen[le] = 1; order[n++] = le } }
    $1 ~ "^"m"_count" {t += $2}
    END { for (i = 0; i < n; i++) if (c[order[i]] >= q * t) { print order[i]; exit } }' "$work/metrics.txt"
}

cpu_ticks() { # pid... -> utime+stime clock ticks of each, space-separated
  local p
  for p in "$@"; do awk '{sub(/^.*\) /, ""); printf "%d ", $12 + $13}' "/proc/$p/stat"; done
}

run_mode() { # cache(true|false) pods
  local cache=$1 npods=$2 api_pid ext_pid
  rm -f "$work/kubeconfig" "$work/ext.port"
  "$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$work/kubeconfig" --history 200000 >"$work/apiserver.log" 2>&1 &
  api_pid=$!
  pids+=($api_pid)
  export KUBECONFIG=$work/kubeconfig
  sk_wait_for 20 test -s "$work/kubeconfig" || die "API server did not start"
  local server
  server=$(awk '$1 == "server:" {print $2; exit}' "$work/kubeconfig")
  sk_wait_for 20 curl -sf "$server/readyz" -o /dev/null || die "API server not ready"
  gen_cfg "$server" node "$NODES" >"$work/nodes.cfg"
  gen_cfg "$server" pod "$npods" >"$work/pods.cfg"
  post_all "$work/nodes.cfg"
  "$SK_BIN/schedkit-sample-extender" --port 0 --port-file "$work/ext.port" --prefer-node node-00007 >"$work/extender.log" 2>&1 &
  ext_pid=$!
  pids+=($ext_pid)
  sk_wait_for 10 test -s "$work/ext.port" || die "extender did not start"
  cat >"$work/config.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
clientConnection: {qps: 100000, burst: 100000}
extenders:
- urlPrefix: http://127.0.0.1:$(cat "$work/ext.port")
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 1
  nodeCacheCapable: $cache
  httpTimeout: 30s
EOF
  local port sched_pid cpu0 cpu1
  port=$(sk_free_port)
  "$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --kubeconfig "$KUBECONFIG" --secure-port "$port" --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics \
    --bind-address 127.0.0.1 --v=2 >"$work/scheduler.log" 2>&1 &
  sched_pid=$!
  pids+=($sched_pid)
  sk_wait_for 60 curl -sfk "https://127.0.0.1:$port/readyz" -o /dev/null || die "scheduler not ready: $(tail -5 "$work/scheduler.log")"
  scheduled() { curl -sfk "https://127.0.0.1:$port/metrics" |
    awk '$1 ~ /^scheduler_schedule_attempts_total\{.*result="scheduled"/ {s += $2} END {print s + 0}'; }
  local t0 t_last last year nbound rss_kib perf_pid=
  # SK_BENCH_PERF=PREFIX: profile the scheduler (perf record -g) while the pods are placed
  if [ -n "${SK_BENCH_PERF:-}" ]; then
    perf record -g -o "$SK_BENCH_PERF.$cache" -p "$sched_pid" >/dev/null 2>&1 &
    perf_pid=$!
  fi
  cpu0=$(cpu_ticks "$sched_pid" "$ext_pid" "$api_pid")
  t0=$(date +%s.%N)
  post_all "$work/pods.cfg"
  all_done() { [ "$(scheduled)" -ge "$npods" ]; }
  sk_wait_for 600 all_done || die "nodeCacheCapable=$cache: only $(scheduled) of $npods pods scheduled"
  if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null; fi
  cpu1=$(cpu_ticks "$sched_pid" "$ext_pid" "$api_pid")
  rss_kib=$(awk '$1 == "VmHWM:" {print $2}' "/proc/$sched_pid/status")
  curl -sfk "https://127.0.0.1:$port/metrics" >"$work/metrics.txt"
  last=$(grep '"Successfully bound pod to node"' "$work/scheduler.log" | tail -1 | awk '{print $1, $2}')
  year=$(date -u +%Y)
  t_last=$(date -u -d "$year-${last:1:2}-${last:3:2} ${last#* }" +%s.%N)
  nbound=$(grep -c '"Successfully bound pod to node"' "$work/scheduler.log")
  awk -v t0="$t0" -v tl="$t_last" -v n="$npods" -v nb="$nbound" -v rss="$rss_kib" -v cache="$cache" -v nodes="$NODES" \
      -v cpu0="$cpu0" -v cpu1="$cpu1" -v hz="$(getconf CLK_TCK)" \
      -v a50="$(pct scheduler_scheduling_attempt_duration_seconds 0.5)" \
      -v a99="$(pct scheduler_scheduling_attempt_duration_seconds 0.99)" \
      -v f50="$(pct scheduler_extender_request_duration_seconds 0.5 'verb="filter"')" \
      -v f99="$(pct scheduler_extender_request_duration_seconds 0.99 'verb="filter"')" \
      -v p50="$(pct scheduler_extender_request_duration_seconds 0.5 'verb="prioritize"')" \
      -v p99="$(pct scheduler_extender_request_duration_seconds 0.99 'verb="prioritize"')" 'BEGIN {
    printf "one filter+prioritize extender, nodeCacheCapable=%s: %d nodes, %d pods (%d bindings logged)\n", cache, nodes, n, nb
    printf "  throughput: %.0f pods/s first creation -> last binding, %.2f s\n", n / (tl - t0), tl - t0
    printf "  attempt latency (histogram bounds): p50 <= %s s, p99 <= %s s\n", a50, a99
    printf "  extender calls (histogram bounds): filter p50 <= %s s, p99 <= %s s; prioritize p50 <= %s s, p99 <= %s s\n", f50, f99, p50, p99
    split(cpu0, c0, " "); split(cpu1, c1, " ")
    printf "  CPU used while placing (utime+stime): scheduler %.2f s, extender %.2f s, API server %.2f s\n", (c1[1] - c0[1]) / hz, (c1[2] - c0[2]) / hz, (c1[3] - c0[3]) / hz
    printf "  scheduler peak RSS (VmHWM): %.1f MiB\n", rss / 1024
  }'
  stop_all
}

run_mode true "${SK_BENCH_PODS_NAMES:-5000}"
run_mode false "${SK_BENCH_PODS_OBJECTS:-300}"
