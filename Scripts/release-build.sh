#!/usr/bin/env bash
# The release build of the `trust` tool as installed (and of any other product named, with the same flags,
# so one build serves both). The flags, and why each, are in Scripts/release-flags.sh.
#
# Usage: Scripts/release-build.sh [PRODUCT]   (default: trust; the binary is .build/release/PRODUCT)
#
# Only `trust` is installed (copy .build/release/trust). `trust-dev` — the developers' benchmarks, load checks and
# fuzzer — is built here only when named (`Scripts/release-build.sh trust-dev`, for release figures) and never
# installed.
set -euo pipefail
cd "$(dirname "$0")/.."
product="${1:-trust}"
# shellcheck source=Scripts/release-flags.sh
source Scripts/release-flags.sh
exec swift build --product "$product" "${release_flags[@]}"
