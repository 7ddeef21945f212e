// A pinned TLS connection for a protocol that is not HTTP (SMTP, Redis, a database, a line protocol of your own),
// with SwiftNIO: TrustNIO's ServerTrustVerifier decides server trust inside the handshake, as TrustHTTPClient does,
// and its record says what was decided, for the application's own log and metrics.
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Trust
import TrustNIO

/// One request-response exchange over a TLS connection whose server trust `verifier` decides.
public struct PinnedTLSConnection: Sendable {
    public let verifier: ServerTrustVerifier
    /// The largest answer read.
    public let maximumAnswer: Int

    /// Decides with `evaluator` (pins, a configuration, SPIFFE…), logging each decision to `logger`.
    public init(evaluator: any TrustEvaluator, logger: Logger? = nil, maximumAnswer: Int = 1 << 20) {
        self.verifier = ServerTrustVerifier(evaluator: evaluator, logger: logger)
        self.maximumAnswer = maximumAnswer
    }

    /// Whether each decision is logged (at the level `TrustDecisionLog` gives it).
    public var logsDecisions: Bool { verifier.logger != nil }

    /// What an exchange gave: the bytes the server sent until it closed, and the decision on its certificate.
    public struct Exchange: Sendable {
        public var answer: ByteBuffer
        public var decision: TrustDecision?
        /// How many evaluations the handshake needed (1; 0 when the evaluator answered from its cache).
        public var evaluations: Int
    }

    /// Connects to `address:port` as `host` (the name checked, and sent as SNI), sends `request`, reads until the
    /// server closes. A refused certificate fails the connection in the handshake, before anything is sent.
    public func exchange(host: String, address: String, port: Int, request: ByteBuffer) async throws -> Exchange {
        let context = try NIOSSLContext(configuration: .trustClient(applicationProtocols: []))
        let record = TrustRecord()
        let verifier = self.verifier
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: address, port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(verifier.makeClientHandler(context: context, host: host, record: record))
                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        var answer = ByteBuffer()
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(request)
                for try await var piece in inbound {
                    answer.writeBuffer(&piece)
                    if answer.readableBytes > maximumAnswer { break }
                }
            }
        } catch NIOSSLError.uncleanShutdown {
            // A server that closes without close_notify after answering: the answer is what arrived.
        } catch {
            throw ExchangeError(underlying: error, decision: record.decision)
        }
        return Exchange(answer: answer, decision: record.decision, evaluations: record.evaluations)
    }

    /// A failed exchange, with the decision when the certificate was refused.
    public struct ExchangeError: Error, CustomStringConvertible {
        public var underlying: any Error
        public var decision: TrustDecision?
        public var description: String { decision.map { "refused: \($0.reasons.map(\.code))" } ?? "\(underlying)" }
    }

    /// The log line a decision deserves: its level and metadata as TrustHTTPClient logs them.
    public static func logLine(for decision: TrustDecision, host: String, port: Int) -> (level: Logger.Level, metadata: Logger.Metadata) {
        (TrustDecisionLog.level(of: decision), TrustDecisionLog.metadata(for: decision, host: host, port: port, cached: false))
    }

    /// The ServerTrust of a chain NIOSSL handed over elsewhere (a server's view of a peer, a proxy's upstream).
    public static func serverTrust(of chain: [NIOSSLCertificate], host: String) throws -> ServerTrust {
        let peerName = try PeerName(host: host)
        do {
            return try ServerTrustVerifier.serverTrust(presented: chain, peerName: peerName)
        } catch {
            // A leaf the engine cannot read at all (an empty chain, a malformed certificate): its reasons' codes.
            throw UnusableChain(codes: error.reasons.map(\.code))
        }
    }

    /// A chain that cannot be evaluated.
    public struct UnusableChain: Error, Equatable {
        public var codes: [String]
    }
}
