import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTPTestSupport
import TrustNIO
import TrustTestSupport

@testable import TrustHTTP

/// The order and the deadline of a challenge's handlers: task level first, then session level, within
/// one deadline for both; the first answer of a delegate counts.
@Suite("Challenge chain: handler order, one deadline, first answer", .paced)
struct ChallengeChainTests {
    static let challenge = AuthenticationChallenge(
        protectionSpace: ProtectionSpace(host: "good.lab.test", port: 443, scheme: "https", authenticationMethod: .serverTrust))

    @Test func taskLevelFirstThenSessionLevel() async {
        let asked = Recorder()
        let task = ClosureChallengeHandler { _ in
            asked.append("task")
            return .performDefaultHandling
        }
        let session = ClosureChallengeHandler { _ in
            asked.append("session")
            return .cancelAuthenticationChallenge
        }
        let answer = await ChallengeChain.ask(task: task, session: session, Self.challenge, timeout: .seconds(30))
        guard case .cancelAuthenticationChallenge? = answer else {
            Issue.record("\(String(describing: answer))")
            return
        }
        #expect(asked.all == ["task", "session"])
        // A task-level answer other than default handling is final: the session level is not asked.
        let decisive = ClosureChallengeHandler { _ in
            asked.append("decisive")
            return .rejectProtectionSpace
        }
        guard case .rejectProtectionSpace? = await ChallengeChain.ask(task: decisive, session: session, Self.challenge, timeout: .seconds(30)) else {
            Issue.record("the task level's answer was not final")
            return
        }
        #expect(asked.all == ["task", "session", "decisive"])
    }

    /// A task-level handler that defers late leaves the session level only what remains of the
    /// deadline. The task level defers after 3.8 s of a 4 s deadline; the session level would cancel
    /// after 3 s: within a timeout of its own (as it once had: up to twice the limit in all) that answer
    /// counts, within the one deadline it comes too late and the challenge is not answered. The result,
    /// not a measured time, decides, so a loaded machine's late timers cannot fail the test.
    @Test func oneDeadlineAcrossBothHandlers() async {
        let task = ClosureChallengeHandler { _ in
            try? await Task.sleep(for: .milliseconds(3800))
            return .performDefaultHandling
        }
        let slow = ClosureChallengeHandler { _ in
            try? await Task.sleep(for: .seconds(3))
            return .cancelAuthenticationChallenge
        }
        let clock = ContinuousClock()
        let started = clock.now
        let answer = await ChallengeChain.ask(task: task, session: slow, Self.challenge, timeout: .seconds(4))
        print("[challenge chain] a late deferral then a slow handler, deadline 4 s: \(String(describing: answer)) after \(started.duration(to: clock.now))")
        #expect(answer == nil, "the session-level handler had a deadline of its own")
    }

    final class Delegate: TrustHTTPClientDelegate {
        func session(
            _ session: TrustHTTPClient, didReceive challenge: AuthenticationChallenge, completionHandler: @escaping @Sendable (ChallengeDisposition) -> Void
        ) {
            completionHandler(.rejectProtectionSpace)
            completionHandler(.cancelAuthenticationChallenge)  // a second call is harmless: the first counts
        }
    }

    @Test func aDelegatesFirstAnswerCounts() async throws {
        let session = try TrustHTTPClient()
        let handler = DelegateChallengeHandler(delegate: Delegate(), session: { session })
        guard case .rejectProtectionSpace = await handler.handle(Self.challenge) else {
            Issue.record("not the first answer")
            return
        }
        await session.shutdown()
    }
}

/// Collects strings from concurrent code.
final class Recorder: Sendable {
    private let values = NIOLockedValueBox<[String]>([])
    func append(_ value: String) { values.withLockedValue { $0.append(value) } }
    var all: [String] { values.withLockedValue { $0 } }
}

/// BoringSSL's error text is read in one place: its reason codes, not its paths or numbers.
@Suite("BoringSSL error text: reason codes and what they mean", .paced)
struct BoringSSLErrorTextTests {
    static func line(_ code: String) -> String {
        "handshakeFailed(NIOSSL.BoringSSLError.sslError([Error: 268436502 error:10000416:SSL routines:OPENSSL_internal:\(code) at /x/handshake.cc:301]))"
    }

    @Test func readsReasonCodes() {
        let reading = BoringSSLErrorText(Self.line("TLSV13_ALERT_CERTIFICATE_REQUIRED") + " " + Self.line("SSLV3_ALERT_HANDSHAKE_FAILURE"))
        #expect(reading.reasonCodes == ["TLSV13_ALERT_CERTIFICATE_REQUIRED", "SSLV3_ALERT_HANDSHAKE_FAILURE"])
        #expect(reading.reason == "SSLV3_ALERT_HANDSHAKE_FAILURE")
        #expect(reading.certificateRequired && reading.handshakeFailureAlert)
        #expect(BoringSSLErrorText("error:1000007d:SSL routines:CERTIFICATE_VERIFY_FAILED").reasonCodes == ["CERTIFICATE_VERIFY_FAILED"])
        #expect(BoringSSLErrorText("the connection was lost (EOF during handshake)").reasonCodes.isEmpty)
        // Words of the message are not codes: nothing outside the reason field is read.
        #expect(BoringSSLErrorText("CERTIFICATE_REQUIRED mentioned in prose").certificateRequired == false)
    }

    @Test func namesTheProblem() {
        #expect(BoringSSLErrorText(Self.line("WRONG_VERSION_NUMBER")).problem == .notTLS)
        #expect(BoringSSLErrorText(Self.line("TLSV1_ALERT_PROTOCOL_VERSION")).problem == .protocolVersion)
        #expect(BoringSSLErrorText(Self.line("NO_SHARED_CIPHER")).problem == .noSharedCipher)
        #expect(BoringSSLErrorText(Self.line("CERTIFICATE_VERIFY_FAILED")).problem == .other)
        #expect(BoringSSLErrorText(Self.line("SSLV3_ALERT_CERTIFICATE_EXPIRED")).clientCertificateRefusal?.alert == "ALERT_CERTIFICATE_EXPIRED")
        #expect(BoringSSLErrorText(Self.line("TLSV1_ALERT_UNKNOWN_CA")).clientCertificateRefusal?.meaning.hasPrefix("unknown CA") == true)
        #expect(BoringSSLErrorText(Self.line("CERTIFICATE_VERIFY_FAILED")).clientCertificateRefusal == nil)
    }
}
