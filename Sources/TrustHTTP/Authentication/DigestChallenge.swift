import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A Digest challenge (RFC 7616 §3.3), checked: what the server asks for and what we can answer.
package struct DigestChallenge: Sendable, Hashable {
    /// A Digest quality of protection (`qop`) value.
    package enum QualityOfProtection: String, Sendable, Hashable {
        /// Authentication only.
        case auth
        /// Authentication with integrity protection: the request body is hashed too.
        case authInt = "auth-int"
    }

    /// The `realm` parameter.
    package var realm: String
    /// The server's nonce.
    package var nonce: String
    /// The `opaque` value, sent back unchanged in the answer.
    package var opaque: String?
    /// The algorithm (MD5 when the challenge names none).
    package var algorithm: DigestAlgorithm
    /// The qop values offered; empty for an RFC 2069 (legacy) challenge without `qop`.
    package var qualityOfProtection: [QualityOfProtection]
    /// `stale=true`: the previous answer was right but its nonce expired.
    package var isStale: Bool
    /// The server supports (`userhash=true`) a hashed user name.
    package var userhash: Bool
    /// `charset=UTF-8` was given (user name and password are UTF-8 either way).
    package var charsetUTF8: Bool

    /// Why a Digest challenge cannot be answered.
    package struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The error with its data, for this package's code: cases come in minor versions without breaking a client,
        /// who shows the error (its description says what is wrong).
        package let detail: Detail

        package init(_ detail: Detail) { self.detail = detail }

        /// Human-readable form.
        package var description: String { detail.description }

        package static func missingParameter(_ value0: String) -> Self { Self(.missingParameter(value0)) }
        package static func unsupportedAlgorithm(_ value0: String) -> Self { Self(.unsupportedAlgorithm(value0)) }
        package static func unsupportedQualityOfProtection(_ value0: String) -> Self { Self(.unsupportedQualityOfProtection(value0)) }
        package static func sessionAlgorithmWithoutQualityOfProtection(_ value0: String) -> Self { Self(.sessionAlgorithmWithoutQualityOfProtection(value0)) }

        /// The cases, exhaustive inside this package.
        package enum Detail: Sendable, Hashable {
            /// A required parameter (`realm` or `nonce`) is missing.
            case missingParameter(String)
            /// The named algorithm is not supported.
            case unsupportedAlgorithm(String)
            /// The `qop` value offers neither `auth` nor `auth-int`.
            case unsupportedQualityOfProtection(String)
            /// A `-sess` algorithm needs the client nonce, which is only sent with a qop.
            case sessionAlgorithmWithoutQualityOfProtection(String)

            /// Human-readable form.
            package var description: String {
                switch self {
                case .missingParameter(let name): return "Digest challenge without \(name)"
                case .unsupportedAlgorithm(let name): return "Digest algorithm \(name) is not supported"
                case .unsupportedQualityOfProtection(let value): return "Digest qop \"\(value)\" offers neither auth nor auth-int"
                case .sessionAlgorithmWithoutQualityOfProtection(let name): return "Digest \(name) without qop cannot be answered (no client nonce)"
                }
            }
        }
    }

    /// Checks a parsed Digest challenge; throws if it cannot be answered.
    package init(_ challenge: HTTPChallenge) throws(Problem) {
        guard let realm = challenge.realm else { throw .missingParameter("realm") }
        guard let nonce = challenge["nonce"], !nonce.isEmpty else { throw .missingParameter("nonce") }
        let algorithmParameter = challenge["algorithm"]
        guard let algorithm = DigestAlgorithm(parameter: algorithmParameter) else { throw .unsupportedAlgorithm(algorithmParameter ?? "") }
        self.realm = realm
        self.nonce = nonce
        self.opaque = challenge["opaque"]
        self.algorithm = algorithm
        if let qop = challenge["qop"] {
            let offered = qop.split(atASCII: UInt8(ascii: ",")).map { $0.trimmingASCIIBlanks().lowercased() }
            self.qualityOfProtection = offered.compactMap { QualityOfProtection(rawValue: $0) }
            if qualityOfProtection.isEmpty { throw .unsupportedQualityOfProtection(qop) }
        } else {
            self.qualityOfProtection = []
            if algorithm.isSession { throw .sessionAlgorithmWithoutQualityOfProtection(algorithm.description) }
        }
        self.isStale = challenge["stale"]?.lowercased() == "true"
        self.userhash = challenge["userhash"]?.lowercased() == "true"
        self.charsetUTF8 = challenge["charset"]?.lowercased() == "utf-8"
    }

    /// The qop the client uses: `auth` when offered (what curl, browsers and Python's requests
    /// implement, so servers get it right), `auth-int` when it is the only one offered, none for
    /// an RFC 2069 challenge.
    package var chosenQualityOfProtection: QualityOfProtection? {
        qualityOfProtection.contains(.auth) ? .auth : qualityOfProtection.first
    }
}
