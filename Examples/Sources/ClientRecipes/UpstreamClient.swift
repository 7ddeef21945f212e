// A server's outbound client, set up as a production service would: trust from a configuration file that operators
// change without a restart, tight limits on what an upstream may send, a log line per refused change and per slow
// trust decision, and both the client and the file's poller in the application's `ServiceGroup`, so that a SIGTERM
// stops polling and closes the connections in order.
import Foundation
import Logging
import ServiceLifecycle
import Trust
import TrustHTTP
import TrustServiceLifecycle

/// The outbound side of a service: one `TrustHTTPClient` configured from a trust configuration file.
public struct UpstreamClient: Sendable {
    /// The client requests go through.
    public let client: TrustHTTPClient
    /// The trust configuration in force, followed as the file changes.
    public let trust: ReloadingTrustConfiguration

    /// A client whose server trust is the configuration file at `trustFile`, polled every `pollInterval`;
    /// `adjust` changes the configuration last (a test's `resolve`, a deployment's proxy).
    /// - Throws: `TrustConfigurationRejection` when the file cannot be used (every problem listed), or the client's
    ///   `TrustHTTPClientError`.
    public init(
        trustFile: String, pollInterval: Duration = .seconds(10), logger: Logger,
        adjust: (inout TrustHTTPClientConfiguration) -> Void = { _ in }
    ) throws {
        trust = try ReloadingTrustConfiguration(contentsOf: trustFile, pollInterval: pollInterval)
        var configuration = Self.configuration(trust: trust, logger: logger)
        adjust(&configuration)
        client = try TrustHTTPClient(configuration: configuration)
    }

    /// The configuration: the file as server trust, limits for an API that answers in JSON, no redirects (an API that
    /// moves is a configuration change), one wrong login at most, TLS 1.3.
    static func configuration(trust: ReloadingTrustConfiguration, logger: Logger) -> TrustHTTPClientConfiguration {
        var configuration = TrustHTTPClientConfiguration()
        configuration.serverTrust = trust
        configuration.minimumTLSVersion = .tls13
        configuration.followsRedirects = false
        configuration.maximumAuthenticationFailures = 1
        configuration.credentialStore = nil
        configuration.usesEnvironmentProxies = false
        configuration.decompression = .enabled(maximumRatio: 20)
        configuration.responseLimits = ResponseLimits()
        configuration.responseLimits.maximumBodySize = 4 << 20
        configuration.responseLimits.maximumHeadSize = 32 << 10
        configuration.responseLimits.maximumHeaderFieldSize = 8 << 10
        configuration.responseLimits.maximumHeaderFields = 100
        configuration.responseLimits.maximumInformationalResponses = 2
        configuration.evaluationCache = EvaluationCacheSettings(capacity: 256, timeToLive: .seconds(600))
        configuration.logger = logger
        configuration.decisionObserver = { event in
            guard !event.cached, event.duration > .milliseconds(50) || !event.decision.isTrusted else { return }
            logger.notice(
                "trust decision",
                metadata: [
                    "host": "\(event.host):\(event.port)", "trusted": "\(event.decision.isTrusted)",
                    "duration": "\(event.duration)",
                    "certificates": "\(event.presentedChain.count)",
                ])
        }
        configuration.trustConfigurationObserver = { event in
            if let generation = event.generation { logger.info("trust configuration in force", metadata: ["generation": "\(generation)"]) }
            if let rejection = event.rejection {
                logger.error(
                    "trust configuration refused", metadata: ["code": "\(rejection.code)", "problems": "\(rejection.problems.map(\.path))"])
            }
        }
        return configuration
    }

    /// The file in force, for the health endpoint.
    public var trustFile: String? { trust.path }

    /// Reads the file now (an operator's reload endpoint); `force` reads it even when its stamps did not change.
    /// The generation taken, or why the file was refused.
    public func reloadNow(force: Bool) -> Result<UInt64?, TrustConfigurationRejection> {
        let outcome = trust.reload(force: force)
        if let rejection = outcome.rejection { return .failure(rejection) }
        return .success(outcome.generation)
    }

    /// What the client accepts, for the startup log.
    public var summary: [String] {
        let configuration = client.configuration
        let decompression =
            configuration.decompression == .disabled
            ? "off" : "at most \(configuration.decompression.maximumRatio)x\(configuration.decompression.isEnabled ? "" : " (disabled)")"
        let cache = configuration.evaluationCache.map { "\($0.capacity) decisions for \($0.timeToLive)" } ?? "off"
        return [
            "decompression: \(decompression)", "evaluation cache: \(cache)",
            "bodies up to \(configuration.responseLimits.maximumBodySize) bytes, heads up to \(configuration.responseLimits.maximumHeadSize)",
        ]
    }

    /// Sends `request`, again up to `retries` times when the failure may pass (a timeout, a lost connection) and the
    /// body can be sent again (not a stream read once).
    public func send(_ request: TrustHTTPClientRequest, retries: Int) async throws -> TrustHTTPClientResponse {
        var attempt = 0
        while true {
            do {
                return try await client.data(for: request)
            } catch let error as TrustHTTPClientError {
                attempt += 1
                guard attempt <= retries, UpstreamFailure(error).isRetryable, request.body?.isStreamed != true else { throw error }
            }
        }
    }

    /// The services to run beside the application's servers: the file's poller, then the client (shut down after the
    /// services before it in the group, which may still be sending).
    public var services: [any Service] {
        [ReloadingService(trust), TrustHTTPClientService(client)]
    }

    /// The configurations taken and refused from now on, as they happen (for a health endpoint).
    public func changes() -> AsyncStream<ReloadingTrustConfiguration.Event> {
        trust.events()
    }
}
