import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A presented chain read from a file or from bytes, leaf first, as `trust evaluate --chain` reads it:
/// a PEM bundle or one DER certificate.
///
/// Certificates that are well formed but in a form that cannot be processed (RSA under 2048 bits,
/// MD5, RSA-PSS…) are handled the way a client would: an unprocessable *leaf* means the chain is
/// refused (see ``refusal(peerName:)``); an unprocessable certificate after the leaf is left out of
/// ``certificates`` with a sentence in ``notes``. Input that is not a certificate at all is a
/// ``CertificateLoadingError``.
package struct PresentedChainInput: Sendable {
    /// The certificates to present, leaf first, without the ones that cannot be processed.
    package var certificates: [Certificate]
    /// The leaf, when it cannot be processed, and why; the chain must then be refused.
    package var unprocessableLeaf: (certificate: RawCertificate, detail: String)?
    /// One sentence for each certificate after the leaf that was left out.
    package var notes: [String]

    /// Sorts entries read leniently (``CertificateSource/entries(bytes:source:)``) into a chain.
    /// Entries after an unprocessable leaf are not looked at.
    package init(entries: [CertificateEntry]) {
        certificates = []
        unprocessableLeaf = nil
        notes = []
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .parsed(let certificate):
                certificates.append(certificate)
            case .unsupported(let raw, let detail):
                if index == 0 {
                    unprocessableLeaf = (raw, detail)
                    certificates = []
                    notes = []
                    return
                }
                notes.append("presented certificate \(index) (\(raw.subject ?? "?")) was ignored: \(detail)")
            }
        }
    }

    /// Reads PEM or DER bytes.
    package init(bytes: some Collection<UInt8>, source: String = "<memory>") throws(CertificateLoadingError) {
        self.init(entries: try CertificateSource.entries(bytes: bytes, source: source))
    }

    /// Reads a chain file (PEM or DER), or every certificate file of a folder in name order.
    package init(contentsOf path: String) throws(CertificateLoadingError) {
        self.init(entries: try CertificateSource.entries(atPath: path))
    }

    /// The decision for a chain whose leaf cannot be processed (never trusted, with why), or `nil`
    /// when the leaf is usable and the chain should be evaluated.
    package func refusal(peerName: PeerName?) -> TrustDecision? {
        guard let (raw, detail) = unprocessableLeaf else { return nil }
        return TrustDecision.refused(raw.refusalReasons, trust: ServerTrust(presentedChain: [], peerName: peerName), policy: .certificateParsing)
            .adding(notes: ["the leaf certificate (\(raw.spkiPin)) could not be processed: \(detail)"])
    }
}
