import HummingbirdMutualTLS
import TrustNIO

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `hummingbird-mtls-server CHAIN KEY CLIENT_CAS [PORT]`: serves `GET /whoami` over TLS on 127.0.0.1, to clients
/// whose certificate chains to `CLIENT_CAS`. The three files are watched: a renewed certificate or client-CA bundle
/// applies to the next connection, without a restart. Port 8443 by default.
///
/// It imports no Foundation, and neither do the modules it links (Hummingbird, SwiftNIO, swift-trust use
/// FoundationEssentials where it exists), so the binary links no ICU: CI checks its libraries with `ldd`.
let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5, let port = arguments.count == 5 ? Int(arguments[4]) : 8443, (0...65535).contains(port) else {
    print("usage: hummingbird-mtls-server CHAIN KEY CLIENT_CAS [PORT]")
    exit(2)
}
do {
    let identity = try ReloadingServerIdentity(
        .init(certificateChain: arguments[1], key: arguments[2], clientCAs: arguments[3]),
        clientAuthentication: ClientAuthentication(requirement: .required, anchors: []))
    let app = HummingbirdMutualTLSServer.application(identity: identity, port: port) { channel in
        print("listening on \(channel.localAddress.map { "\($0)" } ?? "?")")
        for line in identity.summary { print(line) }
    }
    try await withThrowingDiscardingTaskGroup { group in
        group.addTask { await identity.run() }
        // Until SIGINT or SIGTERM (Hummingbird's graceful shutdown); then the files are no longer watched.
        try await app.runService()
        group.cancelAll()
    }
} catch {
    print("hummingbird-mtls-server: \(error)")
    exit(1)
}
