#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TrustConfiguration {
    /// The configuration in its file format (what ``parse(_:publicSuffixes:)`` reads), members in a
    /// fixed order, defaults left out.
    public func jsonText() -> String {
        var top: [JSONValue.Member] = [.init(key: "version", value: .number(String(version)))]
        let baseMembers = Self.members(of: base)
        if !baseMembers.isEmpty { top.append(.init(key: "base", value: .object(baseMembers))) }
        if !hosts.isEmpty { top.append(.init(key: "hosts", value: .array(hosts.map { .object(Self.members(of: $0)) }))) }
        if let evaluationCache {
            if evaluationCache != EvaluationCacheSettings() {
                let seconds = max(1, Int(evaluationCache.timeToLive.components.seconds))
                top.append(
                    .init(
                        key: "evaluationCache",
                        value: .object([
                            .init(key: "capacity", value: .number(String(evaluationCache.capacity))),
                            .init(key: "timeToLiveSeconds", value: .number(String(seconds))),
                        ])))
            }
        } else {
            top.append(.init(key: "evaluationCache", value: .bool(false)))
        }
        if let ctLogList { top.append(.init(key: "ctLogList", value: .string(ctLogList))) }
        return JSONValue.object(top).serialized() + "\n"
    }

    /// A client identity reference as the file writes it.
    private static func json(_ reference: ClientIdentityReference) -> JSONValue {
        var fields: [JSONValue.Member] = []
        if let file = reference.pkcs12 { fields.append(.init(key: "pkcs12", value: .string(file))) }
        if let name = reference.passphraseEnvironment { fields.append(.init(key: "passphraseEnvironment", value: .string(name))) }
        if let file = reference.certificate { fields.append(.init(key: "certificate", value: .string(file))) }
        if let file = reference.key { fields.append(.init(key: "key", value: .string(file))) }
        return .object(fields)
    }

    static func members(of entry: Entry) -> [JSONValue.Member] {
        var members: [JSONValue.Member] = []
        func add(_ key: String, _ value: JSONValue) { members.append(.init(key: key, value: value)) }
        func strings(_ list: [String]) -> JSONValue { .array(list.map { .string($0) }) }
        func anchors(_ anchors: Anchors) -> JSONValue {
            var fields: [JSONValue.Member] = []
            if !anchors.certificates.isEmpty { fields.append(.init(key: "certificates", value: strings(anchors.certificates))) }
            if !anchors.pem.isEmpty { fields.append(.init(key: "pem", value: strings(anchors.pem))) }
            if anchors.replaceSystem { fields.append(.init(key: "replaceSystem", value: .bool(true))) }
            return .object(fields)
        }
        if let host = entry.host { add("host", .string(host.description)) }
        if !entry.exclude.isEmpty { add("exclude", strings(entry.exclude.map(\.description))) }
        if let value = entry.anchors { add("anchors", anchors(value)) }
        if let pins = entry.pins {
            var fields: [JSONValue.Member] = [.init(key: "sha256", value: strings(pins.sha256.map(\.description)))]
            if let expires = pins.expires { fields.append(.init(key: "expires", value: .string(RFC3339.string(expires)))) }
            if pins.allowSinglePin { fields.append(.init(key: "allowSinglePin", value: .bool(true))) }
            add("pins", .object(fields))
        }
        if entry.mode != .enforce { add("mode", .string(entry.mode.rawValue)) }
        if entry.minimumRSABits != 2048 { add("minimumRSABits", .number(String(entry.minimumRSABits))) }
        if entry.minimumECBits != 256 { add("minimumECBits", .number(String(entry.minimumECBits))) }
        if !entry.reportURIs.isEmpty { add("reportURIs", strings(entry.reportURIs.map(\.absoluteString))) }
        // The members that act on the connection; the default TLS minimum (1.2) is not written.
        if let reference = entry.clientIdentity { add("clientIdentity", Self.json(reference)) }
        if entry.minimumTLSVersion != .tls12 { add("minimumTLSVersion", .string(entry.minimumTLSVersion.rawValue)) }
        if let revocation = entry.revocation {
            var fields: [JSONValue.Member] = [.init(key: "mode", value: .string(revocation.mode.rawValue))]
            if revocation.depth != .leaf { fields.append(.init(key: "depth", value: .string(revocation.depth.rawValue))) }
            if !revocation.crls.isEmpty { fields.append(.init(key: "crls", value: strings(revocation.crls))) }
            if !revocation.exemptShortLived { fields.append(.init(key: "exemptShortLived", value: .bool(false))) }
            add("revocation", .object(fields))
        }
        if let ct = entry.certificateTransparency {
            var fields: [JSONValue.Member] = [.init(key: "mode", value: .string(ct.mode.rawValue))]
            if ct.customAnchors { fields.append(.init(key: "customAnchors", value: .bool(true))) }
            add("certificateTransparency", .object(fields))
        }
        if entry.allowLockout { add("allowLockout", .bool(true)) }
        if let overrides = entry.debugOverrides {
            add(
                "debugOverrides",
                .object([.init(key: "anchors", value: anchors(overrides.anchors)), .init(key: "overridesPins", value: .bool(overrides.overridesPins))]))
        }
        return members
    }
}

extension JSONValue {
    /// Pretty JSON text (two-space indentation; short arrays of scalars on one line).
    public func serialized(indent: String = "") -> String {
        let inner = indent + "  "
        switch self {
        case .object(let members):
            if members.isEmpty { return "{}" }
            return "{\n" + members.map { inner + Self.quote($0.key) + ": " + $0.value.serialized(indent: inner) }.joined(separator: ",\n") + "\n" + indent + "}"
        case .array(let elements):
            if elements.isEmpty { return "[]" }
            return "[\n" + elements.map { inner + $0.serialized(indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .string(let text): return Self.quote(text)
        case .number(let text): return text
        case .bool(let flag): return flag ? "true" : "false"
        case .null: return "null"
        }
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
