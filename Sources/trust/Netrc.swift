import Foundation
import Trust

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A netrc file, as curl 7.88 reads it for `--netrc`, `--netrc-optional` and `--netrc-file` (the
/// ftp(1) format): `machine HOST login USER password SECRET` entries, a `default` entry for any other
/// host, `macdef NAME` macros (skipped up to the next empty line), and `#` starting a comment that
/// runs to the end of its line. Tokens are separated by spaces, tabs and line ends; a token may be
/// double-quoted, with `\"`, `\\`, `\n`, `\r` and `\t` escapes inside (curl 7.84 and later).
/// Keywords and host names compare case-insensitively, logins exactly.
struct Netrc {
    /// One `machine` (or `default`) entry.
    struct Entry: Equatable {
        /// The host; nil for `default`.
        var machine: String?
        var login: String?
        var password: String?
    }

    /// The entries in file order.
    var entries: [Entry] = []

    /// The largest file read (curl 8's limit, `MAX_NETRC_FILE`: 128 KiB); a larger one is a parse error.
    static let maximumFileBytes = 128 * 1024

    /// A file that cannot be parsed (an unterminated quote, too large); never quotes the file's content.
    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    init(entries: [Entry]) { self.entries = entries }

    /// Parses netrc text.
    init(parsing text: String) throws(ParseError) {
        try self.init(parsing: Array(text.utf8))
    }

    /// Parses the bytes of a netrc file. Lines are split at LF bytes (a CR before it dropped), never at Swift
    /// `Character`s: "\r\n" is a single `Character`, and splitting at "\n" left a CRLF file one long line in which
    /// one machine's login and password became another's.
    init(parsing bytes: [UInt8]) throws(ParseError) {
        var current: Entry?
        var pendingKeyword: String?
        var inMacro = false
        for rawLine in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            let line = rawLine.last == 0x0D ? rawLine.dropLast() : rawLine
            if inMacro {
                // A macro ends at the first empty line.
                if line.isEmpty { inMacro = false }
                continue
            }
            tokens: for token in try Self.tokens(of: line) {
                if let keyword = pendingKeyword {
                    pendingKeyword = nil
                    switch keyword {
                    case "machine": current = Entry(machine: token)
                    case "login": current?.login = token
                    case "password": current?.password = token
                    default: break  // `account`'s value is not used.
                    }
                    continue
                }
                switch token.lowercased() {
                case "machine", "default", "macdef":
                    if let entry = current { entries.append(entry) }
                    current = nil
                    switch token.lowercased() {
                    case "default": current = Entry(machine: nil)
                    case "machine": pendingKeyword = "machine"
                    default:
                        // `macdef NAME`: the rest of the line and the following ones, up to an empty line, are the macro.
                        inMacro = true
                        break tokens
                    }
                case "login", "password", "account":
                    pendingKeyword = token.lowercased()
                default:
                    break  // Unknown tokens are skipped, as curl does.
                }
            }
        }
        if let entry = current { entries.append(entry) }
    }

    /// Whether `byte` separates tokens: curl's `ISSPACE` (space, and tab, LF, VT, FF, CR), so that a CR left by any
    /// line ending never ends up in a token.
    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    /// The tokens of one line: blank-separated, double-quoted with escapes, up to a `#` that starts a token.
    static func tokens(of line: ArraySlice<UInt8>) throws(ParseError) -> [String] {
        var tokens: [String] = []
        var bytes = line
        while true {
            while let first = bytes.first, isBlank(first) { bytes = bytes.dropFirst() }
            guard let first = bytes.first, first != UInt8(ascii: "#") else { return tokens }
            var token: [UInt8] = []
            if first == UInt8(ascii: "\"") {
                bytes = bytes.dropFirst()
                var closed = false
                while let byte = bytes.first {
                    bytes = bytes.dropFirst()
                    if byte == UInt8(ascii: "\"") {
                        closed = true
                        break
                    }
                    if byte == UInt8(ascii: "\\"), let escaped = bytes.first {
                        bytes = bytes.dropFirst()
                        switch escaped {
                        case UInt8(ascii: "n"): token.append(0x0A)
                        case UInt8(ascii: "r"): token.append(0x0D)
                        case UInt8(ascii: "t"): token.append(0x09)
                        default: token.append(escaped)
                        }
                    } else {
                        token.append(byte)
                    }
                }
                guard closed else { throw ParseError(description: "a quoted token is not closed") }
            } else {
                while let byte = bytes.first, !isBlank(byte) {
                    token.append(byte)
                    bytes = bytes.dropFirst()
                }
            }
            tokens.append(String(decoding: token, as: UTF8.self))
        }
    }

    /// The login and password for `host`: the first `machine` entry naming it (and, when `login` is given,
    /// that login), else the `default` entry; nil when none applies or the entry has no login.
    func credential(forHost host: String, login: String? = nil) -> (login: String, password: String)? {
        let host = host.lowercased()
        let candidates = entries.filter { $0.machine?.lowercased() == host } + entries.filter { $0.machine == nil }
        for entry in candidates {
            guard let entryLogin = entry.login else { continue }
            if let login, login != entryLogin { continue }
            return (entryLogin, entry.password ?? "")
        }
        return nil
    }

    /// The file `--netrc` reads: `.netrc` in `$HOME`, else in the user's home directory from the password
    /// database (curl 7.88 reads no `NETRC` variable).
    static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let home = environment["HOME"], !home.isEmpty { return home + "/.netrc" }
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory) + "/.netrc"
    }

    /// Reads and parses `path`; nil when there is no such file (curl then goes on without it).
    static func load(_ path: String) throws(ParseError) -> Netrc? {
        // Bounded as every local input (LocalFile): a FIFO or pipe (`--netrc-file <(pass show netrc)`) within its
        // deadline, a device refused.
        let bytes: [UInt8]
        do {
            bytes = try LocalFile.read(path, limit: maximumFileBytes)
        } catch {
            if case .cannotOpen = error.kind { return nil }
            throw ParseError(description: error.reason)
        }
        return try Netrc(parsing: bytes)
    }

    /// Why `path` is exposed to other local users, if it is: another owner, or group/other permission
    /// bits (what ftp(1) refuses and ssh(1) refuses for its own key files: mode 0600 is expected).
    static func exposure(of path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        if status.st_uid != getuid() { return "is owned by another user (uid \(status.st_uid))" }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 != 0 else { return nil }
        let readable = mode & 0o044 != 0
        let writable = mode & 0o022 != 0
        let what = readable && writable ? "readable and writable" : readable ? "readable" : "writable"
        return "is \(what) by other users (mode \(String(mode, radix: 8))): chmod 600 it"
    }
}
