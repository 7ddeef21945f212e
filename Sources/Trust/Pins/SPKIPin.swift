import Crypto
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A public-key pin: SHA-256 over a certificate's DER SubjectPublicKeyInfo (RFC 7469).
///
/// The value equals
/// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`
/// and works for every key type (RSA, P-256, P-384, P-521, Ed25519), because it hashes the
/// certificate's own SPKI bytes rather than rebuilding a header per key type (a rebuilt header can
/// differ from the certificate's own encoding, and then the pin would not match other tools').
///
/// Text forms accepted: `sha256/BASE64` (OkHttp, curl `--pinnedpubkey`), `pin-sha256="BASE64"`
/// (RFC 7469 header syntax) and bare `BASE64`.
public struct SPKIPin: Hashable, Sendable, Codable, CustomStringConvertible, LosslessStringConvertible {
    /// The 32-byte SHA-256 digest.
    public let digest: [UInt8]

    /// Creates a pin from a 32-byte digest.
    public init(digest: some Collection<UInt8>) throws(PinParsingError) {
        guard digest.count == 32 else { throw .wrongLength(digest.count) }
        self.digest = Array(digest)
    }

    /// The pin of a certificate's public key.
    public init(certificate: Certificate) {
        self.digest = Array(SHA256.hash(data: certificate.subjectPublicKeyInfoDER))
    }

    /// The pin of a DER SubjectPublicKeyInfo.
    public init(subjectPublicKeyInfoDER: some Collection<UInt8>) {
        self.digest = Array(SHA256.hash(data: Array(subjectPublicKeyInfoDER)))
    }

    /// Parses `sha256/BASE64`, `pin-sha256="BASE64"` or bare `BASE64`.
    public init(parsing text: String) throws(PinParsingError) {
        var body = Substring(text.trimmingASCIIBlanks())
        // Both prefixes fit in the first 11 characters: one lowercased copy of those, not of the whole text.
        let head = body.prefix(11).lowercased()
        if head.hasPrefix("pin-sha256=") {
            body = body.dropFirst("pin-sha256=".count)
            guard body.count >= 2, body.hasPrefix("\""), body.hasSuffix("\"") else { throw .malformed(text) }
            body = body.dropFirst().dropLast()
        } else if head.hasPrefix("sha256/") {
            body = body.dropFirst("sha256/".count)
        } else {
            let decoded = Data(base64Encoded: String(body))
            // Bare Base64 of a SHA-256 digest, which may hold a "/" of its own (decoded once).
            if let decoded, decoded.count == 32 {
                try self.init(digest: decoded)
                return
            }
            // Shaped like `sha1/…`: name the unsupported hash — when the text is no Base64 at all, or when it names a
            // hash (`sha1`, `sha384`, `md5`…), since Foundation's decoder reads "sha1/" + a pin as Base64 of another
            // length. A bare digest of another length that merely starts with letters and a "/" is a wrong length.
            if let slash = body.firstIndex(of: "/"), case let algorithm = body[..<slash], !algorithm.isEmpty, algorithm.count < 8,
                algorithm.allSatisfy({ $0.isLetter || $0.isNumber }), decoded == nil || Self.namesAHash(algorithm)
            {
                throw .unsupportedAlgorithm(String(algorithm))
            }
            guard let decoded else { throw .malformed(text) }
            try self.init(digest: decoded)
            return
        }
        guard let data = Data(base64Encoded: String(body)) else { throw .malformed(text) }
        try self.init(digest: data)
    }

    /// Whether `name` reads as a hash function's name: `sha` or `md` and a number, in any case.
    private static func namesAHash(_ name: Substring) -> Bool {
        let lowered = name.lowercased()
        for family in ["sha", "md"] where lowered.hasPrefix(family) {
            let number = lowered.dropFirst(family.count)
            return !number.isEmpty && number.allSatisfy { $0.isASCII && $0.isNumber }
        }
        return false
    }

    /// Parses any accepted text form; `nil` when it is not a pin.
    public init?(_ description: String) {
        guard let pin = try? SPKIPin(parsing: description) else { return nil }
        self = pin
    }

    /// Standard base64 of the digest.
    public var base64: String { Data(digest).base64EncodedString() }

    /// `sha256/BASE64`.
    public var description: String { "sha256/" + base64 }

    /// `pin-sha256="BASE64"` (RFC 7469).
    public var headerForm: String { "pin-sha256=\"\(base64)\"" }

    /// Decodes a pin from any accepted text form.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    /// Encodes the pin as `sha256/BASE64`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Why a pin string was refused.
public struct PinParsingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error with its data, for this package's code (cases come in minor versions without breaking a
    /// client, who shows the error: its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// Human-readable form.
    public var description: String { detail.description }

    package static func malformed(_ value0: String) -> Self { Self(.malformed(value0)) }
    package static func wrongLength(_ value0: Int) -> Self { Self(.wrongLength(value0)) }
    package static func unsupportedAlgorithm(_ value0: String) -> Self { Self(.unsupportedAlgorithm(value0)) }
}

extension PinParsingError {
    /// The cases, exhaustive inside this package.
    package enum Detail: Hashable, Sendable {
        case malformed(String)
        case wrongLength(Int)
        case unsupportedAlgorithm(String)

        /// Human-readable form.
        package var description: String {
            switch self {
            case .malformed(let text): return "\"\(text)\" is not a pin (expected sha256/BASE64 or pin-sha256=\"BASE64\")"
            case .wrongLength(let n): return "a SHA-256 pin decodes to 32 bytes, this one to \(n)"
            case .unsupportedAlgorithm(let a): return "pins with hash \"\(a)\" are not supported; use sha256"
            }
        }
    }
}
