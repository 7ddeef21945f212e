import Foundation
import Testing
import Trust
import TrustTestSupport

@Suite("Signed configuration bundles: signature, sequence, expiry", .paced)
struct SignedTrustConfigurationTests {
    static let key = TrustConfigurationSigningKey()
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A bundle's bytes whose configuration asks for RSA keys of at least `rsaBits`.
    static func bundle(sequence: UInt64, rsaBits: Int = 3072, expires: Date = now.addingTimeInterval(86_400)) -> [UInt8] {
        var configuration = TrustConfiguration()
        configuration.base.minimumRSABits = rsaBits
        return Array(TrustConfigurationBundle(configuration: configuration, sequence: sequence, expires: expires).jsonText().utf8)
    }

    static func verify(
        _ bundle: [UInt8], _ signature: [UInt8], keys: [TrustConfigurationPublicKey] = [key.publicKey], last: UInt64? = nil
    ) -> Result<SignedTrustConfiguration, TrustConfigurationRejection> {
        Result { () throws(TrustConfigurationRejection) in
            try SignedTrustConfiguration.verify(bundle: bundle, signature: signature, trustedKeys: keys, lastAcceptedSequence: last, now: now)
        }
    }

    static func rejection(_ result: Result<SignedTrustConfiguration, TrustConfigurationRejection>) -> TrustConfigurationRejection? {
        if case .failure(let rejection) = result { return rejection }
        return nil
    }

    @Test func aGoodBundleIsAcceptedRawOrBase64() throws {
        let bytes = Self.bundle(sequence: 7)
        let raw = try Self.key.signature(for: bytes)
        #expect(raw.count == 64)
        for signature in [raw, Array((Data(raw).base64EncodedString() + "\n").utf8), Array((Data(raw).base64EncodedString() + "\r\n").utf8)] {
            let verified = try Self.verify(bytes, signature, last: 6).get()
            #expect(verified.sequence == 7)
            #expect(verified.configuration.base.minimumRSABits == 3072)
            #expect(verified.signedBy == Self.key.publicKey)
        }
        // First bundle ever: any sequence.
        #expect(try Self.verify(Self.bundle(sequence: 0), try Self.key.signature(for: Self.bundle(sequence: 0))).get().sequence == 0)
    }

    @Test func eachRefusalHasItsOwnReason() throws {
        let bytes = Self.bundle(sequence: 10)
        let signature = try Self.key.signature(for: bytes)
        var flipped = signature
        flipped[10] ^= 0x01
        var tampered = bytes
        tampered[tampered.count - 3] = UInt8(ascii: " ")
        let other = TrustConfigurationSigningKey()
        let cases: [(String, Result<SignedTrustConfiguration, TrustConfigurationRejection>, (TrustConfigurationRejection) -> Bool)] = [
            (
                "wrong signature", Self.verify(bytes, flipped),
                { if case .badSignature(let why) = $0.detail { why.contains("none of the 1 trusted key") } else { false } }
            ),
            ("tampered bundle", Self.verify(tampered, signature), { if case .badSignature = $0.detail { true } else { false } }),
            ("wrong key", Self.verify(bytes, signature, keys: [other.publicKey]), { if case .badSignature = $0.detail { true } else { false } }),
            (
                "no key", Self.verify(bytes, signature, keys: []),
                { if case .badSignature(let why) = $0.detail { why.contains("no trusted key") } else { false } }
            ),
            (
                "truncated", Self.verify(bytes, Array(signature.prefix(63))),
                { if case .badSignature(let why) = $0.detail { why.contains("63 bytes") } else { false } }
            ),
            (
                "truncated base64", Self.verify(bytes, Array(Data(signature).base64EncodedString().utf8.dropLast(4))),
                { if case .badSignature(let why) = $0.detail { why.contains("84 bytes") } else { false } }
            ),
            ("empty", Self.verify(bytes, []), { if case .badSignature(let why) = $0.detail { why.contains("missing") } else { false } }),
            ("equal sequence", Self.verify(bytes, signature, last: 10), { $0 == .rollback(sequence: 10, lastAccepted: 10) }),
            ("lower sequence", Self.verify(bytes, signature, last: 11), { $0 == .rollback(sequence: 10, lastAccepted: 11) }),
        ]
        for (name, result, expected) in cases {
            let rejection = Self.rejection(result)
            #expect(rejection.map(expected) == true, "\(name): \(String(describing: rejection))")
        }
        let expires = Self.now.addingTimeInterval(-1)
        let old = Self.bundle(sequence: 12, expires: expires)
        #expect(Self.rejection(Self.verify(old, try Self.key.signature(for: old), last: 11)) == .bundleExpired(expires: expires))
    }

    /// A rotation: the old and the new key are both trusted; a bundle signed by either verifies.
    @Test func keyRotation() throws {
        let next = TrustConfigurationSigningKey()
        let bytes = Self.bundle(sequence: 3)
        let keys = [Self.key.publicKey, next.publicKey]
        #expect(try Self.verify(bytes, try next.signature(for: bytes), keys: keys).get().signedBy == next.publicKey)
        #expect(try Self.verify(bytes, try Self.key.signature(for: bytes), keys: keys).get().signedBy == Self.key.publicKey)
    }

    /// Only signed bytes are parsed; a signed bundle that is not valid is malformed, every problem with its path.
    @Test func signedButMalformed() throws {
        let text = #"{"bundleVersion": 1, "sequence": -1, "configuration": {"version": 1, "hosts": [{"host": "**.co.uk"}]}, "colour": 1}"#
        let bytes = Array(text.utf8)
        guard case .malformed(let error)? = Self.rejection(Self.verify(bytes, try Self.key.signature(for: bytes)))?.detail else {
            Issue.record("expected a malformed bundle")
            return
        }
        let paths = Set(error.problems.map(\.path))
        for path in ["$.sequence", "$.expires", "$.colour", "$.configuration.hosts[0].host"] { #expect(paths.contains(path), "\(path) in \(paths)") }
        #expect(error.problems.contains { $0.path == "$.sequence" && $0.message.hasSuffix("not -1") }, "\(error)")
        // Unsigned garbage is a bad signature, never a parse error.
        #expect(
            Self.rejection(Self.verify(Array("{not json".utf8), try Self.key.signature(for: bytes))).map {
                if case .badSignature = $0.detail { true } else { false }
            }
                == true)
    }

    /// A sequence's number text is quoted in the problem, but never more than a line of it.
    @Test func aLongSequenceIsQuotedCut() throws {
        let digits = String(repeating: "9", count: 10_000)
        let text = #"{"bundleVersion": 1, "sequence": "# + digits + #", "expires": "2030-01-01T00:00:00Z", "configuration": {"version": 1}}"#
        let bytes = Array(text.utf8)
        guard case .malformed(let error)? = Self.rejection(Self.verify(bytes, try Self.key.signature(for: bytes)))?.detail else {
            Issue.record("expected a malformed bundle")
            return
        }
        let message = try #require(error.problems.first { $0.path == "$.sequence" }?.message)
        #expect(message.hasSuffix("not " + String(repeating: "9", count: 32) + "…"), "\(message.prefix(200))")
        #expect(message.count < 120)
    }

    @Test func inputIsBounded() throws {
        let huge = [UInt8](repeating: 0x20, count: SignedTrustConfiguration.maximumSize + 1)
        guard case .malformed(let error)? = Self.rejection(Self.verify(huge, try Self.key.signature(for: huge)))?.detail else {
            Issue.record("expected the size to be refused")
            return
        }
        #expect(error.problems.first?.message.contains("more than the limit") == true)
    }

    @Test func keysRoundTripThroughTheirFileForms() throws {
        let publicKey = Self.key.publicKey
        #expect(try TrustConfigurationPublicKey(parsing: Array(publicKey.pemRepresentation.utf8)) == publicKey)
        #expect(try TrustConfigurationPublicKey(parsing: Array(publicKey.base64.utf8)) == publicKey)
        #expect(try TrustConfigurationPublicKey(parsing: publicKey.rawRepresentation) == publicKey)
        let reread = try TrustConfigurationSigningKey(parsing: Array(Self.key.pemRepresentation.utf8))
        #expect(reread.publicKey == publicKey)
        // The private key's text never shows its bytes.
        #expect(!"\(Self.key)".contains(Self.key.pemRepresentation.split(separator: "\n")[1]))
        #expect("\(Self.key)".contains(publicKey.id))
        #expect(throws: TrustConfigurationKeyError.self) { try TrustConfigurationPublicKey(parsing: Array(Self.key.pemRepresentation.utf8)) }
        #expect(throws: TrustConfigurationKeyError.self) { try TrustConfigurationSigningKey(parsing: Array(publicKey.pemRepresentation.utf8)) }
    }
}
