#!/usr/bin/env bash
# The config loader's edge-case table (scheduler/tests/test_config_edge.c: score weights at the
# int32 extremes, negative weights, duplicate keys, removed apiVersions) under UndefinedBehaviorSanitizer:
# the loader (scheduler/config/config.c) and the YAML/JSON decoder (kube/object.c) are compiled
# with -fsanitize=undefined and linked before the normal libraries, so any signed overflow or other
# UB on those inputs aborts the run. Prints TAP-style ok / not ok lines. Env: SK_BIN, SK_ROOT.
set -u
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_BIN=${SK_BIN:-$SK_ROOT/bin}
LIB=$(cd "$SK_BIN/../lib" && pwd)
cd "$SK_ROOT"
work=$(mktemp -d /tmp/sk-config-ubsan.XXXXXX)
trap 'rm -rf "$work"' EXIT
CC=${CC:-cc}
san=undefined
# libraries built by `make asan` carry AddressSanitizer calls: link its runtime too
nm "$LIB/libkube.a" 2>/dev/null | grep -q __asan_ && san=address,undefined
flags="-O1 -g -std=c11 -D_GNU_SOURCE -pthread -I. -Iplugins/sdk/include $(pkg-config --cflags libcjson) \
  -fsanitize=$san -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
libs="$LIB/libop.a $LIB/libsched.a $LIB/libkube.a $(pkg-config --libs cmocka libcurl libcjson yaml-0.1 openssl libwebsockets) -ldl -lm"
if $CC $flags -c scheduler/config/config.c -o "$work/config.o" 2>"$work/cc.log" &&
   $CC $flags -c kube/object.c -o "$work/object.o" 2>>"$work/cc.log" &&
   $CC $flags -o "$work/test_config_edge" scheduler/tests/test_config_edge.c "$work/config.o" "$work/object.o" \
     $libs -fsanitize=$san 2>>"$work/cc.log"; then
  echo "ok 1 - the edge-case table builds with -fsanitize=undefined"
else
  echo "not ok 1 - the edge-case table builds with -fsanitize=undefined"; sed 's/^/# /' "$work/cc.log"; exit 1
fi
if UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$work/test_config_edge" >"$work/run.log" 2>&1 &&
   ! grep -q 'runtime error' "$work/run.log"; then
  echo "ok 2 - extreme and negative score weights, duplicate keys and old apiVersions load without UB"
else
  echo "not ok 2 - the edge-case table under UBSan"; sed 's/^/# /' "$work/run.log" | tail -20
fi
echo "1..2"
