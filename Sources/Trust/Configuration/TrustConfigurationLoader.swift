#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One problem in a configuration file: where (a JSON path such as `$.hosts[1].pins.sha256[0]`) and what.
public struct TrustConfigurationProblem: Sendable, Hashable, CustomStringConvertible {
    /// Where the problem is, as a JSON path such as `$.hosts[1].pins.sha256[0]` (a member name quoted in it shows no
    /// URL user-info either).
    public private(set) var path: String
    /// What is wrong. A URL quoted in it shows no user-info: every problem is made through an initializer that
    /// hides it, so no message can carry a password it quotes from the file.
    public private(set) var message: String

    init(path: String, message: String) {
        self.path = URLUserInfo.redactingUserInfo(inText: path)
        self.message = URLUserInfo.redactingUserInfo(inText: message)
    }

    /// Human-readable form: path, then message.
    public var description: String { "\(path): \(message)" }
}

/// A configuration that cannot be used, with every problem found (not only the first).
public struct TrustConfigurationFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every problem found.
    public let problems: [TrustConfigurationProblem]
    /// When the file itself was refused before it was parsed (not a regular file, too large, writable by others):
    /// why. Its problem is also in ``problems``.
    public let fileError: LocalFileError?

    /// An error with these problems.
    public init(problems: [TrustConfigurationProblem], fileError: LocalFileError? = nil) {
        self.problems = problems
        self.fileError = fileError
    }

    /// Human-readable form, one problem a line.
    public var description: String {
        "the trust configuration has \(problems.count) problem\(problems.count == 1 ? "" : "s"):\n"
            + problems.map { "  " + $0.description }.joined(separator: "\n")
    }
}

extension TrustConfiguration {
    /// Parses and validates a configuration file's text. Every problem is reported at once.
    /// - Parameters:
    ///   - text: the file's JSON text.
    ///   - publicSuffixes: for refusing patterns on public suffixes (`**.co.uk`); the system
    ///     list by default — its absence is itself a problem when a pattern needs it.
    public static func parse(
        _ text: String, publicSuffixes: PublicSuffixList? = PublicSuffixList.shared
    ) throws(TrustConfigurationFileError) -> TrustConfiguration {
        let document: JSONValue
        do {
            document = try JSONValue.parse(text)
        } catch {
            throw TrustConfigurationFileError(problems: [TrustConfigurationProblem(path: "$", message: "not valid JSON: \(error)")])
        }
        var checker = Checker(publicSuffixes: publicSuffixes)
        let configuration = checker.configuration(document)
        guard checker.problems.isEmpty, let configuration else { throw TrustConfigurationFileError(problems: checker.reported) }
        return configuration
    }

    /// Reads and validates a configuration file.
    ///
    /// The file decides whom to trust, so it is refused, as ssh refuses its configuration, when another user could
    /// have written it: owned by someone other than root or the user running the program, or group- or
    /// world-writable. A device, a file over 4 MiB or a FIFO or pipe that does not end within 5 s is refused too
    /// (``LocalFileError``, in the error's ``TrustConfigurationFileError/fileError``). `publicSuffixes` is as
    /// ``parse(_:publicSuffixes:)`` takes it.
    public static func load(
        contentsOf path: String, publicSuffixes: PublicSuffixList? = PublicSuffixList.shared
    ) throws(TrustConfigurationFileError) -> TrustConfiguration {
        let data: [UInt8]
        do {
            data = try LocalFile.read(path, limit: LocalFile.configurationLimit, ownership: .ownerOnlyWritable)
        } catch {
            throw TrustConfigurationFileError(
                problems: [TrustConfigurationProblem(path: "$", message: "cannot read \(path): \(error.reason)")], fileError: error)
        }
        guard let text = String(data: Data(data), encoding: .utf8) else {
            throw TrustConfigurationFileError(problems: [TrustConfigurationProblem(path: "$", message: "\(path) is not UTF-8 text")])
        }
        return try parse(text, publicSuffixes: publicSuffixes)
    }

    /// Validates field by field, collecting problems with their JSON paths.
    package struct Checker {
        let publicSuffixes: PublicSuffixList?
        /// The problems found, the first ``problemLimit`` of them (see ``reported``).
        package private(set) var problems: [TrustConfigurationProblem] = []
        /// Problems found beyond ``problemLimit``: counted, not kept.
        private(set) var unlisted = 0
        var warnedMissingList = false

        /// The most problems listed: a 4 MiB file of one-character mistakes would otherwise make hundreds of
        /// thousands, each quoting the members known, and hold hundreds of megabytes.
        static let problemLimit = 1000

        /// Every problem listed, then how many more there were.
        package var reported: [TrustConfigurationProblem] {
            unlisted == 0 ? problems : problems + [TrustConfigurationProblem(path: "$", message: "\(unlisted) more problems not listed")]
        }

        init(publicSuffixes: PublicSuffixList?) {
            self.publicSuffixes = publicSuffixes
        }

        package mutating func problem(_ path: String, _ message: String) {
            guard problems.count < Self.problemLimit else {
                unlisted += 1
                return
            }
            problems.append(TrustConfigurationProblem(path: path, message: message))
        }

        /// The members of an object, reporting unknown ones; nil (with a problem) if not an object.
        package mutating func members(_ value: JSONValue, _ path: String, allowed: Set<String>) -> [String: JSONValue]? {
            guard case .object(let list) = value else {
                problem(path, "must be an object, not \(value.kindName)")
                return nil
            }
            var result: [String: JSONValue] = [:]
            for member in list {
                if allowed.contains(member.key) {
                    result[member.key] = member.value
                } else {
                    problem(path + "." + member.key, "unknown member \"\(member.key)\" (known: \(allowed.sorted().joined(separator: ", ")))")
                }
            }
            return result
        }

        package mutating func string(_ value: JSONValue, _ path: String) -> String? {
            guard case .string(let text) = value else {
                problem(path, "must be a string, not \(value.kindName)")
                return nil
            }
            return text
        }

        mutating func bool(_ value: JSONValue, _ path: String) -> Bool? {
            guard case .bool(let flag) = value else {
                problem(path, "must be true or false, not \(value.kindName)")
                return nil
            }
            return flag
        }

        mutating func integer(_ value: JSONValue, _ path: String) -> Int? {
            guard case .number(let text) = value, let number = Int(text) else {
                problem(path, "must be a whole number, not \(value.kindName)")
                return nil
            }
            return number
        }

        mutating func strings(_ value: JSONValue, _ path: String) -> [String]? {
            guard case .array(let list) = value else {
                problem(path, "must be an array of strings, not \(value.kindName)")
                return nil
            }
            var result: [String] = []
            for (index, element) in list.enumerated() {
                if let text = string(element, "\(path)[\(index)]") { result.append(text) }
            }
            return result
        }

        mutating func configuration(_ document: JSONValue) -> TrustConfiguration? {
            guard let top = members(document, "$", allowed: ["version", "base", "hosts", "evaluationCache", "ctLogList"]) else { return nil }
            // A version problem is reported, and the rest is still checked (as version 1) so every problem shows at once.
            if let versionValue = top["version"] {
                if let version = integer(versionValue, "$.version"), version != TrustConfiguration.currentVersion {
                    problem("$.version", "version \(version) is not supported (this library reads version \(TrustConfiguration.currentVersion))")
                }
            } else {
                problem("$.version", "is required (\(TrustConfiguration.currentVersion))")
            }
            var configuration = TrustConfiguration()
            if let cache = top["evaluationCache"] {
                configuration.evaluationCache = evaluationCache(cache, "$.evaluationCache")
            }
            if let listValue = top["ctLogList"], let path = string(listValue, "$.ctLogList") {
                if path.isEmpty { problem("$.ctLogList", "must not be empty") } else { configuration.ctLogList = path }
            }
            if let base = top["base"] {
                configuration.base = entry(base, "$.base", isBase: true) ?? Entry()
            }
            if let hostsValue = top["hosts"] {
                guard case .array(let list) = hostsValue else {
                    problem("$.hosts", "must be an array of host entries, not \(hostsValue.kindName)")
                    return configuration
                }
                var seen: [String: Int] = [:]
                for (index, element) in list.enumerated() {
                    let path = "$.hosts[\(index)]"
                    guard let parsed = entry(element, path, isBase: false) else { continue }
                    if let pattern = parsed.host {
                        if let first = seen[pattern.description] {
                            problem(path + ".host", "\"\(pattern)\" is already configured at $.hosts[\(first)]")
                            continue
                        }
                        seen[pattern.description] = index
                    }
                    configuration.hosts.append(parsed)
                }
            }
            // CT needs a log list: an entry that checks CT without one would check nothing.
            for (entry, path) in [(configuration.base, "$.base")] + configuration.hosts.enumerated().map({ ($0.element, "$.hosts[\($0.offset)]") })
            where entry.certificateTransparency.map({ $0.mode != .off }) == true && configuration.ctLogList == nil {
                problem(path + ".certificateTransparency.mode", "needs the top-level ctLogList (the CT log list file)")
            }
            return configuration
        }

        /// `false` (off), `true` (the defaults) or `{"capacity": N, "timeToLiveSeconds": S}`.
        mutating func evaluationCache(_ value: JSONValue, _ path: String) -> EvaluationCacheSettings? {
            if case .bool(let enabled) = value { return enabled ? EvaluationCacheSettings() : nil }
            guard case .object = value else {
                problem(path, "must be false, true or an object with capacity and timeToLiveSeconds, not \(value.kindName)")
                return nil
            }
            guard let fields = members(value, path, allowed: ["capacity", "timeToLiveSeconds"]) else { return nil }
            var settings = EvaluationCacheSettings()
            if let capacity = fields["capacity"], let number = integer(capacity, path + ".capacity") {
                if (1...1_000_000).contains(number) {
                    settings.capacity = number
                } else {
                    problem(path + ".capacity", "must be between 1 and 1000000 (false turns the cache off)")
                }
            }
            if let lifetime = fields["timeToLiveSeconds"], let seconds = integer(lifetime, path + ".timeToLiveSeconds") {
                if (1...86_400).contains(seconds) {
                    settings.timeToLive = .seconds(seconds)
                } else {
                    problem(path + ".timeToLiveSeconds", "must be between 1 and 86400 (false turns the cache off)")
                }
            }
            return settings
        }

        static let entryMembers: Set<String> = [
            "host", "exclude", "anchors", "pins", "mode", "minimumRSABits", "minimumECBits", "allowSHA1", "reportURIs", "debugOverrides",
            "revocation", "certificateTransparency", "allowLockout", "minimumTLSVersion", "clientIdentity",
        ]

        mutating func pattern(_ value: JSONValue, _ path: String) -> HostPattern? {
            guard let text = string(value, path) else { return nil }
            let pattern: HostPattern
            do {
                pattern = try HostPattern(text)
            } catch {
                problem(path, error.description)
                return nil
            }
            if pattern.kind != .exact {
                if let publicSuffixes {
                    if publicSuffixes.isPublicSuffix(pattern.base) {
                        problem(path, "\"\(text)\" would cover every domain under the public suffix \"\(pattern.base)\"")
                        return nil
                    }
                } else if !warnedMissingList {
                    warnedMissingList = true
                    problem(path, "cannot check \"\(text)\" against the Public Suffix List: none was given (PublicSuffixList.shared is the default)")
                    return nil
                }
            }
            return pattern
        }

        mutating func entry(_ value: JSONValue, _ path: String, isBase: Bool) -> Entry? {
            var allowed = Self.entryMembers
            if isBase { allowed.subtract(["host", "exclude"]) }
            guard let fields = members(value, path, allowed: allowed) else { return nil }
            var entry = Entry()
            if !isBase {
                // A missing or bad host is reported; the rest of the entry is still checked.
                let host: HostPattern?
                if let hostValue = fields["host"] {
                    host = pattern(hostValue, path + ".host")
                } else {
                    problem(path + ".host", "is required")
                    host = nil
                }
                entry.host = host
                if let excludeValue = fields["exclude"], let texts = strings(excludeValue, path + ".exclude") {
                    for (index, text) in texts.enumerated() {
                        let itemPath = "\(path).exclude[\(index)]"
                        guard let excluded = self.pattern(.string(text), itemPath), let host else { continue }
                        if !host.covers(excluded) {
                            problem(itemPath, "\"\(excluded)\" is not covered by \"\(host)\": excluding it changes nothing")
                        } else {
                            entry.exclude.append(excluded)
                        }
                    }
                }
            }
            if let anchorsValue = fields["anchors"] { entry.anchors = anchors(anchorsValue, path + ".anchors") }
            if let modeValue = fields["mode"], let text = string(modeValue, path + ".mode") {
                if let mode = Mode(rawValue: text) {
                    entry.mode = mode
                } else {
                    problem(path + ".mode", "must be \"enforce\" or \"report-only\", not \"\(text)\"")
                }
            }
            if let pinsValue = fields["pins"] { entry.pins = pins(pinsValue, path + ".pins", mode: entry.mode) }
            if let value = fields["minimumRSABits"], let bits = integer(value, path + ".minimumRSABits") {
                if bits >= 2048 && bits <= 16384 {
                    entry.minimumRSABits = bits
                } else {
                    problem(path + ".minimumRSABits", "must be between 2048 and 16384, not \(bits)")
                }
            }
            if let value = fields["minimumECBits"], let bits = integer(value, path + ".minimumECBits") {
                if [256, 384, 521].contains(bits) {
                    entry.minimumECBits = bits
                } else {
                    problem(path + ".minimumECBits", "must be 256, 384 or 521, not \(bits)")
                }
            }
            if let value = fields["allowSHA1"], let flag = bool(value, path + ".allowSHA1") {
                if flag { problem(path + ".allowSHA1", "SHA-1 signatures cannot be allowed (broken since 2017)") }
                entry.allowSHA1 = false
            }
            if let value = fields["reportURIs"], let texts = strings(value, path + ".reportURIs") {
                for (index, text) in texts.enumerated() {
                    if let url = URL(string: text), url.scheme?.lowercased() == "https", url.host?.isEmpty == false {
                        entry.reportURIs.append(url)
                    } else {
                        // Quoted without its user-info: a password in a refused URI is still a password (RFC 3986 §3.2.1).
                        problem("\(path).reportURIs[\(index)]", "must be an https URL, not \"\(URLUserInfo.redacted(text))\"")
                    }
                }
            }
            if let value = fields["debugOverrides"], let overrideFields = members(value, path + ".debugOverrides", allowed: ["anchors", "overridesPins"]) {
                let overridesPins = overrideFields["overridesPins"].flatMap { bool($0, path + ".debugOverrides.overridesPins") } ?? false
                if let anchorsValue = overrideFields["anchors"] {
                    if let anchors = anchors(anchorsValue, path + ".debugOverrides.anchors") {
                        entry.debugOverrides = DebugOverrides(anchors: anchors, overridesPins: overridesPins)
                    }
                } else {
                    problem(path + ".debugOverrides.anchors", "is required")
                }
            }
            if let value = fields["revocation"] { entry.revocation = revocation(value, path + ".revocation") }
            if let value = fields["certificateTransparency"] {
                entry.certificateTransparency = certificateTransparency(value, path + ".certificateTransparency")
            }
            if let value = fields["allowLockout"], let flag = bool(value, path + ".allowLockout") { entry.allowLockout = flag }
            if let value = fields["clientIdentity"], let reference = clientIdentity(value, path + ".clientIdentity") {
                entry.clientIdentity = reference
            }
            if let value = fields["minimumTLSVersion"], let minimum = tlsMinimum(value, path + ".minimumTLSVersion") {
                entry.minimumTLSVersion = minimum
            }
            guard isBase || entry.host != nil else { return nil }
            return entry
        }

        /// `"1.2"` or `"1.3"`.
        mutating func tlsMinimum(_ value: JSONValue, _ path: String) -> TLSMinimum? {
            guard let text = string(value, path) else { return nil }
            guard let minimum = TLSMinimum(rawValue: text) else {
                problem(path, "must be \"1.2\" or \"1.3\", not \"\(text)\"")
                return nil
            }
            return minimum
        }

        /// `{"pkcs12": PATH, "passphraseEnvironment": NAME}` or `{"certificate": PATH, "key": PATH}`: one of the two files.
        mutating func clientIdentity(_ value: JSONValue, _ path: String) -> ClientIdentityReference? {
            guard let fields = members(value, path, allowed: ["pkcs12", "passphraseEnvironment", "certificate", "key"]) else { return nil }
            var reference = ClientIdentityReference()
            reference.pkcs12 = fields["pkcs12"].flatMap { string($0, path + ".pkcs12") }
            reference.passphraseEnvironment = fields["passphraseEnvironment"].flatMap { string($0, path + ".passphraseEnvironment") }
            reference.certificate = fields["certificate"].flatMap { string($0, path + ".certificate") }
            reference.key = fields["key"].flatMap { string($0, path + ".key") }
            if (reference.pkcs12 == nil) == (reference.certificate == nil) {
                problem(path, "needs either \"pkcs12\" or \"certificate\" (with \"key\" unless the file holds it)")
            }
            return reference
        }

        /// A required `mode` member naming one of `Mode`'s cases; a problem at `path.mode` otherwise.
        mutating func mode<Mode: RawRepresentable & CaseIterable>(_ fields: [String: JSONValue], _ path: String, _: Mode.Type) -> Mode?
        where Mode.RawValue == String {
            let names = Mode.allCases.map { "\"\($0.rawValue)\"" }
            let choices = names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
            guard let modeValue = fields["mode"] else {
                problem(path + ".mode", "is required (\(choices))")
                return nil
            }
            guard let text = string(modeValue, path + ".mode") else { return nil }
            guard let mode = Mode(rawValue: text) else {
                problem(path + ".mode", "must be \(choices), not \"\(text)\"")
                return nil
            }
            return mode
        }

        mutating func certificateTransparency(_ value: JSONValue, _ path: String) -> CertificateTransparency? {
            guard let fields = members(value, path, allowed: ["mode", "customAnchors"]),
                let mode = mode(fields, path, CertificateTransparencyPolicy.Mode.self)
            else { return nil }
            var settings = CertificateTransparency(mode: mode)
            if let flagValue = fields["customAnchors"], let flag = bool(flagValue, path + ".customAnchors") { settings.customAnchors = flag }
            return settings
        }

        mutating func revocation(_ value: JSONValue, _ path: String) -> Revocation? {
            guard let fields = members(value, path, allowed: ["mode", "depth", "crls", "exemptShortLived"]),
                let mode = mode(fields, path, RevocationPolicy.Mode.self)
            else { return nil }
            var revocation = Revocation(mode: mode)
            if let depthValue = fields["depth"], let depthText = string(depthValue, path + ".depth") {
                if let depth = RevocationPolicy.Depth(rawValue: depthText) {
                    revocation.depth = depth
                } else {
                    problem(path + ".depth", "must be \"leaf\" or \"chain\", not \"\(depthText)\"")
                }
            }
            if let crlsValue = fields["crls"], let files = strings(crlsValue, path + ".crls") { revocation.crls = files }
            if let flagValue = fields["exemptShortLived"], let flag = bool(flagValue, path + ".exemptShortLived") { revocation.exemptShortLived = flag }
            // CRLs are only read from files: hard checking without any refuses every certificate it covers.
            if mode == .hard && revocation.crls.isEmpty {
                problem(path + ".crls", "hard revocation checking needs CRL files: without any, every certificate it covers is refused")
            }
            return revocation
        }

        mutating func anchors(_ value: JSONValue, _ path: String) -> Anchors? {
            guard let fields = members(value, path, allowed: ["certificates", "pem", "replaceSystem"]) else { return nil }
            var anchors = Anchors()
            if let value = fields["certificates"], let list = strings(value, path + ".certificates") { anchors.certificates = list }
            if let value = fields["pem"], let list = strings(value, path + ".pem") {
                for (index, text) in list.enumerated() {
                    do {
                        let certificates = try CertificateSource.certificates(pem: text, source: "\(path).pem[\(index)]")
                        if certificates.isEmpty { problem("\(path).pem[\(index)]", "holds no certificate") }
                    } catch {
                        problem("\(path).pem[\(index)]", "\(error)")
                    }
                }
                anchors.pem = list
            }
            if let value = fields["replaceSystem"], let flag = bool(value, path + ".replaceSystem") { anchors.replaceSystem = flag }
            if anchors.replaceSystem && anchors.certificates.isEmpty && anchors.pem.isEmpty {
                problem(path + ".replaceSystem", "replaces the system roots with nothing: no connection could be trusted")
            }
            return anchors
        }

        mutating func pins(_ value: JSONValue, _ path: String, mode: Mode) -> Pins? {
            guard let fields = members(value, path, allowed: ["sha256", "expires", "allowSinglePin"]) else { return nil }
            var pins: [SPKIPin] = []
            var allowSingle = false
            if let value = fields["allowSinglePin"], let flag = bool(value, path + ".allowSinglePin") { allowSingle = flag }
            var expires: Date?
            if let value = fields["expires"], let text = string(value, path + ".expires") {
                if let date = RFC3339.parse(text) {
                    expires = date
                } else {
                    problem(path + ".expires", "must be an RFC 3339 date-time such as 2027-06-01T00:00:00Z, not \"\(text)\"")
                }
            }
            guard let list = fields["sha256"] else {
                problem(path + ".sha256", "is required: pinning asked for with no pins would accept anything")
                return nil
            }
            guard let texts = strings(list, path + ".sha256") else { return nil }
            var seen = Set<SPKIPin>()
            var unusable = 0
            for (index, text) in texts.enumerated() {
                do {
                    let pin = try SPKIPin(parsing: text)
                    if seen.insert(pin).inserted { pins.append(pin) } else { problem("\(path).sha256[\(index)]", "repeats an earlier pin") }
                } catch {
                    unusable += 1
                    problem("\(path).sha256[\(index)]", "\(error)")
                }
            }
            if pins.isEmpty && unusable == 0 {
                problem(path + ".sha256", "is empty: pinning asked for with no pins would accept anything")
            } else if pins.count == 1 && !allowSingle && mode == .enforce {
                problem(path + ".sha256", "an enforced pin set needs a backup pin (at least two), or \"allowSinglePin\": true")
            }
            return Pins(sha256: pins, expires: expires, allowSinglePin: allowSingle)
        }
    }
}

extension HostPattern {
    /// Whether every host `other` matches is also matched by this pattern.
    func covers(_ other: HostPattern) -> Bool {
        switch (kind, other.kind) {
        case (.exact, .exact): return base == other.base
        case (.exact, _): return false
        case (_, .exact): return matches(other.base)
        case (.oneLabel, .oneLabel): return base == other.base
        case (.oneLabel, .anyDepth): return false
        case (.anyDepth, _): return matches(other.base)
        }
    }
}
