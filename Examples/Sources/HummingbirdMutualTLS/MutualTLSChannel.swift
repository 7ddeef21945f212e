// A Hummingbird 2 child channel that runs TLS with client certificates verified by swift-trust.
//
// Hummingbird's own `TLSChannel` takes a verification callback without metadata (NIOSSL's
// `NIOSSLVerificationResult`), so the validated chain would be dropped after the handshake. This channel adds
// NIOSSL's server handler with `ClientAuthentication.verificationCallback()` instead, which returns the validated
// path as `VerificationMetadata`: NIOSSL keeps it for the connection and a request handler reads the client back
// with `channel.verifiedClient()`.
import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import TrustNIO

/// Wraps a Hummingbird child channel (HTTP/1.1 here) with TLS that asks for, and verifies, client certificates.
public struct MutualTLSChannel<Base: ServerChildChannel>: ServerChildChannel {
    public typealias Value = Base.Value

    private let base: Base
    private let context: NIOSSLContext
    private let verification: TrustVerificationCallback

    /// TLS with `tlsConfiguration` (the server's chain and key), client certificates as `clientAuthentication` says.
    public init(_ base: Base, tlsConfiguration: TLSConfiguration, clientAuthentication: ClientAuthentication) throws {
        var configuration = tlsConfiguration
        clientAuthentication.apply(to: &configuration)
        self.context = try NIOSSLContext(configuration: configuration)
        self.verification = clientAuthentication.verificationCallback()
        self.base = base
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let handler = NIOSSLServerHandler(context: context, customVerificationCallbackWithMetadata: verification)
            try channel.pipeline.syncOperations.addHandler(handler)
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
}
