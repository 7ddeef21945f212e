import Crypto
import Trust

/// A Digest algorithm (RFC 7616 §3.3 and its IANA registry), with or without `-sess`.
public struct DigestAlgorithm: Sendable, Hashable, CustomStringConvertible {
    /// A hash function, by its name in the `algorithm` token.
    package enum Hash: String, Sendable, Hashable, CaseIterable {
        /// MD5, the default when a challenge names no algorithm.
        case md5 = "MD5"
        /// SHA-256.
        case sha256 = "SHA-256"
        /// SHA-512/256: SHA-512 truncated to 256 bits.
        case sha512_256 = "SHA-512-256"
    }

    /// The hash function.
    package var hash: Hash
    /// The `-sess` variant: A1 includes the server and client nonces.
    package var isSession: Bool

    /// The algorithm using `hash`; the `-sess` variant when `session` is true.
    package init(_ hash: Hash, session: Bool = false) {
        self.hash = hash
        self.isSession = session
    }

    /// `MD5`.
    package static let md5 = DigestAlgorithm(.md5)
    /// `MD5-sess`.
    package static let md5Session = DigestAlgorithm(.md5, session: true)
    /// `SHA-256`.
    package static let sha256 = DigestAlgorithm(.sha256)
    /// `SHA-256-sess`.
    package static let sha256Session = DigestAlgorithm(.sha256, session: true)
    /// `SHA-512-256`.
    package static let sha512_256 = DigestAlgorithm(.sha512_256)
    /// `SHA-512-256-sess`.
    package static let sha512_256Session = DigestAlgorithm(.sha512_256, session: true)
    /// Every supported algorithm, weakest first.
    package static let all: [DigestAlgorithm] = [.md5, .md5Session, .sha256, .sha256Session, .sha512_256, .sha512_256Session]

    /// Parses an `algorithm` parameter (case-insensitive); absent means MD5 (RFC 7616 §3.3).
    package init?(parameter: String?) {
        guard let parameter else {
            self = .md5
            return
        }
        var name = parameter.uppercased()
        let session = name.hasSuffix("-SESS")
        if session { name.removeLast(5) }
        guard let hash = Hash(rawValue: name) else { return nil }
        self.init(hash, session: session)
    }

    /// The token sent in `algorithm=`.
    public var description: String { hash.rawValue + (isSession ? "-sess" : "") }

    /// Higher is stronger: SHA-512-256 > SHA-256 > MD5; `-sess` is preferred within a hash.
    package var strength: Int {
        let base: Int
        switch hash {
        case .md5: base = 10
        case .sha256: base = 20
        case .sha512_256: base = 30
        }
        return base + (isSession ? 1 : 0)
    }

    /// The lowercase hexadecimal digest of `text`'s UTF-8 bytes.
    package func hexDigest(_ text: String) -> String {
        hexDigest(Array(text.utf8))
    }

    /// The lowercase hexadecimal digest of `bytes`.
    package func hexDigest(_ bytes: [UInt8]) -> String {
        let digest: [UInt8]
        switch hash {
        case .md5: digest = Array(Insecure.MD5.hash(data: bytes))
        case .sha256: digest = Array(SHA256.hash(data: bytes))
        case .sha512_256: digest = SHA512t256.hash(bytes)
        }
        return Self.hex(digest)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.hexText()
    }
}
