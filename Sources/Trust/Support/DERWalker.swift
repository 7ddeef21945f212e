/// A minimal DER TLV walker for locating elements inside bytes that were already parsed and
/// validated by swift-certificates (so malformed input only ever yields `nil`).
enum DERWalker {
    /// The range of the element starting at `start`: (header + content), or `nil` if malformed.
    static func element(in bytes: ArraySlice<UInt8>, at start: Int) -> (contentStart: Int, end: Int)? {
        guard start >= bytes.startIndex, let header = header(in: bytes, at: start), header.length <= bytes.endIndex - header.contentStart else { return nil }
        return (header.contentStart, header.contentStart + header.length)
    }

    /// The SubjectPublicKeyInfo element (header included) of a DER TBSCertificate.
    static func subjectPublicKeyInfo(inTBSCertificate tbs: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard tbs.first == 0x30, let outer = element(in: tbs, at: tbs.startIndex) else { return nil }
        var index = outer.contentStart
        // [0] version (optional), serialNumber, signature, issuer, validity, subject, then SPKI.
        if index < outer.end, tbs[index] == 0xA0 {
            guard let version = element(in: tbs, at: index) else { return nil }
            index = version.end
        }
        for _ in 0..<5 {
            guard let skipped = element(in: tbs, at: index) else { return nil }
            index = skipped.end
        }
        guard index < outer.end, tbs[index] == 0x30, let spki = element(in: tbs, at: index), spki.end <= outer.end else { return nil }
        return tbs[index..<spki.end]
    }

    /// The subject Name element (header included) of a DER TBSCertificate.
    static func subjectName(inTBSCertificate tbs: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let spki = subjectPublicKeyInfo(inTBSCertificate: tbs),
            tbs.first == 0x30, let outer = element(in: tbs, at: tbs.startIndex)
        else { return nil }
        var index = outer.contentStart
        var previous: Int?
        while index < spki.startIndex {
            guard let next = element(in: tbs, at: index) else { return nil }
            previous = index
            index = next.end
        }
        guard let start = previous, let subject = element(in: tbs, at: start) else { return nil }
        return tbs[start..<subject.end]
    }

    /// The subject Name element (header included) of a DER Certificate of which `bytes` may be
    /// only the beginning; `nil` when the name does not end within `bytes` or the structure is
    /// not a certificate's.
    static func subjectName(inCertificatePrefix bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard bytes.first == 0x30, let certificate = header(in: bytes, at: bytes.startIndex),
            certificate.contentStart < bytes.endIndex, bytes[certificate.contentStart] == 0x30,
            let tbs = header(in: bytes, at: certificate.contentStart)
        else { return nil }
        var index = tbs.contentStart
        if index < bytes.endIndex, bytes[index] == 0xA0 {
            guard let version = element(in: bytes, at: index) else { return nil }
            index = version.end
        }
        // serialNumber, signature, issuer, validity; then the subject.
        for _ in 0..<4 {
            guard let skipped = element(in: bytes, at: index) else { return nil }
            index = skipped.end
        }
        guard index < bytes.endIndex, bytes[index] == 0x30, let subject = element(in: bytes, at: index) else { return nil }
        return bytes[index..<subject.end]
    }

    /// The start and length of the content of the element at `start` (single-byte tags only, as in
    /// X.509 structures), whether or not the content lies within `bytes`; `nil` for a malformed header.
    private static func header(in bytes: ArraySlice<UInt8>, at start: Int) -> (contentStart: Int, length: Int)? {
        guard start < bytes.endIndex else { return nil }
        var index = start + 1
        guard index < bytes.endIndex else { return nil }
        let first = bytes[index]
        index += 1
        guard first & 0x80 != 0 else { return (index, Int(first)) }
        let count = Int(first & 0x7f)
        guard count >= 1, count <= 4, index + count <= bytes.endIndex else { return nil }
        var length = 0
        for _ in 0..<count {
            length = length << 8 | Int(bytes[index])
            index += 1
        }
        return (index, length)
    }
}
