// swift-tools-version:6.2
// libFuzzer targets live in their own package so users and CI's normal build never compile them
// with the fuzzer and address sanitizer. Build and run: Fuzz/run.sh [SECONDS_PER_TARGET] (see README.md).
import PackageDescription

let package = Package(
    name: "swift-trust-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "swift-trust", path: ".."),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
    ],
    targets: [
        // libFuzzer's driver, declared for Swift.
        .target(name: "CLibFuzzer"),
        // Shared by the targets: the entry point, property checks that crash (so libFuzzer keeps the input), async from sync.
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
        // Shared by the revocation targets: the lab PKI's anchors and `good` chain.
        .target(
            name: "FuzzLab",
            dependencies: [
                .product(name: "Trust", package: "swift-trust"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .executableTarget(
            name: "FuzzCertificates",
            dependencies: [
                "FuzzSupport",
                .product(name: "Trust", package: "swift-trust"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .executableTarget(
            name: "FuzzPKCS12",
            dependencies: [
                "FuzzSupport",
                .product(name: "TrustNIO", package: "swift-trust"),
            ]
        ),
        .executableTarget(
            name: "FuzzAuthenticationHeaders",
            dependencies: [
                "FuzzSupport",
                .product(name: "TrustHTTP", package: "swift-trust"),
            ]
        ),
        .executableTarget(
            name: "FuzzConfiguration",
            dependencies: [
                "FuzzSupport",
                .product(name: "Trust", package: "swift-trust"),
                .product(name: "TrustConfigurationImport", package: "swift-trust"),
            ]
        ),
        .executableTarget(
            name: "FuzzSCT",
            dependencies: [
                "FuzzSupport",
                .product(name: "Trust", package: "swift-trust"),
            ]
        ),
        .executableTarget(
            name: "FuzzOCSP",
            dependencies: [
                "FuzzSupport",
                "FuzzLab",
                .product(name: "Trust", package: "swift-trust"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .executableTarget(
            name: "FuzzCRL",
            dependencies: [
                "FuzzSupport",
                "FuzzLab",
                .product(name: "Trust", package: "swift-trust"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .executableTarget(
            name: "FuzzHostNames",
            dependencies: [
                "FuzzSupport",
                .product(name: "Trust", package: "swift-trust"),
            ]
        ),
        // Every human-readable rendering of peer-chosen text (DisplayText, reasons, DecisionText, TrustHTTPClientError,
        // log metadata): package-level and internal parts reached with `@testable import Trust`.
        .executableTarget(
            name: "FuzzDisplayText",
            dependencies: [
                "FuzzSupport",
                .product(name: "Trust", package: "swift-trust"),
                .product(name: "TrustNIO", package: "swift-trust"),
                .product(name: "TrustHTTP", package: "swift-trust"),
                .product(name: "TrustLabPKI", package: "swift-trust"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .executableTarget(
            name: "FuzzEvaluateChainInput",
            dependencies: [
                "FuzzSupport",
                .product(name: "Trust", package: "swift-trust"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        // The client's response parsers: internal to TrustHTTP, reached with `@testable import`
        // (swift-trust's manifest compiles TrustHTTP with `-enable-testing` for run.sh).
        // Shared by the two: chunked input, small limits, an exchange written and watched.
        .target(
            name: "FuzzHTTPSupport",
            dependencies: [
                .product(name: "TrustHTTP", package: "swift-trust"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "FuzzHTTP1ResponseHead",
            dependencies: [
                "FuzzSupport",
                "FuzzHTTPSupport",
                .product(name: "TrustHTTP", package: "swift-trust"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "FuzzHTTP2Frames",
            dependencies: [
                "FuzzSupport",
                "FuzzHTTPSupport",
                .product(name: "TrustHTTP", package: "swift-trust"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Every Swift target here is instrumented (coverage counters and AddressSanitizer); the executables link
// libFuzzer, whose driver each calls from `<Target>_main` (the entry point SwiftPM links as `main`), so their
// modules are parsed as libraries. The modules of swift-trust they reach are instrumented by its own manifest
// (TRUST_FUZZ_INSTRUMENTATION=1, set by run.sh); the dependencies are not. AddressSanitizer's runtime is linked
// as a shared library (-shared-libasan; run.sh loads it first with LD_PRELOAD): the static Swift runtime's link
// flags (--exclude-libs ALL) would hide a static runtime's malloc and free from the C library.
for target in package.targets where target.name != "CLibFuzzer" {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=fuzzer,address", "-parse-as-library"])]
    if target.type == .executable {
        target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=fuzzer,address", "-Xclang-linker", "-shared-libasan"])]
    }
}
