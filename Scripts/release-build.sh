#!/usr/bin/env bash
# The release build of the `trust` tool as installed (and of any other product named, with the same flags,
# so one build serves both). The flags, and why each, are in Scripts/release-flags.sh.
#
# Usage: Scripts/release-build.sh [PRODUCT]   (default: trust; the binary is .build/release/PRODUCT)
set -euo pipefail
cd "$(dirname "$0")/.."
product="${1:-trust}"
# shellcheck source=Scripts/release-flags.sh
source Scripts/release-flags.sh
exec swift build --product "$product" "${release_flags[@]}"
