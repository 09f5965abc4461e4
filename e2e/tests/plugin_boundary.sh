#!/usr/bin/env bash
# plugin_boundary.sh — the plugin API (plugins/sdk/include/schedkit/) is the only door between the
# plugins and the core (docs/architecture.md, "Adding an in-tree plugin"):
#   - a file under plugins/<Name>/ includes only API headers, libc/POSIX headers, <cjson/cJSON.h>
#     and headers of its own folder (by bare name), and compiles with -Iplugins/sdk/include alone;
#   - a header under plugins/sdk/include/ includes only libc, cJSON and other API headers, and
#     compiles on its own;
#   - no core file (scheduler/**, operator/**, tests excluded) includes a plugins/<Name>/ header or
#     names a symbol a plugin defines, in its source (grep) or its object (nm).
# plugins/registry.c, the one list of in-tree plugins, is the only place that names them, and has
# a line for every plugin folder.
# Contrib plugins (plugins/contrib/<Name>/, modules the scheduler loads from its plugin dir) obey
# the same include rule and compile with the SDK alone; besides, exactly one file of each writes
# SK_MODULE, none is in libsched.a or named by the core, and the built .so exports only
# sk_module_init and needs no schedkit symbol.
# Needs the objects of `make all` (OUT as for e2e/run-tests.sh). TAP-style output.
set -u
export LC_ALL=C
ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT" || exit 1
OUT=${OUT:-.}
BLD=$([ "$OUT" = . ] && echo build || echo "$OUT")
OBJ=$BLD/obj
CC=${CC:-cc}
SDK=plugins/sdk/include
WORK=$(mktemp -d /tmp/sk-plugin-boundary.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | head -c 3000 | sed 's/^/#   /'; }

# C11 and POSIX headers a plugin or an API header may use (libc, and the compiler's own).
LIBC_RE='^(assert|complex|ctype|errno|fenv|float|inttypes|iso646|limits|locale|math|setjmp|signal|stdalign|stdarg|stdatomic|stdbool|stddef|stdint|stdio|stdlib|stdnoreturn|string|tgmath|threads|time|uchar|wchar|wctype|pthread|sched|strings|unistd|fcntl|poll|search|regex|fnmatch|sys/[a-z_]+)\.h$'

# The #include operands of a file, one per line, with their delimiters: <x.h> or "x.h".
includes_of() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p' "$1"; }

# Prints the offending includes of $1; $2 = the folder whose headers it may include by bare name
# (empty for API headers).
bad_includes() {
  local f=$1 own=$2 inc name
  while IFS= read -r inc; do
    name=${inc:1:${#inc}-2}
    case $inc in
      '<cjson/cJSON.h>') continue ;;
      '<schedkit/'*|'"schedkit/'*) [ -f "$SDK/$name" ] && continue ;;
      '<'*) [[ $name =~ $LIBC_RE ]] && continue ;;
      '"'*) [ -n "$own" ] && [[ $name != */* ]] && [ -f "$own/$name" ] && continue ;;
    esac
    echo "$f: #include $inc"
  done < <(includes_of "$f")
}

CJSON_CFLAGS=$(pkg-config --cflags libcjson 2>/dev/null)
API_CFLAGS="-std=c11 -Wall -Wextra -Werror -Wno-format-zero-length -D_GNU_SOURCE -pthread -I$SDK $CJSON_CFLAGS"

plugin_dirs=()
for d in plugins/*/; do
  d=${d%/}
  case $d in plugins/tests|plugins/sdk|plugins/examples|plugins/contrib) continue ;; esac # modules, not in-tree
  plugin_dirs+=("$d")
done
[ ${#plugin_dirs[@]} -gt 0 ] || { notok "plugins/<Name>/ folders found"; echo "1..$n"; exit 1; }

# ---- 1. plugins include only the API, and build against it alone ----
for d in "${plugin_dirs[@]}"; do
  files=$(ls "$d"/*.c "$d"/*.h 2>/dev/null)
  bad=$(for f in $files; do bad_includes "$f" "$d"; done)
  if [ -z "$bad" ]; then ok "$d includes only plugin API, libc, cJSON and its own headers"
  else notok "$d includes only plugin API, libc, cJSON and its own headers" "$bad"; fi
  for f in $(ls "$d"/*.c 2>/dev/null); do
    # shellcheck disable=SC2086 # API_CFLAGS is a list of flags
    if out=$($CC $API_CFLAGS -O1 -c "$f" -o "$WORK/plugin.o" 2>&1); then ok "$f compiles with -I$SDK only"
    else notok "$f compiles with -I$SDK only" "$out"; fi
  done
done

# ---- 1a. contrib plugins: the same includes and SDK-only build; one SK_MODULE; a clean .so ----
contrib_dirs=()
for d in plugins/contrib/*/; do
  [ -d "$d" ] && contrib_dirs+=("${d%/}")
done
for d in "${contrib_dirs[@]}"; do
  files=$(ls "$d"/*.c "$d"/*.h 2>/dev/null)
  bad=$(for f in $files; do bad_includes "$f" "$d"; done)
  if [ -z "$bad" ]; then ok "$d includes only plugin API, libc, cJSON and its own headers"
  else notok "$d includes only plugin API, libc, cJSON and its own headers" "$bad"; fi
  for f in $(ls "$d"/*.c 2>/dev/null); do
    # shellcheck disable=SC2086 # API_CFLAGS is a list of flags
    if out=$($CC $API_CFLAGS -fPIC -fvisibility=hidden -O1 -c "$f" -o "$WORK/plugin.o" 2>&1); then ok "$f compiles with -I$SDK only"
    else notok "$f compiles with -I$SDK only" "$out"; fi
  done
  nmod=$(cat "$d"/*.c 2>/dev/null | grep -cE '^[[:space:]]*SK_MODULE\(')
  if [ "$nmod" = 1 ]; then ok "$d: one file writes SK_MODULE"
  else notok "$d: one file writes SK_MODULE" "found $nmod"; fi
  so=$OUT/lib/schedkit/plugins/$(basename "$d" | tr '[:upper:]' '[:lower:]').so
  if [ ! -f "$so" ]; then notok "$so built (run make all first)"; continue; fi
  undef=$(nm -u "$so" | awk '{print $NF}' | grep -E '^(sk_|kube_|klog|schedkit)')
  exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[A-Z]$/ && $2 != "A" {print $3}' | grep -Ev '^(_init|_fini)$')
  if [ -z "$undef" ] && [ "$exported" = sk_module_init ]; then ok "$so needs no schedkit symbol and exports only sk_module_init"
  else notok "$so needs no schedkit symbol and exports only sk_module_init" "undefined: $undef; exported: $exported"; fi
done
if [ -f "$OUT/lib/libsched.a" ]; then
  bad=$(for d in "${contrib_dirs[@]}"; do
    for f in "$d"/*.c; do [ -f "$f" ] || continue; ar t "$OUT/lib/libsched.a" | grep -qx "$(basename "${f%.c}").o" && echo "$f"; done
  done)
  if [ -z "$bad" ]; then ok "libsched.a holds no contrib plugin (${#contrib_dirs[@]} folders)"
  else notok "libsched.a holds no contrib plugin (${#contrib_dirs[@]} folders)" "$bad"; fi
fi

# ---- 1b. every plugin folder has its line in the in-tree list ----
bad=$(for d in "${plugin_dirs[@]}"; do
  grep -qE "^[[:space:]]*PLUGIN\(${d#plugins/}," plugins/registry.c || echo "$d: no PLUGIN(${d#plugins/}, ...) line"
done)
if [ -z "$bad" ]; then ok "plugins/registry.c lists every plugins/<Name>/ folder"
else notok "plugins/registry.c lists every plugins/<Name>/ folder" "$bad"; fi

# ---- 2. API headers include only libc, cJSON and each other, and stand alone ----
for h in $(cd "$SDK" && find . -name '*.h' | sed 's|^\./||' | sort); do
  bad=$(bad_includes "$SDK/$h" "")
  if [ -z "$bad" ]; then ok "$SDK/$h includes only libc, cJSON and API headers"
  else notok "$SDK/$h includes only libc, cJSON and API headers" "$bad"; fi
  # shellcheck disable=SC2086
  if out=$(printf '#include "%s"\n' "$h" | $CC $API_CFLAGS -fsyntax-only -x c - 2>&1); then ok "$SDK/$h compiles on its own"
  else notok "$SDK/$h compiles on its own" "$out"; fi
done

# ---- 3. the core names no plugin ----
core_src=$(find scheduler operator -name '*.[ch]' -not -path '*/tests/*' 2>/dev/null | sort)
bad=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]plugins/' $core_src /dev/null)
if [ -z "$bad" ]; then ok "no core file includes a plugins/ header"
else notok "no core file includes a plugins/ header" "$bad"; fi

# The global symbols the plugins' objects define (descriptors, helpers exported for tests).
plugin_objs=(); missing=()
for d in "${plugin_dirs[@]}"; do
  for f in "$d"/*.c; do
    [ -f "$f" ] || continue
    o=$OBJ/${f%.c}.o
    if [ -f "$o" ]; then plugin_objs+=("$o"); else missing+=("$o"); fi
  done
done
core_objs=()
for f in $core_src; do
  case $f in *.c) ;; *) continue ;; esac
  o=$OBJ/${f%.c}.o
  [ -f "$o" ] && core_objs+=("$o")
done
if [ ${#missing[@]} -gt 0 ] || [ ${#plugin_objs[@]} -eq 0 ] || [ ${#core_objs[@]} -eq 0 ]; then
  notok "plugin and core objects present under $OBJ (run make all first)" "missing: ${missing[*]:-core objects}"
else
  nm -g --defined-only "${plugin_objs[@]}" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$WORK/plugin.syms"
  if [ -s "$WORK/plugin.syms" ]; then ok "plugin symbols listed from ${#plugin_objs[@]} objects"
  else notok "plugin symbols listed from ${#plugin_objs[@]} objects"; fi

  bad=$(grep -nwF -f "$WORK/plugin.syms" $core_src /dev/null)
  if [ -z "$bad" ]; then ok "no core source names a plugin symbol"
  else notok "no core source names a plugin symbol" "$bad"; fi

  bad=$(for o in "${core_objs[@]}"; do
    nm -u "$o" 2>/dev/null | awk '{print $NF}' | sort -u | comm -12 - "$WORK/plugin.syms" | sed "s|^|$o: |"
  done)
  if [ -z "$bad" ]; then ok "no core object (${#core_objs[@]}) references a plugin symbol"
  else notok "no core object (${#core_objs[@]}) references a plugin symbol" "$bad"; fi
fi

# Every function the API headers declare is in the host table (schedkit/host_api.h), so a module
# (an out-of-tree .so) can call it: the variadic ones through their va_list forms, which module.h
# forwards; sk_module_init is the module's own entry point.
# (-aux-info, which lists every declaration, is a gcc option: gcc does this check under any CC.)
{
  for h in $SDK/schedkit/*.h; do echo "#include \"schedkit/$(basename "$h")\""; done
} >"$WORK/all_api.c"
if gcc -std=c11 -D_GNU_SOURCE -I"$SDK" $(pkg-config --cflags libcjson 2>/dev/null) -fsyntax-only \
     -aux-info "$WORK/api.aux" "$WORK/all_api.c" 2>"$WORK/aux.err"; then
  grep "$SDK/schedkit/" "$WORK/api.aux" | grep -v static | sed -E 's|^/\* [^ ]* \*/ *||' |
    grep -oE '[a-z_0-9]+ \(' | tr -d ' (' | grep -vx 'void' | sort -u >"$WORK/api.decl"
  printf '#include "schedkit/host_api.h"\n#define F(r, n, p, a) HOSTFN n\nSK_HOST_API(F, F)\n' >"$WORK/host.c"
  $CC -E -P -I"$SDK" $(pkg-config --cflags libcjson 2>/dev/null) "$WORK/host.c" |
    grep -oE 'HOSTFN [a-z_0-9]+' | awk '{print $2}' | sort -u >"$WORK/api.host"
  missing_fns=$(comm -23 "$WORK/api.decl" "$WORK/api.host" |
    grep -vxE 'sk_module_init|sk_statusf|sk_status_addf|sk_errors_addf|sk_log_emit')
  if [ -z "$missing_fns" ] && [ -s "$WORK/api.host" ]; then
    ok "every API function ($(wc -l <"$WORK/api.decl")) is in the host table"
  else
    notok "every API function is in the host table (schedkit/host_api.h)" "missing: $missing_fns"
  fi
else
  notok "the API headers compile together (for the host-table check)" "$(cat "$WORK/aux.err")"
fi

echo "1..$n"
[ "$failed" = 0 ]
