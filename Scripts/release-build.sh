#!/usr/bin/env bash
# The release build of the `trust` tool as installed (and of any other product named, with the same flags,
# so one build serves both): static Swift runtime and Foundation, no exported symbols, and a start-up
# layout — every function in its own section (-function-sections, -ffunction-sections), linked by lld
# with the functions a run uses placed together (Scripts/trust-startup.order, written by
# Scripts/generate-startup-order.py) and relative relocations packed (-z pack-relative-relocs, DT_RELR,
# glibc 2.36+). Layout only: the code is the same, the image stays position-independent (ASLR applies).
# The README's "Performance and robustness" gives what the layout saves per run.
#
# Usage: Scripts/release-build.sh [PRODUCT]   (default: trust; the binary is .build/release/PRODUCT)
set -euo pipefail
cd "$(dirname "$0")/.."
product="${1:-trust}"
exec swift build -c release --product "$product" --static-swift-stdlib \
  -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections \
  -Xswiftc -use-ld=lld \
  -Xlinker -z -Xlinker pack-relative-relocs \
  -Xlinker "--symbol-ordering-file=$PWD/Scripts/trust-startup.order" -Xlinker --no-warn-symbol-ordering \
  -Xlinker --no-export-dynamic
