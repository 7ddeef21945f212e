/// Why a local input file (a CA bundle, a trust configuration, a CRL, a client identity) was not read. Names the path,
/// never the contents.
public struct LocalFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public struct Kind: Sendable, Hashable {
        /// The kind with its data, for this package's code: kinds come in minor versions without breaking a client,
        /// who shows the error (its description says what is wrong).
        package let detail: Detail

        package init(_ detail: Detail) { self.detail = detail }

        package static func cannotOpen(_ value0: String) -> Self { Self(.cannotOpen(value0)) }
        package static func notARegularFile(_ value0: String) -> Self { Self(.notARegularFile(value0)) }
        package static func timedOut(seconds: Int) -> Self { Self(.timedOut(seconds: seconds)) }
        package static func tooLarge(limit: Int) -> Self { Self(.tooLarge(limit: limit)) }
        package static func writableByOthers(mode: Int) -> Self { Self(.writableByOthers(mode: mode)) }
        package static func ownedByAnotherUser(uid: Int) -> Self { Self(.ownedByAnotherUser(uid: uid)) }

        /// The cases, exhaustive inside this package.
        package enum Detail: Sendable, Hashable {
            /// open(2) or read(2) failed; the system's reason.
            case cannotOpen(String)
            /// Not a regular file (a device such as `/dev/zero`, a socket, a folder where a file was expected; a FIFO where
            /// none is read): reading one may block forever or never end.
            case notARegularFile(String)
            /// A FIFO or pipe that did not deliver its end within the number of seconds given (`LocalFile`'s deadline):
            /// no writer came, or one kept it open.
            case timedOut(seconds: Int)
            /// Larger than the limit for its kind, in bytes.
            case tooLarge(limit: Int)
            /// Group- or world-writable (the mode, octal in the description): another user could change what it says.
            case writableByOthers(mode: Int)
            /// Owned by another user (not root, not the user running the program): that user can change what it says.
            case ownedByAnotherUser(uid: Int)
        }
    }

    /// The file.
    public let path: String
    /// What was wrong.
    public let kind: Kind

    /// An error about `path`.
    package init(path: String, kind: Kind) {
        self.path = path
        self.kind = kind
    }

    /// What was wrong, without the path (callers put the path where their message wants it).
    public var reason: String {
        switch kind.detail {
        case .cannotOpen(let why): return why
        case .notARegularFile(let what): return "\(what), not a regular file"
        case .tooLarge(let limit): return "larger than \(limit) bytes"
        case .timedOut(let seconds): return "a FIFO or pipe that gave no end of data within \(seconds) seconds"
        case .writableByOthers(let mode):
            return "writable by other users (mode \(String(mode, radix: 8))): refused, as ssh refuses such a configuration; chmod go-w"
        case .ownedByAnotherUser(let uid): return "owned by another user (uid \(uid)): refused, as ssh refuses such a configuration"
        }
    }

    /// The path and the reason.
    public var description: String { "\(path): \(reason)" }
}
