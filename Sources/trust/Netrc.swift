import Trust

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

/// A netrc file, as curl 7.88 reads it for `--netrc`, `--netrc-optional` and `--netrc-file` (the
/// ftp(1) format): `machine HOST login USER password SECRET` entries, a `default` entry for any other
/// host, `macdef NAME` macros (skipped up to the next empty line), and `#` starting a comment that
/// runs to the end of its line. Tokens are separated by spaces, tabs and line ends; a token may be
/// double-quoted, with `\"`, `\\`, `\n`, `\r` and `\t` escapes inside (curl 7.84 and later).
/// Keywords and host names compare case-insensitively, logins exactly.
///
/// ``credential(forHost:login:)`` walks the tokens as curl 7.88's `parsenetrc` (lib/netrc.c) does, with its
/// rules for entries that lack a part: an entry with a password and no login gives that password with an empty
/// user name, or with the URL's user name when the URL has one (curl's tests 684 and 685); an entry with a login
/// and no password gives the login; with a user name in the URL, only an entry with that login (or, in the first
/// entry for the host, one with no login) gives its password. Three rules are stricter than curl 7.88's, so that a
/// credential never reaches a user or host it is not for: `default` is used only when no `machine` entry names the
/// host (curl takes whichever comes first: its test 2039 expects the default entry's), and it ends the entry
/// before it (curl reads the login and password after `default` into a `machine` entry still missing one); with
/// a user name in the URL, a password written before the entry's login is taken only once that login is seen to
/// match (curl 7.88 took it at once; curl 8.11 decides at the entry's end too).
///
/// The file is walked once for `machine` entries and, when none names the host, once more for `default`: a token
/// that cannot be read is an error when a walk reaches it (so also one after a `default` entry that curl, stopping
/// there, never reads). Two quirks of curl 7.88's tokenizer are not reproduced: it makes an empty token of a CR
/// before a line's LF (in a CRLF file that ends a `macdef` at once), and it skips the byte after a closing quote.
struct Netrc {
    /// The lines of the file, split at LF bytes (a CR before it dropped).
    private var lines: [ArraySlice<UInt8>]

    /// The largest file read (curl 8's limit, `MAX_NETRC_FILE`: 128 KiB); a larger one is a parse error.
    static let maximumFileBytes = 128 * 1024

    /// A file that cannot be parsed (an unterminated quote, too large); never quotes the file's content.
    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    /// Netrc text.
    init(parsing text: String) {
        self.init(parsing: Array(text.utf8))
    }

    /// The bytes of a netrc file. Lines are split at LF bytes (a CR before it dropped), never at Swift
    /// `Character`s: "\r\n" is a single `Character`, and splitting at "\n" left a CRLF file one long line in which
    /// one machine's login and password became another's. Tokens are read as ``credential(forHost:login:)`` reaches
    /// them: a bad token that no walk reaches (inside a macro, after the credential was found) is no error.
    init(parsing bytes: [UInt8]) {
        lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { $0.last == 0x0D ? $0.dropLast() : $0 }
    }

    /// Where the walk over the tokens is (curl's `host_lookup_state`).
    private enum State {
        case nothing, macro, hostName, host
    }

    /// What the file gives for `host`, curl 7.88's way (see the type's description): nil when no entry names the
    /// host and there is no `default` entry, or when the entry gives nothing to send. `login` is the URL's user name:
    /// the login returned is then that name. Throws for a token that cannot be read (an unterminated quote) met
    /// before the credential is complete.
    func credential(forHost host: String, login: String? = nil) throws(ParseError) -> (login: String, password: String)? {
        let login = login.flatMap { $0.isEmpty ? nil : $0 }
        var found = try lookup(host: host.lowercased(), login: login, defaultEntry: false)
        if found == nil { found = try lookup(host: host.lowercased(), login: login, defaultEntry: true) }
        guard let found else { return nil }
        if let password = found.password { return (login ?? found.login ?? "", password) }
        // A login and no password: the login (sent with an empty password, as curl does); nothing when the only
        // login is the URL's own, which the request has without the file.
        guard login == nil, let entryLogin = found.login else { return nil }
        return (entryLogin, "")
    }

    /// One walk over the tokens: `machine` entries only, or `default` entries only. nil when none applied.
    private func lookup(host: String, login specificLogin: String?, defaultEntry: Bool) throws(ParseError) -> (login: String?, password: String?)? {
        var state = State.nothing
        var found = false
        var login: String? = nil
        var password: String? = nil
        var loginFollows = false
        var passwordFollows = false
        // With a login given: whether the entry read is for that login (or, before any login, a login-less one).
        // curl starts it true and sets it false at each further `machine`, so only the first entry for the host can
        // give a password without naming the login.
        var ourLogin = true
        // With a login given, a password read before the entry's login is held until the login shows whose it is
        // (stricter than curl 7.88, which takes it at once and so can send one account's password under another
        // user name; curl 8.11 decides at the entry's end too): taken if the login matches, or if the entry ends
        // without a login while it may still give one (`ourLogin`).
        var entryHasLogin = false
        var held: (password: String, loginless: Bool)?
        func endEntry() {
            if let held, !entryHasLogin, held.loginless { password = held.password }
            held = nil
            entryHasLogin = false
        }
        for line in lines {
            if state == .macro {
                // A macro ends at the first empty line.
                guard line.isEmpty else { continue }
                state = .nothing
            }
            let (tokens, unterminated) = Self.tokens(of: line)
            for token in tokens {
                if let login = specificLogin ?? login, !login.isEmpty, let password, !password.isEmpty { return (login, password) }
                switch state {
                case .nothing:
                    switch token.lowercased() {
                    case "macdef": state = .macro
                    case "machine": state = .hostName
                    case "default" where defaultEntry:
                        state = .host
                        found = true
                    default: break  // Another entry's words, or unknown tokens: skipped, as curl does.
                    }
                case .macro:
                    // The rest of the `macdef` line; an empty (quoted) token ends the macro, as in curl.
                    if token.isEmpty { state = .nothing }
                case .hostName:
                    if !defaultEntry, token.lowercased() == host {
                        state = .host
                        found = true
                    } else {
                        state = .nothing
                    }
                case .host:
                    if loginFollows {
                        loginFollows = false
                        if let specificLogin {
                            ourLogin = token == specificLogin
                            entryHasLogin = true
                            if ourLogin, let held { password = held.password }
                            held = nil
                        } else {
                            login = token
                        }
                    } else if passwordFollows {
                        passwordFollows = false
                        if specificLogin == nil {
                            password = token
                        } else if !entryHasLogin {
                            held = (token, ourLogin)
                        } else if ourLogin {
                            password = token
                        }
                    } else {
                        switch token.lowercased() {
                        case "login": loginFollows = true
                        case "password": passwordFollows = true
                        case "machine":
                            endEntry()
                            state = .hostName
                            ourLogin = false
                        case "default" where !defaultEntry:
                            // Stricter than curl (see the type): `default` ends the `machine` entry before it.
                            endEntry()
                            state = .nothing
                            ourLogin = false
                        default: break  // `account`, unknown tokens.
                        }
                    }
                }
            }
            if unterminated { throw ParseError(description: "a quoted token is not closed") }
        }
        endEntry()
        return found ? (login, password) : nil
    }

    /// Whether `byte` separates tokens: curl's `ISSPACE` (space, and tab, LF, VT, FF, CR), so that a CR left by any
    /// line ending never ends up in a token.
    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    /// The tokens of one line: blank-separated, double-quoted with escapes, up to a `#` that starts a token; and
    /// whether the line ends inside a quoted token (which is then not among the tokens).
    static func tokens(of line: ArraySlice<UInt8>) -> (tokens: [String], unterminated: Bool) {
        var tokens: [String] = []
        var bytes = line
        while true {
            while let first = bytes.first, isBlank(first) { bytes = bytes.dropFirst() }
            guard let first = bytes.first, first != UInt8(ascii: "#") else { return (tokens, false) }
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
                guard closed else { return (tokens, true) }
            } else {
                while let byte = bytes.first, !isBlank(byte) {
                    token.append(byte)
                    bytes = bytes.dropFirst()
                }
            }
            tokens.append(String(decoding: token, as: UTF8.self))
        }
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
            if case .cannotOpen = error.kind.detail { return nil }
            throw ParseError(description: error.reason)
        }
        return Netrc(parsing: bytes)
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
