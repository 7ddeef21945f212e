// swift-tools-version:6.2
// Benchmarks live in their own package so users and CI never build the baseline client.
// Run: cd Benchmarks && swift run -c release trust-http-bench [SECONDS_PER_ROUND] [ROUNDS]
import PackageDescription

let package = Package(
    name: "swift-trust-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "swift-trust", path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
    ],
    targets: [
        .target(name: "AllocationCounter"),
        .executableTarget(
            name: "trust-http-bench",
            dependencies: [
                "AllocationCounter",
                .product(name: "TrustHTTP", package: "swift-trust"),
                .product(name: "TrustLab", package: "swift-trust"),
                .product(name: "Trust", package: "swift-trust"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
    ]
)
