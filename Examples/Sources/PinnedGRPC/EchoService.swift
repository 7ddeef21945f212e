import GRPCCore
import TrustGRPC
import TrustNIO

/// The example's service: `Get` (unary) answers with the text it was sent and who sent it, `Expand` (server
/// streaming) sends each word back as a message of its own. Both name the client its TLS handshake verified
/// (`ServerContext.verifiedClient`, from TrustGRPC), or "anonymous".
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
public struct EchoService: RegistrableRPCService {
    /// `echo.Echo/Get`: one message in, one out.
    public static let get = MethodDescriptor(fullyQualifiedService: "echo.Echo", method: "Get")
    /// `echo.Echo/Expand`: one message in, a message per word out.
    public static let expand = MethodDescriptor(fullyQualifiedService: "echo.Echo", method: "Expand")

    public init() {}

    public func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerHandler(forMethod: Self.get, deserializer: UTF8Deserializer(), serializer: UTF8Serializer()) { request, context in
            let text = try await Self.single(request)
            let client = Self.clientName(context)
            return StreamingServerResponse(single: ServerResponse(message: "\(client): \(text)"))
        }
        router.registerHandler(forMethod: Self.expand, deserializer: UTF8Deserializer(), serializer: UTF8Serializer()) { request, context in
            let text = try await Self.single(request)
            let client = Self.clientName(context)
            return StreamingServerResponse { writer in
                for word in text.split(separator: " ") { try await writer.write("\(client): \(word)") }
                return [:]
            }
        }
    }

    /// The subject of the verified client certificate, else "anonymous".
    static func clientName(_ context: ServerContext) -> String {
        context.verifiedClient?.subject ?? "anonymous"
    }

    /// The one message of a request that must have exactly one.
    static func single(_ request: StreamingServerRequest<String>) async throws -> String {
        var messages: [String] = []
        for try await message in request.messages {
            messages.append(message)
            guard messages.count == 1 else { throw RPCError(code: .invalidArgument, message: "one message expected") }
        }
        guard let first = messages.first else { throw RPCError(code: .invalidArgument, message: "no message") }
        return first
    }
}
