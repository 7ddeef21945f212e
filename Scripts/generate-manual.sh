#!/usr/bin/env bash
# docs/man/trust.1, the `trust` tool's man page, generated from its ArgumentParser definitions (the abstracts,
# discussions and option help `trust --help` prints) by swift-argument-parser's generate-manual plugin, on the
# debug build (`swift build`'s: after it, nothing compiles again).
#
# Usage: Scripts/generate-manual.sh           write docs/man/trust.1 again (its date changes only with its text)
#        Scripts/generate-manual.sh --check   exit 1 when docs/man/trust.1 is not what the definitions give (CI)
#
# One change to the plugin's output: an empty line (a paragraph break in a discussion) becomes `.Pp`, mdoc's
# paragraph macro — groff warns about empty lines in mdoc input, and `man` shows those warnings.
set -euo pipefail
cd "$(dirname "$0")/.."
page=docs/man/trust.1
check=0
if [ "${1:-}" = "--check" ]; then check=1; fi

# The page keeps the date it carries, so that regenerating unchanged definitions changes nothing.
if [ -f "$page" ]; then
  when=$(LC_ALL=C date -u -d "$(sed -n 's/^\.Dd //p' "$page")" +%F)
else
  when=$(date -u +%F)
fi

fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
swift package generate-manual --configuration debug --date "$when" >/dev/null
sed 's/^$/.Pp/' .build/plugins/GenerateManual/outputs/trust/trust.1 > "$fresh"

if cmp -s "$fresh" "$page"; then
  echo "$page: up to date"
  exit 0
fi
if [ "$check" = 1 ]; then
  diff -u "$page" "$fresh" | head -60 || true
  echo "FAILED: $page is not what the trust command's ArgumentParser definitions give:"
  echo "        run Scripts/generate-manual.sh and commit $page"
  exit 1
fi
# The text changed: today's date.
sed "s/^\.Dd .*/.Dd $(LC_ALL=C date -u '+%B %-d, %Y')/" "$fresh" > "$page"
echo "$page: written"
