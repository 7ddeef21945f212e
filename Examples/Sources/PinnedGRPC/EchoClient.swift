import GRPCCore

/// The client side of ``EchoService``, over any transport (TrustGRPC's pinned one in the example).
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
public struct EchoClient<Transport: ClientTransport>: Sendable {
    public let client: GRPCClient<Transport>

    public init(_ client: GRPCClient<Transport>) {
        self.client = client
    }

    /// `Get`: the server's answer to `text`.
    public func get(_ text: String, options: CallOptions = .defaults) async throws -> String {
        try await client.unary(
            request: ClientRequest(message: text), descriptor: EchoService.get, serializer: UTF8Serializer(), deserializer: UTF8Deserializer(),
            options: options
        ) { response in try response.message }
    }

    /// `Expand`: the server's messages for the words of `text`, in order.
    public func expand(_ text: String, options: CallOptions = .defaults) async throws -> [String] {
        try await client.serverStreaming(
            request: ClientRequest(message: text), descriptor: EchoService.expand, serializer: UTF8Serializer(), deserializer: UTF8Deserializer(),
            options: options
        ) { response in
            var messages: [String] = []
            for try await message in response.messages { messages.append(message) }
            return messages
        }
    }
}
