/// Why certificates could not be read. Always names the source (a file path, or
/// `"<memory>"`) and, for a PEM bundle, which block.
public struct CertificateLoadingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong while reading the certificates.
    public struct Kind: Hashable, Sendable {
        /// The kind with its data, for this package's code: kinds come in minor versions without breaking a client,
        /// who shows the error (its description says what is wrong).
        package let detail: Detail

        package init(_ detail: Detail) { self.detail = detail }

        package static func unreadable(_ value0: String) -> Self { Self(.unreadable(value0)) }
        /// The input holds neither a PEM certificate block nor DER.
        public static let noCertificates = Self(.noCertificates)
        package static func unterminatedPEMBlock(block: Int) -> Self { Self(.unterminatedPEMBlock(block: block)) }
        package static func invalidBase64(block: Int) -> Self { Self(.invalidBase64(block: block)) }
        package static func malformedCertificate(block: Int?, detail: String) -> Self { Self(.malformedCertificate(block: block, detail: detail)) }
        package static func unpinnable(block: Int?, detail: String) -> Self { Self(.unpinnable(block: block, detail: detail)) }

        /// The cases, exhaustive inside this package.
        package enum Detail: Hashable, Sendable {
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
    }

    /// The file path the certificates were read from, or `"<memory>"`.
    public let source: String
    /// What went wrong.
    public let kind: Kind

    /// Creates an error for `source` with the given kind.
    package init(source: String, kind: Kind) {
        self.source = source
        self.kind = kind
    }

    /// Human-readable form, prefixed with the source.
    public var description: String {
        switch kind.detail {
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
