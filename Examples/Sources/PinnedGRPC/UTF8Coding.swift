import GRPCCore

/// A message as UTF-8 text: gRPC without generated code (GRPCCore takes any serializer), enough for an example.
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
public struct UTF8Serializer: MessageSerializer {
    public init() {}

    public func serialize<Bytes: GRPCContiguousBytes>(_ message: String) throws -> Bytes {
        Bytes(Array(message.utf8))
    }
}

/// The text of a UTF-8 message; other bytes are refused with `invalidArgument`.
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
public struct UTF8Deserializer: MessageDeserializer {
    public init() {}

    public func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> String {
        let bytes = serializedMessageBytes.withUnsafeBytes { Array($0) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw RPCError(code: .invalidArgument, message: "the message is not UTF-8") }
        return text
    }
}
