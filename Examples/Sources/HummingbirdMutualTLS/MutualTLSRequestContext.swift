import Hummingbird
import NIOCore
import TrustNIO

/// A request context that keeps the connection's channel, so a handler can ask who the client is.
public struct MutualTLSRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection the request arrived on.
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = CoreRequestContextStorage(source: source)
        self.channel = source.channel
    }

    /// The client certificate this connection's handshake verified (`nil`: an anonymous connection, possible only
    /// when client certificates are optional).
    public func verifiedClient() async throws -> VerifiedClient? {
        do {
            return try await channel.verifiedClient().get()
        } catch let error as VerifiedClient.UnreadableChain {
            // The handshake verified a chain that cannot be read back: refuse the request, never treat it as anonymous.
            throw HTTPError(.internalServerError, message: "client certificate \(error.position) unreadable: \(error)")
        }
    }
}
