import SwiftASN1
import Trust
import X509

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

/// The lab's standard public-key infrastructure: a trusted root with an intermediate, and
/// server certificates in good and bad configurations, made fresh (new keys) every time.
///
/// | name | what it is |
/// |---|---|
/// | `good` | `good.lab.test`, `*.good.lab.test`, `127.0.0.1`, issued via the intermediate |
/// | `expired` / `not-yet-valid` | like `good`, outside its validity period |
/// | `wrong-host` | valid, but for `other.lab.test` |
/// | `self-signed` | a self-signed leaf for `self-signed.lab.test` |
/// | `untrusted-root` | issued by a root nobody trusts |
/// | `incomplete-chain` | `good`'s leaf sent without its intermediate |
/// | `ip-only` | only an IP SAN, `127.0.0.1` |
/// | `no-san` | the host name in the subject CN only |
/// | `client-auth-only` | EKU clientAuth only |
/// | `mitm` | issued for `good.lab.test` by a *second trusted* CA, with `good`'s intermediate appended (the pinned-certificate append attack) |
/// | `sct` | like `good` (`sct.lab.test`), with SCTs from two lab CT logs of two operators: meets the CT policy |
/// | `no-sct` / `one-sct` | no SCT / one SCT |
/// | `bad-sct` | two SCTs of two operators, one with a signature that does not verify |
///
/// The CT logs (``ctLogs``): `Alpha 1` and `Alpha 2` (operator `swift-trust lab Alpha`) and `Beta` (operator
/// `swift-trust lab Beta`); ``ctLogListJSON`` is their log list.
///
/// Client identities for mutual TLS (``clients``):
///
/// | name | what it is |
/// |---|---|
/// | `client` | `lab client`, EKU clientAuth, issued via the intermediate (under the lab root) |
/// | `partner` | `lab partner`, EKU clientAuth, issued by the separate client CA (``clientCA``) |
/// | `client-expired` | like `client`, expired |
/// | `client-server-eku` | like `client`, but EKU serverAuth only |
/// | `client-foreign` | issued by the untrusted root |
public struct LabPKI: Sendable {
    /// The domain every lab host name is under.
    public static let domain = "lab.test"

    /// The trusted root.
    public let root: LabAuthority
    /// The intermediate under `root` that issues most server and client certificates.
    public let intermediate: LabAuthority
    /// Another CA that the default anchors also trust (for the MITM scenario).
    public let otherRoot: LabAuthority
    /// A CA that is never trusted.
    public let untrustedRoot: LabAuthority
    /// Server identities by name (see the table above); `incomplete-chain` has `good`'s.
    public let servers: [String: LabIdentity]
    /// The certificates each named server presents (may differ from its identity's chain).
    public let presentedChains: [String: [Certificate]]
    /// A root that issues only client certificates (the "specific CA" of a mutual-TLS server).
    public let clientCA: LabAuthority
    /// Client identities for mutual TLS, by name (see the table above).
    public let clients: [String: LabIdentity]
    /// The lab's CT logs: two of one operator, one of another.
    public let ctLogs: [LabCTLog]
    /// The log list (Chrome's v3 schema) of ``ctLogs``, published when the PKI was made.
    public let ctLogListJSON: String

    /// The names of `clients`, in table order.
    public static let clientNames = ["client", "partner", "client-expired", "client-server-eku", "client-foreign"]

    /// The anchors the lab's clients trust: the root and the other root.
    public var trustedRoots: [Certificate] { [root.certificate, otherRoot.certificate] }

    /// The names of `servers`, in table order.
    public static let serverNames = [
        "good", "expired", "not-yet-valid", "wrong-host", "self-signed", "untrusted-root", "incomplete-chain",
        "ip-only", "no-san", "client-auth-only", "mitm", "sct", "no-sct", "one-sct", "bad-sct",
    ]

    /// The host name a client should use for `server`.
    public static func hostName(for server: String) -> String {
        server == "ip-only" ? "127.0.0.1" : (server == "mitm" || server == "incomplete-chain" ? "good" : server) + "." + domain
    }

    /// Makes a new lab PKI.
    public static func make(keyType: LabKeyType = .p256, now: Date = Date()) throws -> LabPKI {
        let day: TimeInterval = 86_400
        let root = try LabAuthority.root(commonName: "swift-trust Lab Root CA", keyType: keyType, notBefore: now - day, notAfter: now + 3650 * day)
        let intermediate = try root.intermediate(
            commonName: "swift-trust Lab Issuing CA", keyType: keyType, pathLength: 0, notBefore: now - day, notAfter: now + 1825 * day)
        let otherRoot = try LabAuthority.root(
            commonName: "swift-trust Lab Other Trusted Root", keyType: keyType, notBefore: now - day, notAfter: now + 3650 * day)
        let untrustedRoot = try LabAuthority.root(
            commonName: "swift-trust Lab Untrusted Root", keyType: keyType, notBefore: now - day, notAfter: now + 3650 * day)
        let host = { (name: String) in name + "." + domain }
        var servers: [String: LabIdentity] = [:]
        let good = try intermediate.leaf(
            dnsNames: [host("good"), "*.good." + domain], ipAddresses: ["127.0.0.1"], keyType: keyType, notBefore: now - day, notAfter: now + 90 * day)
        servers["good"] = good
        servers["expired"] = try intermediate.leaf(dnsNames: [host("expired")], keyType: keyType, notBefore: now - 30 * day, notAfter: now - day)
        servers["not-yet-valid"] = try intermediate.leaf(dnsNames: [host("not-yet-valid")], keyType: keyType, notBefore: now + day, notAfter: now + 30 * day)
        servers["wrong-host"] = try intermediate.leaf(dnsNames: [host("other")], keyType: keyType, notBefore: now - day, notAfter: now + 90 * day)
        servers["self-signed"] = try LabAuthority.selfSignedLeaf(
            dnsNames: [host("self-signed")], keyType: keyType, notBefore: now - day, notAfter: now + 90 * day)
        servers["untrusted-root"] = try untrustedRoot.leaf(dnsNames: [host("untrusted-root")], keyType: keyType, notBefore: now - day, notAfter: now + 90 * day)
        servers["ip-only"] = try intermediate.leaf(ipAddresses: ["127.0.0.1", "::1"], keyType: keyType, notBefore: now - day, notAfter: now + 90 * day)
        servers["no-san"] = try intermediate.leaf(
            commonName: host("no-san"), includesSubjectAltName: false, keyType: keyType, notBefore: now - day, notAfter: now + 90 * day)
        servers["client-auth-only"] = try intermediate.leaf(
            dnsNames: [host("client-auth-only")], keyType: keyType, notBefore: now - day, notAfter: now + 90 * day, extendedKeyUsage: [.clientAuth])
        let mitm = try otherRoot.leaf(dnsNames: [host("good")], keyType: keyType, notBefore: now - day, notAfter: now + 90 * day)
        servers["mitm"] = mitm
        // Certificate Transparency: three logs of two operators, and leaves with none, one, two and a bad SCT.
        let alpha1 = LabCTLog(description: "swift-trust lab Alpha 1", operatorName: "swift-trust lab Alpha", stateTimestamp: now - 365 * day)
        let alpha2 = LabCTLog(description: "swift-trust lab Alpha 2", operatorName: "swift-trust lab Alpha", stateTimestamp: now - 365 * day)
        let beta = LabCTLog(description: "swift-trust lab Beta", operatorName: "swift-trust lab Beta", stateTimestamp: now - 365 * day)
        let ctLeaves: [(String, [LabSCT])] = [
            ("sct", [.good(alpha1), .good(beta)]), ("no-sct", []), ("one-sct", [.good(alpha1)]), ("bad-sct", [.badSignature(alpha1), .good(beta)]),
        ]
        for (name, scts) in ctLeaves {
            servers[name] = try intermediate.leaf(dnsNames: [host(name)], scts: scts, notBefore: now - day, notAfter: now + 90 * day)
        }
        var presented: [String: [Certificate]] = [:]
        for (name, identity) in servers { presented[name] = identity.chain }
        presented["incomplete-chain"] = [good.certificate]
        servers["incomplete-chain"] = good
        // The attack: a leaf from another trusted CA, followed by the victim's (public) intermediate.
        presented["mitm"] = [mitm.certificate, intermediate.certificate]
        let clientCA = try LabAuthority.root(commonName: "swift-trust Lab Client CA", keyType: keyType, notBefore: now - day, notAfter: now + 3650 * day)
        var clients: [String: LabIdentity] = [:]
        clients["client"] = try intermediate.leaf(
            commonName: "lab client", keyType: keyType, notBefore: now - day, notAfter: now + 90 * day, extendedKeyUsage: [.clientAuth])
        clients["partner"] = try clientCA.leaf(
            commonName: "lab partner", keyType: keyType, notBefore: now - day, notAfter: now + 90 * day, extendedKeyUsage: [.clientAuth])
        clients["client-expired"] = try intermediate.leaf(
            commonName: "lab client (expired)", keyType: keyType, notBefore: now - 30 * day, notAfter: now - day, extendedKeyUsage: [.clientAuth])
        clients["client-server-eku"] = try intermediate.leaf(
            commonName: "lab client (serverAuth only)", keyType: keyType, notBefore: now - day, notAfter: now + 90 * day, extendedKeyUsage: [.serverAuth])
        clients["client-foreign"] = try untrustedRoot.leaf(
            commonName: "lab stranger", keyType: keyType, notBefore: now - day, notAfter: now + 90 * day, extendedKeyUsage: [.clientAuth])
        return LabPKI(
            root: root, intermediate: intermediate, otherRoot: otherRoot, untrustedRoot: untrustedRoot, servers: servers, presentedChains: presented,
            clientCA: clientCA, clients: clients, ctLogs: [alpha1, alpha2, beta], ctLogListJSON: LabCTLog.logList([alpha1, alpha2, beta], timestamp: now))
    }

    /// Writes the PKI as PEM files under `directory`:
    /// `roots.pem` (the trusted anchors), `root.pem`, `intermediate.pem`, `other-root.pem`,
    /// `untrusted-root.pem`, `client-ca.pem`, for each server `NAME/chain.pem` (as presented), `NAME/cert.pem`,
    /// `NAME/key.pem`, for each client identity `clients/NAME/chain.pem` (leaf and intermediates),
    /// `clients/NAME/cert.pem`, `clients/NAME/key.pem`; plus `pins.txt` with every certificate's SPKI pin, and
    /// `crls/root.pem`, `crls/intermediate.pem` (revoking `expired` and `client-expired`) and `crls/all.pem` (both);
    /// and DER OCSP responses `ocsp/good.der`, `ocsp/good-delegated.der`, `ocsp/expired-revoked.der` and the request
    /// `ocsp/good-request.der`; `ct/log_list.json`, the lab's CT logs in Chrome's log list schema, and `ct/sct-list.bin`,
    /// the TLS-encoded SCT list embedded in the `sct` server's certificate.
    @discardableResult
    public func write(to directory: String) throws -> [String] {
        var written: [String] = []
        // Every file through PrivateFile: created 0600 (O_EXCL) and renamed into place, so a private key is never
        // readable by others, not even for a moment; public files are widened to 0644 before they get their name.
        func putBytes(_ relative: String, _ bytes: [UInt8], mode: mode_t = 0o644) throws {
            let path = directory.joiningPath(relative)
            do {
                // Folders 0755 whatever the umask: in a folder others can write, they could swap a key for their own.
                try FileManager.default.createDirectory(
                    atPath: path.parentPath, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
                try PrivateFile.write(bytes, to: path, mode: mode)
            } catch let error as PrivateFile.WriteError {
                throw LabError.cannotWrite(path, error.reason)
            } catch {
                throw LabError.cannotWrite(path, "\(error)")
            }
            written.append(path)
        }
        func put(_ relative: String, _ text: String, mode: mode_t = 0o644) throws {
            try putBytes(relative, Array(text.utf8), mode: mode)
        }
        try put("roots.pem", trustedRoots.map(LabIdentity.pem).joined())
        try put("root.pem", root.identity.certificatePEM)
        try put("intermediate.pem", intermediate.identity.certificatePEM)
        try put("other-root.pem", otherRoot.identity.certificatePEM)
        try put("untrusted-root.pem", untrustedRoot.identity.certificatePEM)
        try put("client-ca.pem", clientCA.identity.certificatePEM)
        var pins = ["# SPKI SHA-256 pins (sha256/BASE64  subject)"]
        for certificate in [root.certificate, intermediate.certificate, otherRoot.certificate, untrustedRoot.certificate, clientCA.certificate] {
            pins.append("\(certificate.spkiPin)  \(certificate.subject)")
        }
        for name in Self.serverNames {
            guard let identity = servers[name], let chain = presentedChains[name] else { continue }
            try put("\(name)/chain.pem", chain.map(LabIdentity.pem).joined())
            try put("\(name)/cert.pem", identity.certificatePEM)
            try put("\(name)/key.pem", identity.privateKeyPEM, mode: 0o600)
            pins.append("\(identity.certificate.spkiPin)  \(name): \(identity.certificate.subject)")
        }
        for name in Self.clientNames {
            guard let identity = clients[name] else { continue }
            try put("clients/\(name)/chain.pem", identity.chainPEM)
            try put("clients/\(name)/cert.pem", identity.certificatePEM)
            try put("clients/\(name)/key.pem", identity.privateKeyPEM, mode: 0o600)
            pins.append("\(identity.certificate.spkiPin)  clients/\(name): \(identity.certificate.subject)")
        }
        try put("pins.txt", pins.joined(separator: "\n") + "\n")
        try put("ct/log_list.json", ctLogListJSON)
        // CRLs valid 30 days: the root's (empty) and the intermediate's, which revokes the `expired` server and the
        // `client-expired` identity (keyCompromise). `--crlfile crls/all.pem` (both) satisfies chain checking.
        let month: TimeInterval = 30 * 86_400
        let revoked = [servers["expired"], clients["client-expired"]].compactMap { $0 }.map { LabCRL.Revoked($0.certificate, reason: .keyCompromise) }
        let rootCRL = try LabCRL(issuer: root, nextUpdate: Date(timeIntervalSinceNow: month)).pem
        let intermediateCRL = try LabCRL(issuer: intermediate, revoked: revoked, nextUpdate: Date(timeIntervalSinceNow: month)).pem
        try put("crls/root.pem", rootCRL)
        try put("crls/intermediate.pem", intermediateCRL)
        try put("crls/all.pem", intermediateCRL + rootCRL)
        // OCSP responses valid 30 days about the `good` server (good, from the intermediate and from a delegated
        // responder) and the `expired` one (revoked), and the request about `good` (DER, as `openssl ocsp -respin`/`-reqin` read).
        var current = LabOCSP.Variation()
        current.nextUpdate = month
        if let good = servers["good"], let expired = servers["expired"] {
            try putBytes("ocsp/good.der", LabOCSP.response(about: good.certificate, issuer: intermediate, status: .good, variation: current))
            try putBytes(
                "ocsp/good-delegated.der",
                LabOCSP.response(
                    about: good.certificate, issuer: intermediate, status: .good, signer: .delegate(LabOCSP.responder(issuedBy: intermediate)),
                    variation: current))
            try putBytes(
                "ocsp/expired-revoked.der",
                LabOCSP.response(
                    about: expired.certificate, issuer: intermediate, status: .revoked(at: Date(timeIntervalSinceNow: -3_600), reason: .keyCompromise),
                    variation: current))
            if let sct = servers["sct"], let ext = sct.certificate.extensions[oid: SignedCertificateTimestamp.extensionOID] {
                try putBytes("ct/sct-list.bin", Array(try ASN1OctetString(derEncoded: ext.value).bytes))
            }
            try putBytes(
                "ocsp/good-request.der",
                OCSPRequest(certificateIDs: [OCSPCertificateID(certificate: good.certificate, issuer: intermediate.certificate)]).derBytes())
        }
        return written
    }
}
