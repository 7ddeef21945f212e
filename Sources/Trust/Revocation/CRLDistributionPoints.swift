import SwiftASN1
import X509

/// A certificate's CRL Distribution Points extension (RFC 5280 §4.2.1.13): where its CRLs are published.
///
/// swift-certificates has no type for this extension; it is parsed here with swift-asn1.
public struct CRLDistributionPoints: Sendable, Hashable {
    /// One distribution point.
    package struct Point: Sendable, Hashable {
        /// The point's full names (each a GeneralName's DER bytes, compared with a CRL's Issuing Distribution Point).
        package var fullNames: [[UInt8]]
        /// Whether the point is named relative to the CRL issuer instead.
        package var hasRelativeName: Bool
        /// Whether the point's CRLs are issued by someone other than the certificate's issuer (cRLIssuer).
        package var hasCRLIssuer: Bool
        /// The `http`/`https`/`ldap`… URIs among the full names.
        package var uris: [String] {
            fullNames.compactMap { name in
                // uniformResourceIdentifier [6] IA5String, implicitly tagged: 0x86, a short or long length, the text.
                guard name.first == 0x86, let node = try? DER.parse(name), case .primitive(let bytes) = node.content else { return nil }
                return String(decoding: bytes, as: UTF8.self)
            }
        }
    }

    /// The distribution points, in order.
    package var points: [Point]

    /// The `http` and `https` URIs where `certificate`'s issuer publishes its CRLs: those of the points without a
    /// cRLIssuer (direct CRLs), in order; none for a certificate without the extension or with a malformed one.
    public static func fetchableURIs(of certificate: Certificate) -> [String] {
        let points = ((try? CRLDistributionPoints(certificate)) ?? nil)?.points ?? []
        return points.filter { !$0.hasCRLIssuer }.flatMap(\.uris).filter { uri in
            let scheme = uri.prefix(while: { $0 != ":" }).lowercased()
            return scheme == "http" || scheme == "https"
        }
    }

    /// The extension of `certificate`, or `nil` without one.
    /// - Throws: ``CertificateRevocationList/ParseError`` for a malformed extension.
    package init?(_ certificate: Certificate) throws(CertificateRevocationList.ParseError) {
        guard let ext = certificate.extensions[oid: [2, 5, 29, 31]] else { return nil }
        do {
            self.points = try Self.parse(ext.value)
        } catch let error as CertificateRevocationList.ParseError {
            throw error
        } catch {
            throw CertificateRevocationList.ParseError("a malformed CRL Distribution Points extension: \(error)")
        }
    }

    /// CRLDistributionPoints ::= SEQUENCE SIZE (1..MAX) OF DistributionPoint; DistributionPoint ::= SEQUENCE {
    /// distributionPoint [0] DistributionPointName OPTIONAL, reasons [1] ReasonFlags OPTIONAL, cRLIssuer [2] GeneralNames OPTIONAL }.
    private static func parse(_ value: ArraySlice<UInt8>) throws -> [Point] {
        var points: [Point] = []
        try DER.sequence(try DER.parse(value), identifier: .sequence) { list in
            while let pointNode = list.next() {
                var point = Point(fullNames: [], hasRelativeName: false, hasCRLIssuer: false)
                try DER.sequence(pointNode, identifier: .sequence) { nodes in
                    while let node = nodes.next() {
                        guard node.identifier.tagClass == .contextSpecific else {
                            throw CertificateRevocationList.ParseError("a distribution point element without a context tag")
                        }
                        switch node.identifier.tagNumber {
                        case 0: (point.fullNames, point.hasRelativeName) = try CertificateRevocationList.distributionPointName(node)
                        case 1: break
                        case 2: point.hasCRLIssuer = true
                        default: throw CertificateRevocationList.ParseError("an unknown distribution point element")
                        }
                    }
                }
                points.append(point)
            }
        }
        guard !points.isEmpty else { throw CertificateRevocationList.ParseError("an empty CRL Distribution Points extension") }
        return points
    }
}
