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

/// Blanks the secrets of a command line in the process's own argument list, as curl does for `-u`
/// and `-U` (its `cleanarg`): on Linux `/proc/PID/cmdline` — what `ps` shows every user of the
/// machine — is read from the very memory `argv` points to, and `CommandLine.unsafeArgv` is that
/// memory. Only the secret bytes are overwritten (with `*`), never an argument's terminating NUL,
/// so the arguments keep their number and length and the non-secret parts (a user name, a file
/// path, a host) stay readable.
///
/// The parser has already copied every argument into Swift strings; the command runs on those.
/// A secret is visible from `exec` until this runs (right after parsing, before any network
/// activity): a secret that must never be visible goes by `--netrc`, the `-u USER` prompt or
/// `--pass env:NAME`/`file:PATH`.
///
/// Every spelling the parser accepts is found: `-u VALUE`, `--user VALUE`, `--user=VALUE`, `-u=VALUE`,
/// short options grouped (`-ku VALUE`, `-uk VALUE`, `-Xu GET VALUE`: the values follow the group in the
/// order of the options that take one), each occurrence of a repeated option (the
/// parser keeps only the last of `-u`, `-U`…), and arguments after `--` (positional only). The URL,
/// a positional argument, is found by the value the parser read.
struct ArgumentScrubber {
    /// An option whose value may hold a secret.
    struct Option {
        /// Long names without the dashes (`user`).
        var longNames: [String]
        /// The short name (`u`), if any.
        var shortName: UInt8?
        /// The secret bytes of a value (offsets into its UTF-8), nil when it holds none.
        var secret: (String) -> Range<Int>?
    }

    private(set) var options: [Option] = []
    /// The short names of every option of the command that takes a value (secret or not), to place the
    /// values that follow a group of short options; asked only when such a group holds a secret option.
    var valueTakingShortNames: () -> Set<UInt8> = { [] }
    /// Positional values as parsed, with their secret bytes.
    private(set) var positionals: [(value: [UInt8], secret: Range<Int>)] = []

    /// Adds an option whose values are scrubbed with `secret`.
    mutating func addOption(long: [String], short: Character? = nil, secret: @escaping (String) -> Range<Int>?) {
        options.append(Option(longNames: long, shortName: short?.asciiValue, secret: secret))
    }

    /// Adds a positional argument's parsed value, when it holds a secret.
    mutating func addPositional(_ value: String?, secret: (String) -> Range<Int>?) {
        guard let value, let range = secret(value), !range.isEmpty else { return }
        positionals.append((Array(value.utf8), range))
    }

    /// The byte ranges to blank, per argument (`arguments[0]`, the program's name, is never touched).
    func secretRanges(in arguments: [[UInt8]]) -> [Int: [Range<Int>]] {
        var ranges: [Int: [Range<Int>]] = [:]
        func add(_ index: Int, _ range: Range<Int>?, offset: Int = 0) {
            guard let range, !range.isEmpty, index < arguments.count, offset + range.upperBound <= arguments[index].count else { return }
            ranges[index, default: []].append((offset + range.lowerBound)..<(offset + range.upperBound))
        }
        var optionsEnded = false
        var valueTaking: Set<UInt8>?
        for index in arguments.indices.dropFirst() {
            let argument = arguments[index]
            for positional in positionals where argument == positional.value { add(index, positional.secret) }
            if optionsEnded { continue }
            if argument == Array("--".utf8) {
                optionsEnded = true
                continue
            }
            for option in options {
                switch Self.match(argument, option) {
                case .none: break
                case .valueFollows:
                    if index + 1 < arguments.count { add(index + 1, option.secret(String(decoding: arguments[index + 1], as: UTF8.self))) }
                case .inGroup(let position):
                    // The parser gives each option of the group that takes a value the next argument, in order.
                    let takesValue = valueTaking ?? valueTakingShortNames()
                    valueTaking = takesValue
                    let valueIndex = index + 1 + argument[1..<position].filter { takesValue.contains($0) }.count
                    if valueIndex < arguments.count { add(valueIndex, option.secret(String(decoding: arguments[valueIndex], as: UTF8.self))) }
                case .attached(let offset):
                    add(index, option.secret(String(decoding: argument[offset...], as: UTF8.self)), offset: offset)
                }
            }
        }
        return ranges
    }

    enum Match: Equatable {
        case none
        /// The option's name alone: its value is the next argument.
        case valueFollows
        /// The option's short name at this offset in a group of short options (`-ku`, `-Xu`).
        case inGroup(Int)
        /// `--name=VALUE` or `-s=VALUE`: the value starts at this offset.
        case attached(Int)
    }

    /// How `argument` names `option`, if it does.
    static func match(_ argument: [UInt8], _ option: Option) -> Match {
        let dash = UInt8(ascii: "-")
        let equals = UInt8(ascii: "=")
        for name in option.longNames {
            let spelled = Array("--\(name)".utf8)
            if argument == spelled { return .valueFollows }
            if argument.starts(with: spelled + [equals]) { return .attached(spelled.count + 1) }
        }
        guard let short = option.shortName, argument.count >= 2, argument[0] == dash, argument[1] != dash else { return .none }
        if argument.count >= 3, argument[1] == short, argument[2] == equals { return .attached(3) }
        if argument.count == 2 { return argument[1] == short ? .valueFollows : .none }
        let isAlphanumeric = { (byte: UInt8) in (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) }
        guard argument.dropFirst().allSatisfy(isAlphanumeric), let position = argument.firstIndex(of: short) else { return .none }
        return .inGroup(position)
    }

    /// Overwrites the secret bytes of every argument in `argv` (`count` of them, the program's name
    /// first) with `*`; returns how many bytes were blanked.
    @discardableResult
    func scrub(_ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, count: Int) -> Int {
        let arguments: [[UInt8]] = (0..<count).map { index in
            guard let pointer = argv[index] else { return [] }
            return Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
        }
        var blanked = 0
        for (index, ranges) in secretRanges(in: arguments) {
            guard let pointer = argv[index] else { continue }
            // Every range lies within the argument's bytes: its terminating NUL is never touched.
            for range in ranges {
                for offset in range { pointer[offset] = CChar(bitPattern: UInt8(ascii: "*")) }
                blanked += range.count
            }
        }
        return blanked
    }

    /// Blanks the secrets of this process's own command line (`CommandLine.unsafeArgv`).
    @discardableResult
    func scrubProcessArguments() -> Int {
        scrub(CommandLine.unsafeArgv, count: Int(CommandLine.argc))
    }
}

extension ArgumentScrubber {
    /// The bytes after the first colon: the password of curl's `USER:PASSWORD` (`-u`, `-U`).
    static func afterFirstColon(_ value: String) -> Range<Int>? {
        guard let colon = value.utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let start = value.utf8.distance(from: value.utf8.startIndex, to: colon) + 1
        return start..<value.utf8.count
    }

    /// The user-info of a URL written as text (`scheme://USERINFO@host`, RFC 3986 §3.2.1), user and
    /// password both, as ``Secrets/userInfo(in:)`` finds it.
    static func userInfo(_ value: String) -> Range<Int>? {
        guard let userInfo = Secrets.userInfo(in: value), !userInfo.isEmpty,
            let scheme = value.utf8.firstRange(of: "://".utf8)
        else { return nil }
        let start = value.utf8.distance(from: value.utf8.startIndex, to: scheme.upperBound)
        return start..<(start + userInfo.utf8.count)
    }

    /// The user-info of a `-x` proxy, written as a URL or, as curl allows, without a scheme (`USER:PASSWORD@HOST:PORT`).
    static func proxyUserInfo(_ value: String) -> Range<Int>? {
        if value.utf8.firstRange(of: "://".utf8) != nil { return userInfo(value) }
        let scheme = "http://".utf8.count
        return userInfo("http://" + value).map { ($0.lowerBound - scheme)..<($0.upperBound - scheme) }
    }

    /// The value of a credential header line (`Authorization: VALUE`, RFC 9110 §11.6.2 and §11.7.2);
    /// nil for any other header.
    static func credentialHeaderValue(_ line: String) -> Range<Int>? {
        let bytes = Array(line.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = String(decoding: bytes[..<colon], as: UTF8.self).trimmingASCIIBlanks().lowercased()
        guard Secrets.credentialHeaders.contains(name) else { return nil }
        var start = colon + 1
        while start < bytes.count, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        return start..<bytes.count
    }

    /// The passphrase of `--pass`/`--cert-password`: the whole value when given literally, the part after
    /// `pass:` in the OpenSSL form; nothing for `env:NAME` and `file:PATH`, which name where it is.
    static func passphrase(_ value: String) -> Range<Int>? {
        switch PasswordSource(value) {
        case .literal: return 0..<value.utf8.count
        case .pass(let literal): return (value.utf8.count - literal.utf8.count)..<value.utf8.count
        case .environment, .file: return nil
        }
    }

    /// The password part of curl's `--cert FILE:PASSWORD` (split as ``GetCommand/splitCertArgument(_:)`` does).
    static func certPassword(_ value: String) -> Range<Int>? {
        guard let password = GetCommand.splitCertArgument(value).password else { return nil }
        return (value.utf8.count - password.utf8.count)..<value.utf8.count
    }
}

extension GetCommand {
    /// The options of `trust get` that carry secrets (`-u`, `-U`, `--pass`, `--cert FILE:PASSWORD`, `-x`
    /// user-info, `-H` credential headers) and the URL's user-info as parsed.
    var argumentScrubber: ArgumentScrubber {
        var scrubber = ArgumentScrubber()
        scrubber.valueTakingShortNames = { Self.valueTakingShortNames }
        scrubber.addOption(long: ["user"], short: "u", secret: ArgumentScrubber.afterFirstColon)
        scrubber.addOption(long: ["proxy-user"], short: "U", secret: ArgumentScrubber.afterFirstColon)
        scrubber.addOption(long: ["pass", "cert-password"], secret: ArgumentScrubber.passphrase)
        scrubber.addOption(long: ["cert"], short: "E", secret: ArgumentScrubber.certPassword)
        scrubber.addOption(long: ["proxy"], short: "x", secret: ArgumentScrubber.proxyUserInfo)
        scrubber.addOption(long: ["header"], short: "H", secret: ArgumentScrubber.credentialHeaderValue)
        scrubber.addPositional(url, secret: ArgumentScrubber.userInfo)
        return scrubber
    }

    /// The short names of `trust get`'s options that take a value, as the parser itself lists them
    /// (`-X, --request <request>` in its help; a flag has no `<…>`).
    static var valueTakingShortNames: Set<UInt8> {
        var names: Set<UInt8> = []
        for line in GetCommand.helpMessage(includeHidden: true, columns: 10_000).split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count >= 3, words[0].utf8.count == 3, words[0].hasPrefix("-"), words[0].hasSuffix(","),
                words[1].hasPrefix("--"), words[2].hasPrefix("<")
            else { continue }
            names.insert(words[0].utf8[words[0].utf8.index(after: words[0].utf8.startIndex)])
        }
        return names
    }
}
