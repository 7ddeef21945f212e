import GRPCCore
import GRPCNIOTransportHTTP2Posix
import TrustGRPC

/// An ``EchoService`` server on a loopback port, as the example's tests and benchmark start it: TLS with the
/// given certificate chain and key, client certificates verified by a `GRPCServerTrust` when one is given.
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
public struct EchoServer: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let server: GRPCServer<HTTP2ServerTransport.Posix>
    private let serving: Task<Void, any Error>

    /// Starts serving; returns once the port is bound.
    /// - Parameters:
    ///   - certificateChain: the server's chain, leaf first.
    ///   - privateKey: the leaf's key.
    ///   - clientTrust: verifies client certificates (mutual TLS); `nil`: none asked for.
    public static func start(
        certificateChain: [TLSConfig.CertificateSource], privateKey: TLSConfig.PrivateKeySource, clientTrust: GRPCServerTrust? = nil
    ) async throws -> EchoServer {
        let security: HTTP2ServerTransport.Posix.TransportSecurity =
            try clientTrust?.transportSecurity(certificateChain: certificateChain, privateKey: privateKey)
            ?? .tls(certificateChain: certificateChain, privateKey: privateKey)
        let transport = HTTP2ServerTransport.Posix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: security)
        let server = GRPCServer(transport: transport, services: [EchoService()])
        let serving = Task { try await server.serve() }
        do {
            guard let port = try await transport.listeningAddress.ipv4?.port else { throw RPCError(code: .internalError, message: "not bound to IPv4") }
            return EchoServer(port: port, server: server, serving: serving)
        } catch {
            server.beginGracefulShutdown()
            _ = await serving.result
            throw error
        }
    }

    /// Stops accepting, lets open RPCs finish, and returns when the server has stopped.
    public func stop() async {
        server.beginGracefulShutdown()
        _ = await serving.result
    }
}
