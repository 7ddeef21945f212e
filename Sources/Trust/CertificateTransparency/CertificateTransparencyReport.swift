import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What Certificate Transparency checking found for a leaf: each embedded SCT (its log, operator, timestamp, and
/// valid or why not), the count the policy requires, and whether the policy is met — the finding the CT rule decides on
/// and `trust inspect` prints.
package struct CertificateTransparencyReport: Sendable, Hashable {
    /// One SCT's finding.
    package enum Status: Sendable, Hashable {
        /// Counts toward the policy.
        case valid
        /// Does not count: why (bad signature, a timestamp in the future, a log not usable then, outside its interval…).
        case invalid(String)
        /// Its log is not on the list.
        case unknownLog
    }

    /// One SCT and what it came to.
    package struct Entry: Sendable, Hashable {
        /// The SCT.
        package var sct: SignedCertificateTimestamp
        /// Its log, when listed.
        package var log: CTLogList.Log?
        /// Valid, invalid (why), or from an unknown log.
        package var status: Status
    }

    /// Every embedded SCT, in certificate order.
    package var entries: [Entry]
    /// Valid SCTs required for the certificate's lifetime.
    package var requiredSCTs: Int
    /// Distinct operators required.
    package var requiredOperators: Int
    /// Why the SCT list could not be read, if it could not.
    package var malformed: String?

    /// The valid SCTs.
    package var validCount: Int { entries.filter { $0.status == .valid }.count }
    /// SCTs that do not count, their logs known.
    package var invalidCount: Int { entries.filter { if case .invalid = $0.status { return true } else { return false } }.count }
    /// SCTs from logs not on the list.
    package var unknownLogCount: Int { entries.filter { $0.status == .unknownLog }.count }
    /// The operators of the valid SCTs.
    package var operators: Set<String> { Set(entries.filter { $0.status == .valid }.compactMap { $0.log?.operatorName }) }
    /// Whether the policy is met.
    package var meetsPolicy: Bool { malformed == nil && validCount >= requiredSCTs && operators.count >= requiredOperators }

    /// "2 valid SCTs of 3 required, from 1 operator of 2 required; 1 invalid (…); 1 from an unknown log", safe to
    /// show: log names and descriptions (a log list's text) escaped by ``DisplayText``.
    package var summary: String { DisplayText.escaped(unescapedSummary) }

    /// ``summary`` with the log list's texts as they are: for data (a reason's detail, a note) that is escaped
    /// where it is shown.
    package var unescapedSummary: String {
        if let malformed { return "the SCT list is malformed: \(malformed)" }
        var parts = [
            "\(validCount) valid SCT\(validCount == 1 ? "" : "s") of \(requiredSCTs) required, from \(operators.count) operator\(operators.count == 1 ? "" : "s") of \(requiredOperators) required"
        ]
        let invalid = entries.compactMap { entry -> String? in
            guard case .invalid(let why) = entry.status else { return nil }
            return "\(entry.log?.description ?? entry.sct.logIDBase64): \(why)"
        }
        if !invalid.isEmpty { parts.append("\(invalid.count) invalid (" + invalid.joined(separator: "; ") + ")") }
        if unknownLogCount > 0 {
            parts.append(
                "\(unknownLogCount) from unknown logs (" + entries.filter { $0.status == .unknownLog }.map(\.sct.logIDBase64).joined(separator: ", ") + ")")
        }
        return parts.joined(separator: "; ")
    }

    /// Checks `leaf`'s embedded SCTs, `issuer` being the next certificate on the validated path, against `policy`'s
    /// log list at `time` (see ``CertificateTransparencyPolicy`` for what makes an SCT valid).
    package static func check(leaf: Certificate, issuer: Certificate, policy: CertificateTransparencyPolicy, at time: Date) -> CertificateTransparencyReport {
        let lifetime = leaf.notValidAfter.timeIntervalSince(leaf.notValidBefore)
        var report = CertificateTransparencyReport(
            entries: [], requiredSCTs: CertificateTransparencyPolicy.requiredSCTs(forLifetime: lifetime), requiredOperators: policy.minimumOperators)
        let scts: [SignedCertificateTimestamp]
        do {
            scts = try SignedCertificateTimestamp.embedded(in: leaf)
        } catch {
            report.malformed = error.detail
            return report
        }
        guard !scts.isEmpty else { return report }
        let signed = Result { try PrecertificateEntry(leaf: leaf, issuer: issuer) }
        for sct in scts {
            guard let log = policy.logList?.log(id: sct.logID) else {
                report.entries.append(Entry(sct: sct, log: nil, status: .unknownLog))
                continue
            }
            report.entries.append(Entry(sct: sct, log: log, status: status(of: sct, log: log, leaf: leaf, entry: signed, at: time)))
        }
        return report
    }

    /// The signed bytes (RFC 6962 §3.2) of each of `scts` over `leaf`'s precertificate entry with `issuer` — what a log
    /// signs, for tools and benchmarks.
    package static func signedEntries(leaf: Certificate, issuer: Certificate, scts: [SignedCertificateTimestamp]) throws -> [[UInt8]] {
        let entry = try PrecertificateEntry(leaf: leaf, issuer: issuer)
        return scts.map(entry.signedData(for:))
    }

    private static func status(
        of sct: SignedCertificateTimestamp, log: CTLogList.Log, leaf: Certificate, entry: Result<PrecertificateEntry, any Error>, at time: Date
    ) -> Status {
        if sct.timestamp > time { return .invalid("its timestamp \(RFC3339.string(sct.timestamp)) is after the evaluation time") }
        switch log.state {
        case .qualified?, .usable?:
            break
        case .readonly?, .retired?:
            if let since = log.stateTimestamp, sct.timestamp >= since {
                return .invalid("the log was \(log.state?.rawValue ?? "") from \(RFC3339.string(since)), before the SCT's timestamp")
            }
        case .pending?, .rejected?:
            return .invalid("the log is \(log.state?.rawValue ?? "") (never usable)")
        case nil:
            return .invalid("the log list gives the log no state")
        }
        if let interval = log.temporalInterval, !interval.contains(leaf.notValidAfter) {
            return .invalid(
                "the certificate expires outside the log's temporal interval \(RFC3339.string(interval.lowerBound)) – \(RFC3339.string(interval.upperBound))")
        }
        let algorithm: Certificate.SignatureAlgorithm
        switch (sct.hashAlgorithm, sct.signatureAlgorithm) {
        case (4, 3): algorithm = .ecdsaWithSHA256
        case (4, 1): algorithm = .sha256WithRSAEncryption
        default:
            return .invalid(
                "its signature algorithm (hash \(sct.hashAlgorithm), signature \(sct.signatureAlgorithm)) is not SHA-256 with ECDSA or RSA (RFC 6962 §2.1.4)")
        }
        guard case .success(let entry) = entry else { return .invalid("the certificate's TBSCertificate cannot be rebuilt without its SCT list") }
        guard log.publicKey.isValidSignature(sct.signature, for: entry.signedData(for: sct), signatureAlgorithm: algorithm) else {
            return .invalid("its signature does not verify with the log's key")
        }
        return .valid
    }
}

/// The precertificate log entry an embedded SCT signs (RFC 6962 §3.2): the SHA-256 of the issuer's
/// SubjectPublicKeyInfo, and the leaf's TBSCertificate without the SCT list extension (which is what the
/// precertificate's TBSCertificate becomes once its poison extension is removed, RFC 6962 §3.1).
struct PrecertificateEntry: Sendable {
    let issuerKeyHash: [UInt8]
    let tbs: [UInt8]

    init(leaf: Certificate, issuer: Certificate) throws {
        var spki = DER.Serializer()
        try spki.serialize(issuer.publicKey)
        issuerKeyHash = Array(SHA256.hash(data: spki.serializedBytes))
        tbs = try Self.tbsWithoutSCTList(leaf.tbsCertificateBytes)
    }

    /// The DER TBSCertificate with the SCT list extension removed (and the extensions field left out if it is then empty).
    static func tbsWithoutSCTList(_ bytes: ArraySlice<UInt8>) throws -> [UInt8] {
        let root = try DER.parse(bytes)
        guard case .constructed(let children) = root.content else { throw SignedCertificateTimestamp.ParseError("a primitive TBSCertificate") }
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { tbs in
            for child in children {
                guard child.identifier == ASN1Identifier(tagWithNumber: 3, tagClass: .contextSpecific) else {
                    tbs.serializeRawBytes(child.encodedBytes)
                    continue
                }
                let kept: [ArraySlice<UInt8>] = try DER.explicitlyTagged(child, tagNumber: 3, tagClass: .contextSpecific) { list in
                    guard case .constructed(let extensions) = list.content else { throw SignedCertificateTimestamp.ParseError("a primitive extensions list") }
                    return try extensions.compactMap { node in
                        let ext = try Certificate.Extension(derEncoded: node)
                        return ext.oid == SignedCertificateTimestamp.extensionOID ? nil : node.encodedBytes
                    }
                }
                guard !kept.isEmpty else { continue }
                tbs.serialize(explicitlyTaggedWithTagNumber: 3, tagClass: .contextSpecific) { explicit in
                    explicit.appendConstructedNode(identifier: .sequence) { list in
                        for ext in kept { list.serializeRawBytes(ext) }
                    }
                }
            }
        }
        return serializer.serializedBytes
    }

    /// The `digitally-signed` struct of RFC 6962 §3.2 for `sct` over this precertificate entry.
    func signedData(for sct: SignedCertificateTimestamp) -> [UInt8] {
        SignedCertificateTimestamp.signedData(
            version: sct.version, timestampMilliseconds: sct.timestampMilliseconds, issuerKeyHash: issuerKeyHash, tbs: tbs, extensions: sct.extensions)
    }
}
