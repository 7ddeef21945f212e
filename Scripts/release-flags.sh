# shellcheck shell=bash
# Sourced (not run) by Scripts/release-build.sh and Fuzz/run.sh: the flags of the release build as installed,
# in the array `release_flags`. One list, so that a fuzz build in the release build folder compiles the
# dependencies with exactly these flags and reuses what the release build compiled (SwiftPM rebuilds a
# module whose command line changed, and --static-swift-stdlib and -use-ld=lld are on every compile line).
#
# Static Swift runtime and Foundation, no exported symbols, and a start-up layout: every function in its own
# section (-function-sections, -ffunction-sections), linked by lld with the functions a run uses placed
# together (Scripts/trust-startup.order, written by Scripts/generate-startup-order.py) and relative
# relocations packed (-z pack-relative-relocs, DT_RELR, glibc 2.36+). These layout flags change no code; the
# image stays position-independent (ASLR applies). The TrustHTTP article "Performance and robustness"
# (Sources/TrustHTTP/TrustHTTP.docc/Performance.md) gives what the layout saves per run.
#
# -disable-concrete-type-metadata-mangled-name-accessors: a concrete generic type's metadata (`[SPKIPin: …]`,
# `KeyedDecodingContainer<CodingKeys>`, `OptionGroup<…>`) is fetched by calling its accessor with the conformances
# the compiler already knows, not by demangling its name at run time. Demangling checks each generic requirement
# (`Key: Hashable`) with the runtime's conformance lookup, and a lookup the process has not made before scans every
# conformance record of this static image (about 8,400). A `trust get` made about 150 such scans, a quarter of its
# CPU; it makes about 100 with this flag (the rest come from reflection and casts) and, with the start-up order
# regenerated for it, takes 15 % less CPU. Costs 0.5 % of image size. Code generation only: the same program,
# reached without the scans.
release_flags_scripts="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
release_flags=(-c release --static-swift-stdlib
  -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections
  -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
  -Xswiftc -use-ld=lld
  -Xlinker -z -Xlinker pack-relative-relocs
  -Xlinker "--symbol-ordering-file=$release_flags_scripts/trust-startup.order" -Xlinker --no-warn-symbol-ordering
  -Xlinker --no-export-dynamic)
unset release_flags_scripts
