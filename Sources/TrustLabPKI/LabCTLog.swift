import Crypto
import SwiftASN1
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A Certificate Transparency log in the lab: a P-256 key, a name and an operator. It signs SCTs over precertificate
/// entries (RFC 6962 §3.2) — the lab's "precertificate flow" issues a leaf's TBSCertificate first, has the logs sign it,
/// then issues the final certificate with the SCT list embedded — and it appears in the lab's log list
/// (``logList(_:timestamp:)``, Chrome's v3 schema).
public struct LabCTLog: Sendable {
    /// The log's name.
    public let description: String
    /// Its operator.
    public let operatorName: String
    /// Its state in the log list.
    public var state: CTLogList.State
    /// When it entered that state.
    public var stateTimestamp: Date
    /// Only certificates expiring in this interval are logged (none: any).
    public var temporalInterval: Range<Date>?
    private let key: P256.Signing.PrivateKey

    /// The DER SubjectPublicKeyInfo.
    package var publicKeyDER: [UInt8] { Array(key.publicKey.derRepresentation) }
    /// The log ID: SHA-256 of the DER key.
    package var logID: [UInt8] { Array(SHA256.hash(data: publicKeyDER)) }

    /// A new log with a fresh key.
    public init(
        description: String, operatorName: String, state: CTLogList.State = .usable, stateTimestamp: Date = Date(timeIntervalSinceNow: -365 * 86_400),
        temporalInterval: Range<Date>? = nil
    ) {
        self.description = description
        self.operatorName = operatorName
        self.state = state
        self.stateTimestamp = stateTimestamp
        self.temporalInterval = temporalInterval
        self.key = P256.Signing.PrivateKey()
    }

    /// The SCT this log issues for a precertificate entry (`tbs` without the SCT list, `issuerKeyHash` the SHA-256
    /// of the issuer's SubjectPublicKeyInfo) at `timestamp`.
    package func sct(tbs: [UInt8], issuerKeyHash: [UInt8], timestamp: Date) throws -> SignedCertificateTimestamp {
        let milliseconds = UInt64(max(0, timestamp.timeIntervalSince1970 * 1000))
        let data = SignedCertificateTimestamp.signedData(timestampMilliseconds: milliseconds, issuerKeyHash: issuerKeyHash, tbs: tbs)
        let signature = try key.signature(for: data)
        return SignedCertificateTimestamp(
            version: 0, logID: logID, timestamp: Date(timeIntervalSince1970: Double(milliseconds) / 1000), timestampMilliseconds: milliseconds,
            extensions: [], hashAlgorithm: 4, signatureAlgorithm: 3, signature: Array(signature.derRepresentation))
    }

    /// A log list (Chrome's `log_list.json` v3 schema) naming `logs`, grouped by operator, published at `timestamp`.
    public static func logList(_ logs: [LabCTLog], timestamp: Date = Date()) -> String {
        var operators: [String] = []
        for log in logs where !operators.contains(log.operatorName) { operators.append(log.operatorName) }
        func quoted(_ text: String) -> String {
            "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        }
        let body = operators.map { name in
            let entries = logs.filter { $0.operatorName == name }.map { log in
                var fields = [
                    "\"description\": \(quoted(log.description))", "\"log_id\": \(quoted(Data(log.logID).base64EncodedString()))",
                    "\"key\": \(quoted(Data(log.publicKeyDER).base64EncodedString()))",
                    "\"url\": \(quoted("https://ct.lab.test/\(log.logID.prefix(4).hexText())/"))",
                    "\"mmd\": 86400", "\"state\": {\(quoted(log.state.rawValue)): {\"timestamp\": \(quoted(RFC3339.string(log.stateTimestamp)))}}",
                ]
                if let interval = log.temporalInterval {
                    fields.append(
                        "\"temporal_interval\": {\"start_inclusive\": \(quoted(RFC3339.string(interval.lowerBound))), \"end_exclusive\": \(quoted(RFC3339.string(interval.upperBound)))}"
                    )
                }
                return "        {" + fields.joined(separator: ", ") + "}"
            }
            return "    {\"name\": \(quoted(name)), \"email\": [], \"logs\": [\n" + entries.joined(separator: ",\n") + "\n    ]}"
        }
        return "{\n  \"version\": \"swift-trust lab\",\n  \"log_list_timestamp\": \(quoted(RFC3339.string(timestamp))),\n  \"operators\": [\n"
            + body.joined(separator: ",\n") + "\n  ]\n}\n"
    }
}

/// How an embedded SCT departs from a good one.
public enum LabSCT: Sendable {
    /// A good SCT from the log, timestamped an hour ago.
    case good(LabCTLog)
    /// An SCT whose signature is corrupted.
    case badSignature(LabCTLog)
    /// An SCT timestamped a day in the future.
    case futureTimestamp(LabCTLog)
}

extension LabAuthority {
    /// A leaf whose SCTs are embedded through the precertificate flow (RFC 6962 §3.1): its TBSCertificate is built
    /// first, each log signs it, then the certificate is issued with the same fields plus the SCT list extension.
    /// No SCTs: a leaf without the extension.
    public func leaf(
        dnsNames: [String], scts: [LabSCT], notBefore: Date = Date(timeIntervalSinceNow: -86_400), notAfter: Date = Date(timeIntervalSinceNow: 90 * 86_400)
    ) throws -> LabIdentity {
        let keyType = LabKeyType.p256
        let key = try keyType.generate()
        let name = try DistinguishedName {
            OrganizationName("swift-trust lab")
            CommonName(dnsNames.first ?? "ct leaf")
        }
        let extensions = try Self.leafExtensions(
            publicKey: key.publicKey, issuerKey: identity.certificate.publicKey, dnsNames: dnsNames, ipAddresses: [],
            includesSubjectAltName: true, extendedKeyUsage: [.serverAuth], isCA: false)
        let serial = Certificate.SerialNumber()
        func issue(_ extensions: Certificate.Extensions) throws -> Certificate {
            try Certificate(
                version: .v3, serialNumber: serial, publicKey: key.publicKey, notValidBefore: notBefore, notValidAfter: notAfter,
                issuer: identity.certificate.subject, subject: name, signatureAlgorithm: identity.keyType.signatureAlgorithm,
                extensions: extensions, issuerPrivateKey: identity.privateKey)
        }
        let precertificate = try issue(extensions)
        guard !scts.isEmpty else {
            return LabIdentity(
                certificate: precertificate, privateKey: key, keyType: keyType, intermediates: identity.certificate.isSelfIssued ? [] : identity.chain)
        }
        var spki = DER.Serializer()
        try spki.serialize(identity.certificate.publicKey)
        let issuerKeyHash = Array(SHA256.hash(data: spki.serializedBytes))
        let tbs = Array(precertificate.tbsCertificateBytes)
        let signed = try scts.map { variation -> SignedCertificateTimestamp in
            switch variation {
            case .good(let log):
                return try log.sct(tbs: tbs, issuerKeyHash: issuerKeyHash, timestamp: Date(timeIntervalSinceNow: -3_600))
            case .futureTimestamp(let log):
                return try log.sct(tbs: tbs, issuerKeyHash: issuerKeyHash, timestamp: Date(timeIntervalSinceNow: 86_400))
            case .badSignature(let log):
                var sct = try log.sct(tbs: tbs, issuerKeyHash: issuerKeyHash, timestamp: Date(timeIntervalSinceNow: -3_600))
                // Sign different bytes (another timestamp), keep this one: a well-formed signature that does not verify.
                sct.timestampMilliseconds += 1
                sct.timestamp = Date(timeIntervalSince1970: Double(sct.timestampMilliseconds) / 1000)
                return sct
            }
        }
        var final = extensions
        try final.append(
            Certificate.Extension(
                oid: SignedCertificateTimestamp.extensionOID, critical: false, value: SignedCertificateTimestamp.listExtensionValue(signed)[...]))
        return LabIdentity(
            certificate: try issue(final), privateKey: key, keyType: keyType, intermediates: identity.certificate.isSelfIssued ? [] : identity.chain)
    }
}
