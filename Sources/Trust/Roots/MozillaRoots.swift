import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// NSS's root store — the roots Firefox trusts for TLS servers, with NSS's own limits on them — compiled into the
/// library, so that a Linux machine trusts what the browsers trust whatever its `ca-certificates` package holds.
///
/// The store is generated from NSS's `certdata.txt` (``embeddedSource``; Mozilla Public License 2.0) by
/// `Scripts/generate-mozilla-roots.py`. For every certificate it lists, NSS says whether it is a trust anchor for
/// TLS servers, and for some roots a *server distrust-after* date: a chain to such a root is refused when its
/// end-entity certificate's `notBefore` is after that date (how Mozilla phases a CA out without breaking the
/// certificates it already issued; Entrust's roots after 2024-11-30, Chunghwa's ePKI after 2025-04-15).
///
/// ``RootStore`` chooses which public roots anchor paths; whichever it is, NSS's refusals apply to every root
/// NSS lists (see ``RootStore``). Each root is parsed only when a path search first looks it up.
public enum MozillaRoots {
    /// How many roots NSS trusts for TLS servers.
    public static var count: Int { MozillaRootStore.shared.trusted.count }

    /// The roots NSS trusts for TLS servers, parsed (all of them: the path search looks roots up by name instead).
    package static var certificates: [Certificate] { MozillaRootStore.shared.index.allCertificates() }
}

/// What NSS says about one certificate it lists, for TLS servers.
package struct MozillaRootEntry: Sendable, Hashable {
    /// NSS's server trust for a certificate.
    package enum ServerTrust: String, Sendable, Hashable {
        /// A trust anchor for TLS servers (`CKT_NSS_TRUSTED_DELEGATOR`).
        case trusted
        /// Listed, but no anchor for servers (`CKT_NSS_MUST_VERIFY_TRUST`): e-mail only, or withdrawn.
        case notTrusted = "not-trusted"
        /// Explicitly distrusted (`CKT_NSS_NOT_TRUSTED`).
        case distrusted
    }

    /// NSS's label (`CKA_LABEL`).
    package let label: String
    package let serverTrust: ServerTrust
    /// `CKA_NSS_SERVER_DISTRUST_AFTER`: chains whose end-entity certificate has a later `notBefore` are refused.
    package let serverDistrustAfter: Date?
    /// The SHA-256 of the certificate's SubjectPublicKeyInfo.
    package let spki: SPKIPin
    /// The certificate's DER.
    package let der: [UInt8]

    /// The certificate, parsed; `nil` if swift-certificates cannot parse it.
    package var certificate: Certificate? { try? Certificate(derEncoded: der) }
}

/// The embedded store, read once per process from ``MozillaRoots/embeddedPEM`` when first needed: its entries,
/// the entries by key, and the trusted roots indexed by subject as the system bundle is.
package final class MozillaRootStore: Sendable {
    package static let shared = MozillaRootStore(pem: MozillaRoots.embeddedPEM.withUTF8Buffer { String(decoding: $0, as: UTF8.self) })

    package let entries: [MozillaRootEntry]
    package let trusted: [MozillaRootEntry]
    let bySPKI: [SPKIPin: [MozillaRootEntry]]
    let index: SystemRootIndex

    /// Reads the generator's text: `# key: value` header lines, then each certificate's PEM block.
    package init(pem: String) {
        var entries: [MozillaRootEntry] = []
        var header: [String: String] = [:]
        var body: [Substring] = []
        var inBody = false
        for line in pem.split(separator: "\n", omittingEmptySubsequences: true) {
            if line == "-----BEGIN CERTIFICATE-----" {
                inBody = true
                body = []
            } else if line == "-----END CERTIFICATE-----" {
                inBody = false
                let trust = header["server"].flatMap(MozillaRootEntry.ServerTrust.init(rawValue:)) ?? .notTrusted
                let after = header["server-distrust-after"]?.split(separator: " ").first.flatMap { Double($0) }.map(Date.init(timeIntervalSince1970:))
                if let der = Data(base64Encoded: body.joined()), let spki = header["spki-sha256"].flatMap({ SPKIPin($0) }) {
                    entries.append(MozillaRootEntry(label: header["label"] ?? "", serverTrust: trust, serverDistrustAfter: after, spki: spki, der: Array(der)))
                }
                header = [:]
            } else if inBody {
                body.append(line)
            } else if line.hasPrefix("# "), let colon = line.firstIndex(of: ":") {
                let key = line[line.index(line.startIndex, offsetBy: 2)..<colon]
                header[String(key)] = line[line.index(after: colon)...].trimmingASCIIBlanks()
            }
        }
        self.entries = entries
        self.trusted = entries.filter { $0.serverTrust == .trusted }
        self.bySPKI = Dictionary(grouping: entries, by: \.spki)
        var bundle: [UInt8] = []
        for entry in trusted {
            bundle +=
                Array("-----BEGIN CERTIFICATE-----\n".utf8)
                + Array(Data(entry.der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed]).utf8)
            bundle += Array("\n-----END CERTIFICATE-----\n".utf8)
        }
        self.index = SystemRootIndex(bundle: bundle)
    }

    /// What NSS says about `certificate` (whose key hashes to `spki`): the entry for that key when NSS lists it once;
    /// when it lists several certificates with the key, the entry of that very certificate, else the most
    /// restrictive entry for that key and name.
    package func entry(for certificate: Certificate, spki: SPKIPin) -> MozillaRootEntry? {
        guard let candidates = bySPKI[spki] else { return nil }
        // One entry for the key (every key of the store today): its facts, with no DER to serialise or compare on
        // each anchored candidate of the path search. A root re-issued with that key is the same CA to a path.
        if candidates.count == 1, let only = candidates.first { return only }
        let der = certificate.derBytes
        if let exact = candidates.first(where: { $0.der == der }) { return exact }
        let named = candidates.filter { $0.certificate?.subject == certificate.subject }
        return named.min { restriction($0) > restriction($1) }
    }

    private func restriction(_ entry: MozillaRootEntry) -> Int {
        switch entry.serverTrust {
        case .distrusted: return 3
        case .notTrusted: return 2
        case .trusted: return entry.serverDistrustAfter == nil ? 0 : 1
        }
    }
}
