#!/usr/bin/env bash
# Builds the OCI image of one schedkit binary with umoci (no container engine, no daemon):
#   images/build-image.sh NAME OUT    NAME: scheduler | operator
# Stages OUT/NAME/rootfs (the binary bin/schedkit-NAME as /usr/bin/schedkit-NAME; every shared
# library it and the plugin modules need, resolved by ldd, at the same paths; the CA
# certificates; /usr/lib/schedkit/plugins with lib/schedkit/plugins/*.so), then writes the OCI
# layout OUT/NAME/oci with the tag SK_VERSION: one layer, the config's ENV, USER, ENTRYPOINT and
# LABELs from images/NAME.Containerfile (which builds the same image from OUT/NAME with a
# container engine). Reproducible: every timestamp is SOURCE_DATE_EPOCH (default: the last
# commit's time, else 0), owners are 0:0, so the same inputs give the same digest. Prints the
# manifest digest. Env: SK_ROOT (repo), SK_BIN, SK_LIB (default $SK_ROOT/bin, $SK_BIN/../lib).
set -euo pipefail
name=${1:?usage: build-image.sh NAME OUT}
out=${2:?usage: build-image.sh NAME OUT}
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
SK_LIB=${SK_LIB:-$SK_BIN/../lib}
cf=$SK_ROOT/images/$name.Containerfile
bin=$SK_BIN/schedkit-$name
[ -f "$cf" ] || { echo "build-image.sh: no $cf" >&2; exit 2; }
[ -x "$bin" ] || { echo "build-image.sh: $bin is not built (make)" >&2; exit 1; }
command -v umoci >/dev/null || { echo "build-image.sh: umoci is not installed (make deps)" >&2; exit 1; }
version=$(sed -n 's/^#define[[:space:]]*SK_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' "$SK_ROOT/plugins/sdk/include/schedkit/version.h")
[ -n "$version" ] || { echo "build-image.sh: no SK_VERSION" >&2; exit 1; }
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git -C "$SK_ROOT" log -1 --format=%ct 2>/dev/null || echo 0)
fi
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)

work=$out/$name
rm -rf "$work"
mkdir -p "$work/rootfs/usr/bin" "$work/rootfs/usr/lib/schedkit/plugins" "$work/rootfs/etc/ssl/certs"
root=$work/rootfs
install -m 0755 "$bin" "$root/usr/bin/schedkit-$name"
plugins=()
for so in "$SK_LIB"/schedkit/plugins/*.so; do
	[ -e "$so" ] || continue
	install -m 0644 "$so" "$root/usr/lib/schedkit/plugins/"
	plugins+=("$so")
done
# the libraries, at the paths the dynamic loader resolves (the loader itself included)
ldd "$bin" "${plugins[@]}" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }' | sort -u |
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
		chmod 0755 "$root$lib"
	done
cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
chmod 0644 "$root/etc/ssl/certs/ca-certificates.crt"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

# The config from the Containerfile: ENV, USER, ENTRYPOINT (JSON form), LABEL key="value"...
cfg_args=(--config.label "org.opencontainers.image.version=$version")
joined=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$cf" | grep -v '^[[:space:]]*#')
while IFS= read -r line; do
	case $line in
	ENV\ *) for kv in ${line#ENV }; do cfg_args+=(--config.env "$kv"); done ;;
	USER\ *) cfg_args+=(--config.user "${line#USER }") ;;
	ENTRYPOINT\ *)
		ep=$(printf '%s' "${line#ENTRYPOINT }" | jq -r '.[]')
		while IFS= read -r a; do cfg_args+=(--config.entrypoint "$a"); done <<<"$ep" ;;
	LABEL\ *)
		while IFS= read -r kv; do
			k=${kv%%=*} v=${kv#*=}
			cfg_args+=(--config.label "$k=${v//\"/}")
		done < <(grep -oE '[A-Za-z0-9._-]+="[^"]*"' <<<"${line#LABEL }") ;;
	esac
done <<<"$joined"

oci=$work/oci
umoci_rootless=()
[ "$(id -u)" = 0 ] || umoci_rootless=(--rootless)
umoci init --layout "$oci"
umoci new --image "$oci:$version"
umoci insert "${umoci_rootless[@]}" --image "$oci:$version" --history.created "$created" \
	--history.created_by "images/build-image.sh $name" "$root" /
umoci config --image "$oci:$version" --created "$created" --architecture "$(dpkg --print-architecture 2>/dev/null || echo amd64)" --os linux --no-history \
	--clear config.entrypoint --clear config.env "${cfg_args[@]}"
umoci gc --layout "$oci"
jq -r --arg t "$version" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' \
	"$oci/index.json"
