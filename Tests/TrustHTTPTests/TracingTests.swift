import Foundation
import InMemoryTracing
import Testing
import Tracing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// A span per request (swift-distributed-tracing): its attributes, its status, its parent, the trace
/// header the server receives — and never a secret. Each test has its own in-memory tracer (nothing
/// global is bootstrapped).
@Suite("Tracing: a span per request with TLS and trust attributes", .timeLimit(.minutes(5)), .paced)
struct TracingTests {
    static let password = "Trac1ng-S3cret!"

    /// Every attribute as text, for the secret check.
    static func text(_ span: FinishedInMemorySpan) -> String {
        var text = span.operationName
        // swift-format-ignore: ReplaceForEachWithForLoop
        span.attributes.forEach { key, value in text += " \(key)=\(value)" }  // SpanAttributes is not a Sequence
        for error in span.errors { text += " \(error.error)" }
        return text
    }

    @Test func trustedRequestHasItsConnectionAndDecision() async throws {
        let tracer = InMemoryTracer()
        try await withLabServers(["good"]) { servers in
            let session = try labSession { $0.tracer = tracer }
            let response = try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!, "/headers")))
            #expect(response.statusCode == 200)
            // The trace context went out with the request.
            let echoed = response.text
            #expect(echoed.contains(InMemoryTracer.traceIDKey.lowercased() + ": "))
            await session.shutdown()
        }
        let spans = tracer.finishedSpans
        #expect(spans.count == 1)
        let span = try #require(spans.first)
        #expect(span.operationName == "GET" && span.kind == .client)
        #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(span.attributes["url.scheme"]?.toSpanAttribute() == "https")
        #expect(span.attributes["server.address"]?.toSpanAttribute() == "good.lab.test")
        #expect(span.attributes["server.port"] != nil)
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(span.attributes["network.protocol.version"]?.toSpanAttribute() == "2")
        #expect(span.attributes["tls.protocol.version"]?.toSpanAttribute() == "1.3")
        #expect(span.attributes["trust.decision"]?.toSpanAttribute() == "trusted")
        #expect(span.attributes["trust.policy"] != nil)
        #expect(span.status == nil && span.errors.isEmpty)
    }

    @Test func refusedTrustIsAnErrorWithItsReasons() async throws {
        let tracer = InMemoryTracer()
        try await withLabServers(["expired"]) { servers in
            let session = try labSession { $0.tracer = tracer }
            _ = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(servers["expired"]!))) }
            await session.shutdown()
        }
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.status?.code == .error)
        #expect(span.attributes["error.type"]?.toSpanAttribute() == "serverCertificateHasBadDate")
        #expect(span.attributes["trust.decision"]?.toSpanAttribute() == "refused")
        #expect(span.attributes["trust.reasons"]?.toSpanAttribute() == .stringArray(["expired"]))
        #expect(span.errors.count == 1)
        #expect(span.attributes["http.response.status_code"] == nil)
    }

    @Test func clientErrorStatusAndNoSecret() async throws {
        let tracer = InMemoryTracer()
        try await withLabServers(["good"]) { servers in
            let session = try labSession { $0.tracer = tracer }
            var components = URLComponents(url: url(servers["good"]!, "/basic"), resolvingAgainstBaseURL: false)!
            components.user = "alice"
            components.password = Self.password
            components.query = "token=\(Self.password)"
            // Wrong password: the server answers 401 in the end.
            let response = try await session.data(for: TrustHTTPClientRequest(url: components.url!))
            #expect(response.statusCode == 401)
            await session.shutdown()
        }
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 401)
        #expect(span.status?.code == .error)
        #expect(!Self.text(span).contains(Self.password))
        #expect(!Self.text(span).contains("alice"))
    }

    @Test func spanIsAChildOfTheCallersSpan() async throws {
        let tracer = InMemoryTracer()
        try await withLabServers(["good"]) { servers in
            let session = try labSession { $0.tracer = tracer }
            try await tracer.withSpan("parent") { parent in
                _ = try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!)))
            }
            await session.shutdown()
        }
        let spans = tracer.finishedSpans
        let parent = try #require(spans.first { $0.operationName == "parent" })
        let child = try #require(spans.first { $0.operationName == "GET" })
        #expect(child.parentSpanID == parent.spanID)
        #expect(child.traceID == parent.traceID)
    }

    /// Without a tracer configured or bootstrapped (the no-op tracer), requests carry no trace header.
    @Test func noTracerNoHeader() async throws {
        try await withLabServers(["good"]) { servers in
            let session = try labSession()
            let response = try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!, "/headers")))
            let echoed = response.text
            #expect(!echoed.contains("traceparent") && !echoed.contains(InMemoryTracer.traceIDKey.lowercased()))
            await session.shutdown()
        }
    }
}
