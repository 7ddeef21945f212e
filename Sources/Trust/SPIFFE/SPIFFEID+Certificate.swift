import X509

extension Certificate {
    /// The uniformResourceIdentifier entries of the subjectAltName, as the certificate holds them (not escaped); empty
    /// when there is none, `nil` when the extension cannot be parsed.
    package var uniformResourceIdentifiers: [String]? {
        let names: SubjectAlternativeNames?
        do { names = try extensions.subjectAlternativeNames } catch { return nil }
        return Self.uniformResourceIdentifiers(in: names)
    }

    /// The uniformResourceIdentifier entries of `names`, in order.
    static func uniformResourceIdentifiers(in names: SubjectAlternativeNames?) -> [String] {
        guard let names else { return [] }
        return names.compactMap { name in
            if case .uniformResourceIdentifier(let uri) = name { return uri }
            return nil
        }
    }

    /// The SPIFFE ID of an X.509-SVID: its one URI SAN, parsed (X509-SVID.md §2); `nil` when the certificate holds
    /// no URI SAN, more than one, or one that is not a valid SPIFFE ID. ``SPIFFESVIDRule`` says which.
    public var spiffeID: SPIFFEID? {
        guard let uris = uniformResourceIdentifiers, uris.count == 1 else { return nil }
        return try? SPIFFEID(parsing: uris[0])
    }
}
