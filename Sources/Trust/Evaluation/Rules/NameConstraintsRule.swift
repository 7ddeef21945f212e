import SwiftASN1
import X509

/// RFC 5280 §4.2.1.10 name constraints, checked strictly and within a work budget.
///
/// For every CA on the path with a nameConstraints extension, each certificate below it
/// (self-issued intermediates excepted, RFC 5280 §6.1.3 (b)) has every name checked: SAN
/// dNSName, iPAddress, rfc822Name, URI and directoryName entries, its subject DN, and
/// emailAddress attributes of the subject. Differences from swift-certificates' policy:
/// - a wildcard SAN (`*.example.com`) is rejected when it *could* stand for an excluded name,
///   and is permitted only when every name it could stand for is permitted (CVE-2025-61727);
/// - a nameConstraints extension in a leaf is refused (only CAs may carry one);
/// - directoryName constraints are enforced;
/// - constraint sets × names above `maximumChecks` are refused without being compared.
public struct NameConstraintsRule: PathRule {
    /// The most name-against-constraint comparisons one path may need.
    package var maximumChecks: Int

    /// Creates the rule with a bound on comparisons per path.
    package init(maximumChecks: Int = 1 << 20) {
        self.maximumChecks = maximumChecks
    }

    /// This rule enforces nameConstraints.
    public var handledCriticalExtensions: [ASN1ObjectIdentifier] { [.X509ExtensionID.nameConstraints] }

    /// The reasons `path` fails this rule; empty when it passes.
    public func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        let certificates = path.certificates
        var reasons: [TrustFailureReason] = []
        if certificates.count > 1 || !path.endsAtAnchor,
            path.facts[0].hasNameConstraints,
            !path.facts[0].isCertificateAuthority
        {
            reasons.append(.malformedCertificate(subject: certificates[0].displayName, detail: "an end-entity certificate carries name constraints"))
        }
        var budget = maximumChecks
        var namesCache: [Int: Result<[GeneralName], NameExtractionFailure>] = [:]
        func names(_ index: Int) -> Result<[GeneralName], NameExtractionFailure> {
            if let cached = namesCache[index] { return cached }
            let result = Self.names(of: certificates[index])
            namesCache[index] = result
            return result
        }
        for caIndex in path.issuerIndices where path.facts[caIndex].hasNameConstraints {
            let ca = certificates[caIndex]
            guard let ext = ca.extensions[oid: .X509ExtensionID.nameConstraints] else { continue }
            let constraints: ParsedNameConstraints
            do {
                constraints = try ParsedNameConstraints(derEncoded: Array(ext.value))
            } catch {
                reasons.append(.malformedCertificate(subject: ca.displayName, detail: "nameConstraints: \(error)"))
                continue
            }
            let constraintCount = constraints.permitted.count + constraints.excluded.count
            for subjectIndex in 0..<caIndex {
                if subjectIndex > 0 && path.facts[subjectIndex].isSelfIssued { continue }
                let subject = certificates[subjectIndex]
                let subjectNames: [GeneralName]
                switch names(subjectIndex) {
                case .success(let n): subjectNames = n
                case .failure(let failure):
                    reasons.append(failure.reason)
                    continue
                }
                budget -= subjectNames.count * max(constraintCount, 1)
                if budget < 0 {
                    return reasons + [.pathTooCostly("checking name constraints would need more than \(maximumChecks) comparisons")]
                }
                for name in subjectNames {
                    if let violation = constraints.violation(by: name) {
                        reasons.append(.nameConstraintViolation(subject: subject.displayName, name: violation, constrainedBy: ca.displayName))
                    }
                }
            }
        }
        return reasons
    }

    /// Every name of a certificate that constraints apply to.
    static func names(of certificate: Certificate) -> Result<[GeneralName], NameExtractionFailure> {
        var result: [GeneralName] = []
        do {
            if let sans = try certificate.extensions.subjectAlternativeNames {
                result.append(contentsOf: sans)
            }
        } catch {
            return .failure(NameExtractionFailure(reason: .malformedCertificate(subject: certificate.displayName, detail: "subjectAltName: \(error)")))
        }
        if !certificate.subject.isEmpty {
            result.append(.directoryName(certificate.subject))
            for rdn in certificate.subject {
                for attribute in rdn where attribute.type == .RDNAttributeType.emailAddress {
                    if let email = String(attribute.value) {
                        result.append(.rfc822Name(email))
                    }
                }
            }
        }
        return .success(result)
    }
}

struct NameExtractionFailure: Error {
    var reason: TrustFailureReason
}

/// A parsed nameConstraints extension (parsed here rather than through swift-certificates so
/// that directoryName and unsupported name forms are visible).
struct ParsedNameConstraints {
    var permitted: [GeneralName] = []
    var excluded: [GeneralName] = []

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    init(derEncoded bytes: [UInt8]) throws {
        let root = try DER.parse(bytes)
        guard root.identifier == .sequence, case .constructed(let children) = root.content else {
            throw Malformed(description: "not a SEQUENCE")
        }
        var sawAny = false
        for child in children {
            guard child.identifier.tagClass == .contextSpecific, case .constructed(let subtrees) = child.content else {
                throw Malformed(description: "unexpected element")
            }
            var parsed: [GeneralName] = []
            for subtree in subtrees {
                guard subtree.identifier == .sequence, case .constructed(let parts) = subtree.content else {
                    throw Malformed(description: "GeneralSubtree is not a SEQUENCE")
                }
                var iterator = parts.makeIterator()
                guard let baseNode = iterator.next() else { throw Malformed(description: "empty GeneralSubtree") }
                parsed.append(try GeneralName(derEncoded: baseNode))
                if iterator.next() != nil {
                    // minimum/maximum: RFC 5280 requires minimum 0 and maximum absent; anything else is unusable.
                    throw Malformed(description: "GeneralSubtree has minimum/maximum fields")
                }
            }
            guard !parsed.isEmpty else { throw Malformed(description: "empty GeneralSubtrees") }
            switch child.identifier.tagNumber {
            case 0 where permitted.isEmpty: permitted = parsed
            case 1 where excluded.isEmpty: excluded = parsed
            default: throw Malformed(description: "unexpected tag [\(child.identifier.tagNumber)]")
            }
            sawAny = true
        }
        guard sawAny else { throw Malformed(description: "neither permitted nor excluded subtrees") }
    }

    /// A description of the violated rule, or `nil` when `name` is allowed.
    func violation(by name: GeneralName) -> String? {
        let kind = NameKind(name)
        guard kind != .other else {
            // Names of forms we cannot compare are allowed unless a constraint of that same form exists.
            let constrained = (permitted + excluded).contains { NameKind($0) == .other && Self.sameForm($0, name) }
            return constrained ? "\(name) (a name form that cannot be checked)" : nil
        }
        for constraint in excluded where NameKind(constraint) == kind {
            if Self.excludedMatch(name, constraint) { return "\(Self.text(name)) (excluded: \(Self.text(constraint)))" }
        }
        let permittedOfKind = permitted.filter { NameKind($0) == kind }
        if !permittedOfKind.isEmpty && !permittedOfKind.contains(where: { Self.permittedMatch(name, $0) }) {
            return "\(Self.text(name)) (not within permitted \(permittedOfKind.map(Self.text).joined(separator: ", ")))"
        }
        return nil
    }

    enum NameKind: Equatable {
        case dns, ip, email, uri, directory, other
        init(_ name: GeneralName) {
            switch name {
            case .dnsName: self = .dns
            case .ipAddress: self = .ip
            case .rfc822Name: self = .email
            case .uniformResourceIdentifier: self = .uri
            case .directoryName: self = .directory
            default: self = .other
            }
        }
    }

    static func sameForm(_ a: GeneralName, _ b: GeneralName) -> Bool {
        switch (a, b) {
        case (.otherName(let x), .otherName(let y)): return x.typeID == y.typeID
        case (.x400Address, .x400Address), (.ediPartyName, .ediPartyName), (.registeredID, .registeredID): return true
        default: return false
        }
    }

    static func text(_ name: GeneralName) -> String {
        switch name {
        case .dnsName(let s): return "DNS:\(s)"
        case .rfc822Name(let s): return "email:\(s)"
        case .uniformResourceIdentifier(let s): return "URI:\(s)"
        case .ipAddress(let o):
            let bytes = Array(o.bytes)
            if bytes.count == 8 || bytes.count == 32 {
                let half = bytes.count / 2
                let address = IPAddress(bytes: bytes[..<half])?.description ?? "?"
                let mask = IPAddress(bytes: bytes[half...])?.description ?? "?"
                return "IP:\(address)/\(mask)"
            }
            return "IP:" + (IPAddress(bytes: bytes)?.description ?? "\(bytes.count) bytes")
        case .directoryName(let dn): return "DirName:\(dn)"
        default: return "\(name)"
        }
    }

    // MARK: matching

    static func permittedMatch(_ name: GeneralName, _ constraint: GeneralName) -> Bool {
        within(name, constraint, excluding: false)
    }

    static func excludedMatch(_ name: GeneralName, _ constraint: GeneralName) -> Bool {
        within(name, constraint, excluding: true)
    }

    /// Whether `name` falls within the subtree `constraint`. When `excluding`, doubt counts as a
    /// match (fail closed): an unparseable name or constraint matches, and a wildcard matches a
    /// subtree it *could* stand for (`*.example.com` vs excluded `bar.example.com`). When
    /// permitting, doubt does not match, and a wildcard is within a subtree only as a whole.
    static func within(_ name: GeneralName, _ constraint: GeneralName, excluding: Bool) -> Bool {
        switch (name, constraint) {
        case (.dnsName(let n), .dnsName(let c)):
            guard let n = DNSConstraintName(n), let c = constraintDomain(c) else { return excluding }
            if dnsWithin(n.labels, c) { return true }
            guard excluding, n.isWildcard else { return false }
            // Exactly one label below the wildcard's base: a name the wildcard can stand for.
            let base = Array(n.labels.dropFirst())
            return c.labels.count == base.count + 1 && Array(c.labels.dropFirst()) == base
        case (.ipAddress(let n), .ipAddress(let c)):
            return ipWithin(Array(n.bytes), Array(c.bytes)) ?? excluding
        case (.rfc822Name(let n), .rfc822Name(let c)):
            return emailWithin(n, c) ?? excluding
        case (.uniformResourceIdentifier(let n), .uniformResourceIdentifier(let c)):
            guard let host = uriHost(n) else { return false }
            return uriHostWithin(host, c)
        case (.directoryName(let n), .directoryName(let c)):
            return directoryWithin(n, c)
        default:
            return false
        }
    }

    /// A dNSName as labels (lower case); the first may be `*`.
    struct DNSConstraintName {
        var labels: [Substring]
        var isWildcard: Bool
        init?(_ raw: String) {
            let lowered = raw.lowercased()
            guard !lowered.isEmpty, lowered.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return nil }
            let labels = lowered.split(separator: ".", omittingEmptySubsequences: false)
            guard !labels.contains(where: \.isEmpty) else { return nil }
            if labels.dropFirst().contains(where: { $0.contains("*") }) { return nil }
            if labels[0].contains("*") && labels[0] != "*" { return nil }
            self.labels = labels
            self.isWildcard = labels[0] == "*"
        }
    }

    struct ConstraintDomain {
        /// Lower-case labels; empty for the empty constraint, which every name is within.
        var labels: [Substring]
    }

    /// A dNSName constraint. RFC 5280 §4.2.1.10 gives DNS constraints no leading-period form
    /// (that syntax belongs to URI and email constraints), so `.example.com` is malformed.
    static func constraintDomain(_ raw: String) -> ConstraintDomain? {
        let lowered = Substring(raw.lowercased())
        if lowered.isEmpty { return ConstraintDomain(labels: []) }
        guard lowered.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "*") }) else { return nil }
        let labels = lowered.split(separator: ".", omittingEmptySubsequences: false)
        guard !labels.contains(where: \.isEmpty) else { return nil }
        return ConstraintDomain(labels: labels)
    }

    static func dnsWithin(_ name: [Substring], _ constraint: ConstraintDomain) -> Bool {
        if constraint.labels.isEmpty { return true }
        guard name.count >= constraint.labels.count else { return false }
        return Array(name.suffix(constraint.labels.count)) == constraint.labels
    }

    /// `nil` when the constraint is malformed.
    static func ipWithin(_ address: [UInt8], _ constraint: [UInt8]) -> Bool? {
        guard constraint.count == 8 || constraint.count == 32 else { return nil }
        let half = constraint.count / 2
        let network = constraint[..<half]
        let mask = Array(constraint[half...])
        // The mask must be contiguous ones followed by zeros.
        var seenZero = false
        for byte in mask {
            for bit in (0..<8).reversed() {
                let one = byte & (1 << bit) != 0
                if one && seenZero { return nil }
                if !one { seenZero = true }
            }
        }
        guard address.count == half else { return false }
        for i in 0..<half where address[i] & mask[i] != network[network.startIndex + i] & mask[i] {
            return false
        }
        return true
    }

    /// `nil` when name or constraint is malformed.
    static func emailWithin(_ name: String, _ constraint: String) -> Bool? {
        guard let at = name.lastIndex(of: "@") else { return nil }
        let local = name[..<at]
        let host = name[name.index(after: at)...].lowercased()
        guard !local.isEmpty, !host.isEmpty else { return nil }
        if let cAt = constraint.lastIndex(of: "@") {
            return constraint[..<cAt] == local && constraint[constraint.index(after: cAt)...].lowercased() == host
        }
        let c = constraint.lowercased()
        if c.hasPrefix(".") { return host.hasSuffix(c) }
        return host == c
    }

    static func uriHost(_ uri: String) -> String? {
        guard let schemeEnd = uri.firstRange(of: "://") else { return nil }
        var rest = uri[schemeEnd.upperBound...]
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("[") { return nil }  // IP literal hosts cannot match a domain constraint
        if let colon = rest.lastIndex(of: ":") { rest = rest[..<colon] }
        guard !rest.isEmpty, IPAddress(String(rest)) == nil else { return nil }
        return rest.lowercased()
    }

    static func uriHostWithin(_ host: String, _ constraint: String) -> Bool {
        let c = constraint.lowercased()
        if c.hasPrefix(".") { return host.hasSuffix(c) }
        return host == c
    }

    static func directoryWithin(_ name: DistinguishedName, _ constraint: DistinguishedName) -> Bool {
        let n = Array(name)
        let c = Array(constraint)
        guard n.count >= c.count else { return false }
        return Array(n.prefix(c.count)) == c
    }
}
