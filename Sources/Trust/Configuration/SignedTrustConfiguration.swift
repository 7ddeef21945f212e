import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A trust configuration that arrived as a ``TrustConfigurationBundle`` with a detached Ed25519 signature
/// (RFC 8032) and was verified: the only way to one is
/// ``verify(bundle:signature:trustedKeys:lastAcceptedSequence:now:maximumSize:publicSuffixes:)``.
///
/// The signature is over the bundle file's exact bytes, and is a file (or HTTP body) of its own: the 64 signature
/// bytes in base64 on one line (88 characters, an optional final line end), as `trust config sign` writes it — text
/// that survives a CDN, a copy and paste or a text-mode transfer — or the 64 raw bytes, as
/// `openssl pkeyutl -sign -rawin` writes them. The two are told apart by their length alone.
public struct SignedTrustConfiguration: Sendable, Hashable {
    /// The largest bundle verified, in bytes: 4 MiB, as a configuration file (anchors may be embedded as PEM).
    public static let maximumSize = 4 << 20
    /// An Ed25519 signature's length in bytes (RFC 8032 §5.1.6).
    package static let signatureLength = 64

    /// The verified bundle: its configuration, sequence and end.
    public let bundle: TrustConfigurationBundle
    /// The SHA-256 of the bundle's bytes: the same bundle fetched again has the same digest.
    public let digest: [UInt8]
    /// The trusted key its signature verified with.
    public let signedBy: TrustConfigurationPublicKey

    /// The configuration it delivers.
    public var configuration: TrustConfiguration { bundle.configuration }
    /// Its sequence number.
    public var sequence: UInt64 { bundle.sequence }
    /// When it stops being used.
    public var expires: Date { bundle.expires }

    /// Verifies a bundle and its detached signature, in this order, and returns the configuration only when every
    /// step passes:
    ///
    /// 1. the bundle is at most `maximumSize` bytes (rejection code `malformed` otherwise);
    /// 2. the signature is 64 bytes, raw or in base64, and verifies over the bundle's exact bytes with one of
    ///    `trustedKeys` (rejection code `bad-signature`). Nothing in the bundle is parsed
    ///    before this: a parser never sees bytes the key holder did not sign;
    /// 3. the bundle parses and its configuration is valid (rejection code `malformed`);
    /// 4. its sequence is above `lastAcceptedSequence` (rejection code `rollback`);
    /// 5. `now` is before its `expires` (rejection code `bundle-expired`).
    ///
    /// - Parameters:
    ///   - bundle: the bundle file's exact bytes, as received.
    ///   - signature: the detached signature file's bytes (base64 or raw).
    ///   - trustedKeys: the keys pinned in the application; more than one while the signing key is rotated.
    ///   - lastAcceptedSequence: the sequence of the last bundle accepted, nil when none ever was.
    ///   - now: the time expiry is checked against.
    ///   - maximumSize: the largest bundle verified (``maximumSize`` by default).
    ///   - publicSuffixes: for refusing host patterns on public suffixes, as the configuration loader does.
    public static func verify(
        bundle: some Collection<UInt8>, signature: some Collection<UInt8>, trustedKeys: [TrustConfigurationPublicKey],
        lastAcceptedSequence: UInt64?, now: Date = Date(), maximumSize: Int = SignedTrustConfiguration.maximumSize,
        publicSuffixes: PublicSuffixList? = PublicSuffixList.shared
    ) throws(TrustConfigurationRejection) -> SignedTrustConfiguration {
        guard bundle.count <= maximumSize else {
            throw TrustConfigurationBundle.malformed("$", "the bundle is \(bundle.count) bytes, more than the limit of \(maximumSize)")
        }
        let bytes = Array(bundle)
        let key = try verifiedKey(signature: try decodeSignature(Array(signature)), bundle: bytes, trustedKeys: trustedKeys)
        let parsed = try TrustConfigurationBundle(parsing: bytes, publicSuffixes: publicSuffixes)
        if let lastAcceptedSequence, parsed.sequence <= lastAcceptedSequence {
            throw .rollback(sequence: parsed.sequence, lastAccepted: lastAcceptedSequence)
        }
        guard now < parsed.expires else { throw .bundleExpired(expires: parsed.expires) }
        return SignedTrustConfiguration(bundle: parsed, digest: Array(SHA256.hash(data: bytes)), signedBy: key)
    }

    /// The 64 signature bytes from a signature file: raw (exactly 64 bytes) or base64 (88 characters and an optional
    /// line end).
    package static func decodeSignature(_ bytes: [UInt8]) throws(TrustConfigurationRejection) -> [UInt8] {
        if bytes.isEmpty { throw .badSignature(reason: "the signature is missing (empty)") }
        if bytes.count == signatureLength { return bytes }
        var text = bytes[...]
        if text.last == UInt8(ascii: "\n") { text = text.dropLast() }
        if text.last == UInt8(ascii: "\r") { text = text.dropLast() }
        let base64Length = (signatureLength + 2) / 3 * 4
        guard text.count == base64Length, let decoded = Data(base64Encoded: Data(text)), decoded.count == signatureLength else {
            throw .badSignature(
                reason: "the signature is \(bytes.count) bytes: neither an Ed25519 signature (\(signatureLength) bytes, RFC 8032 §5.1.6) "
                    + "nor one in base64 (\(base64Length) characters)")
        }
        return Array(decoded)
    }

    /// The first of `trustedKeys` whose signature of `bundle` `signature` is.
    static func verifiedKey(signature: [UInt8], bundle: [UInt8], trustedKeys: [TrustConfigurationPublicKey]) throws(TrustConfigurationRejection)
        -> TrustConfigurationPublicKey
    {
        guard !trustedKeys.isEmpty else { throw .badSignature(reason: "no trusted key was given to verify it with") }
        guard let key = trustedKeys.first(where: { $0.isValidSignature(signature, for: bundle) }) else {
            let names = trustedKeys.map(\.id).joined(separator: ", ")
            throw .badSignature(reason: "it verifies with none of the \(trustedKeys.count) trusted key\(trustedKeys.count == 1 ? "" : "s") (\(names))")
        }
        return key
    }
}
