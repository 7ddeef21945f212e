// A Vapor 4 application whose outbound calls go through a swift-trust `TrustHTTPClient`: `req.client` connects with the
// client's pins, decides server trust inside the TLS handshake, and fails with a `TrustHTTPClientError` that carries
// the `TrustDecision` — so a route can say why an upstream was refused, in data, not in a string.
//
// `app.clients.use(.trustHTTP(configuration))` (module TrustVapor, the package's `Vapor` trait) is the whole
// integration; the rest is an ordinary route.
import Foundation
import Trust
import TrustHTTP
import TrustVapor
import Vapor

public enum VaporPinnedClient {
    /// The client configuration for an upstream whose issuing CA's public key is pinned: the chain must
    /// validate to `anchors` *and* hold a key among `pins` (a backup pin among them, RFC 7469 §4.3).
    public static func clientConfiguration(pins: Set<SPKIPin>, anchors: TrustAnchors = .system) throws -> TrustHTTPClientConfiguration {
        var configuration = TrustHTTPClientConfiguration()
        configuration.serverTrust = try PublicKeysTrustEvaluator(pins: pins, anchors: anchors)
        return configuration
    }

    /// Calls `upstream` once outside any request (a boot check, a Vapor command), through `client` on one of `app`'s
    /// event loops, logging to `app.logger`: the status, or the refusal's reason codes.
    public static func checkUpstream(_ upstream: URL, client: TrustHTTPClient, app: Application) async -> String {
        let vaporClient = TrustHTTPVaporClient(client: client, eventLoop: app.eventLoopGroup.next(), logger: app.logger)
        do {
            let response = try await vaporClient.response(to: ClientRequest(method: .GET, url: URI(string: upstream.absoluteString)))
            vaporClient.logger?.info("upstream reachable", metadata: ["status": "\(response.status.code)"])
            return "\(response.status.code)"
        } catch {
            let codes = error.trustDecision?.reasons.map(\.code) ?? ["\(error.code)"]
            vaporClient.logger?.warning("upstream refused", metadata: ["trust.reasons": "\(codes.joined(separator: ","))"])
            return codes.joined(separator: ",")
        }
    }

    /// Configures `app`: `app.client` and `req.client` through a client made with `configuration`, and
    /// `GET /upstream`, which calls `upstream` through `req.client` and answers with its status and body —
    /// or, when the upstream's certificate is refused, `502 Bad Gateway` with the refusal's reason codes
    /// (`pin-mismatch`, `expired`…) and nothing of the upstream's own text.
    public static func configure(_ app: Application, client configuration: TrustHTTPClientConfiguration, upstream: URL) {
        app.clients.use(.trustHTTP(configuration))
        let uri = URI(string: upstream.absoluteString)
        // `GET /upstream/stream`: the upstream's body passed on as it arrives. Vapor's `Client` reads bodies whole;
        // the TrustHTTPClient behind `req.client` streams them.
        app.get("upstream", "stream") { request async throws -> Response in
            guard let trusted = request.client as? TrustHTTPVaporClient else { throw Abort(.internalServerError) }
            let upstreamResponse = try await trusted.client.bytes(for: TrustHTTPClientRequest(url: upstream))
            let body = Response.Body(asyncStream: { writer in
                do {
                    for try await piece in upstreamResponse.body { try await writer.writeBuffer(piece) }
                    try await writer.write(.end)
                } catch {
                    try await writer.write(.error(error))
                }
            })
            return Response(status: .ok, body: body)
        }
        app.get("upstream") { request async throws -> Response in
            do {
                let answer = try await request.client.get(uri)
                let text = answer.body.map { String(buffer: $0) } ?? ""
                return Response(status: .ok, body: .init(string: "upstream \(answer.status.code): \(text)"))
            } catch let error as TrustHTTPClientError {
                guard let decision = error.trustDecision, !decision.isTrusted else { throw error }
                let codes = decision.reasons.map(\.code)
                request.logger.warning("upstream refused", metadata: ["trust.reasons": "\(codes.joined(separator: ","))"])
                return Response(status: .badGateway, body: .init(string: "upstream refused: \(codes.joined(separator: ", "))\n"))
            }
        }
    }
}
