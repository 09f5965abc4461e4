# The frame of the end-to-end suites that run the operator and the scheduler as local processes
# against bin/schedkit-apiserver (sourced, not run; the scheduler-only suites use scheduler_lib.sh).
#
# sk_suite_begin PREFIX: $TMP (a temp dir named PREFIX; kept when SK_KEEP is set, its path printed),
# the process variables SERVER_PID OP_PID SCHED_PID SYNC_PID (empty; a suite sets the ones it
# starts, and may add more names to SK_SUITE_PIDS), stopped in reverse start order at exit.
# Then the TAP helpers:
#   ok DESC / notok DESC
#   check DESC CMD...          CMD succeeds (its output in $TMP/out, shown on failure)
#   expect DESC PATTERN CMD... CMD's output matches the extended regex PATTERN
#   eventually DESC CMD...     CMD succeeds within SK_EVENTUALLY_TRIES polls of 0.2 s (default 150,
#                              30 s; no timing is asserted)
#   bail MSG                   not ok, the tail of the operator and scheduler logs, exit 1
#   k ARGS...                  kubectl with the suite's cache dir and timeouts
#   cond KIND NAME TYPE FIELD, cond_is ... VALUE, cond_has ... SUBSTRING: a status condition's field
#   sk_need_bins NAME...       the binaries exist in $SK_BIN (else not ok and exit 1); kubectl and jq too
#   stop_pid PID               kill and reap one process (nothing when PID is empty)
SERVER_PID= OP_PID= SCHED_PID= SYNC_PID=
SK_SUITE_PIDS="SCHED_PID SYNC_PID OP_PID SERVER_PID"

sk_suite_begin() {
	TMP=$(mktemp -d "/tmp/$1.XXXXXX")
	trap sk_suite_cleanup EXIT
	trap 'exit 130' INT TERM
}

stop_pid() { # pid
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

sk_suite_cleanup() {
	local v
	for v in $SK_SUITE_PIDS; do stop_pid "${!v}"; done
	if [ -n "${SK_KEEP:-}" ]; then echo "# kept $TMP"; else rm -rf "$TMP"; fi
}

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
diag() { sed 's/^/#   /' "$TMP/out" | head -40; }
check() { # DESC CMD...
	local desc=$1; shift
	if "$@" >"$TMP/out" 2>&1; then ok "$desc"; else notok "$desc"; diag; fi
}
expect() { # DESC PATTERN CMD...
	local desc=$1 pat=$2; shift 2
	"$@" >"$TMP/out" 2>&1
	if grep -Eq -- "$pat" "$TMP/out"; then ok "$desc"; else notok "$desc (want /$pat/)"; diag; fi
}
eventually() { # DESC CMD...
	local desc=$1; shift
	for _ in $(seq 1 "${SK_EVENTUALLY_TRIES:-150}"); do
		if "$@" >"$TMP/out" 2>&1; then ok "$desc"; return 0; fi
		sleep 0.2
	done
	notok "$desc"; diag; return 1
}
bail() {
	notok "$*"
	local f
	for f in operator scheduler; do [ -s "$TMP/$f.log" ] && tail -n 20 "$TMP/$f.log" | sed "s/^/#   $f: /"; done
	exit 1
}

sk_need_bins() { # NAME...
	local b t
	for b in "$@"; do
		[ -x "$SK_BIN/$b" ] || { echo "not ok - $SK_BIN/$b exists (make)"; exit 1; }
	done
	for t in kubectl jq; do command -v $t >/dev/null || { echo "not ok - $t is installed"; exit 1; }; done
}

k() { timeout 30 kubectl --cache-dir "$TMP/cache" --request-timeout=20s "$@"; }
cond() { # kind name type field
	k get "$1" "$2" -o jsonpath="{.status.conditions[?(@.type==\"$3\")].$4}"
}
cond_is() { [ "$(cond "$1" "$2" "$3" "$4")" = "$5" ]; }
cond_has() { cond "$1" "$2" "$3" "$4" | grep -qF -- "$5"; }
