#!/usr/bin/env bash
# End-to-end: the OCI images (images/, `make image`): both built twice give identical digests
# (reproducible); the config runs as 65532:65532 with the binary as entrypoint, PATH, and the
# labels (title, version = SK_VERSION); the root filesystem holds only the binary, shared
# libraries, the CA certificates and the plugin modules; the binary runs from it (chroot with
# /proc as a container has it, as root; else through the image's own dynamic loader and
# libraries) -- `--version` when the binary has it, else `--help` -- and the scheduler loads the
# image's plugin modules there (--validate of a profile enabling the three contrib plugins); the
# manifests name the versioned images. Prints TAP-style "ok"/"not ok" lines.
# Env: SK_BIN, SK_LIB (binaries and lib/, default $SK_ROOT/bin, $SK_BIN/../lib), SK_ROOT.
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export SK_BIN=${SK_BIN:-$SK_ROOT/bin}
export SK_LIB=${SK_LIB:-$SK_BIN/../lib} SK_ROOT
TMP=$(mktemp -d /tmp/sk-image.XXXXXX)
MOUNTED=
cleanup() {
	for m in $MOUNTED; do umount "$m" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
diag() { sed 's/^/#   /' "$TMP/out" | head -30; }

command -v umoci >/dev/null || { echo "not ok - umoci is installed (make deps)"; exit 1; }
version=$(sed -n 's/^#define[[:space:]]*SK_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' "$SK_ROOT/plugins/sdk/include/schedkit/version.h")

blob() { # layout digest: the blob's path
	printf '%s/blobs/sha256/%s\n' "$1" "${2#sha256:}"
}
for n in scheduler operator; do
	d1=$("$SK_ROOT/images/build-image.sh" $n "$TMP/a" 2>"$TMP/out") || { notok "$n: images/build-image.sh"; diag; continue; }
	d2=$("$SK_ROOT/images/build-image.sh" $n "$TMP/b" 2>"$TMP/out") || { notok "$n: second build"; diag; continue; }
	if [ "$d1" = "$d2" ] && [[ $d1 == sha256:* ]]; then ok "$n: two builds give the same digest ($d1)"
	else notok "$n: two builds give the same digest ($d1 vs $d2)"; fi
	oci=$TMP/a/$n/oci
	manifest=$(blob "$oci" "$d1")
	config=$(blob "$oci" "$(jq -r .config.digest "$manifest")")
	got=$(jq -r '[.config.User, (.config.Entrypoint | join(" ")), (.config.Env | join(" ")),
		.config.Labels["org.opencontainers.image.title"], .config.Labels["org.opencontainers.image.version"],
		.os] | join("|")' "$config")
	want="65532:65532|/usr/bin/schedkit-$n|PATH=/usr/bin:/bin|schedkit-$n|$version|linux"
	if [ "$got" = "$want" ]; then ok "$n: config: user 65532, entrypoint, PATH, title and version labels"
	else notok "$n: config (got $got, want $want)"; fi
	if jq -e '.manifests | length == 1' "$oci/index.json" >/dev/null &&
		[ "$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$oci/index.json")" = "$version" ]; then
		ok "$n: one manifest, tagged $version"
	else notok "$n: one manifest tagged $version"; fi

	root=$TMP/root-$n
	rootless=()
	[ "$(id -u)" = 0 ] || rootless=(--rootless)
	umoci raw unpack "${rootless[@]}" --image "$oci:$version" "$root" >"$TMP/out" 2>&1 || { notok "$n: umoci raw unpack"; diag; continue; }
	# only the binary, libraries, the CA bundle and the plugin modules
	(cd "$root" && find . -type f -o -type l) | sed 's|^\.||' | grep -vxE \
		"/usr/bin/schedkit-$n|/etc/ssl/certs/ca-certificates.crt|/usr/lib/schedkit/plugins/[a-z0-9]+\.so|(/usr)?/lib(64|/x86_64-linux-gnu|/aarch64-linux-gnu)?/[^/]+\.so(\.[0-9]+)*" \
		>"$TMP/out"
	if [ ! -s "$TMP/out" ]; then ok "$n: the root filesystem holds only the binary, its libraries, CA certificates and plugins"
	else notok "$n: unexpected files in the root filesystem"; diag; fi
	nplug=$(ls "$root/usr/lib/schedkit/plugins" | grep -c '\.so$')
	want_plug=$(ls "$SK_LIB/schedkit/plugins" | grep -c '\.so$')
	if [ "$nplug" = "$want_plug" ] && [ "$nplug" -gt 0 ]; then ok "$n: /usr/lib/schedkit/plugins has the $nplug contrib modules"
	else notok "$n: plugin directory has $nplug modules, want $want_plug"; fi

	# run it from the root filesystem
	mkdir -p "$root/proc" "$root/tmp"
	if [ "$(id -u)" = 0 ] && mount -t proc proc "$root/proc" 2>/dev/null; then
		MOUNTED="$MOUNTED $root/proc"
		run() { chroot "$root" "/usr/bin/schedkit-$n" "$@"; }
		how=chroot
	else
		loader=$(ls "$root"/lib64/ld-linux*.so* "$root"/lib/ld-linux*.so* 2>/dev/null | head -1)
		libs=$(cd "$root" && find . -name '*.so*' -type f -printf '%h\n' | sort -u | sed "s|^\.|$root|" | paste -sd:)
		run() { "$loader" --inhibit-cache --library-path "$libs" "$root/usr/bin/schedkit-$n" "$@"; }
		how="its own loader"
	fi
	flag=--help
	run --help 2>&1 | grep -q -- '--version' && flag=--version
	if run $flag >"$TMP/out" 2>&1 && grep -qiE "schedkit|$version" "$TMP/out"; then
		ok "$n: $flag runs from the image's root filesystem ($how)"
	else notok "$n: $flag runs from the image's root filesystem ($how)"; diag; fi
	if [ $n = scheduler ]; then
		cat >"$TMP/c.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
- schedulerName: seeded
  plugins:
    multiPoint:
      enabled: [{name: LocalReplicas}, {name: FitIPResource}, {name: ComputeResource}]
YAML
		if [ "$how" = chroot ]; then cp "$TMP/c.yaml" "$root/tmp/c.yaml"; cfgp=/tmp/c.yaml; pdir=/usr/lib/schedkit/plugins
		else cfgp=$TMP/c.yaml; pdir=$root/usr/lib/schedkit/plugins; fi
		if run --config "$cfgp" --validate --plugin-dir "$pdir" >"$TMP/out" 2>&1; then
			ok "scheduler: loads the image's plugin modules from the image (--validate of a profile using them)"
		else notok "scheduler: loads the image's plugin modules from the image"; diag; fi
	fi
done

# the manifests and the operator's default name these images, with the version
dep=$SK_ROOT/manifests/operator/deployment.yaml
if grep -q "image: schedkit/schedkit-operator:$version\$" "$dep" && grep -q -- "--scheduler-image=schedkit/schedkit-scheduler:$version\$" "$dep"; then
	ok "manifests/operator/deployment.yaml names schedkit-operator:$version and schedkit-scheduler:$version"
else notok "the manifests name the versioned images ($version)"; fi
if "$SK_BIN/schedkit-operator" --help 2>&1 | grep -q "schedkit/schedkit-scheduler:$version"; then
	ok "the operator's default --scheduler-image is schedkit-scheduler:$version"
else notok "the operator's default --scheduler-image is versioned"; fi
