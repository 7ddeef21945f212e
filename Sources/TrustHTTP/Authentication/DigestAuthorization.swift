/// The client's answer to a Digest challenge (RFC 7616 §3.4): the `Authorization` (or
/// `Proxy-Authorization`) field value, and what is needed to check the server's `rspauth`.
package struct DigestAuthorization: Sendable, CustomStringConvertible, CustomReflectable {
    /// The challenge this answers.
    package let challenge: DigestChallenge
    /// The field value, `Digest username=…, response=…`.
    package let fieldValue: String
    /// The qop used (the challenge's chosen one); nil for an RFC 2069 answer.
    package let qualityOfProtection: DigestChallenge.QualityOfProtection?
    /// The `nc` value: how many requests (this one included) used this nonce.
    package let nonceCount: UInt32
    /// The `cnonce` value.
    package let clientNonce: String
    private let hashedA1: String
    private let uri: String

    /// - Parameters:
    ///   - challenge: the Digest challenge being answered.
    ///   - user: the user name (hashed when the challenge asks for `userhash`).
    ///   - password: the password; it is never sent, only hashed.
    ///   - method: the request method (`CONNECT` for a proxy tunnel).
    ///   - uri: the request target as sent (`/path?query`, or `host:port` for CONNECT).
    ///   - body: the request body, hashed for `auth-int`.
    ///   - nonceCount: how many requests (this one included) used this nonce.
    ///   - clientNonce: a fresh random value (tests pass fixed ones).
    package init(
        challenge: DigestChallenge, user: String, password: String, method: String, uri: String, body: [UInt8] = [],
        nonceCount: UInt32, clientNonce: String = DigestAuthorization.makeClientNonce()
    ) {
        self.challenge = challenge
        self.nonceCount = nonceCount
        self.clientNonce = clientNonce
        self.uri = uri
        let algorithm = challenge.algorithm
        let qop = challenge.chosenQualityOfProtection
        self.qualityOfProtection = qop
        var a1 = algorithm.hexDigest("\(user):\(challenge.realm):\(password)")
        if algorithm.isSession {
            a1 = algorithm.hexDigest("\(a1):\(challenge.nonce):\(clientNonce)")
        }
        self.hashedA1 = a1
        var a2 = "\(method):\(uri)"
        if qop == .authInt { a2 += ":" + algorithm.hexDigest(body) }
        let hashedA2 = algorithm.hexDigest(a2)
        let nc = Self.formatNonceCount(nonceCount)
        let response: String
        if let qop {
            response = algorithm.hexDigest("\(a1):\(challenge.nonce):\(nc):\(clientNonce):\(qop.rawValue):\(hashedA2)")
        } else {
            response = algorithm.hexDigest("\(a1):\(challenge.nonce):\(hashedA2)")  // RFC 2069
        }
        self.fieldValue = Self.fieldValue(
            challenge: challenge, user: user, uri: uri, qop: qop, nonceCount: nc, clientNonce: clientNonce, response: response)
    }

    /// The `Authorization` field's value (RFC 7616 §3.4): the user name hashed (`userhash`), in RFC 8187's
    /// extended notation when it is not plain ASCII, or quoted.
    private static func fieldValue(
        challenge: DigestChallenge, user: String, uri: String, qop: DigestChallenge.QualityOfProtection?, nonceCount nc: String,
        clientNonce: String, response: String
    ) -> String {
        let algorithm = challenge.algorithm
        var fields: [String] = []
        if challenge.userhash {
            fields.append("username=\"\(algorithm.hexDigest("\(user):\(challenge.realm)"))\"")
        } else if Self.needsExtendedNotation(user) {
            fields.append("username*=UTF-8''\(Self.percentEncoded(user))")
        } else {
            fields.append("username=\(AuthenticationHeaderParser.quoted(user))")
        }
        fields.append("realm=\(AuthenticationHeaderParser.quoted(challenge.realm))")
        fields.append("uri=\(AuthenticationHeaderParser.quoted(uri))")
        fields.append("algorithm=\(algorithm)")
        fields.append("nonce=\(AuthenticationHeaderParser.quoted(challenge.nonce))")
        if let qop {
            fields.append("nc=\(nc)")
            fields.append("cnonce=\(AuthenticationHeaderParser.quoted(clientNonce))")
            fields.append("qop=\(qop.rawValue)")
        }
        fields.append("response=\"\(response)\"")
        if let opaque = challenge.opaque { fields.append("opaque=\(AuthenticationHeaderParser.quoted(opaque))") }
        if challenge.userhash { fields.append("userhash=true") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// Whether the server's `rspauth` (in `Authentication-Info`) proves it knows the password:
    /// the response computed with an empty method (RFC 7616 §3.5).
    /// With `auth-int` the proof covers the response body, which is not read yet: nil (not checked).
    package func verifiesServerResponse(_ rspauth: String) -> Bool? {
        guard let qop = qualityOfProtection, qop == .auth else { return nil }
        let algorithm = challenge.algorithm
        let expected = algorithm.hexDigest(
            "\(hashedA1):\(challenge.nonce):\(Self.formatNonceCount(nonceCount)):\(clientNonce):\(qop.rawValue):\(algorithm.hexDigest(":\(uri)"))")
        let given = Array(rspauth.utf8).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        return expected.utf8.count == given.count && zip(expected.utf8, given).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The algorithm and qop only: the hashed secret and the answer stay out of logs.
    package var description: String { "DigestAuthorization(\(challenge.algorithm), qop: \(qualityOfProtection?.rawValue ?? "none"), nc: \(nonceCount))" }
    /// Shows only `description`, so the hashed secret stays out of dumps.
    package var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    /// 16 random bytes, hexadecimal.
    package static func makeClientNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return DigestAlgorithm.hex((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// Eight hexadecimal digits.
    static func formatNonceCount(_ count: UInt32) -> String {
        let hex = String(count, radix: 16)
        return String(repeating: "0", count: max(0, 8 - hex.count)) + hex
    }

    /// A user name that a quoted-string cannot carry as ASCII (RFC 7616 §3.4.4).
    static func needsExtendedNotation(_ user: String) -> Bool {
        user.utf8.contains { $0 >= 0x80 }
    }

    /// RFC 8187 `value-chars`: attr-char kept, everything else percent-encoded.
    static func percentEncoded(_ text: String) -> String {
        text.percentEncoded(keeping: attrChar)
    }

    /// RFC 8187 §3.2.1's `attr-char`: ALPHA, DIGIT and `!#$&+-.^_`|~`.
    private static let attrChar = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&+-.^_`|~".utf8)
}
