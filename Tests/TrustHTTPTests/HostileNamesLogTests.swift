import Foundation
import Logging
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@testable import TrustNIO

/// swift-log records about peers whose certificates carry terminal controls, CR/LF, C1 and U+202E
/// (``HostileNames``): every message is a fixed text, and every metadata value holds the names escaped
/// (`DisplayText`), so a subject cannot forge a log line or drive a terminal that shows the log.
@Suite("Hostile names in swift-log records: metadata escaped, messages fixed", .serialized, .timeLimit(.minutes(5)), .paced)
struct HostileNamesLogTests {
    static let messages: Set<String> = [
        "server trusted", "server not trusted", "connected", "connection failed", "request failed",
        "client certificate verified", "client certificate refused",
    ]

    static func expectClean(_ log: LogCapture, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!log.all.isEmpty, sourceLocation: sourceLocation)
        for record in log.all {
            #expect(Self.messages.contains(record.message), "a message not fixed: \(record.message.debugDescription)", sourceLocation: sourceLocation)
            HostileNames.expectNoRawControl(record.text, "log record", lines: 1, sourceLocation: sourceLocation)
        }
    }

    /// A mutual-TLS server's log of a client certificate with hostile names: `client.subject` escaped.
    @Test func clientSubjectIsEscaped() async throws {
        let log = LogCapture()
        for anchors in [[HostileNames.pki.root.certificate], [Lab.pki.root.certificate]] {
            let authentication = ClientAuthentication(anchors: anchors)
            let decision = await authentication.validator.evaluate(ServerTrust(presentedChain: [HostileNames.pki.leaf.certificate], peerName: nil))
            ClientAuthentication.log(decision, to: log.logger)
        }
        Self.expectClean(log)
        let subject = try #require(log.all.first?.metadata["client.subject"]?.description)
        #expect(subject == DisplayText.escaped(HostileNames.pki.leaf.certificate.subject.description))
        #expect(subject.contains("\\x1b[2J") && subject.contains("\\x0d\\x0aforged") && subject.contains("\\u{202E}"))
    }

    /// A session's records about servers presenting the hostile leaf (trusted; expired; unknown root), and
    /// a decision logged for a hostile host name: no raw control anywhere; the error descriptions too.
    @Test func sessionRecordsAndErrorsAreEscaped() async throws {
        let leaf = HostileNames.pki.leaf
        let expired = HostileNames.pki.expiredLeaf
        let good = try await LabServer.start(name: "hostile", host: "good.lab.test", chain: [leaf.certificate], privateKey: leaf.privateKey)
        let old = try await LabServer.start(name: "hostile-expired", host: "good.lab.test", chain: [expired.certificate], privateKey: expired.privateKey)
        let log = LogCapture()
        var errors: [TrustHTTPClientError] = []
        try await withTeardown({
            try? await good.shutdown()
            try? await old.shutdown()
        }) {
            let session = try labSession(DefaultTrustEvaluator(anchors: .only([HostileNames.pki.root.certificate]))) {
                $0.logger = log.logger
            }
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(good))).statusCode == 200)
            if let error = await sessionError({ try await session.data(for: TrustHTTPClientRequest(url: url(old))) }) { errors.append(error) }
            await session.shutdown()
            let untrusting = try labSession { $0.logger = log.logger }
            if let error = await sessionError({ try await untrusting.data(for: TrustHTTPClientRequest(url: url(good))) }) { errors.append(error) }
            await untrusting.shutdown()
        }
        #expect(log.messages("server trusted").count == 1 && log.messages("server not trusted").count == 2)
        // A host name is the peer's too (a redirect's Location chooses it).
        let decision = try #require(errors.first?.trustDecision)
        TrustDecisionLog.log(decision, host: HostileNames.dnsName, port: 443, cached: false, to: log.logger)
        #expect(log.all.last?.metadata["trust.host"]?.description == DisplayText.escaped(HostileNames.dnsName))
        Self.expectClean(log)
        #expect(errors.count == 2)
        for error in errors {
            HostileNames.expectEscaped(error.description, "SessionError.description")
            HostileNames.expectEscaped(error.trustDecision?.reasons.map(\.description).joined() ?? "", "reason descriptions")
        }
    }
}
