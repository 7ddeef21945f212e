// swift-tools-version:6.2
import PackageDescription

/// Fuzz/run.sh sets TRUST_FUZZ_INSTRUMENTATION=1 while it builds the libFuzzer targets (Fuzz/Package.swift): the
/// modules fuzzed are then compiled with coverage counters and AddressSanitizer, and testable (the targets reach
/// internal parsers with `@testable import`). Only this package's modules: the dependencies keep the flags of the
/// release build, so a fuzz build in the release build folder reuses their compiled code rather than compiling
/// all of it again (they are fuzzed by their own projects). Never set for a normal build.
let fuzzInstrumentation: [SwiftSetting] =
    Context.environment["TRUST_FUZZ_INSTRUMENTATION"] == "1"
    ? [.unsafeFlags(["-sanitize=fuzzer,address", "-enable-testing"])] : []

/// What every NIO-based target uses.
let nio: [Target.Dependency] = [
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "NIOPosix", package: "swift-nio"),
    .product(name: "NIOSSL", package: "swift-nio-ssl"),
    .product(name: "NIOHTTP1", package: "swift-nio"),
    .product(name: "NIOHTTP2", package: "swift-nio-http2"),
    .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
]

let package = Package(
    name: "swift-trust",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Trust", targets: ["Trust"]),
        .library(name: "TrustNIO", targets: ["TrustNIO"]),
        .library(name: "TrustConfigurationImport", targets: ["TrustConfigurationImport"]),
        .library(name: "TrustServiceLifecycle", targets: ["TrustServiceLifecycle"]),
        .library(name: "TrustOpenAPI", targets: ["TrustOpenAPI"]),
        .library(name: "TrustVapor", targets: ["TrustVapor"]),
        .library(name: "TrustHTTP", targets: ["TrustHTTP"]),
        .library(name: "TrustLab", targets: ["TrustLab"]),
        .library(name: "TrustLabPKI", targets: ["TrustLabPKI"]),
        .library(name: "TrustGRPC", targets: ["TrustGRPC"]),
        .executable(name: "trust", targets: ["trust"]),
        .executable(name: "trust-conformance", targets: ["TrustConformance"]),
        // The developers' harnesses (benchmarks, load and construction checks, fuzzer): not installed, not built
        // by Scripts/release-build.sh unless named.
        .executable(name: "trust-dev", targets: ["TrustDev"]),
    ],
    traits: [
        // `Vapor`: the TrustVapor module (a Vapor `Client` backed by a Session). Off by default, so that a package
        // that does not use Vapor neither resolves nor builds it.
        .trait(name: "Vapor", description: "TrustVapor: Vapor's req.client through a Session"),
        // `GRPC`: the TrustGRPC module (pinned gRPC clients, mutual-TLS gRPC servers; grpc-swift 2). Off by default:
        // a package that does not use gRPC neither resolves nor builds grpc-swift.
        .trait(name: "GRPC", description: "TrustGRPC: pinned gRPC clients and mutual-TLS gRPC servers (grpc-swift 2)"),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
    ],
    targets: [
        .target(
            name: "Trust",
            dependencies: [
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: fuzzInstrumentation
        ),
        // Other platforms' pinning configurations (TrustKit, ATS, Android NSC, OkHttp) to ours: apart from
        // the engine, so that an app importing Trust does not link FoundationXML (libxml2).
        .target(
            name: "TrustConfigurationImport",
            dependencies: ["Trust"],
            swiftSettings: fuzzInstrumentation
        ),
        .target(
            name: "TrustNIO",
            // Only what it imports: NIOSSL's callbacks and contexts, no event loops or HTTP.
            dependencies: [
                "Trust", .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: fuzzInstrumentation
        ),
        .target(
            name: "TrustHTTP",
            dependencies: [
                "Trust", "TrustNIO", .product(name: "NIOTLS", package: "swift-nio"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ] + nio,
            swiftSettings: fuzzInstrumentation
        ),
        // swift-openapi-runtime integration (a ClientTransport), apart so TrustHTTP users do not build it.
        .target(
            name: "TrustOpenAPI",
            dependencies: [
                "TrustHTTP",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // swift-service-lifecycle integration, apart so TrustHTTP users do not build it.
        .target(
            name: "TrustServiceLifecycle",
            dependencies: ["TrustHTTP", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]
        ),
        // Vapor's `Client` over a Session; its Vapor dependency only with the `Vapor` trait (the sources are `#if Vapor`).
        .target(
            name: "TrustVapor",
            dependencies: [
                "Trust", "TrustHTTP", .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: ["Vapor"])),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
            ]
        ),
        // grpc-swift 2: a client transport verified by a TrustEvaluator, a server verifying client certificates.
        // Its gRPC dependencies only with the `GRPC` trait (the sources are `#if GRPC`).
        .target(
            name: "TrustGRPC",
            dependencies: [
                "Trust", "TrustNIO", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "GRPCCore", package: "grpc-swift-2", condition: .when(traits: ["GRPC"])),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport", condition: .when(traits: ["GRPC"])),
            ]
        ),
        // The lab's certificates, CRLs, OCSP responses and CT logs, made at run time, and its seeded fuzz
        // inputs: no NIO, so the engine's tests (and anyone testing with certificates alone) need no event loop.
        .target(
            name: "TrustLabPKI",
            dependencies: [
                "Trust",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .target(
            name: "TrustLab",
            dependencies: [
                "Trust",
                "TrustLabPKI",
                "TrustNIO",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ] + nio
        ),
        .executableTarget(
            name: "trust",
            dependencies: [
                "Trust",
                "TrustNIO",
                "TrustHTTP",
                "TrustLab",
                "TrustConfigurationImport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ] + nio
        ),
        // `trust-dev`: what only the project's developers run (the tests start it for the load and construction
        // checks and the fuzzer); kept out of the installed `trust`.
        .executableTarget(
            name: "TrustDev",
            dependencies: [
                "Trust",
                "TrustNIO",
                "TrustHTTP",
                "TrustLab",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ] + nio
        ),
        .executableTarget(
            name: "TrustConformance",
            dependencies: [
                "Trust",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Test helpers, in one place per layer: processes, files and the lab PKI (no NIO)…
        .target(
            name: "TrustTestSupport",
            dependencies: ["Trust", "TrustLabPKI", .product(name: "X509", package: "swift-certificates")],
            path: "Tests/TrustTestSupport"
        ),
        // …and lab servers with sessions to them.
        .target(
            name: "TrustHTTPTestSupport",
            dependencies: [
                "TrustHTTP", "TrustLab", "TrustTestSupport",
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOTLS", package: "swift-nio"),
            ] + nio,
            path: "Tests/TrustHTTPTestSupport"
        ),
        // The engine: certificates, paths, pins, policies, revocation and CT decisions, configuration
        // files — no NIO, no event loop.
        .testTarget(
            name: "TrustEngineTests",
            dependencies: [
                "Trust", "TrustLabPKI", "TrustConfigurationImport", "TrustTestSupport",
                .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // HTTP: the Session over loopback against the lab's servers, its challenges, pool and handlers.
        .testTarget(
            name: "TrustHTTPTests",
            dependencies: [
                "Trust", "TrustNIO", "TrustHTTP", "TrustLab", "TrustTestSupport", "TrustHTTPTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"), .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ] + nio
        ),
        // The `trust` command as users run it, and interop with curl, openssl and python3-requests.
        .testTarget(
            name: "TrustCLITests",
            dependencies: [
                "trust", "Trust", "TrustNIO", "TrustHTTP", "TrustLab", "TrustTestSupport", "TrustHTTPTestSupport",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "X509", package: "swift-certificates"),
            ] + nio
        ),
        // TrustNIO on its own: client identities (PKCS#12 budgets), the verification callbacks in plain NIO
        // handshakes, TLS configurations made from a trust configuration entry.
        .testTarget(
            name: "TrustNIOTests",
            dependencies: [
                "Trust", "TrustNIO", "TrustLab", "TrustTestSupport", "TrustHTTPTestSupport",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
            ] + nio
        ),
        // The OpenAPI transport over a Session.
        .testTarget(
            name: "TrustOpenAPITests",
            dependencies: [
                "Trust", "TrustHTTP", "TrustOpenAPI", "TrustLab", "TrustTestSupport", "TrustHTTPTestSupport",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"), .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // A Session as a swift-service-lifecycle Service.
        .testTarget(
            name: "TrustServiceLifecycleTests",
            dependencies: [
                "TrustHTTP", "TrustServiceLifecycle", "TrustLab", "TrustTestSupport", "TrustHTTPTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The lab's own servers (the hostile ones above all) behave as their documentation says.
        .testTarget(
            name: "TrustLabTests",
            dependencies: ["TrustLab", "TrustTestSupport", "TrustHTTPTestSupport"] + nio
        ),
        // Load: each run in a child process of its own (`trust-dev load-check`), never in the test process.
        .testTarget(
            name: "TrustLoadTests",
            dependencies: ["TrustTestSupport"]
        ),
    ]
)
