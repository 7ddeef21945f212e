import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A certificate's issuer locations and what they answer: the `caIssuers` access descriptions of its Authority
/// Information Access extension (RFC 5280 §4.2.2.1), and the certificates in a fetched body.
///
/// Hand-written rather than swift-certificates' CMS types, which are internal to that package: only the
/// `certificates` field of a certs-only SignedData is read, and nothing in it is verified or trusted here — a
/// certificate found serves path building only, and must still be signed into a path to an anchor.
package enum CAIssuers {
    /// `certificate`'s `caIssuers` locations, in order: the `http` URLs fetched, and the others (`https`, `ldap`,
    /// `file`, anything else, or not a URL) as given, refused. RFC 5280 §4.2.2.1 says an HTTP location points to a
    /// DER certificate or a certs-only CMS message; `https` would need this very validation to fetch from.
    package static func locations(of certificate: Certificate) -> (fetched: [URL], refused: [String]) {
        guard let access = (try? certificate.extensions.authorityInformationAccess) ?? nil else { return ([], []) }
        var fetched: [URL] = []
        // A hostile certificate may list thousands of locations: duplicates found by hashing, not by a linear search.
        var seen = Set<URL>()
        var refused: [String] = []
        for description in access where description.method == .issuingCA {
            guard case .uniformResourceIdentifier(let text) = description.location else { continue }
            if let url = URL(string: text), url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty, url.user == nil,
                url.password == nil
            {
                if seen.insert(url).inserted { fetched.append(url) }
            } else {
                refused.append(text)
            }
        }
        return (fetched, refused)
    }

    /// Why a fetched body holds no certificate.
    package struct UnreadableBody: Error, CustomStringConvertible {
        package let description: String
    }

    /// The certificates in `body`, told apart by content (a server's `content-type` is often wrong): one DER
    /// certificate (`application/pkix-cert`), or a CMS ContentInfo holding a certs-only SignedData
    /// (`application/pkcs7-mime`, RFC 5652 §5; BER as some CAs publish it). At most `limit` certificates are read.
    package static func certificates(in body: [UInt8], limit: Int = 16) throws(UnreadableBody) -> [Certificate] {
        guard !body.isEmpty else { throw UnreadableBody(description: "an empty body") }
        if let certificate = try? Certificate(derEncoded: body) { return [certificate] }
        guard let root = try? BER.parse(body), let certificates = signedDataCertificates(root), !certificates.isEmpty else {
            throw UnreadableBody(description: "neither a DER certificate nor a PKCS#7 message holding certificates")
        }
        var found: [Certificate] = []
        for node in certificates.prefix(limit) {
            guard case .constructed = node.content, let certificate = try? Certificate(derEncoded: Array(node.encodedBytes)) else {
                throw UnreadableBody(description: "a PKCS#7 message holding a malformed certificate")
            }
            found.append(certificate)
        }
        return found
    }

    /// id-signedData (RFC 5652 §5.1).
    private static let signedData: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]

    /// The elements of the `certificates [0] IMPLICIT CertificateSet` of a ContentInfo holding a SignedData:
    /// `ContentInfo ::= SEQUENCE { contentType, [0] EXPLICIT SignedData }`,
    /// `SignedData ::= SEQUENCE { version, digestAlgorithms SET, encapContentInfo SEQUENCE, [0] certificates OPTIONAL, … }`.
    private static func signedDataCertificates(_ root: ASN1Node) -> [ASN1Node]? {
        guard root.identifier == .sequence, case .constructed(let info) = root.content else { return nil }
        var fields = info.makeIterator()
        guard let type = fields.next(), let oid = try? ASN1ObjectIdentifier(berEncoded: type), oid == signedData,
            let wrapped = fields.next(), wrapped.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific),
            case .constructed(let explicit) = wrapped.content, let sequence = explicit.first(where: { _ in true }),
            sequence.identifier == .sequence, case .constructed(let signed) = sequence.content
        else { return nil }
        var elements = signed.makeIterator()
        // version, digestAlgorithms, encapContentInfo.
        guard elements.next()?.identifier == .integer, elements.next()?.identifier == .set, elements.next()?.identifier == .sequence,
            let set = elements.next(), set.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific),
            case .constructed(let members) = set.content
        else { return nil }
        return Array(members)
    }
}
