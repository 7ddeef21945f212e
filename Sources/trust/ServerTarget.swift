import ArgumentParser
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The server a command connects to without sending a request (`inspect`, `pin --plan`): the https URL or
/// `host[:port]` it was given, the name to check, and the address to dial (`--resolve`).
struct ServerTarget {
    /// The URL as given, with `https://` added to a bare `host[:port]`.
    let text: String
    let url: URL
    let connectHost: String
    let port: Int
    let nameToCheck: String
    let peerName: PeerName
    let address: String

    /// `option` names the argument in the usage error (`inspect`, `--plan`).
    init(_ target: String, host: String?, resolve: [String], option: String) throws {
        text = target.contains("://") ? target : "https://" + target
        guard let url = URL(string: text), url.scheme?.lowercased() == "https", let urlHost = url.host, !urlHost.isEmpty else {
            throw UsageError("\(option) takes an https URL or host[:port], not \(DisplayText.escaped(Secrets.redactedURL(target)))")
        }
        self.url = url
        connectHost = urlHost.hasPrefix("[") ? String(urlHost.dropFirst().dropLast()) : urlHost
        port = url.port ?? 443
        nameToCheck = host ?? connectHost
        do { peerName = try PeerName(host: nameToCheck) } catch { throw UsageError("--host: \(error.description)") }
        address = try TrustOptions.resolveMap(resolve)["\(connectHost.lowercased()):\(port)"] ?? connectHost
    }

    /// The handshake's record; a failure is printed in the library's words with its fix, and ends the command
    /// with curl's exit code for it (as `trust get`).
    func handshake(connectTimeout: Double) async throws -> InspectCommand.Observed {
        do {
            return try await InspectCommand.handshake(
                address: address, port: port, serverName: connectHost, url: url, timeout: min(connectTimeout, GetConnectionOptions.longestSeconds))
        } catch {
            printError(DisplayText.escaped(error.message) + ". Fix: " + error.explanation.fix + ".")
            throw ExitCode(GetCommand.exitCode(for: error))
        }
    }
}
