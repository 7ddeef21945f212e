// A Hummingbird 2 child channel that runs TLS with client certificates verified by swift-trust.
//
// Hummingbird's own `TLSChannel` takes a verification callback without metadata (NIOSSL's
// `NIOSSLVerificationResult`), so the validated chain would be dropped after the handshake. This channel adds
// NIOSSL's server handler with `ClientAuthentication.verificationCallback()` instead, which returns the validated
// path as `VerificationMetadata`: NIOSSL keeps it for the connection and a request handler reads the client back
// with `channel.verifiedClient()`.
//
// The handler is made for each connection accepted: from one `NIOSSLContext` made at start, or from a
// `ReloadingServerIdentity`, whose context in force — the certificate chain, key and client CAs last read from its
// files — a new connection takes, so that a renewed certificate or client-CA bundle applies without a restart.
import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import TrustNIO

/// Wraps a Hummingbird child channel (HTTP/1.1 here) with TLS that asks for, and verifies, client certificates.
public struct MutualTLSChannel<Base: ServerChildChannel>: ServerChildChannel {
    public typealias Value = Base.Value

    private let base: Base
    private let makeHandler: @Sendable () -> NIOSSLServerHandler

    /// TLS with `tlsConfiguration` (the server's chain and key), client certificates as `clientAuthentication` says.
    public init(_ base: Base, tlsConfiguration: TLSConfiguration, clientAuthentication: ClientAuthentication) throws {
        var configuration = tlsConfiguration
        clientAuthentication.apply(to: &configuration)
        let context = try NIOSSLContext(configuration: configuration)
        let verification = clientAuthentication.verificationCallback()
        self.makeHandler = { NIOSSLServerHandler(context: context, customVerificationCallbackWithMetadata: verification) }
        self.base = base
    }

    /// TLS with the context `identity` has in force when each connection is accepted (its chain, key and client
    /// CAs), client certificates verified as its `ClientAuthentication` says — the validated chain kept for
    /// `channel.verifiedClient()`.
    public init(_ base: Base, identity: ReloadingServerIdentity) {
        self.makeHandler = { identity.makeServerHandler() }
        self.base = base
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(makeHandler())
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    public func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension MutualTLSChannel: HTTPChannelHandler where Base: HTTPChannelHandler {
    public var responder: HTTPChannelHandler.Responder { base.responder }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 over TLS with client certificates verified by swift-trust, for `Application(router:server:)`.
    public static func http1(
        tlsConfiguration: TLSConfiguration, clientAuthentication: ClientAuthentication, configuration: HTTP1Channel.Configuration = .init()
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            try MutualTLSChannel(
                HTTP1Channel(responder: responder, configuration: configuration), tlsConfiguration: tlsConfiguration,
                clientAuthentication: clientAuthentication)
        }
    }

    /// HTTP/1.1 over TLS from `identity`'s context in force at each connection (chain, key and client CAs that
    /// follow their files: ``ReloadingServerIdentity/run()`` or `reload()` takes new ones without a restart).
    public static func http1(identity: ReloadingServerIdentity, configuration: HTTP1Channel.Configuration = .init()) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            MutualTLSChannel(HTTP1Channel(responder: responder, configuration: configuration), identity: identity)
        }
    }
}
