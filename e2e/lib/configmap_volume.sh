#!/usr/bin/env bash
# A stand-in for kubelet's ConfigMap volume, for the e2e suites and the demo (no kubelet runs
# here): keeps DIR/<key> equal to data[<key>] of a ConfigMap the way kubelet updates a mounted
# ConfigMap: each new content goes into a fresh DIR/..<timestamp>/ directory, then the DIR/..data
# symlink is swapped onto it with one rename (atomic), and DIR/<key> -> ..data/<key> never changes.
# A key that disappears from the ConfigMap disappears from the volume, as with kubelet.
#
# Sourced:  sk_cm_volume_sync DIR NAMESPACE CONFIGMAP [KEY]       one sync; 0 changed, 1 unchanged, 2 error
#           sk_cm_volume_loop DIR NAMESPACE CONFIGMAP [KEY] [SEC]  sync every SEC (default 0.5) forever
# Run:      configmap_volume.sh DIR NAMESPACE CONFIGMAP [KEY] [SEC]  the loop (stop it with SIGTERM)
# kubectl talks to $KUBECONFIG.

sk_cm_volume_sync() {
	local dir=$1 ns=$2 cm=$3 key=${4:-config.yaml}
	local tmp="$dir/..fetch.$$" ts
	mkdir -p "$dir" || return 2
	# exact bytes (no command substitution: it would strip trailing newlines)
	if ! timeout 20 kubectl --request-timeout=10s -n "$ns" get configmap "$cm" \
		-o go-template="{{with .data}}{{with index . \"$key\"}}{{.}}{{end}}{{end}}" >"$tmp" 2>/dev/null; then
		rm -f "$tmp"
		return 2
	fi
	if [ -L "$dir/..data" ]; then
		if [ -s "$tmp" ] && cmp -s "$tmp" "$dir/..data/$key"; then rm -f "$tmp"; return 1; fi
		if [ ! -s "$tmp" ] && [ ! -e "$dir/..data/$key" ]; then rm -f "$tmp"; return 1; fi
	fi
	ts="..$(date -u +%Y_%m_%d_%H_%M_%S.%N)"
	mkdir "$dir/$ts" || { rm -f "$tmp"; return 2; }
	if [ -s "$tmp" ]; then mv "$tmp" "$dir/$ts/$key"; else rm -f "$tmp"; fi
	local old
	old=$(readlink "$dir/..data" 2>/dev/null)
	ln -s "$ts" "$dir/..data_tmp" && mv -T "$dir/..data_tmp" "$dir/..data" || return 2
	[ -L "$dir/$key" ] || ln -s "..data/$key" "$dir/$key"
	[ -n "$old" ] && rm -rf "${dir:?}/$old"
	return 0
}

sk_cm_volume_loop() {
	local dir=$1 ns=$2 cm=$3 key=${4:-config.yaml} every=${5:-0.5}
	trap - EXIT
	trap 'exit 0' TERM INT
	while :; do
		sk_cm_volume_sync "$dir" "$ns" "$cm" "$key"
		sleep "$every"
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	[ $# -ge 3 ] || { echo "usage: $0 DIR NAMESPACE CONFIGMAP [KEY] [SECONDS]" >&2; exit 2; }
	sk_cm_volume_loop "$@"
fi
