import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@testable import TrustHTTP

/// A response field value with terminal controls (ESC, BEL, BS; RFC 9110 §5.5 forbids them) is refused
/// over HTTP/2 as over HTTP/1.1: `badServerResponse`, the malformed-response rule of its version, and
/// nothing of the value reaches the caller raw.
@Suite("Control characters in response field values: refused over HTTP/2 as over HTTP/1.1", .serialized, .timeLimit(.minutes(5)), .paced)
struct HTTP2FieldValueTests {
    static let good = Lab.pki.servers["good"]!

    @Test(arguments: [
        (LabHostileServer.Behaviour.controlCharactersInHTTP2Header, TrustHTTPClientError.ProtocolViolation.malformedHTTP2Response),
        (.controlCharactersInHeader, .malformedHTTP1Response),
    ])
    func refused(_ behaviour: LabHostileServer.Behaviour, _ rule: TrustHTTPClientError.ProtocolViolation) async throws {
        let server = try await LabHostileServer.start(behaviour, host: "good.lab.test", chain: Self.good.chain, privateKey: Self.good.privateKey)
        let session = try labSession()
        try await withTeardown({
            await session.shutdown()
            await server.shutdown()
        }) {
            let error = try #require(await sessionError { try await session.data(for: TrustHTTPClientRequest(url: server.url(path: "/"))) })
            #expect(error.code == .badServerResponse, "\(error)")
            #expect(error.protocolViolation == rule, "\(error)")
            HostileNames.expectNoRawControl(error.description, "SessionError.description", lines: 1)
        }
    }

    /// The guard passes what RFC 9110 §5.5 allows: HTAB and SP inside a value, visible ASCII, obs-text.
    @Test func allowedBytesPass() {
        for byte in UInt8(0)...UInt8(255) {
            let allowed = byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
            #expect(HTTP2ExchangeFraming.isForbidden(byte) == !allowed, "byte \(byte)")
        }
    }
}
