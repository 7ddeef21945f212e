import NIOConcurrencyHelpers
import NIOSSL
import Trust
import X509

/// Anchors as NIOSSL certificates, converted once per process: a validated path ends at an anchor
/// the peer usually did not send, and handing the path to NIOSSL (`VerificationMetadata`) would
/// otherwise re-serialise that anchor and have BoringSSL parse it again on every handshake. Keyed
/// by the TBSCertificate bytes and the signature bytes compared in full; bounded (cleared past
/// 256 anchors, far more than a process validates against).
final class AnchorConversions: Sendable {
    static let shared = AnchorConversions()

    private let entries = NIOLockedValueBox<[BulkBytes: (Certificate, NIOSSLCertificate)]>([:])

    /// `certificate` as a NIOSSL certificate, or `nil` when BoringSSL cannot read it.
    func nioCertificate(for certificate: Certificate) -> NIOSSLCertificate? {
        let key = BulkBytes(certificate.tbsCertificateBytes)
        if let (known, converted) = entries.withLockedValue({ $0[key] }), known == certificate { return converted }
        guard let converted = try? NIOSSLCertificate(bytes: certificate.derBytes, format: .der) else { return nil }
        entries.withLockedValue { entries in
            if entries.count >= 256 { entries.removeAll(keepingCapacity: true) }
            entries[key] = (certificate, converted)
        }
        return converted
    }
}
