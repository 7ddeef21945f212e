import Trust
import TrustHTTP

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one writer behind every `--json` of the `trust` command, so that all commands print the same dialect:
/// UTF-8, pretty-printed, keys sorted (a stable order scripts and diffs can rely on),
/// "/" not escaped (RFC 8259 §7 allows it unescaped; `sha256/…` pins and URLs stay readable), dates as
/// RFC 3339 strings in UTC. The schema of each command is documented in `trust --help` ("JSON output"; the man page docs/man/trust.1).
enum JSONOutput {
    /// `value` as one JSON document followed by a newline.
    static func document<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.string(date))
        }
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    }

    /// Writes `value` to standard output as one JSON document; a failed write (a full disk, a closed pipe) throws,
    /// so that a command never ends well with half a document written. Never inlined: inlined into the commands'
    /// async `run()`, the typed-throws write made Swift 6.3.1's optimiser crash (LLVM's coroutine splitting,
    /// `emitSetAndGetSwiftErrorValueAround`) in the release build.
    @inline(never)
    static func print<Value: Encodable>(_ value: Value) throws {
        let text = try document(value)
        try FileDescriptorOutput.write(STDOUT_FILENO, text)
    }
}
