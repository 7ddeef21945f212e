import Foundation
import NIOCore
import NIOSSL
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport

/// Every ``TrustHTTPClientError`` code, and every way a TLS handshake is known to fail, has one wording of what it
/// means and its likely fix; the error's description ends with that fix.
@Suite("SessionError.Explanation: every code and handshake failure worded, with its fix", .paced)
struct SessionErrorExplanationTests {
    @Test func everyCodeHasASummaryAndAFix() {
        for code in TrustHTTPClientError.Code.allCases {
            #expect(!code.explanation.summary.isEmpty && !code.explanation.fix.isEmpty, "\(code)")
        }
        #expect(Set(TrustHTTPClientError.Code.allCases.map(\.explanation.summary)).count == TrustHTTPClientError.Code.allCases.count)
        let error = TrustHTTPClientError(.cannotFindHost, "the host x.test could not be resolved")
        #expect(error.explanation == TrustHTTPClientError.Code.cannotFindHost.explanation)
        #expect(error.description.hasSuffix(". Fix: " + error.explanation.fix))
    }

    /// Codes are values with Foundation's numbers and names: a code added in a minor version breaks no client's
    /// `switch`, and each number still names one code.
    @Test func codesKeepURLErrorsNumbersAndNames() {
        #expect(TrustHTTPClientError.Code.allCases.count == 26)
        #expect(Set(TrustHTTPClientError.Code.allCases.map(\.rawValue)).count == TrustHTTPClientError.Code.allCases.count)
        for code in TrustHTTPClientError.Code.allCases {
            #expect(TrustHTTPClientError.Code(rawValue: code.rawValue) == code, "\(code)")
        }
        #expect(TrustHTTPClientError.Code.serverCertificateUntrusted.rawValue == -1202)
        #expect(TrustHTTPClientError.Code.serverCertificateUntrusted.description == "serverCertificateUntrusted")
        #expect(TrustHTTPClientError.Code.cancelled.rawValue == -999 && TrustHTTPClientError.Code.cannotWriteToFile.rawValue == -3003)
        #expect(TrustHTTPClientError.Code(rawValue: -1) == nil)
        #expect(TrustHTTPClientError(.timedOut, "late").errorCode == -1001)
        #expect(TrustHTTPClientError.HandshakeFailure.other(reason: "X").reason == "X" && TrustHTTPClientError.HandshakeFailure.notTLS.reason == nil)
        #expect(TrustHTTPClientError.HandshakeFailure.other(reason: "X") != .other(reason: "Y"))
        #expect(TrustHTTPClientError.ProtocolViolation.http2.rawValue == "http2")
        #expect(TrustHTTPClientError.ProtocolViolation(rawValue: "malformed-http1-response") == .malformedHTTP1Response)
    }

    @Test func everyHandshakeFailureHasASummaryAndAFix() {
        let url = URL(string: "https://alice:S3cret@host.test:8443/path?q=1")
        let failures: [TrustHTTPClientError.HandshakeFailure] = [
            .notTLS, .protocolVersion, .noSharedCipher, .clientCertificateRequired, .closedDuringHandshake, .other(reason: "X"), .other(reason: nil),
        ]
        for failure in failures {
            let explanation = failure.explanation(url: url)
            #expect(!explanation.summary.isEmpty && !explanation.fix.isEmpty, "\(failure)")
            #expect(!explanation.description.contains("S3cret") && !explanation.description.contains("alice"))
        }
        #expect(TrustHTTPClientError.HandshakeFailure.notTLS.explanation(url: url).fix.contains("http://host.test:8443/ instead"))
    }

    /// BoringSSL's reason codes, read once (`BoringSSLErrorText`), name the failure; a refusal alert after the
    /// server asked for a client certificate that was not sent is a required certificate.
    @Test func handshakeFailuresAreClassifiedByReasonCode() {
        func failure(_ code: String, requested: Bool = false) -> TrustHTTPClientError.HandshakeFailure {
            .init(reading: BoringSSLErrorText("error:1000008b:SSL routines:OPENSSL_internal:\(code)"), clientCertificateRequested: requested)
        }
        #expect(failure("WRONG_VERSION_NUMBER") == .notTLS)
        #expect(failure("TLSV1_ALERT_PROTOCOL_VERSION") == .protocolVersion)
        #expect(failure("NO_SHARED_CIPHER") == .noSharedCipher)
        #expect(failure("TLSV13_ALERT_CERTIFICATE_REQUIRED") == .clientCertificateRequired)
        #expect(failure("TLSV1_ALERT_UNKNOWN_CA", requested: true) == .clientCertificateRequired)
        #expect(failure("TLSV1_ALERT_UNKNOWN_CA") == .other(reason: "TLSV1_ALERT_UNKNOWN_CA"))
        #expect(TrustHTTPClientError.HandshakeFailure(ChannelError.eof) == .closedDuringHandshake)
        #expect(TrustHTTPClientError.HandshakeFailure(ChannelError.eof, clientCertificateRequested: true) == .clientCertificateRequired)
        // NIOSSL's own report of a peer that closed mid-handshake.
        let eof = NIOSSLError.handshakeFailed(.sslError([.eofDuringHandshake]))
        #expect(TrustHTTPClientError.HandshakeFailure(eof) == .closedDuringHandshake)
        #expect(TrustHTTPClientError.HandshakeFailure(eof, clientCertificateRequested: true) == .clientCertificateRequired)
        // Not an error of the TLS library: its text is not read.
        struct Lookalike: Error, CustomStringConvertible { var description: String { "routines:WRONG_VERSION_NUMBER" } }
        #expect(TrustHTTPClientError.HandshakeFailure(Lookalike()) == .other(reason: nil))
    }

    /// A TrustHTTPClient's handshake with a plain-HTTP port: classified, and its description says what to do.
    @Test func sessionClassifiesAPlainPort() async throws {
        let plain = try await LabServer.startPlain(name: "plain")
        let session = try labSession()
        let url = try #require(URL(string: "https://\(plain.host):\(plain.port)/"))
        let error = try #require(await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url)) })
        await session.shutdown()
        try await plain.shutdown()
        #expect(error.code == .secureConnectionFailed && error.handshakeFailure == .notTLS, "\(error)")
        #expect(error.explanation == TrustHTTPClientError.HandshakeFailure.notTLS.explanation(url: url))
        #expect(error.message.contains(error.explanation.summary), "\(error.message)")
        #expect(error.description.contains("Fix: try http://\(plain.host):\(plain.port)/ instead"), "\(error)")
    }

    /// A refused server's fix is its first trust reason's.
    @Test func aRefusedServersFixIsItsFirstReasons() async throws {
        let expired = try await LabServer.start("expired", pki: Lab.pki)
        let session = try labSession()
        let error = try #require(await sessionError { try await session.data(for: TrustHTTPClientRequest(url: URL(string: expired.baseURL)!)) })
        await session.shutdown()
        try await expired.shutdown()
        let reason = try #require(error.trustDecision?.reasons.first)
        #expect(error.code == .serverCertificateHasBadDate)
        #expect(error.explanation.fix == reason.explanation.fix && error.explanation.summary == error.code.explanation.summary)
    }

    /// NIO's typed connect errors, classified as a TrustHTTPClient's own connections are (`trust inspect` asks here).
    @Test func connectFailuresAreClassifiedFromNIOsTypes() throws {
        let url = try #require(URL(string: "https://host.test:8443/"))
        #expect(TrustHTTPClientError(connecting: ChannelError.connectTimeout(.seconds(1)), url: url).code == .timedOut)
        #expect(TrustHTTPClientError(connecting: ChannelError.ioOnClosedChannel, url: url).code == .cannotConnectToHost)
    }

    /// `dump(error)` and the debugger show the URL with its user-info hidden, as the description does: the default
    /// mirror printed `url` whole, password included, into any log that dumps errors.
    @Test func aDumpedErrorShowsNoPassword() throws {
        let url = try #require(URL(string: "https://alice:DumpSecret-1@api.example.test/v1"))
        let error = TrustHTTPClientError(.timedOut, "the request timed out", url: url)
        var dumped = ""
        dump(error, to: &dumped)
        #expect(!dumped.contains("DumpSecret-1") && !dumped.contains("alice"), "\(dumped)")
        #expect(dumped.contains("https://***@api.example.test/v1") && dumped.contains("timedOut"), "\(dumped)")
        #expect(!String(reflecting: error).contains("DumpSecret-1") && !"\(error)".contains("DumpSecret-1"))
    }
}
