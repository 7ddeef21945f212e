// A compile test: a Hummingbird route file that imports TrustHTTP writes Hummingbird's own names — `Request`,
// `Response`, `RequestContext`, `Router`, `RequestBody`, `ResponseBody`, `HTTPError` — unqualified, beside the
// client's (`TrustHTTPClient`, `TrustHTTPClientRequest`, `TrustHTTPClientError`). When one of them became ambiguous,
// this target would stop compiling.
import Foundation
import Hummingbird
import TrustHTTP

public enum HummingbirdRoutes {
    /// `GET /proxy` answers with the status and body of `upstream` fetched through `client`, or `502` with the
    /// refusal's reason codes; `POST /echo` answers with its body.
    public static func register<Context: RequestContext>(on router: Router<Context>, client: TrustHTTPClient, upstream: URL) {
        router.get("proxy") { (request: Request, context: Context) async throws -> Response in
            do {
                let answer = try await client.data(for: TrustHTTPClientRequest(url: upstream))
                let body = ResponseBody(byteBuffer: answer.body)
                return Response(status: HTTPResponse.Status(code: answer.statusCode), body: body)
            } catch let error as TrustHTTPClientError {
                let codes = error.trustDecision?.reasons.map(\.code) ?? [error.code.description]
                return Response(status: .badGateway, body: ResponseBody(byteBuffer: ByteBuffer(string: codes.joined(separator: ", "))))
            }
        }
        router.post("echo") { (request: Request, context: Context) async throws -> Response in
            let body: RequestBody = request.body
            let bytes = try await body.collect(upTo: 1 << 20)
            guard bytes.readableBytes > 0 else { throw HTTPError(.badRequest) }
            return Response(status: .ok, body: ResponseBody(byteBuffer: bytes))
        }
    }
}
