import Hummingbird
import NIOCore
import NIOSSL
import TrustNIO

/// A Hummingbird 2 server that requires client certificates through swift-trust's `ClientAuthentication`.
///
/// ```swift
/// let auth = ClientAuthentication(requirement: .required, anchors: [clientCA])
/// let app = HummingbirdMutualTLSServer.application(
///     tlsConfiguration: .makeServerConfiguration(certificateChain: chain, privateKey: key), clientAuthentication: auth)
/// try await app.runService()
/// ```
///
/// With a `ReloadingServerIdentity` the chain, key and client CAs follow their files: each new connection takes the
/// context in force, so a renewed certificate or client-CA bundle applies without a restart.
///
/// ```swift
/// let identity = try ReloadingServerIdentity(
///     .init(certificateChain: "/etc/app/server.pem", key: "/etc/app/server.key", clientCAs: "/etc/app/client-cas.pem"),
///     clientAuthentication: ClientAuthentication(requirement: .required, anchors: []))
/// let app = HummingbirdMutualTLSServer.application(identity: identity)
/// // with `await identity.run()` in a task of its own
/// ```
public enum HummingbirdMutualTLSServer {
    /// The router: `GET /whoami` answers with the verified client's subject, pin and validated chain length.
    public static func router() -> Router<MutualTLSRequestContext> {
        let router = Router(context: MutualTLSRequestContext.self)
        router.get("whoami") { _, context -> String in
            guard let client = try await context.verifiedClient() else { return "anonymous\n" }
            return "client: \(client.subject) \(client.pin)\nvalidated chain: \(client.chain.count) certificates\n"
        }
        return router
    }

    /// The application, listening on `host`:`port` (0: a free port, reported to `onServerRunning`).
    public static func application(
        tlsConfiguration: TLSConfiguration, clientAuthentication: ClientAuthentication, host: String = "127.0.0.1", port: Int = 0,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(), server: .http1(tlsConfiguration: tlsConfiguration, clientAuthentication: clientAuthentication),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port)), onServerRunning: onServerRunning)
    }

    /// The application, listening on `host`:`port` (0: a free port, reported to `onServerRunning`), each connection
    /// set up with the context `identity` has in force when it is accepted.
    public static func application(
        identity: ReloadingServerIdentity, host: String = "127.0.0.1", port: Int = 0,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(), server: .http1(identity: identity),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port)), onServerRunning: onServerRunning)
    }
}
