#if GRPC
    import Foundation
    import GRPCCore
    import GRPCNIOTransportHTTP2Posix
    import Logging
    import NIOCore
    import NIOPosix
    import NIOSSL
    import Trust
    import TrustNIO

    /// Server trust for a gRPC client (grpc-swift 2, the NIO Posix HTTP/2 transport): each new connection's TLS
    /// handshake is decided by a `TrustEvaluator` — pins, anchors, revocation, Certificate Transparency — for the
    /// host the client means to reach, and a refusal reaches the RPC as an `RPCError` that carries the
    /// ``TrustDecision`` (``GRPCCore/RPCError/trustDecision``).
    ///
    /// ```swift
    /// let trust = try GRPCClientTrust(host: "api.example.com", evaluator: try PublicKeysTrustEvaluator(pins: pins))
    /// let transport = try trust.makeTransport(port: 443)
    /// try await withGRPCClient(transport: transport) { client in … }
    /// ```
    ///
    /// The transport's own TLS (`TransportSecurity.tls`) verifies with one callback for all its connections;
    /// this type installs the TLS handler itself (`TransportSecurity.customSecure`), one per connection, so each
    /// handshake has its own ``TrustRecord`` and its refusal its own decision. The name checked is always
    /// ``host`` — the one given here, also sent as SNI when it is a DNS name — whatever address the transport
    /// connects to (see ``makeTransport(port:connectingTo:config:serviceConfig:eventLoopGroup:)``).
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    public struct GRPCClientTrust: Sendable {
        /// The host the server's certificate must name (as given; checked in its canonical form).
        public let host: String
        /// The client identity presented when the server asks for one (mutual TLS).
        public let clientIdentity: ClientIdentity?
        /// The lowest TLS version accepted.
        public let minimumTLSVersion: TLSMinimum
        /// The identity's warnings (expired, expiring soon) and those of the configuration entry, if any.
        public let warnings: [String]

        let peerName: PeerName
        let verifier: ServerTrustVerifier
        let context: NIOSSLContext

        /// Trusts the server `host` as `evaluator` decides.
        /// - Parameters:
        ///   - host: the host the server's certificate must name (a DNS name or an IP address).
        ///   - evaluator: decides about each presented chain (a `PublicKeysTrustEvaluator`, a `PathValidator`…).
        ///   - clientIdentity: presented when the server asks for a client certificate.
        ///   - minimumTLSVersion: TLS 1.2 by default.
        ///   - cache: where decisions are kept and found again (a `TrustEvaluationCache`); `nil`: every handshake
        ///     evaluates. A hit is answered inside the handshake, without a task.
        ///   - logger: where each decision is logged, as ``ServerTrustVerifier/logger`` says.
        public init(
            host: String, evaluator: any TrustEvaluator, clientIdentity: ClientIdentity? = nil, minimumTLSVersion: TLSMinimum = .tls12,
            cache: TrustEvaluationCache? = nil, logger: Logger? = nil
        ) throws(GRPCClientTrustError) {
            let key = "grpc-client:" + UUID().uuidString
            let immediate = evaluator as? any ImmediateTrustEvaluator
            let known: ServerTrustVerifier.Known = { trust in
                if let cache, let hit = cache.decision(for: trust, policy: key) { return hit }
                guard let decision = immediate?.decisionWithoutSuspending(trust) else { return nil }
                cache?.store(decision, for: trust, policy: key)
                return decision
            }
            let verifier = ServerTrustVerifier(known: known, logger: logger) { trust in
                let decision: TrustDecision
                if let immediate { decision = await immediate.evaluate(afterImmediateMiss: trust) } else { decision = await evaluator.evaluate(trust) }
                cache?.store(decision, for: trust, policy: key)
                return decision
            }
            try self.init(host: host, verifier: verifier, clientIdentity: clientIdentity, minimumTLSVersion: minimumTLSVersion, warnings: [])
        }

        /// Trusts the server `host` as the entry of `configuration` that matches it says: its anchors, pins (enforced
        /// or report-only, their failures handed to `onReport`), minimums, revocation and CT rules, TLS minimum and
        /// client identity.
        /// - Parameters:
        ///   - host: the host the server's certificate must name; it also chooses the entry.
        ///   - port: the server's port, as pin-failure reports name it.
        ///   - configuration: the trust configuration.
        ///   - environment: where the client identity's `passphraseEnvironment` is looked up.
        ///   - cache: where decisions are kept (see ``init(host:evaluator:clientIdentity:minimumTLSVersion:cache:logger:)``);
        ///     not used when the configuration switches its evaluation cache off.
        ///   - logger: where each decision is logged.
        ///   - onReport: called with each pin-failure report an evaluation produces (a report-only entry whose pins
        ///     did not hold, an expired pin set, a failure a lenient mode let through) and the entry's `reportURIs`:
        ///     this type sends nothing itself. To post them as a TrustHTTPClient does, pass them to TrustHTTP's
        ///     `PinFailureReporter.enqueue(_:to:)`. A decision found in `cache` is not evaluated again and reports nothing.
        public init(
            host: String, port: Int, configuration: ConfiguredTrustEvaluator,
            environment: [String: String] = ProcessInfo.processInfo.environment, cache: TrustEvaluationCache? = nil, logger: Logger? = nil,
            onReport: (@Sendable (PinFailureReport, [URL]) -> Void)? = nil
        ) throws(GRPCClientTrustError) {
            let entry = configuration.entry(for: host)
            var identity: ClientIdentity?
            if let reference = entry.clientIdentity {
                do {
                    identity = try ClientIdentity.load(reference, baseDirectory: configuration.baseDirectory, environment: environment)
                } catch {
                    throw .clientIdentity(error)
                }
            }
            // A configuration whose file switches the cache off (`"evaluationCache": false`) is never answered from one.
            let cache = configuration.configuration.evaluationCache == nil ? nil : cache
            let key = "grpc-client:" + UUID().uuidString
            var known: ServerTrustVerifier.Known?
            if let cache { known = { trust in cache.decision(for: trust, policy: key) } }
            let verifier = ServerTrustVerifier(known: known, logger: logger) { trust in
                let evaluation = await configuration.evaluation(for: trust, port: port)
                if let report = evaluation.report, let onReport { onReport(report, evaluation.reportURIs) }
                cache?.store(evaluation.decision, for: trust, policy: key)
                return evaluation.decision
            }
            try self.init(
                host: host, verifier: verifier, clientIdentity: identity, minimumTLSVersion: entry.minimumTLSVersion,
                warnings: identity?.warnings ?? [])
        }

        private init(
            host: String, verifier: ServerTrustVerifier, clientIdentity: ClientIdentity?, minimumTLSVersion: TLSMinimum, warnings: [String]
        ) throws(GRPCClientTrustError) {
            do {
                peerName = try PeerName(host: host)
            } catch {
                throw .invalidHost(host)
            }
            var verifier = verifier
            // The decision is kept per connection (its TrustRecord); NIOSSL need not keep the path as well.
            verifier.keepsValidatedChain = false
            var tls = TLSConfiguration.trustClient(
                minimumTLSVersion: minimumTLSVersion == .tls13 ? .tlsv13 : .tlsv12, applicationProtocols: ["grpc-exp", "h2"])
            if let clientIdentity {
                tls.certificateChain = clientIdentity.certificateChain.map { .certificate($0) }
                tls.privateKey = .privateKey(clientIdentity.privateKey)
            }
            do {
                context = try NIOSSLContext(configuration: tls)
            } catch {
                // BoringSSL's reason codes only (never a key's bytes or a file's contents).
                throw .tlsContext(BoringSSLErrorText("\(error)").reasonCodes.joined(separator: ", "))
            }
            self.host = host
            self.verifier = verifier
            self.clientIdentity = clientIdentity
            self.minimumTLSVersion = minimumTLSVersion
            self.warnings = warnings
        }

        /// An HTTP/2 client transport to ``host`` on `port` whose connections are verified by this trust.
        /// - Parameters:
        ///   - port: the server's port.
        ///   - target: where to connect instead of resolving ``host`` (as curl's `--resolve`); the certificate must
        ///     still name ``host``, and the `:authority` sent is ``host`` unless `config` sets one.
        ///   - config: the transport's configuration; a `channelDebuggingCallbacks.onCreateTCPConnection` it sets
        ///     still runs, after the TLS handlers are in place.
        ///   - serviceConfig: as the transport takes it.
        ///   - eventLoopGroup: as the transport takes it.
        public func makeTransport(
            port: Int, connectingTo target: (any ResolvableTarget)? = nil, config: HTTP2ClientTransport.Posix.Config = .defaults,
            serviceConfig: ServiceConfig = ServiceConfig(), eventLoopGroup: any EventLoopGroup = .singletonMultiThreadedEventLoopGroup
        ) throws -> HTTP2ClientTransport.Posix {
            var config = config
            if target != nil, config.http2.authority == nil { config.http2.authority = host }
            let previous = config.channelDebuggingCallbacks.onCreateTCPConnection
            let install = channelInitializer()
            config.channelDebuggingCallbacks.onCreateTCPConnection = { channel in
                let installed = install(channel)
                guard let previous else { return installed }
                return installed.flatMap { previous(channel) }
            }
            return try HTTP2ClientTransport.Posix(
                target: target ?? defaultTarget(port: port), transportSecurity: .customSecure, config: config, serviceConfig: serviceConfig,
                eventLoopGroup: eventLoopGroup)
        }

        /// ``host`` as a transport target: an IP address as itself, a DNS name resolved.
        func defaultTarget(port: Int) -> any ResolvableTarget {
            switch peerName {
            case .ipAddress(let address) where address.isIPv4: return .ipv4(address: address.description, port: port)
            case .ipAddress(let address): return .ipv6(address: address.description, port: port)
            case .dnsName(let name): return .dns(host: name, port: port)
            }
        }

        /// What each new connection gets first in its pipeline: a NIOSSL client handler whose verification callback
        /// evaluates with this trust and records the decision in the connection's own ``TrustRecord``, then the
        /// handler that turns a refused handshake's error into a ``GRPCTrustRefusal``. For a transport made
        /// without ``makeTransport(port:connectingTo:config:serviceConfig:eventLoopGroup:)``: its security must be
        /// `.customSecure` and this its `onCreateTCPConnection`.
        public func channelInitializer() -> @Sendable (any Channel) -> EventLoopFuture<Void> {
            let context = self.context
            let verifier = self.verifier
            let peerName = self.peerName
            let host = self.host
            let sni: String?
            if case .dnsName(let name) = peerName { sni = name } else { sni = nil }
            return { channel in
                channel.eventLoop.makeCompletedFuture {
                    let record = TrustRecord()
                    let tls = try NIOSSLClientHandler(
                        context: context, serverHostname: sni, customVerificationCallbackWithMetadata: verifier.callback(peerName: peerName, record: record))
                    try channel.pipeline.syncOperations.addHandlers([tls, GRPCTrustRefusalHandler(record: record, host: host)], position: .first)
                }
            }
        }
    }
#endif
