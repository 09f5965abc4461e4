#!/usr/bin/env bash
# sdk_install.sh — the plugin SDK as an outside author gets it (docs/plugins.md):
#   1. `make install` into a temporary PREFIX (and a DESTDIR stage) puts the headers, a working
#      schedkit-plugin.pc and the binaries in place, and again without error;
#   2. a copy of plugins/examples/sample outside the tree builds with only PKG_CONFIG_PATH, and
#      sample.so needs no schedkit symbol (nm -u) and exports only sk_module_init;
#   3. `simulate --plugin-dir` runs Sample: sample-scheduler pods only on labelled nodes, the
#      Sample reason on every other node, the PreBind annotation recorded; a custom nodeLabel;
#      `--validate --plugin-dir` names the field path of bad SampleArgs;
#   4. every in-tree plugin compiles against the installed headers alone, and two of them link as
#      a module with a generated SK_MODULE file; the loader refuses that module (in-tree names)
#      and a second copy of sample.so, naming the files.
# Needs `make all` (OUT as for e2e/run-tests.sh). TAP-style output.
set -u
export LC_ALL=C
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
OUT=${OUT:-.}
CC=${CC:-cc}
SCHED=$SK_BIN/schedkit-scheduler
WORK=$(mktemp -d /tmp/sk-sdk-install.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | head -c 3000 | sed 's/^/#   /'; }
check() { local d=$1 detail=$2; shift 2; if "$@"; then ok "$d"; else notok "$d" "$detail"; fi; }
finish() { echo "1..$n"; [ "$failed" = 0 ]; exit; }
# jq -e over a file of JSON lines slurped into one array; quiet (the verdict is the exit code).
jqt() { jq -se "$@" >/dev/null 2>&1; }

PREFIX=$WORK/prefix
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig

# ---- 1. make install ----
if out=$(make -s --no-print-directory -C "$SK_ROOT" install OUT="$OUT" PREFIX="$PREFIX" 2>&1); then
  ok "make install PREFIX=$PREFIX"
else
  notok "make install PREFIX=$PREFIX" "$out"; finish
fi
missing=$(for f in include/schedkit/plugin.h include/schedkit/types.h include/schedkit/version.h \
    include/schedkit/module.h lib/pkgconfig/schedkit-plugin.pc bin/schedkit-scheduler; do
  [ -f "$PREFIX/$f" ] || echo "$f"; done)
check "the headers, schedkit-plugin.pc and the scheduler are installed" "missing: $missing" test -z "$missing"
want_mods=$(for d in "$SK_ROOT"/plugins/contrib/*/; do [ -d "$d" ] && basename "$d" | tr '[:upper:]' '[:lower:]'; done |
  sed 's/$/.so/' | sort)
got_mods=$(cd "$PREFIX/lib/schedkit/plugins" 2>/dev/null && ls ./*.so 2>/dev/null | sed 's|^\./||' | sort)
check "the contrib plugins are installed in PREFIX/lib/schedkit/plugins ($(wc -w <<<"$want_mods"))" \
  "want: $want_mods; got: $got_mods" test "$want_mods" = "$got_mods"
hdrs_src=$(cd "$SK_ROOT/plugins/sdk/include/schedkit" && ls ./*.h | sort)
hdrs_inst=$(cd "$PREFIX/include/schedkit" && ls ./*.h | sort)
check "every SDK header is installed" "$(diff <(echo "$hdrs_src") <(echo "$hdrs_inst"))" test "$hdrs_src" = "$hdrs_inst"
want_ver=$(sed -n 's/^#define[[:space:]]*SK_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' "$PREFIX/include/schedkit/version.h")
got_ver=$(pkg-config --modversion schedkit-plugin 2>&1)
check "pkg-config --modversion is SK_VERSION ($want_ver)" "got: $got_ver" test -n "$want_ver" -a "$got_ver" = "$want_ver"
cflags=$(pkg-config --cflags schedkit-plugin 2>&1); libs=$(pkg-config --libs schedkit-plugin 2>&1)
check "pkg-config --cflags names the installed include dir, --libs only cJSON" "cflags: $cflags; libs: $libs" \
  bash -c '[[ " $1 " == *" -I$2/include "* ]] && [ "$3" = "$(pkg-config --libs libcjson)" ]' _ "$cflags" "$PREFIX" "$libs"
pdir=$(pkg-config --variable=plugindir schedkit-plugin)
check "plugindir is PREFIX/lib/schedkit/plugins" "got: $pdir" test "$pdir" = "$PREFIX/lib/schedkit/plugins"
if out=$(make -s --no-print-directory -C "$SK_ROOT" install OUT="$OUT" PREFIX="$PREFIX" 2>&1); then ok "make install again (idempotent)"
else notok "make install again (idempotent)" "$out"; fi
if out=$(make -s --no-print-directory -C "$SK_ROOT" install OUT="$OUT" PREFIX=/opt/sk DESTDIR="$WORK/stage" 2>&1) &&
   [ -f "$WORK/stage/opt/sk/include/schedkit/plugin.h" ] && [ -x "$WORK/stage/opt/sk/bin/schedkit-scheduler" ] &&
   grep -qx 'prefix=/opt/sk' "$WORK/stage/opt/sk/lib/pkgconfig/schedkit-plugin.pc"; then
  ok "make install DESTDIR= stages under DESTDIR with prefix=PREFIX in the .pc"
else
  notok "make install DESTDIR= stages under DESTDIR with prefix=PREFIX in the .pc" "$out"
fi

# ---- 2. the sample, built outside the tree ----
SRC=$WORK/src/sample
mkdir -p "$WORK/src" && cp -r "$SK_ROOT/plugins/examples/sample" "$SRC"
if out=$(make -C "$SRC" 2>&1) && [ -f "$SRC/sample.so" ]; then ok "plugins/examples/sample builds out of tree with only PKG_CONFIG_PATH"
else notok "plugins/examples/sample builds out of tree with only PKG_CONFIG_PATH" "$out"; finish; fi
check "the sample's build uses the installed headers and never names the repository" "$out" \
  bash -c 'grep -qF -- "-I$3/include" <<<"$2" && ! grep -qF -- "$1" <<<"$2"' _ "$SK_ROOT" "$out" "$PREFIX"
undef=$(nm -u "$SRC/sample.so" | awk '{print $NF}')
bad=$(grep -E '^(sk_|kube_|klog|schedkit)' <<<"$undef")
check "nm -u sample.so: no schedkit symbol ($(wc -l <<<"$undef") undefined, libc/cJSON)" "$bad" test -z "$bad"
exported=$(nm -D --defined-only "$SRC/sample.so" | awk '$2 ~ /^[A-Z]$/ && $2 != "A" {print $3}' | grep -Ev '^(_init|_fini)$')
check "sample.so exports only sk_module_init" "exported: $exported" test "$exported" = "sk_module_init"

# ---- 3. simulate and validate with --plugin-dir ----
PLUGINS=$WORK/plugins
mkdir -p "$PLUGINS" && cp "$SRC/sample.so" "$PLUGINS/"
cd "$SRC" || finish
if "$SCHED" simulate --config sample-config.yaml --cluster cluster.yaml --plugin-dir "$PLUGINS" \
     >"$WORK/sim.json" 2>"$WORK/sim.err"; then ok "simulate --plugin-dir runs the sample config"
else notok "simulate --plugin-dir runs the sample config" "$(cat "$WORK/sim.err")"; finish; fi
sim=$(cat "$WORK/sim.json")
# The last attempt of each sample-scheduler pod.
sample_last='[.[] | select(.profile == "sample-scheduler")] | group_by(.pod) | map(last)'
check "three sample-scheduler pods, each Scheduled on a labelled node (node-b, node-d)" "$sim" \
  jqt "$sample_last"' | length == 3 and all(.result == "Scheduled" and (.node == "node-b" or .node == "node-d"))' "$WORK/sim.json"
reason='node(s) did not have the label schedkit.io/sample=true'
check "node-a and node-c are rejected by Sample with its reason" "$sim" \
  jqt --arg r "$reason" "$sample_last"' | length == 3 and all(.filter["node-a"].Sample == $r and .filter["node-c"].Sample == $r)' "$WORK/sim.json"
check "each sample pod records schedkit.io/sample-prebind = its node" "$sim" \
  jqt "$sample_last"' | length == 3 and all(.annotations["schedkit.io/sample-prebind"] == .node)' "$WORK/sim.json"
check "the default-scheduler pod is scheduled without Sample (no annotation, no Sample reason)" "$sim" \
  jqt '[.[] | select(.pod == "default/web-1")] | length == 1 and (.[0] | .result == "Scheduled"
     and ((.annotations // {}) | has("schedkit.io/sample-prebind") | not) and ([.filter[]?.Sample] | length == 0))' "$WORK/sim.json"

cat >"$WORK/unlabelled.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: plain-1, labels: {schedkit.io/sample: "false"}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: plain-2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: lonely}
spec:
  schedulerName: sample-scheduler
  containers: [{name: app, image: nginx}]
EOF
"$SCHED" simulate --config sample-config.yaml --cluster "$WORK/unlabelled.yaml" --plugin-dir "$PLUGINS" \
  >"$WORK/sim2.json" 2>"$WORK/sim2.err"
check "no labelled node: Unschedulable, the Sample reason for each node" "$(cat "$WORK/sim2.json" "$WORK/sim2.err")" \
  jqt --arg r "$reason" 'length == 1 and (.[0] | .result == "Unschedulable" and .node == ""
     and .filter == {"plain-1": {"Sample": $r}, "plain-2": {"Sample": $r}}
     and (.message | startswith("0/2 nodes are available: 2 " + $r + ".")) and (.annotations // {}) == {})' "$WORK/sim2.json"

# nodeLabel "key": any value of the key; the reason names the configured label.
sed 's|nodeLabel: schedkit.io/sample=true|nodeLabel: example.com/disk|' sample-config.yaml >"$WORK/key-config.yaml"
cat >"$WORK/key-cluster.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: ssd-1, labels: {example.com/disk: ssd}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: bare-1, labels: {schedkit.io/sample: "true"}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  schedulerName: sample-scheduler
  containers: [{name: app, image: nginx}]
EOF
"$SCHED" simulate --config "$WORK/key-config.yaml" --cluster "$WORK/key-cluster.yaml" --plugin-dir "$PLUGINS" \
  >"$WORK/sim3.json" 2>"$WORK/sim3.err"
check "nodeLabel: example.com/disk (key only) places on ssd-1 and names that label for bare-1" \
  "$(cat "$WORK/sim3.json" "$WORK/sim3.err")" \
  jqt 'length == 1 and (.[0] | .node == "ssd-1"
     and .filter["bare-1"].Sample == "node(s) did not have the label example.com/disk")' "$WORK/sim3.json"

if out=$("$SCHED" --validate --config sample-config.yaml --plugin-dir "$PLUGINS" 2>&1); then ok "--validate --plugin-dir accepts the sample config"
else notok "--validate --plugin-dir accepts the sample config" "$out"; fi
out=$("$SCHED" --validate --config sample-config.yaml 2>&1); rc=$?
check "--validate without --plugin-dir: Sample is unknown (exit 1)" "rc=$rc: $out" \
  bash -c '[ "$1" = 1 ] && grep -q "\"Sample\"" <<<"$2"' _ "$rc" "$out"
sed -e 's|nodeLabel: schedkit.io/sample=true.*|nodeLabel: "bad key!=x y"|' -e 's|kind: SampleArgs|kind: SampleArgs\n          colour: blue|' \
  sample-config.yaml >"$WORK/bad-config.yaml"
out=$("$SCHED" --validate --config "$WORK/bad-config.yaml" --plugin-dir "$PLUGINS" 2>&1); rc=$?
args_path='profiles[1].pluginConfig[0].args'
check "--validate --plugin-dir with bad SampleArgs: exit 1, unknown field and nodeLabel errors with field paths" "rc=$rc: $out" \
  bash -c '[ "$1" = 1 ] && grep -qF "unknown field \"$3.colour\"" <<<"$2"' _ "$rc" "$out" "$args_path"
sed -e 's|nodeLabel: schedkit.io/sample=true.*|nodeLabel: "bad key!=x y"|' sample-config.yaml >"$WORK/bad-config2.yaml"
out=$("$SCHED" --validate --config "$WORK/bad-config2.yaml" --plugin-dir "$PLUGINS" 2>&1); rc=$?
check "--validate: an invalid nodeLabel key and value are Invalid value errors at $args_path.nodeLabel" "rc=$rc: $out" \
  bash -c '[ "$1" = 1 ] && grep -qF "$3.nodeLabel: Invalid value: \"bad key!\"" <<<"$2" &&
    grep -qF "$3.nodeLabel: Invalid value: \"x y\"" <<<"$2"' _ "$rc" "$out" "$args_path"

# ---- 4. in-tree plugins against the installed headers alone ----
# Each plugin folder is copied out of the tree, so only its own headers and the SDK can be found.
CFLAGS_SDK="-std=c11 -Wall -Wextra -Werror -Wno-format-zero-length -D_GNU_SOURCE -pthread -O0 $(pkg-config --cflags schedkit-plugin)"
INTREE=$WORK/intree
mkdir -p "$INTREE"
nfiles=0; bad=""
for d in "$SK_ROOT"/plugins/*/; do
  name=$(basename "$d")
  case $name in tests|sdk|examples) continue ;; esac
  cp -r "$d" "$INTREE/$name"
  for f in "$INTREE/$name"/*.c; do
    [ -f "$f" ] || continue
    nfiles=$((nfiles + 1))
    # shellcheck disable=SC2086 # a list of flags
    o=$($CC $CFLAGS_SDK -fPIC -c "$f" -o "${f%.c}.o" 2>&1) || bad+="$name/$(basename "$f"): $o"$'\n'
  done
done
check "every in-tree plugin ($nfiles files) compiles with the installed SDK only" "$bad" test -z "$bad" -a "$nfiles" -gt 0

# NodeAffinity (args, node selectors) and TaintToleration (scoring, hints) as one module.
cat >"$INTREE/module.c" <<'EOF'
#include <schedkit/plugin.h>
#include <schedkit/module.h>

extern const struct sk_plugin_desc sk_plugin_node_affinity;
extern const struct sk_plugin_desc sk_plugin_taint_toleration;

SK_MODULE("intree-pair", &sk_plugin_node_affinity, &sk_plugin_taint_toleration);
EOF
# shellcheck disable=SC2086
if o=$($CC $CFLAGS_SDK -shared -fPIC -fvisibility=hidden -Wl,--no-undefined -o "$INTREE/pair.so" "$INTREE/module.c" \
       "$INTREE"/NodeAffinity/*.c "$INTREE"/TaintToleration/*.c $(pkg-config --libs schedkit-plugin) 2>&1); then
  ok "NodeAffinity + TaintToleration link as a module with -Wl,--no-undefined"
  bad=$(nm -u "$INTREE/pair.so" | awk '{print $NF}' | grep -E '^(sk_|kube_|klog|schedkit)')
  check "nm -u of the in-tree module: no schedkit symbol" "$bad" test -z "$bad"
  mkdir -p "$WORK/shadow" && cp "$INTREE/pair.so" "$WORK/shadow/"
  out=$("$SCHED" --validate --config sample-config.yaml --plugin-dir "$WORK/shadow" 2>&1); rc=$?
  check "the loader refuses the in-tree module: its plugin shadows an in-tree plugin" "rc=$rc: $out" \
    bash -c '[ "$1" != 0 ] && grep -qE "plugin file \"$3\": plugin \"(NodeAffinity|TaintToleration)\" shadows an in-tree plugin" <<<"$2"' \
    _ "$rc" "$out" "$WORK/shadow/pair.so"
else
  notok "NodeAffinity + TaintToleration link as a module with -Wl,--no-undefined" "$o"
fi

mkdir -p "$WORK/dup" && cp "$SRC/sample.so" "$WORK/dup/a.so" && cp "$SRC/sample.so" "$WORK/dup/b.so"
out=$("$SCHED" --validate --config sample-config.yaml --plugin-dir "$WORK/dup" 2>&1); rc=$?
check "two files providing Sample: refused, naming both files" "rc=$rc: $out" \
  bash -c '[ "$1" != 0 ] && grep -qF "plugin file \"$3/b.so\": plugin \"Sample\" is also provided by \"$3/a.so\"" <<<"$2"' \
  _ "$rc" "$out" "$WORK/dup"

finish
