// A compile test: a Vapor route file that imports TrustHTTP and TrustVapor writes Vapor's own names — `Request`,
// `Response`, `Session`, `Application`, `HTTPClient`, `HTTPClientError`, `BasicAuthorization`, `Client` — unqualified,
// beside the client's (`TrustHTTPClient`, `TrustHTTPClientRequest`, `TrustHTTPClientError`) and the engine's. When
// one of them became ambiguous, this target would stop compiling.
import Foundation
import TrustHTTP
import TrustVapor
import Vapor

public enum VaporRoutes {
    /// `GET /visits` counts a Vapor session's visits (when the app uses `SessionsMiddleware`); `GET /proxy` answers
    /// with the status of `upstream` fetched through `client`, or with the refusal's reason codes.
    public static func register(_ app: Application, client: TrustHTTPClient, upstream: URL) {
        app.get("visits") { (request: Request) async throws -> Response in
            let count = request.hasSession ? visits(in: request.session) : 0
            return Response(status: .ok, body: .init(string: "\(count)"))
        }
        app.get("proxy") { (request: Request) async throws -> Response in
            if let authorization: BasicAuthorization = request.headers.basicAuthorization, authorization.username.isEmpty {
                throw Abort(.unauthorized)
            }
            do {
                let answer = try await client.data(for: TrustHTTPClientRequest(url: upstream))
                return Response(status: HTTPResponseStatus(statusCode: answer.statusCode), body: .init(string: answer.text))
            } catch let error as TrustHTTPClientError {
                let codes = error.trustDecision?.reasons.map(\.code) ?? [error.code.description]
                return Response(status: .badGateway, body: .init(string: codes.joined(separator: ", ")))
            }
        }
    }

    /// Vapor's `Session`, read as a route would.
    static func visits(in session: Session) -> Int {
        let count = (session.data["visits"].flatMap(Int.init) ?? 0) + 1
        session.data["visits"] = String(count)
        return count
    }

    /// Vapor's own AsyncHTTPClient (`HTTPClient`, re-exported by Vapor) and its error, next to TrustHTTP's client.
    static func isClientError(_ error: any Error, from client: HTTPClient) -> Bool {
        error is HTTPClientError || error is TrustHTTPClientError
    }

    /// Vapor's `Client` protocol, which TrustVapor's client is.
    static func vaporClient(_ request: Request) -> any Client { request.client }
}
