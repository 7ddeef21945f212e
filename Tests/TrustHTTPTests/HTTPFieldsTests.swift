import Foundation
import HTTPTypes
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// Requests and responses carry swift-http-types' `HTTPFields`: the fields in order, with case-insensitive
/// lookup, sent and received the same over HTTP/1.1 and HTTP/2.
@Suite("HTTPFields in requests and responses", .paced)
struct HTTPFieldsTests {
    @Test func requestFieldsKeepOrderAndCase() throws {
        let trace = try #require(HTTPField.Name("X-Trace"))
        var request = TrustHTTPClientRequest(url: URL(string: "https://good.lab.test/")!, headers: [.accept: "text/plain"])
        request.headers.append(HTTPField(name: trace, value: "a"))
        request.headers.append(HTTPField(name: try #require(HTTPField.Name("x-trace")), value: "b"))
        #expect(request.headers[.accept] == "text/plain")
        #expect(request.headers[values: try #require(HTTPField.Name("X-TRACE"))] == ["a", "b"])
        request.headers[.userAgent] = "swift-trust-tests"
        request.headers.append(HTTPField(name: .acceptLanguage, value: "en"))
        request.headers[.accept] = nil
        #expect(request.headers.map(\.name.rawName) == ["X-Trace", "x-trace", "User-Agent", "Accept-Language"])
        // A name that is not an HTTP token has no HTTPField.Name: it cannot be put in a request.
        #expect(HTTPField.Name("bad name") == nil)
        let typed = TrustHTTPClientRequest(
            url: URL(string: "https://good.lab.test/")!, method: "POST", headers: [.contentType: "text/plain"], body: .text("hi"))
        #expect(typed.method == "POST" && typed.headers.count == 1 && typed.headers.first?.name.rawName == "Content-Type")
        #expect(typed.body?.length == 2 && typed.body?.isStreamed == false)
    }

    @Test(arguments: [HTTPVersionPreference.http1Only, .automatic])
    func fieldsOnTheWire(_ version: HTTPVersionPreference) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession(configure: { $0.httpVersion = version })
        var fields = HTTPFields()
        fields[.accept] = "text/plain"
        fields.append(HTTPField(name: try #require(HTTPField.Name("X-Lab-Test")), value: "one"))
        let response = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/headers"), headers: fields))
        #expect(response.status == .ok)
        #expect(response.text.contains("accept: text/plain") && response.text.contains("x-lab-test: one"), "\(response.text)")
        #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true, "\(response.headers)")
        #expect(response.httpVersion == (version == .http1Only ? .http1_1 : .http2))
        #expect(response.tlsVersion == .tlsv13 || response.tlsVersion == .tlsv12)
        let streamed = try await session.bytes(
            for: TrustHTTPClientRequest(url: url(server, "/echo"), method: "POST", headers: [.contentType: "text/plain"], body: .text("x")))
        #expect(streamed.status == .ok && streamed.headers[.contentType] != nil)
        #expect(try await streamed.collect().text == "POST\nx")
        await session.shutdown()
        try await server.shutdown()
    }
}
