import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where `--pass`/`--cert-password` takes the passphrase from, in OpenSSL's `-passin` forms
/// (openssl-passphrase-options(1)), so that the passphrase itself need never be in the argument list:
///
/// - `env:NAME`: the environment variable NAME;
/// - `file:PATH`: the first line of the file PATH (up to its first LF, as OpenSSL reads it; at most
///   ``maximumLineBytes`` bytes), read as `LocalFile` reads every input: a FIFO or pipe within its deadline, a
///   device refused;
/// - `pass:LITERAL`: LITERAL itself;
/// - anything else: the value itself, as curl's `--pass` takes it (a passphrase that starts with
///   `env:`, `file:` or `pass:` is written `pass:env:…`).
enum PasswordSource: Equatable {
    case literal(String)
    case pass(String)
    case environment(String)
    case file(String)

    /// The longest first line `file:PATH` may have: OpenSSL's own buffer (`APP_PASS_LEN`, 1024).
    static let maximumLineBytes = 1024

    init(_ argument: String) {
        if let rest = Self.remainder(of: argument, after: "pass:") {
            self = .pass(rest)
        } else if let rest = Self.remainder(of: argument, after: "env:") {
            self = .environment(rest)
        } else if let rest = Self.remainder(of: argument, after: "file:") {
            self = .file(rest)
        } else {
            self = .literal(argument)
        }
    }

    /// `argument` after `prefix`, compared by byte.
    private static func remainder(of argument: String, after prefix: String) -> String? {
        guard argument.utf8.starts(with: prefix.utf8) else { return nil }
        return String(decoding: argument.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }

    /// A passphrase that could not be read; its description names the variable or file, never a secret.
    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    /// The passphrase.
    func read(environment: [String: String] = ProcessInfo.processInfo.environment) throws(Unreadable) -> String {
        switch self {
        case .literal(let value), .pass(let value):
            return value
        case .environment(let name):
            guard let value = environment[name] else { throw Unreadable(description: "--pass env:\(name): no such environment variable") }
            return value
        case .file(let path):
            // Bounded as every local input (LocalFile): a FIFO or pipe (`file:<(pass show NAME)`) within its deadline,
            // never a device, and no more than the first line's bytes.
            do {
                return String(decoding: try LocalFile.readFirstLine(path, limit: Self.maximumLineBytes), as: UTF8.self)
            } catch {
                if case .tooLarge = error.kind.detail {
                    throw Unreadable(description: "--pass file:\(path): the first line is longer than \(Self.maximumLineBytes) bytes")
                }
                throw Unreadable(description: "--pass file:\(path): cannot read the file: \(error.reason)")
            }
        }
    }
}
