// swift-tools-version:6.1
// libFuzzer targets live in their own package so users and CI's normal build never compile them
// with the fuzzer and address sanitizer. Build and run: Fuzz/run.sh [SECONDS_PER_TARGET] (see README.md).
import PackageDescription

let package = Package(
    name: "swift-trust-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "swift-trust", path: ".."),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
    ],
    targets: [
        // libFuzzer's driver, declared for Swift.
        .target(name: "CLibFuzzer"),
        // Shared by the targets: the entry point, property checks that crash (so libFuzzer keeps the input), async from sync.
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
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
                .product(name: "TrustLab", package: "swift-trust"),
            ]
        ),
        .executableTarget(
            name: "FuzzConfiguration",
            dependencies: [
                "FuzzSupport",
                .product(name: "Trust", package: "swift-trust"),
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
    ],
    swiftLanguageModes: [.v6]
)
