#!/usr/bin/env bash
# house_size.sh — the size rule for every tracked .c/.h file (git ls-files): a file over 1,500
# lines needs a `Long file: <reason>` line in its first 5 lines; a function over 150 lines (its
# length is the line number of the column-0 `}` minus that of the column-0 `{` that opens it)
# needs a `Long function: <reason>` comment in the 3 lines above the first line of its
# signature. TAP-style output.
set -u
cd "$(dirname "$0")/../.." || exit 1

MAX_FILE=1500
MAX_FUNC=150
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

if ! files=$(git ls-files -- '*.c' '*.h' 2>/dev/null) || [ -z "$files" ]; then
	notok "git ls-files lists the tracked .c/.h files"
	exit 1
fi

# Long files.
nlong=0; nbad=0
while IFS= read -r f; do
	[ -f "$f" ] || continue
	lines=$(wc -l <"$f")
	[ "$lines" -gt "$MAX_FILE" ] || continue
	nlong=$((nlong + 1))
	if head -n 5 "$f" | grep -q 'Long file:'; then
		echo "# $f: $lines lines ($(head -n 5 "$f" | grep -o 'Long file:.*' | sed 's| *\*/.*||' | head -n 1))"
	else
		nbad=$((nbad + 1))
		notok "$f: $lines lines (over $MAX_FILE) and no 'Long file:' reason in its first 5 lines"
	fi
done <<<"$files"
[ "$nbad" = 0 ] && ok "no tracked .c/.h file over $MAX_FILE lines without a 'Long file:' reason ($nlong with one)"

# Long functions: one awk pass per file prints "<length> <start line> <name> <reason?>" for every
# function over the limit. The signature starts at the nearest line above the `{` that begins
# in column 0 (continuation lines of a signature are indented).
nlong=0; nbad=0
while IFS= read -r f; do
	[ -f "$f" ] || continue
	while read -r len line name reason; do
		nlong=$((nlong + 1))
		if [ "$reason" = 1 ]; then
			echo "# $f:$line $name: $len lines (has a 'Long function:' reason)"
		else
			nbad=$((nbad + 1))
			notok "$f:$line $name: $len lines (over $MAX_FUNC) and no 'Long function:' comment in the 3 lines above it"
		fi
	done < <(awk -v max="$MAX_FUNC" '
		{ text[NR] = $0 }
		/^\{/ && open == 0 { open = NR; next }
		/^\}/ && open > 0 {
			len = NR - open
			if (len > max) {
				sig = open - 1
				while (sig > 1 && text[sig] ~ /^[ \t]/)
					sig--
				name = text[sig]
				sub(/\(.*/, "", name)
				sub(/.*[ \t*]/, "", name)
				if (name == "")
					name = "?"
				reason = 0
				for (k = sig - 3; k < sig; k++)
					if (k >= 1 && text[k] ~ /Long function:/)
						reason = 1
				print len, sig, name, reason
			}
			open = 0
		}' "$f")
done <<<"$files"
[ "$nbad" = 0 ] && ok "no function over $MAX_FUNC lines without a 'Long function:' reason ($nlong with one)"

[ "$failed" = 0 ]
