// swift-tools-version: 6.1
// Examples that compile against the package in the folder above (built in CI).
import PackageDescription

let trustHTTP: Target.Dependency = .product(name: "TrustHTTP", package: "swift-trust")

let package = Package(
    name: "swift-trust-examples",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [.package(name: "swift-trust", path: "..")],
    targets: [
        .executableTarget(name: "PinnedRequest", dependencies: [trustHTTP]),
        .executableTarget(name: "MutualTLSClient", dependencies: [trustHTTP]),
        .executableTarget(name: "DigestLogin", dependencies: [trustHTTP]),
        .executableTarget(name: "PerHostConfiguration", dependencies: [trustHTTP]),
        .executableTarget(name: "ReadmeExample", dependencies: [trustHTTP]),
    ]
)
