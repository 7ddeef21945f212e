import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Converts other platforms' pinning configurations into a ``TrustConfiguration``, translating
/// each one's subdomain semantics and flagging what our format cannot say.
///
/// | platform | "include subdomains" means | becomes |
/// |---|---|---|
/// | TrustKit `TSKIncludeSubdomains` | the domain and every subdomain | `**.domain` |
/// | Android NSC `includeSubdomains="true"` | the domain and every subdomain | `**.domain` |
/// | ATS `NSIncludesSubdomains` | the domain and subdomains one label deeper | `domain` + `*.domain` |
/// | OkHttp `*.domain` / `**.domain` | one label / any depth (apex included for `**.`) | the same pattern |
public enum TrustConfigurationImporter {
    /// The platform whose configuration format is being imported.
    public enum Source: String, Sendable, CaseIterable {
        case trustkit
        case androidNSC = "android-nsc"
        case ats
        case okhttp
    }

    /// The converted configuration and a sentence for each thing that could not be carried over exactly.
    public struct Result: Sendable {
        /// The converted configuration.
        public var configuration: TrustConfiguration
        /// One sentence for each thing that could not be carried over exactly.
        public var notes: [String]
    }

    /// Why a file could not be converted.
    public struct ImportError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, in words.
        package var message: String
        /// Human-readable form.
        public var description: String { message }
    }

    /// Converts `data`, written in `source`'s format, into a ``TrustConfiguration``.
    public static func convert(_ data: Data, from source: Source) throws(ImportError) -> Result {
        switch source {
        case .trustkit: return try trustKit(data)
        case .androidNSC: return try android(data)
        case .ats: return try ats(data)
        case .okhttp: return try okHTTP(data)
        }
    }

    // MARK: - Helpers

    /// A JSON object (read by the engine's strict JSON reader) or a property list (XML or binary, read by
    /// FoundationEssentials' `PropertyListDecoder`) whose root is a dictionary, as plain Swift values: dictionaries
    /// `[String: Any]`, arrays `[Any]`, `String`, `Bool`, `Int`, `Double`, `Date` and `Data`.
    static func propertyList(_ data: Data) throws(ImportError) -> [String: Any] {
        if let text = StrictUTF8.string(Array(data)), let json = try? JSONValue.parse(text) {
            guard case .object = json, let dictionary = plainValue(json) as? [String: Any] else {
                throw ImportError(message: "the file is not a dictionary (plist or JSON)")
            }
            return dictionary
        }
        let value: PropertyListValue
        do {
            value = try PropertyListDecoder().decode(PropertyListValue.self, from: data)
        } catch {
            throw ImportError(message: "not a property list or JSON dictionary: \(error)")
        }
        guard case .dictionary = value, let dictionary = value.plain as? [String: Any] else {
            throw ImportError(message: "the file is not a dictionary (plist or JSON)")
        }
        return dictionary
    }

    /// A JSON value as the plain Swift values ``propertyList(_:)`` returns (a number: `Int` when it is a whole number
    /// that fits, else `Double`; `null`: nil, left out of its dictionary or array).
    private static func plainValue(_ value: JSONValue) -> Any? {
        switch value {
        case .object(let members):
            var dictionary: [String: Any] = [:]
            for member in members { dictionary[member.key] = plainValue(member.value) }
            return dictionary
        case .array(let elements): return elements.compactMap(plainValue)
        case .string(let text): return text
        case .number(let text): return Int(text) ?? Double(text)
        case .bool(let flag): return flag
        case .null: return nil
        }
    }

    static func flag(_ value: Any?) -> Bool? {
        if let bool = value as? Bool { return bool }
        if let number = value as? Int { return number != 0 }
        if let number = value as? Double { return number != 0 }
        if let text = value as? String {
            return ["yes", "true", "1"].contains(text.lowercased()) ? true : ["no", "false", "0"].contains(text.lowercased()) ? false : nil
        }
        return nil
    }

    /// `yyyy-MM-dd` as midnight UTC.
    static func day(_ text: String) -> Date? {
        RFC3339.parse(text + "T00:00:00Z")
    }

    static func pins(_ texts: [String], context: String, notes: inout [String]) -> [SPKIPin] {
        var pins: [SPKIPin] = []
        for text in texts {
            if let pin = try? SPKIPin(parsing: text.hasPrefix("sha256/") || text.hasPrefix("pin-sha256") ? text : "sha256/" + text) {
                if !pins.contains(pin) { pins.append(pin) }
            } else {
                notes.append("\(context): pin \"\(text)\" is not a SHA-256 SPKI pin; dropped")
            }
        }
        return pins
    }

    /// - Parameter pins: nil when the source pins nothing for this host (not the same as no usable pins).
    static func entry(host: String, pins: [SPKIPin]?, context: String, notes: inout [String]) -> TrustConfiguration.Entry? {
        guard let pattern = try? HostPattern(host) else {
            notes.append("\(context): \"\(host)\" is not a host name we accept; skipped")
            return nil
        }
        var entry = TrustConfiguration.Entry(host: pattern)
        guard let pins else { return entry }
        if !pins.isEmpty {
            entry.pins = TrustConfiguration.Pins(sha256: pins)
            if pins.count == 1 { notes.append("\(context): a single pin (no backup) — add a backup pin, or set \"allowSinglePin\": true knowingly") }
        } else {
            // Never fail open (an empty pin set read as "no pinning"): kept empty, so validation refuses it.
            entry.pins = TrustConfiguration.Pins(sha256: [])
            notes.append("\(context): no usable pins — the converted entry will not validate until pins are added")
        }
        return entry
    }

    // MARK: - TrustKit

    static func trustKit(_ data: Data) throws(ImportError) -> Result {
        var root = try propertyList(data)
        if let nested = root["TSKConfiguration"] as? [String: Any] { root = nested }
        guard
            let domains = (root["TSKPinnedDomains"] as? [String: Any])
                ?? (root.keys.contains { $0.hasPrefix("TSK") || $0.hasPrefix("CF") || $0.hasPrefix("NS") } ? nil : root)
        else {
            throw ImportError(message: "no TSKPinnedDomains in the TrustKit configuration")
        }
        var notes: [String] = []
        var configuration = TrustConfiguration()
        if root["TSKSwizzleNetworkDelegates"] != nil { notes.append("TSKSwizzleNetworkDelegates: not applicable (pass the configuration to a Session)") }
        for key in root.keys.sorted() where key != "TSKPinnedDomains" && key != "TSKSwizzleNetworkDelegates" && key.hasPrefix("TSK") {
            notes.append("\(key): not carried over")
        }
        let known: Set<String> = [
            "TSKIncludeSubdomains", "TSKEnforcePinning", "TSKPublicKeyHashes", "TSKReportUris", "TSKExpirationDate",
            "TSKDisableDefaultReportUri", "TSKPublicKeyAlgorithms", "TSKExcludeSubdomainFromParentPolicy",
        ]
        var excluded: [String] = []
        for (domain, value) in domains.sorted(by: { $0.key < $1.key }) {
            guard let settings = value as? [String: Any] else {
                notes.append("TrustKit \(domain): not a dictionary; skipped")
                continue
            }
            let context = "TrustKit \(domain)"
            for key in settings.keys.sorted() where !known.contains(key) { notes.append("\(context): \(key) is not carried over") }
            if flag(settings["TSKExcludeSubdomainFromParentPolicy"]) == true {
                excluded.append(domain)
                continue
            }
            let includes = flag(settings["TSKIncludeSubdomains"]) ?? false
            let pinList = pins((settings["TSKPublicKeyHashes"] as? [String]) ?? [], context: context, notes: &notes)
            guard var entry = entry(host: (includes ? "**." : "") + domain, pins: pinList, context: context, notes: &notes) else { continue }
            if flag(settings["TSKEnforcePinning"]) == false { entry.mode = .reportOnly }
            if let expiry = settings["TSKExpirationDate"] as? String {
                if let date = day(expiry) {
                    entry.pins?.expires = date
                } else {
                    notes.append("\(context): TSKExpirationDate \"\(expiry)\" is not yyyy-MM-dd; dropped")
                }
            }
            for uri in (settings["TSKReportUris"] as? [String]) ?? [] {
                if let url = URL(string: uri), url.scheme?.lowercased() == "https" {
                    entry.reportURIs.append(url)
                } else {
                    notes.append("\(context): report URI \"\(URLUserInfo.redacted(uri))\" is not https; dropped")
                }
            }
            if settings["TSKDisableDefaultReportUri"] != nil { notes.append("\(context): TSKDisableDefaultReportUri: we never report to a default endpoint") }
            if settings["TSKPublicKeyAlgorithms"] != nil {
                notes.append("\(context): TSKPublicKeyAlgorithms is unnecessary: pins are over the certificate's own SPKI bytes")
            }
            configuration.hosts.append(entry)
        }
        // TSKExcludeSubdomainFromParentPolicy: the name is left out of the parent's **. entry.
        for domain in excluded {
            guard let pattern = try? HostPattern(domain) else { continue }
            let parents = configuration.hosts.indices.filter { configuration.hosts[$0].host.map { $0.kind != .exact && $0.matches(domain) } ?? false }
            for index in parents { configuration.hosts[index].exclude.append(pattern) }
            notes.append("TrustKit \(domain): excluded from the parent policy" + (parents.isEmpty ? " (no parent entry covers it)" : ""))
        }
        return Result(configuration: configuration, notes: notes)
    }

    // MARK: - ATS

    static func ats(_ data: Data) throws(ImportError) -> Result {
        var root = try propertyList(data)
        if let ats = root["NSAppTransportSecurity"] as? [String: Any] { root = ats }
        guard
            let domains = (root["NSPinnedDomains"] as? [String: Any])
                ?? (root.keys.contains { $0.hasPrefix("NS") || $0.hasPrefix("CF") || $0.hasPrefix("UI") } ? nil : root)
        else {
            throw ImportError(message: "no NSPinnedDomains in the property list")
        }
        var notes: [String] = []
        var configuration = TrustConfiguration()
        for (domain, value) in domains.sorted(by: { $0.key < $1.key }) {
            guard let settings = value as? [String: Any] else { continue }
            let context = "ATS \(domain)"
            for key in settings.keys.sorted() where !["NSIncludesSubdomains", "NSPinnedCAIdentities", "NSPinnedLeafIdentities"].contains(key) {
                notes.append("\(context): \(key) is not carried over")
            }
            var texts: [String] = []
            for key in ["NSPinnedCAIdentities", "NSPinnedLeafIdentities"] {
                for identity in (settings[key] as? [[String: Any]]) ?? [] {
                    if let pin = identity["SPKI-SHA256-BASE64"] as? String { texts.append(pin) }
                }
            }
            if settings["NSPinnedCAIdentities"] != nil && settings["NSPinnedLeafIdentities"] != nil {
                notes.append("\(context): CA and leaf identities are merged: our pins match any certificate of the validated path")
            }
            let pinList = pins(texts, context: context, notes: &notes)
            let includes = flag(settings["NSIncludesSubdomains"]) ?? false
            // ATS: the domain itself, and (with NSIncludesSubdomains) names one label deeper.
            for host in includes ? [domain, "*." + domain] : [domain] {
                if let entry = entry(host: host, pins: pinList, context: context, notes: &notes) { configuration.hosts.append(entry) }
            }
        }
        return Result(configuration: configuration, notes: notes)
    }

    // MARK: - OkHttp

    /// Lines `PATTERN sha256/PIN…`, or Kotlin/Java `.add("PATTERN", "sha256/PIN", …)` calls.
    static func okHTTP(_ data: Data) throws(ImportError) -> Result {
        guard let text = StrictUTF8.string(Array(data)) else { throw ImportError(message: "the OkHttp pin list is not UTF-8 text") }
        var notes: [String] = []
        var order: [String] = []
        var byPattern: [String: [String]] = [:]
        func record(_ pattern: String, _ pin: String) {
            if byPattern[pattern] == nil { order.append(pattern) }
            byPattern[pattern, default: []].append(pin)
        }
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingASCIIBlanks()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix("//") { continue }
            if line.contains("add(") {
                // Each add( … ) call on its own: its first string is the pattern, the others its pins.
                for call in line.components(separatedBy: "add(").dropFirst() {
                    let arguments = call.prefix { $0 != ")" }
                    let quoted = arguments.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map {
                        String($0.element)
                    }
                    guard let pattern = quoted.first else { continue }
                    for pin in quoted.dropFirst() {
                        if pin.hasPrefix("sha256/") || pin.hasPrefix("sha1/") {
                            record(pattern, pin)
                        } else {
                            notes.append("OkHttp \(pattern): \"\(pin)\" is not a pin; dropped")
                        }
                    }
                    if quoted.count == 1 { record(pattern, "") }
                }
            } else {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map(String.init)
                let pins = fields.dropFirst().filter { $0.hasPrefix("sha256/") || $0.hasPrefix("sha1/") }
                guard let pattern = fields.first, !pins.isEmpty else { continue }  // not a pin line
                for pin in pins { record(pattern, pin) }
            }
        }
        var configuration = TrustConfiguration()
        for pattern in order {
            let context = "OkHttp \(pattern)"
            let texts = byPattern[pattern] ?? []
            let sha1 = texts.filter { $0.hasPrefix("sha1/") }
            if !sha1.isEmpty { notes.append("\(context): \(sha1.count) SHA-1 pin(s) dropped (SHA-256 only)") }
            let pinList = pins(texts.filter { !$0.hasPrefix("sha1/") && !$0.isEmpty }, context: context, notes: &notes)
            if let entry = entry(host: pattern, pins: pinList, context: context, notes: &notes) { configuration.hosts.append(entry) }
        }
        // OkHttp accepts a pin of any matching pattern; here the most specific entry alone applies.
        let patterns = configuration.hosts.compactMap(\.host)
        for outer in patterns where outer.kind != .exact {
            for inner in patterns where inner != outer && outer.matches(inner.base) {
                notes.append(
                    "OkHttp \(outer) and \(inner) overlap: OkHttp accepts the pins of both for \(inner.base); here only \(inner)'s apply — merge the pins if both should"
                )
            }
        }
        if order.isEmpty { throw ImportError(message: "no OkHttp pins found (expected lines \"PATTERN sha256/PIN\" or .add(\"PATTERN\", \"sha256/PIN\"))") }
        return Result(configuration: configuration, notes: notes)
    }

    // MARK: - Android Network Security Config

    static func android(_ data: Data) throws(ImportError) -> Result {
        // The preflight names what is refused (a DTD, a processing instruction…); the reader then reads the rest strictly.
        try NetworkSecurityConfigPreflight.check(Array(data))
        let events: [XMLSubsetReader.Event]
        do {
            events = try XMLSubsetReader.events(Array(data))
        } catch {
            throw ImportError(message: "not well-formed XML: \(error)")
        }
        let parser = NSCParser()
        for event in events {
            switch event {
            case .start(let name, let attributes): parser.start(name, attributes: attributes)
            case .text(let text): parser.characters(text)
            case .end(let name): parser.end(name)
            }
        }
        guard parser.sawRoot else { throw ImportError(message: "no <network-security-config> element") }
        var notes = parser.notes
        var configuration = TrustConfiguration()
        if let base = parser.base {
            configuration.base.anchors = base.anchors
            if base.cleartext != nil {
                notes.append("base-config: cleartextTrafficPermitted has no equivalent (plain http is always allowed to be refused per request)")
            }
        }
        if let debug = parser.debug {
            configuration.base.debugOverrides = TrustConfiguration.DebugOverrides(
                anchors: debug.anchors ?? TrustConfiguration.Anchors(), overridesPins: debug.overridesPins)
        }
        for config in parser.domainConfigs {
            for (domain, includes) in config.domains {
                let context = "Android \(domain)"
                let pinList = config.hasPinSet ? pins(config.pins, context: context, notes: &notes) : nil
                guard var entry = entry(host: (includes ? "**." : "") + domain, pins: pinList, context: context, notes: &notes) else { continue }
                if let expiration = config.expiration {
                    if let date = day(expiration) {
                        entry.pins?.expires = date
                    } else {
                        notes.append("\(context): pin-set expiration \"\(expiration)\" is not yyyy-MM-dd; dropped")
                    }
                }
                // A domain-config without trust-anchors inherits base-config's; debug-overrides apply to every domain.
                entry.anchors = config.anchors ?? configuration.base.anchors
                entry.debugOverrides = configuration.base.debugOverrides
                if config.overridesPins {
                    notes.append("\(context): overridePins on release trust anchors has no equivalent (only debugOverrides may override pins); ignored")
                }
                if config.cleartext != nil { notes.append("\(context): cleartextTrafficPermitted has no equivalent; ignored") }
                if config.nested { notes.append("\(context): was a nested domain-config; its inherited settings were flattened") }
                configuration.hosts.append(entry)
            }
        }
        return Result(configuration: configuration, notes: notes)
    }

    /// What a Network Security Config's elements say, gathered as the reader meets them.
    final class NSCParser {
        struct Config {
            var domains: [(String, Bool)] = []
            var pins: [String] = []
            var expiration: String?
            var hasPinSet = false
            var anchors: TrustConfiguration.Anchors?
            var overridesPins = false
            var cleartext: String?
            var nested = false
        }

        var sawRoot = false
        var base: Config?
        var debug: Config?
        var domainConfigs: [Config] = []
        var notes: [String] = []
        private var stack: [Config] = []
        private var kinds: [String] = []
        private var text = ""
        private var pendingDomainIncludes = false
        private var pendingDigest = "SHA-256"

        func start(_ name: String, attributes: [String: String]) {
            text = ""
            switch name {
            case "network-security-config":
                sawRoot = true
            case "base-config", "debug-overrides", "domain-config":
                var config = Config()
                config.cleartext = attributes["cleartextTrafficPermitted"]
                if name == "domain-config", let parent = stack.last, kinds.last == "domain-config" {
                    config = parent
                    config.domains = []
                    config.nested = true
                }
                stack.append(config)
                kinds.append(name)
            case "domain":
                pendingDomainIncludes = attributes["includeSubdomains"] == "true"
            case "pin-set":
                // A domain-config's own pin-set replaces an inherited one (it does not add to it).
                if !stack.isEmpty {
                    stack[stack.count - 1].pins = []
                    stack[stack.count - 1].hasPinSet = true
                    stack[stack.count - 1].expiration = attributes["expiration"]
                }
            case "pin":
                pendingDigest = attributes["digest"] ?? "SHA-256"
            case "trust-anchors":
                if !stack.isEmpty { stack[stack.count - 1].anchors = TrustConfiguration.Anchors(replaceSystem: true) }
            case "certificates":
                guard !stack.isEmpty else { return }
                let source = attributes["src"] ?? ""
                var anchors = stack[stack.count - 1].anchors ?? TrustConfiguration.Anchors(replaceSystem: true)
                switch source {
                case "system": anchors.replaceSystem = false
                case "user": notes.append("\(kinds.last ?? "?"): certificates src=\"user\" (the device's user store) has no equivalent; dropped")
                default:
                    anchors.certificates.append(source.hasPrefix("@raw/") ? "res/raw/" + source.dropFirst(5) : source)
                    if source.hasPrefix("@") {
                        notes.append(
                            "\(kinds.last ?? "?"): resource \(source) mapped to the path res/raw/\(source.dropFirst(5)) — point it at the certificate file")
                    }
                }
                if attributes["overridePins"] == "true" { stack[stack.count - 1].overridesPins = true }
                stack[stack.count - 1].anchors = anchors
            default:
                break
            }
        }

        func characters(_ string: String) {
            text += string
        }

        func end(_ name: String) {
            let value = text.trimmingASCIIWhitespace()
            switch name {
            case "domain":
                if !stack.isEmpty { stack[stack.count - 1].domains.append((value, pendingDomainIncludes)) }
            case "pin":
                if pendingDigest.uppercased() == "SHA-256" {
                    if !stack.isEmpty { stack[stack.count - 1].pins.append(value) }
                } else {
                    notes.append("pin with digest \(pendingDigest) dropped (SHA-256 only)")
                }
            case "base-config", "debug-overrides", "domain-config":
                guard let config = stack.popLast() else { return }
                kinds.removeLast()
                switch name {
                case "base-config": base = config
                case "debug-overrides": debug = config
                default: domainConfigs.append(config)
                }
            default:
                break
            }
            text = ""
        }
    }
}
