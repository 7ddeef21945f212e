import Foundation
import HTTPTypes
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// Requests and responses seen as swift-http-types' `HTTPFields`: the same fields, in order, with
/// case-insensitive lookup, over HTTP/1.1 and HTTP/2.
@Suite("HTTPFields views of requests and responses", .paced)
struct HTTPFieldsTests {
    @Test func requestFieldsAreTheHeaders() throws {
        var request = TrustHTTPClientRequest(
            url: URL(string: "https://good.lab.test/")!, headers: [("Accept", "text/plain"), ("X-Trace", "a"), ("x-trace", "b")])
        #expect(request.fields[.accept] == "text/plain")
        #expect(request.fields[values: try #require(HTTPField.Name("X-TRACE"))] == ["a", "b"])
        // Set, add and remove through the view: the headers follow, in order.
        request.fields[.userAgent] = "swift-trust-tests"
        request.fields.append(HTTPField(name: .acceptLanguage, value: "en"))
        request.fields[.accept] = nil
        #expect(request.headers.map(\.name) == ["X-Trace", "x-trace", "User-Agent", "Accept-Language"])
        #expect(request.value(forHeader: "user-agent") == "swift-trust-tests")
        // A name that is not an HTTP token has no HTTPField.Name: the view leaves it out.
        let odd = TrustHTTPClientRequest(url: URL(string: "https://good.lab.test/")!, headers: [("bad name", "x"), ("Accept", "*/*")])
        #expect(odd.fields.count == 1)
        let typed = TrustHTTPClientRequest(
            url: URL(string: "https://good.lab.test/")!, method: .post, fields: [.contentType: "text/plain"], body: Data("hi".utf8))
        #expect(typed.method == "POST" && typed.headers.count == 1 && typed.headers[0].name == "Content-Type")
    }

    @Test(arguments: [HTTPVersionPreference.http1Only, .automatic])
    func fieldsOnTheWire(_ version: HTTPVersionPreference) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession(configure: { $0.httpVersion = version })
        var fields = HTTPFields()
        fields[.accept] = "text/plain"
        fields.append(HTTPField(name: try #require(HTTPField.Name("X-Lab-Test")), value: "one"))
        let response = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/headers"), method: .get, fields: fields))
        #expect(response.status == .ok)
        #expect(response.text.contains("accept: text/plain") && response.text.contains("x-lab-test: one"), "\(response.text)")
        #expect(response.fields[.contentType]?.hasPrefix("text/plain") == true, "\(response.headers)")
        let streamed = try await session.bytes(
            for: TrustHTTPClientRequest(url: url(server, "/echo"), method: .post, fields: [.contentType: "text/plain"], body: Data("x".utf8)))
        #expect(streamed.status == .ok && streamed.fields[.contentType] != nil)
        _ = try await streamed.collect()
        await session.shutdown()
        try await server.shutdown()
    }
}
