import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import PinnedGRPC
import Trust
import TrustGRPC
import TrustLab
import TrustNIO

/// One lab PKI per test process (key generation is the slow part), and the gRPC ends the tests use.
enum GRPCLab {
    static let pki: LabPKI = {
        do { return try LabPKI.make() } catch { fatalError("cannot make the lab PKI: \(error)") }
    }()

    /// The issuing CA's key and a backup: the pin set a client of the lab's `good` server would ship.
    static var pins: Set<SPKIPin> {
        get throws { [pki.intermediate.certificate.spkiPin, try SPKIPin(digest: [UInt8](repeating: 7, count: 32))] }
    }

    /// Starts an echo server presenting the lab server `name`'s chain (as the lab presents it: `mitm` with `good`'s
    /// intermediate appended), verifying clients with `clientTrust` when given.
    static func startServer(_ name: String, clientTrust: GRPCServerTrust? = nil) async throws -> EchoServer {
        guard let identity = pki.servers[name], let chain = pki.presentedChains[name] else { throw LabError.cannotWrite(name, "no such lab server") }
        return try await EchoServer.start(
            certificateChain: chain.map { .bytes($0.derBytes, format: .der) }, privateKey: .bytes(Array(identity.privateKeyPEM.utf8), format: .pem),
            clientTrust: clientTrust)
    }

    /// A client trust for `host` pinned to the lab's issuing CA, anchored at the lab's trusted roots only.
    static func pinnedTrust(host: String, identity: String? = nil) throws -> GRPCClientTrust {
        let evaluator = try PublicKeysTrustEvaluator(pins: try pins, anchors: .only(pki.trustedRoots))
        return try GRPCClientTrust(host: host, evaluator: evaluator, clientIdentity: try identity.map(clientIdentity))
    }

    static func clientIdentity(_ name: String) throws -> ClientIdentity {
        guard let client = pki.clients[name] else { throw LabError.cannotWrite(name, "no such lab client") }
        return try ClientIdentity(certificateChainPEM: client.chainPEM, privateKeyPEM: client.privateKeyPEM)
    }

    /// Runs `body` with an echo client over `trust`'s transport to 127.0.0.1:`port`.
    static func withEcho<Result: Sendable>(
        _ trust: GRPCClientTrust, port: Int, _ body: (EchoClient<HTTP2ClientTransport.Posix>) async throws -> Result
    ) async throws -> Result {
        let transport = try trust.makeTransport(port: port, connectingTo: .ipv4(address: "127.0.0.1", port: port))
        return try await withGRPCClient(transport: transport) { client in try await body(EchoClient(client)) }
    }

    /// The RPCError `body` fails with; `nil` if it did not fail (the test then fails on it).
    static func rpcError(_ body: () async throws -> Void) async -> RPCError? {
        do {
            try await body()
            return nil
        } catch let error as RPCError {
            return error
        } catch {
            return RPCError(code: .unknown, message: "not an RPCError: \(error)")
        }
    }
}
