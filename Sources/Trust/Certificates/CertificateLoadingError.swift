/// Why certificates could not be read. Always names the source (a file path, or
/// `"<memory>"`) and, for a PEM bundle, which block.
public struct CertificateLoadingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong while reading the certificates: compared (`error.kind == .malformedCertificate`) or switched on
    /// with a `default:`, as kinds come in minor versions without breaking a client. Two kinds are equal when they are
    /// the same kind, whatever their details (which block, why: the error's description says them).
    public struct Kind: Hashable, Sendable {
        /// The kind with its data, for this package's code.
        package let detail: Detail

        package init(_ detail: Detail) { self.detail = detail }

        /// The same kind, details aside.
        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.detail.number == rhs.detail.number }

        /// Hashes the kind, details aside, as `==` compares it.
        public func hash(into hasher: inout Hasher) { hasher.combine(detail.number) }

        /// The file or folder could not be read (missing, permissions…).
        public static let unreadable = Self(.unreadable(""))
        package static func unreadable(_ value0: String) -> Self { Self(.unreadable(value0)) }
        /// The input holds neither a PEM certificate block nor DER.
        public static let noCertificates = Self(.noCertificates)
        /// A `-----BEGIN CERTIFICATE-----` block has no matching END line.
        public static let unterminatedPEMBlock = Self(.unterminatedPEMBlock(block: 0))
        package static func unterminatedPEMBlock(block: Int) -> Self { Self(.unterminatedPEMBlock(block: block)) }
        /// A PEM block's body is not valid Base64.
        public static let invalidBase64 = Self(.invalidBase64(block: 0))
        package static func invalidBase64(block: Int) -> Self { Self(.invalidBase64(block: block)) }
        /// The DER is not a well-formed X.509 certificate, or uses an algorithm or key that cannot be processed.
        public static let malformedCertificate = Self(.malformedCertificate(block: nil, detail: ""))
        package static func malformedCertificate(block: Int?, detail: String) -> Self { Self(.malformedCertificate(block: block, detail: detail)) }
        /// Nothing to pin could be read: an encrypted private key, or a key or certificate request
        /// that cannot be parsed.
        public static let unpinnable = Self(.unpinnable(block: nil, detail: ""))
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
            /// Nothing to pin could be read (`PinSource`): an encrypted private key, a key or request
            /// that cannot be parsed.
            case unpinnable(block: Int?, detail: String)

            /// Which case, details aside.
            var number: Int {
                switch self {
                case .unreadable: 0
                case .noCertificates: 1
                case .unterminatedPEMBlock: 2
                case .invalidBase64: 3
                case .malformedCertificate: 4
                case .unpinnable: 5
                }
            }
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

    /// The same source and the same problem, details included.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.source == rhs.source && lhs.kind.detail == rhs.kind.detail }

    /// Hashes the source and the problem, details included, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(source)
        hasher.combine(kind.detail)
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
