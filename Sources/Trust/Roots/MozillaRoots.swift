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
    /// The store's text and the Base64 body of this certificate in it, decoded only when asked for: a process
    /// that looks up one root decodes one (or none: a root is found through the index, which has its own copy).
    private let text: [UInt8]
    fileprivate let body: Range<Int>

    package init(label: String, serverTrust: ServerTrust, serverDistrustAfter: Date?, spki: SPKIPin, text: [UInt8], body: Range<Int>) {
        self.label = label
        self.serverTrust = serverTrust
        self.serverDistrustAfter = serverDistrustAfter
        self.spki = spki
        self.text = text
        self.body = body
    }

    /// The certificate's DER (empty when its Base64 is not valid).
    package var der: [UInt8] {
        text.withUnsafeBufferPointer { PEMDecoder.decodeBase64($0, from: body.lowerBound, to: body.upperBound) } ?? []
    }

    /// The certificate, parsed; `nil` if swift-certificates cannot parse it.
    package var certificate: Certificate? { try? Certificate(derEncoded: der) }

    /// Equal entries say the same of the same certificate (wherever their texts hold it).
    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.label == rhs.label && lhs.serverTrust == rhs.serverTrust && lhs.serverDistrustAfter == rhs.serverDistrustAfter && lhs.spki == rhs.spki
            && lhs.der == rhs.der
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(label)
        hasher.combine(spki)
    }
}

/// The embedded store, read once per process from ``MozillaRoots/embeddedPEM`` when first needed: its entries,
/// the entries by key, and the trusted roots indexed by subject as the system bundle is.
///
/// Read on the text's bytes, as the system bundle is (``SystemRootIndex``): the trusted roots are indexed on the
/// embedded text itself, each root parsed only when a path search looks it up, and an entry's DER is decoded only
/// when asked for (an entry is found by its key's hash, from the header). Reading it as `String` lines, decoding every
/// root, then writing the trusted roots out as a second PEM text for the index, cost every process that looked up a
/// public root about 13 ms of CPU (`trust get` of a page whose chain ends at a `--cacert` anchor: 44.5 ms, now 31.9).
package final class MozillaRootStore: Sendable {
    package static let shared = MozillaRootStore(pem: MozillaRoots.embeddedPEM.withUTF8Buffer { Array($0) })

    package let entries: [MozillaRootEntry]
    package let trusted: [MozillaRootEntry]
    let bySPKI: [SPKIPin: [MozillaRootEntry]]
    let index: SystemRootIndex

    /// Reads the generator's text: `# key: value` header lines, then each certificate's PEM block.
    package convenience init(pem: String) {
        self.init(pem: Array(pem.utf8))
    }

    /// Reads the generator's text from its UTF-8 bytes, line by line (LF ends a line).
    package init(pem text: [UInt8]) {
        var entries: [MozillaRootEntry] = []
        text.withUnsafeBufferPointer { bytes in
            var header: [String: String] = [:]
            var bodyStart: Int?
            var lineStart = 0
            while lineStart < bytes.count {
                var lineEnd = lineStart
                while lineEnd < bytes.count && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
                defer { lineStart = lineEnd + 1 }
                let line = UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd])
                if let start = bodyStart {
                    guard line.elementsEqual(Self.end) else { continue }
                    bodyStart = nil
                    let trust = header["server"].flatMap(MozillaRootEntry.ServerTrust.init(rawValue:)) ?? .notTrusted
                    let after = header["server-distrust-after"]?.split(separator: " ").first.flatMap { Double($0) }.map(Date.init(timeIntervalSince1970:))
                    if let spki = header["spki-sha256"].flatMap({ SPKIPin($0) }) {
                        entries.append(
                            MozillaRootEntry(
                                label: header["label"] ?? "", serverTrust: trust, serverDistrustAfter: after, spki: spki, text: text, body: start..<lineStart))
                    }
                    header = [:]
                } else if line.elementsEqual(Self.begin) {
                    bodyStart = lineEnd + 1
                } else if line.starts(with: Self.headerPrefix), let colon = line.firstIndex(of: UInt8(ascii: ":")) {
                    let key = String(decoding: UnsafeBufferPointer(rebasing: line[Self.headerPrefix.count..<colon]), as: UTF8.self)
                    header[key] = String(decoding: UnsafeBufferPointer(rebasing: line[(colon + 1)...]), as: UTF8.self).trimmingASCIIBlanks()
                }
            }
        }
        self.entries = entries
        self.trusted = entries.filter { $0.serverTrust == .trusted }
        self.bySPKI = Dictionary(grouping: entries, by: \.spki)
        self.index = SystemRootIndex(bundle: text, bodies: trusted.map(\.body))
    }

    private static let begin = Array("-----BEGIN CERTIFICATE-----".utf8)
    private static let end = Array("-----END CERTIFICATE-----".utf8)
    private static let headerPrefix = Array("# ".utf8)

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
