/// Why certificates could not be read. Always names the source (a file path, or
/// `"<memory>"`) and, for a PEM bundle, which block.
public struct CertificateLoadingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong while reading the certificates.
    public enum Kind: Hashable, Sendable {
        /// The file or folder could not be read (missing, permissions…).
        case unreadable(String)
        /// The input holds neither a PEM certificate block nor DER.
        case noCertificates
        /// A `-----BEGIN CERTIFICATE-----` block has no matching END line.
        case unterminatedPEMBlock(block: Int)
        /// A PEM block's body is not valid base64.
        case invalidBase64(block: Int)
        /// The DER is not a well-formed X.509 certificate (or uses an algorithm or key
        /// that cannot be processed, e.g. RSA under 2048 bits or RSA-PSS).
        case malformedCertificate(block: Int?, detail: String)
        /// Nothing to pin could be read (``PinSource``): an encrypted private key, a key or request
        /// that cannot be parsed.
        case unpinnable(block: Int?, detail: String)
    }

    /// The file path the certificates were read from, or `"<memory>"`.
    public var source: String
    /// What went wrong.
    public var kind: Kind

    /// Creates an error for `source` with the given kind.
    public init(source: String, kind: Kind) {
        self.source = source
        self.kind = kind
    }

    /// Human-readable form, prefixed with the source.
    public var description: String {
        switch kind {
        case .unreadable(let why): return "\(source): cannot read: \(why)"
        case .noCertificates: return "\(source): no certificate found (expected PEM \"BEGIN CERTIFICATE\" blocks or DER)"
        case .unterminatedPEMBlock(let block): return "\(source): PEM block \(block) has no END CERTIFICATE line"
        case .invalidBase64(let block): return "\(source): PEM block \(block) is not valid base64"
        case .malformedCertificate(let block, let detail):
            let which = block.map { " (PEM block \($0))" } ?? ""
            return "\(source)\(which): not a valid X.509 certificate: \(detail)"
        case .unpinnable(let block, let detail):
            let which = block.map { " (PEM block \($0))" } ?? ""
            return "\(source)\(which): nothing to pin: \(detail)"
        }
    }
}
