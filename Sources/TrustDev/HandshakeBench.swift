import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import Trust
import TrustNIO
import X509

/// Sequential loopback TLS handshakes against one server, with the same client configured three
/// ways: BoringSSL's built-in verification (trustRoots = the chain's root, hostname checked, no
/// callback), our evaluation in NIOSSL's verification callback, and our evaluation behind the cache.
struct HandshakeBench {
    enum Verification {
        case boringSSL
        case ours
        case oursCached
    }

    let chain: BenchChain
    let port: Int
    let boringContext: NIOSSLContext
    let ourContext: NIOSSLContext
    let verifier: ServerTrustVerifier
    let cachedVerifier: ServerTrustVerifier
    let group = MultiThreadedEventLoopGroup.singleton

    init(chain: BenchChain, port: Int) throws {
        self.chain = chain
        self.port = port
        // The same TLS settings both ways; only where the chain is judged differs.
        var boring = TLSConfiguration.trustClient(applicationProtocols: ["http/1.1"])
        boring.certificateVerification = .fullVerification
        boring.trustRoots = .certificates([try NIOSSLCertificate(bytes: chain.root.derBytes, format: .der)])
        self.boringContext = try NIOSSLContext(configuration: boring)
        self.ourContext = try NIOSSLContext(configuration: .trustClient(applicationProtocols: ["http/1.1"]))
        let evaluator = chain.evaluator
        self.verifier = ServerTrustVerifier(evaluator: evaluator)
        let cache = TrustEvaluationCache()
        self.cachedVerifier = ServerTrustVerifier(
            known: { cache.decision(for: $0, policy: "bench") },
            decide: { trust in
                let decision = await evaluator.evaluate(trust)
                cache.store(decision, for: trust, policy: "bench")
                return decision
            })
    }

    /// Handshakes per second over `count` sequential new connections (after a short warm-up).
    func rate(_ verification: Verification, count: Int) async throws -> Double {
        for _ in 0..<5 { try await handshake(verification) }
        let start = ContinuousClock.now
        for _ in 0..<max(1, count) { try await handshake(verification) }
        let elapsed = start.duration(to: .now)
        return Double(max(1, count)) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// One new connection: TCP connect, TLS handshake (verification included), close.
    func handshake(_ verification: Verification) async throws {
        let done = group.next().makePromise(of: Void.self)
        let record = TrustRecord()
        let host = chain.host
        let peerName = try PeerName(host: host)
        let context = verification == .boringSSL ? boringContext : ourContext
        let verifier: ServerTrustVerifier? =
            switch verification {
            case .boringSSL: nil
            case .ours: self.verifier
            case .oursCached: cachedVerifier
            }
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls =
                        if let verifier {
                            try NIOSSLClientHandler(
                                context: context, serverHostname: host,
                                customVerificationCallbackWithMetadata: verifier.callback(peerName: peerName, record: record))
                        } else {
                            try NIOSSLClientHandler(context: context, serverHostname: host)
                        }
                    try channel.pipeline.syncOperations.addHandler(tls)
                    try channel.pipeline.syncOperations.addHandler(HandshakeCompletion(promise: done))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        do {
            try await done.futureResult.get()
        } catch {
            try? await channel.close()
            throw error
        }
        try? await channel.close()
    }
}

/// Completes a promise when the TLS handshake completes (or fails, or the channel closes first).
final class HandshakeCompletion: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny
    let promise: EventLoopPromise<Void>

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { promise.succeed(()) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }
}
