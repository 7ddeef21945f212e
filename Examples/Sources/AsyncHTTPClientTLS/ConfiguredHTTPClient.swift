// AsyncHTTPClient with TLS settings from a trust configuration file. AsyncHTTPClient takes a NIOSSL
// TLSConfiguration and no verification callback, so the file's anchors, minimum TLS version and client identity
// apply, and its pins do not: ClientTLSConfiguration lists what it cannot apply, and this example refuses to go
// on without pins being applied unless the caller accepts it. Where pinning matters, use TrustHTTP's TrustHTTPClient.
import AsyncHTTPClient
import Foundation
import Trust
import TrustNIO

/// An AsyncHTTPClient whose TLS settings come from the entry for `host` in the trust configuration at `path`, for
/// requests to that host only (it follows no redirect).
/// - Parameters:
///   - acceptingUnpinned: whether an entry with pins may be used anyway (its pins are then not applied).
/// - Returns: the client (shut it down when done) and the warnings to show: what was not applied, and the client
///   identity's expiry warnings.
public func makeConfiguredHTTPClient(configurationFile path: String, host: String, acceptingUnpinned: Bool = false) throws -> (
    client: HTTPClient, warnings: [String]
) {
    let evaluator = try ConfiguredTrustEvaluator(contentsOf: path)
    let tls = try evaluator.clientTLSConfiguration(forHost: host)
    if !acceptingUnpinned, let pins = tls.notApplied.first(where: { if case .pins = $0 { true } else { false } }) {
        throw UnpinnedConnectionRefused(host: host, detail: pins.description)
    }
    var configuration = HTTPClient.Configuration()
    configuration.tlsConfiguration = tls.tlsConfiguration
    // One client per host: these settings (the client identity above all) are the entry's for `host`, and a
    // redirect to another host would present them there.
    configuration.redirectConfiguration = .disallow
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    return (client, tls.notApplied.map(\.description) + tls.warnings)
}

/// The entry for a host pins it, and a client without a verification callback cannot apply pins.
public struct UnpinnedConnectionRefused: Error, CustomStringConvertible {
    public let host: String
    public let detail: String
    public var description: String { "\(host): \(detail); use TrustHTTP's TrustHTTPClient, or accept it explicitly" }
}
