// swift-tools-version: 6.2
// Examples that compile against the package in the folder above; CI builds them and runs their tests
// (`swift test --package-path Examples`). Vapor and Hummingbird are dependencies of this package only.
import PackageDescription

let trustHTTP: Target.Dependency = .product(name: "TrustHTTP", package: "swift-trust")
let trustNIO: Target.Dependency = .product(name: "TrustNIO", package: "swift-trust")
let trustGRPC: Target.Dependency = .product(name: "TrustGRPC", package: "swift-trust")
let grpc: [Target.Dependency] = [
    .product(name: "GRPCCore", package: "grpc-swift-2"), .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
]

let package = Package(
    name: "swift-trust-examples",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(name: "swift-trust", path: "..", traits: ["GRPC", "Vapor"]),
        // Without Hummingbird's default traits: `FullFoundation` links full Foundation and its ICU data into every server
        // (its URL-encoded form coding), `ConfigurationSupport` swift-configuration; the examples use neither.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        .executableTarget(name: "PinnedRequest", dependencies: [trustHTTP]),
        .executableTarget(name: "MutualTLSClient", dependencies: [trustHTTP]),
        .executableTarget(name: "DigestLogin", dependencies: [trustHTTP]),
        .executableTarget(name: "PerHostConfiguration", dependencies: [trustHTTP]),
        .executableTarget(name: "ReadmeExample", dependencies: [trustHTTP]),
        // gRPC (TrustGRPC, the `GRPC` trait): an echo service with a unary and a streaming RPC, no generated code; its
        // server verifies client certificates, its clients pin the server. Tested over loopback (GRPCExamplesTests).
        .target(name: "PinnedGRPC", dependencies: [trustGRPC, trustNIO] + grpc),
        // New gRPC connections per second, TrustGRPC's verification against the transport's own (not run by CI: built only).
        .executableTarget(
            name: "grpc-trust-bench",
            dependencies: [
                "PinnedGRPC", trustGRPC, trustNIO, .product(name: "Trust", package: "swift-trust"), .product(name: "TrustLab", package: "swift-trust"),
            ] + grpc),
        .testTarget(
            name: "GRPCExamplesTests",
            dependencies: [
                "PinnedGRPC", trustGRPC, trustNIO, .product(name: "Trust", package: "swift-trust"), .product(name: "TrustLab", package: "swift-trust"),
            ] + grpc),
        // A client that takes a TLSConfiguration and no callback: anchors, TLS minimum and identity from a trust
        // configuration entry (ClientTLSConfiguration), pins refused unless accepted as not applied.
        .target(
            name: "AsyncHTTPClientTLS",
            dependencies: [trustNIO, .product(name: "Trust", package: "swift-trust"), .product(name: "AsyncHTTPClient", package: "async-http-client")]),
        .executableTarget(
            name: "ConfiguredAsyncHTTPClient",
            dependencies: [
                "AsyncHTTPClientTLS", .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]),
        // Servers that require client certificates through ClientAuthentication (TrustNIO), tested over loopback.
        .target(
            name: "HummingbirdMutualTLS",
            dependencies: [
                trustNIO, .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdCore", package: "hummingbird"),
            ]),
        // The server above as a program (`hummingbird-mtls-server CHAIN KEY CLIENT_CAS [PORT]`); CI checks with `ldd` that
        // it links no full Foundation and no ICU.
        .executableTarget(name: "hummingbird-mtls-server", dependencies: ["HummingbirdMutualTLS", trustNIO], path: "Sources/HummingbirdMutualTLSServerMain"),
        .target(name: "VaporMutualTLS", dependencies: [trustNIO, .product(name: "Vapor", package: "vapor")]),
        // A Vapor app whose `req.client` is a TrustHTTPClient (TrustVapor, the `Vapor` trait): pinned outbound calls.
        .target(
            name: "VaporPinnedClient",
            dependencies: [
                trustHTTP, .product(name: "Trust", package: "swift-trust"), .product(name: "TrustVapor", package: "swift-trust"),
                .product(name: "Vapor", package: "vapor"),
            ]),
        // Compile tests of names: route files that import TrustHTTP (and TrustVapor) beside Vapor or Hummingbird and
        // write the frameworks' `Request`, `Response`, `Session`, `RequestContext`… unqualified.
        .target(
            name: "VaporNames",
            dependencies: [trustHTTP, .product(name: "TrustVapor", package: "swift-trust"), .product(name: "Vapor", package: "vapor")]),
        .target(name: "HummingbirdNames", dependencies: [trustHTTP, .product(name: "Hummingbird", package: "hummingbird")]),
        .testTarget(
            name: "ServerExamplesTests",
            dependencies: [
                "HummingbirdMutualTLS", "VaporMutualTLS", "AsyncHTTPClientTLS", trustHTTP, trustNIO, .product(name: "TrustLab", package: "swift-trust"),
                .product(name: "Vapor", package: "vapor"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]),
        // A service's outbound client, as production code writes it: errors sorted by their typed fields, a challenge
        // handler that logs in, saved logins, downloads and streamed bodies, an OpenAPI transport, and the client with
        // its trust file's poller in a ServiceGroup.
        .target(
            name: "ClientRecipes",
            dependencies: [
                trustHTTP, trustNIO, .product(name: "Trust", package: "swift-trust"), .product(name: "TrustOpenAPI", package: "swift-trust"),
                .product(name: "TrustServiceLifecycle", package: "swift-trust"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"), .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "X509", package: "swift-certificates"),
            ]),
        // An offline audit of a deployment's chain before a rollout: the organisation's policy and a PathRule of its
        // own, the pins of the validated path, and what the iOS app (AFSecurityPolicy semantics) would decide.
        .target(name: "ChainAudit", dependencies: [.product(name: "Trust", package: "swift-trust"), .product(name: "X509", package: "swift-certificates")]),
        .testTarget(
            name: "ChainAuditTests",
            dependencies: [
                "ChainAudit", .product(name: "Trust", package: "swift-trust"), .product(name: "TrustLabPKI", package: "swift-trust"),
                .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
            ]),
        // A pinned TLS connection for a protocol that is not HTTP, with SwiftNIO and TrustNIO's verifier.
        .target(
            name: "PinnedTLSStream",
            dependencies: [
                trustNIO, .product(name: "Trust", package: "swift-trust"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The recipes tested as a user tests a client: against the lab (TrustLabPKI, TrustLab) on loopback.
        .testTarget(
            name: "ClientRecipesTests",
            dependencies: [
                "ClientRecipes", "PinnedTLSStream", trustHTTP, trustNIO, .product(name: "Trust", package: "swift-trust"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "TrustLab", package: "swift-trust"), .product(name: "TrustLabPKI", package: "swift-trust"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        .testTarget(
            name: "VaporClientTests",
            dependencies: [
                "VaporPinnedClient", trustHTTP, .product(name: "Trust", package: "swift-trust"),
                .product(name: "TrustVapor", package: "swift-trust"), .product(name: "TrustLab", package: "swift-trust"),
                .product(name: "Vapor", package: "vapor"),
            ]),
    ]
)
