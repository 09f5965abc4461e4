#!/usr/bin/env bash
# The workload suite (docs/benchmarks.md, "Workload suite"): for each workload of
# scheduler/bench/workloads.c, one row in process (build/bench/scheduler_bench_workloads) and
# one end to end: a fresh bin/schedkit-apiserver gets the nodes, the bound init pods and the
# whole backlog (pre + measured pods) while no scheduler runs; then bin/schedkit-scheduler starts
# and the drain is timed from its "Starting the scheduling loop" line (informers synced) to its
# last "Successfully bound" line. Churn (SchedulingWithMixedChurn, SchedulingWhileGated) runs
# through the API server during the drain. Attempt latency: histogram bucket bounds of
# /metrics (HTTPS, self-signed; /metrics allowed without a token by
# --authorization-always-allow-paths); RSS: the scheduler's VmHWM.
# Env: SK_BIN, SK_ROOT, SK_BENCH_BIN (the bench binaries' dir); SK_BENCH_ONLY (substring of the
# workload names); SK_BENCH_MODE (both, in-process, e2e); sizes as scheduler_bench_workloads
# (SK_BENCH_SMOKE=1, SK_BENCH_NODES, SK_BENCH_INIT, SK_BENCH_PRE, SK_BENCH_PODS);
# SK_BENCH_PERF=DIR records perf profiles (cpu-clock) of the scheduler and the API server per workload
# from the scheduler's start (DIR/<name>.data, DIR/<name>.apiserver.data; SK_BENCH_PERF_ARGS
# replaces "-e cpu-clock -g", e.g. "-e sched:sched_switch -e sched:sched_wakeup" for perf sched timehist); SK_BENCH_SCHED_WRAP=CMD
# runs the scheduler under CMD (e.g. "valgrind --tool=callgrind --callgrind-out-file=F": then the
# figures are valgrind's, and only the instruction counts mean something); SK_BENCH_APISERVER_WRAP=CMD
# runs the API server under CMD the same way (e.g. "valgrind --tool=callgrind --callgrind-out-file=F
# --instr-atstart=no": then it counts from the scheduler's start; pick small sizes). Each e2e row
# is followed by the API server's CPU seconds (utime + stime, all threads) during the drain.
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
SK_BENCH_BIN=${SK_BENCH_BIN:-$SK_ROOT/build/bench}
# SK_BENCH_FEATURE_GATES: a --feature-gates value for the scheduler; SchedulerAsyncPreemption=false
# there also turns asynchronous preemption off in process (SK_BENCH_ASYNC_PREEMPTION=0).
case "${SK_BENCH_FEATURE_GATES:-}" in *SchedulerAsyncPreemption=false*) export SK_BENCH_ASYNC_PREEMPTION=0 ;; esac
WL=$SK_BENCH_BIN/scheduler_bench_workloads
MODE=${SK_BENCH_MODE:-both}
. "$SK_ROOT/e2e/lib/scheduler_lib.sh"
[ -x "$WL" ] || { echo "workloads bench: $WL not built (make benches)" >&2; exit 1; }

work=$(mktemp -d /tmp/sk-wl-bench.XXXXXX)
pids=()
stop_all() { # the churn and the scheduler first, the API server last
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done
  pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

# curl_cfg METHOD URL_PREFIX: JSON lines on stdin -> a curl config, one request per line (POST
# with the line as body; DELETE of the object the line names). Prints the codes' counts.
curl_cfg() {
  awk -v m="$1" -v s="$2" '{
    if (NR > 1) print "next"
    if (m == "POST") {
      body = $0; gsub(/\\/, "\\\\", body); gsub(/"/, "\\\"", body)
      printf "url = \"%s\"\nrequest = \"POST\"\nheader = \"Content-Type: application/json\"\ndata = \"%s\"\n", s, body
    } else {
      match($0, /"name":"[^"]*"/); name = substr($0, RSTART + 8, RLENGTH - 9)
      printf "url = \"%s/%s\"\nrequest = \"DELETE\"\n", s, name
    }
    printf "write-out = \"%%{http_code}\\\\n\"\noutput = \"/dev/null\"\n"
  }'
}
# post_all URL < JSON lines: 8 in flight; fails on a non-2xx answer.
post_all() {
  curl_cfg POST "$1" >"$work/req.cfg"
  [ -s "$work/req.cfg" ] || return 0
  curl -s --no-progress-meter --parallel --parallel-max 8 -K "$work/req.cfg" | sort | uniq -c >"$work/codes.txt"
  awk '$2 !~ /^20[01]$/ {bad = 1} END {exit bad}' "$work/codes.txt" || { echo "create failed: $(cat "$work/codes.txt")" >&2; return 1; }
}

# churn_recreate SERVER NAME RATE: every 1/RATE s a churn node and pod replace the previous ones.
churn_recreate() {
  local server=$1 name=$2 rate=$3 k=0 node pod
  while :; do
    { read -r node; read -r pod; } < <("$WL" --churn "$name" "$k")
    curl -s -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary "$node" "$server/api/v1/nodes"
    curl -s -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary "$pod" "$server/api/v1/namespaces/default/pods"
    if [ "$k" -gt 0 ]; then
      curl -s -o /dev/null -X DELETE "$server/api/v1/nodes/node-churn-$((k - 1))"
      curl -s -o /dev/null -X DELETE "$server/api/v1/namespaces/default/pods/churn-$(printf %06d $((k - 1)))"
    fi
    k=$((k + 1))
    sleep "$(awk -v r="$rate" 'BEGIN {print 1 / r}')"
  done
}

ns_of() { # the namespace of the first object of a part
  "$WL" --emit "$1" "$2" | head -1 | sed -n 's/.*"namespace":"\([^"]*\)".*/\1/p'
}

# Percentile bounds from a cumulative histogram: the first bucket whose count reaches q*total.
pct() { # file metric q
  awk -v m="$2" -v q="$3" '$1 ~ "^"m"_bucket" {
      le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le); c[le] += $2; if (!(le in seen)) { seen[le] = 1; order[n++] = le } }
    $1 ~ "^"m"_count" {t += $2}
    END { for (i = 0; i < n; i++) if (c[order[i]] >= q * t) { print order[i]; exit } }' "$1"
}
proc_cpu() { # PID -> its utime + stime in seconds (all threads, whole life)
  awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); print ($12 + $13) / hz}' "/proc/$1/stat" 2>/dev/null || echo 0
}
proc_csw() { # PID -> its voluntary + involuntary context switches (all threads)
  cat /proc/"$1"/task/*/status 2>/dev/null | awk '$1 ~ /_ctxt_switches:$/ {n += $2} END {print n + 0}'
}
klog_time() { # a klog line's Lmmdd hh:mm:ss.uuuuuu -> seconds since the epoch (UTC)
  local l=$1
  date -u -d "$(date -u +%Y)-${l:1:2}-${l:3:2} $(awk '{print $2}' <<<"$l")" +%s.%N
}

# Waits until the scheduler serves /healthz (0), or it died or 120 s passed (1).
sched_up() {
  local i
  for ((i = 0; i < 1200; i++)); do
    kill -0 "$sched_pid" 2>/dev/null || return 1
    curl -sfk "https://127.0.0.1:$port/healthz" -o /dev/null && return 0
    sleep 0.1
  done
  return 1
}

run_e2e() { # NAME
  local name=$1 info nodes init pre measure churn rate
  info=$("$WL" --info "$name") || return 1
  rm -f "$work/kubeconfig" "$work/scheduler.log"
  read -r nodes init pre measure churn _ rate <<<"$info"
  # shellcheck disable=SC2086 # SK_BENCH_APISERVER_WRAP is a command line
  ${SK_BENCH_APISERVER_WRAP:-} "$SK_BIN/schedkit-apiserver" --port 0 --write-kubeconfig "$work/kubeconfig" --history 400000 >"$work/apiserver.log" 2>&1 &
  pids+=($!)
  sk_wait_for 120 test -s "$work/kubeconfig" || { echo "$name: API server did not start" >&2; return 1; }
  local server
  server=$(awk '$1 == "server:" {print $2; exit}' "$work/kubeconfig")
  sk_wait_for 20 curl -sf "$server/readyz" -o /dev/null || return 1
  local ns
  for ns in sched-0 sched-1; do
    curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
      --data-binary "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}" "$server/api/v1/namespaces"
  done
  # The preemptors' class (their spec.priority 10 must match it, as upstream's Priority admission wants).
  curl -s -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary \
    '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"sched-perf-high"},"value":10}' \
    "$server/apis/scheduling.k8s.io/v1/priorityclasses"
  "$WL" --emit "$name" nodes | post_all "$server/api/v1/nodes" || return 1
  local part
  for part in init pre measure; do
    ns=$(ns_of "$name" "$part")
    [ -n "$ns" ] || continue
    "$WL" --emit "$name" "$part" | post_all "$server/api/v1/namespaces/$ns/pods" || return 1
  done

  cat >"$work/config.yaml" <<'CFG'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
clientConnection: {qps: 100000, burst: 100000}
CFG
  local port sched_pid apis_cpu0 apis_csw0
  apis_cpu0=$(proc_cpu "${pids[0]}"); apis_csw0=$(proc_csw "${pids[0]}")
  case "${SK_BENCH_APISERVER_WRAP:-}" in # count the API server's instructions from here on
    *callgrind*--instr-atstart=no*) callgrind_control -i on "${pids[0]}" >/dev/null 2>&1 ;;
  esac
  for _ in 1 2 3; do # a free port may be taken by another process before the scheduler binds it
    port=$(sk_free_port)
    ${SK_BENCH_SCHED_WRAP:-} "$SK_BIN/schedkit-scheduler" --config "$work/config.yaml" --kubeconfig "$work/kubeconfig" --secure-port "$port" --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics \
      --bind-address 127.0.0.1 --v=2 ${SK_BENCH_FEATURE_GATES:+--feature-gates "$SK_BENCH_FEATURE_GATES"} >"$work/scheduler.log" 2>&1 &
    sched_pid=$!
    sched_up && break
    kill "$sched_pid" 2>/dev/null; wait "$sched_pid" 2>/dev/null
  done
  kill -0 "$sched_pid" 2>/dev/null || { echo "$name: the scheduler did not start: $(tail -3 "$work/scheduler.log")" >&2; return 1; }
  pids+=($sched_pid)
  if [ -n "${SK_BENCH_PERF:-}" ]; then
    mkdir -p "$SK_BENCH_PERF"
    # shellcheck disable=SC2086 # SK_BENCH_PERF_ARGS is a list of perf options
    perf record ${SK_BENCH_PERF_ARGS:--e cpu-clock -g} -o "$SK_BENCH_PERF/$name.data" -p "$sched_pid" >/dev/null 2>&1 &
    pids+=($!)
    # shellcheck disable=SC2086
    perf record ${SK_BENCH_PERF_ARGS:--e cpu-clock -g} -o "$SK_BENCH_PERF/$name.apiserver.data" -p "${pids[0]}" >/dev/null 2>&1 &
    pids+=($!)
  fi
  case $churn in
    1) churn_recreate "$server" "$name" "$rate" >/dev/null 2>&1 & pids+=($!) ;;
    2) ns=$(ns_of "$name" init)
       "$WL" --emit "$name" init | curl_cfg DELETE "$server/api/v1/namespaces/$ns/pods" >"$work/del.cfg"
       curl -s --no-progress-meter --rate "$rate/s" -K "$work/del.cfg" >/dev/null 2>&1 & pids+=($!) ;;
  esac
  scheduled() { curl -sfk "https://127.0.0.1:$port/metrics" |
    awk '$1 ~ /^scheduler_schedule_attempts_total\{.*result="scheduled"/ {s += $2} END {print s + 0}'; }
  # Done when every measured pod is scheduled; also "done" (and then not settled) when the scheduler died.
  all_done() { ! kill -0 "$sched_pid" 2>/dev/null || [ "$(scheduled)" -ge "$measure" ]; }
  local ok=yes
  sk_wait_for 900 all_done && [ "$(scheduled)" -ge "$measure" ] || ok=NO
  curl -sfk "https://127.0.0.1:$port/metrics" >"$work/metrics.txt"
  local rss t0 t1 nb
  rss=$(awk '$1 == "VmHWM:" {print $2}' "/proc/$sched_pid/status")
  # The scheduler's CPU time (utime + stime, all threads, from its start: includes the initial list).
  local cpu csw
  csw=$(cat /proc/"$sched_pid"/task/*/status 2>/dev/null |
    awk '$1 == "voluntary_ctxt_switches:" {v += $2} $1 == "nonvoluntary_ctxt_switches:" {n += $2} END {print v + 0, n + 0}')
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); print ($12 + $13) / hz}' "/proc/$sched_pid/stat")
  # user and system CPU seconds and minor page faults, apart (malloc returning memory shows as sys)
  local cpu_us
  cpu_us=$(awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); print $12 / hz, $13 / hz, $8}' "/proc/$sched_pid/stat")
  local apis_cpu1 apis_csw1
  apis_cpu1=$(proc_cpu "${pids[0]}"); apis_csw1=$(proc_csw "${pids[0]}")
  stop_all
  t0=$(klog_time "$(grep -m1 '"Starting the scheduling loop"' "$work/scheduler.log")")
  t1=$(klog_time "$(grep '"Successfully bound pod to node"' "$work/scheduler.log" | tail -1)")
  nb=$(grep -c '"Successfully bound pod to node"' "$work/scheduler.log")
  awk -v name="$name" -v nodes="$nodes" -v init="$init" -v pre="$pre" -v m="$measure" -v t0="$t0" -v t1="$t1" \
      -v a50="$(pct "$work/metrics.txt" scheduler_scheduling_attempt_duration_seconds 0.5)" \
      -v a99="$(pct "$work/metrics.txt" scheduler_scheduling_attempt_duration_seconds 0.99)" \
      -v rss="$rss" -v ok="$ok" -v nb="$nb" -v cpu="$cpu" -v csw="$csw" -v cpu_us="$cpu_us" \
      -v ac0="$apis_cpu0" -v ac1="$apis_cpu1" -v as0="$apis_csw0" -v as1="$apis_csw1" 'BEGIN {
    d = t1 - t0
    printf "| %-24s | e2e        | %5d | %5d | %5d+%-5d | %9.0f | %7.3f | %7.2f | %10s | %10s | %7.1f | %s |\n", name, nodes,
      init, pre, m, (d > 0 ? m / d : 0), d, cpu, "<= " a50 " s", "<= " a99 " s", rss / 1024, ok
    split(csw, c, " "); split(cpu_us, u, " ")
    printf "|   bindings logged %d; scheduler context switches (all threads, whole life): %d voluntary, %d involuntary; CPU %.2f s user, %.2f s system; %d minor faults |\n", nb, c[1], c[2], u[1], u[2], u[3]
    printf "|   API server from the scheduler start: CPU %.2f s (%.0f us per measured pod), %d context switches |\n", ac1 - ac0, (m > 0 ? (ac1 - ac0) * 1e6 / m : 0), as1 - as0
  }'
  [ "$ok" = yes ]
}

rc=0
echo "Workload suite ($([ -n "${SK_BENCH_SMOKE:-}" ] && echo smoke || echo upstream) sizes; load: $(cut -d' ' -f1-3 /proc/loadavg))"
"$WL" --list >"$work/names" || exit 1
first=1
while read -r name; do
  [ -n "${SK_BENCH_ONLY:-}" ] && [[ "$name" != *"$SK_BENCH_ONLY"* ]] && continue
  if [ "$MODE" != e2e ]; then
    "$WL" "$name" >"$work/row.txt" || rc=1
    if [ $first = 1 ]; then grep '^| workload' "$work/row.txt"; first=0; fi
    grep '^|' "$work/row.txt" | grep -v '^| workload'
  elif [ $first = 1 ]; then
    "$WL" --list >/dev/null; first=0
  fi
  if [ "$MODE" != in-process ]; then
    run_e2e "$name" || rc=1
  fi
done <"$work/names"
exit $rc
