import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads certificates from PEM (one or many blocks), DER, files and folders.
///
/// A folder is read like AFNetworking's `certificatesInBundle:`: every file ending
/// in `.cer`, `.crt`, `.der` or `.pem`, in name order. Each file may be PEM or DER.
/// Malformed input always produces a ``CertificateLoadingError`` naming the file.
public enum CertificateSource {
    /// File name extensions read from a folder.
    package static let certificateFileExtensions: Set<String> = ["cer", "crt", "der", "pem"]

    /// Parses PEM text holding one or more `CERTIFICATE` blocks (other blocks, such as
    /// keys, are skipped; text between blocks is ignored).
    public static func certificates(pem: String, source: String = "<memory>") throws(CertificateLoadingError) -> [Certificate] {
        try strict(entries(pem: pem, source: source), source: source)
    }

    /// Parses one DER-encoded certificate.
    package static func certificate(der: some Collection<UInt8>, source: String = "<memory>", block: Int? = nil) throws(CertificateLoadingError) -> Certificate
    {
        let bytes = Array(der)
        do {
            return try Certificate(derEncoded: bytes)
        } catch {
            throw CertificateLoadingError(source: source, kind: .malformedCertificate(block: block, detail: String(describing: error)))
        }
    }

    /// Parses bytes that are either PEM text or DER: a certificate bundle as found in a file.
    public static func certificates(bytes: some Collection<UInt8>, source: String = "<memory>") throws(CertificateLoadingError) -> [Certificate] {
        try strict(entries(bytes: bytes, source: source), source: source)
    }

    /// Reads a file (PEM or DER) or, for a folder, every certificate file in it.
    public static func certificates(atPath path: String) throws(CertificateLoadingError) -> [Certificate] {
        try strict(entries(atPath: path), source: path)
    }

    /// Reads every `.cer`, `.crt`, `.der` and `.pem` file in a folder (not recursively), in name order.
    public static func certificates(inDirectory path: String) throws(CertificateLoadingError) -> [Certificate] {
        try strict(entries(inDirectory: path), source: path)
    }

    // MARK: lenient reading

    /// Like ``certificates(atPath:)``, but a certificate that is well formed yet uses a form
    /// swift-certificates cannot process (RSA under 2048 bits, MD5, RSA-PSS…) is returned as
    /// ``CertificateEntry/unsupported(_:detail:)`` instead of failing the whole file — so a tool can
    /// still pin it, or refuse it with a reason. Input that is not a certificate at all still throws.
    package static func entries(atPath path: String) throws(CertificateLoadingError) -> [CertificateEntry] {
        guard LocalFile.exists(path) else {
            throw CertificateLoadingError(source: path, kind: .unreadable("no such file or folder"))
        }
        if LocalFile.isFolder(path) { return try entries(inDirectory: path) }
        // Bounded: a device or an oversized file is refused, a FIFO or pipe read within a deadline, never forever.
        let data: [UInt8]
        do {
            data = try LocalFile.read(path, limit: LocalFile.certificateLimit)
        } catch {
            throw CertificateLoadingError(source: path, kind: .unreadable(error.reason))
        }
        return try entries(bytes: data, source: path)
    }

    /// Lenient reading of every certificate file in a folder; see ``entries(atPath:)``.
    package static func entries(inDirectory path: String) throws(CertificateLoadingError) -> [CertificateEntry] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw CertificateLoadingError(source: path, kind: .unreadable("\(error)"))
        }
        var result: [CertificateEntry] = []
        for name in names.sorted() {
            let ext = name.pathFileExtension.lowercased()
            guard certificateFileExtensions.contains(ext) else { continue }
            result += try entries(atPath: path.joiningPath(name))
        }
        if result.isEmpty { throw CertificateLoadingError(source: path, kind: .noCertificates) }
        return result
    }

    /// Lenient reading of PEM or DER bytes; see ``entries(atPath:)``.
    package static func entries(bytes: some Collection<UInt8>, source: String = "<memory>") throws(CertificateLoadingError) -> [CertificateEntry] {
        let bytes = Array(bytes)
        if bytes.first == 0x30 {
            return [try entry(der: bytes, source: source, block: nil)]
        }
        return try entries(pemBytes: bytes, source: source)
    }

    /// Lenient reading of PEM text; see ``entries(atPath:)``.
    package static func entries(pem: String, source: String = "<memory>") throws(CertificateLoadingError) -> [CertificateEntry] {
        try entries(pemBytes: Array(pem.utf8), source: source)
    }

    /// PEM on its bytes (``PEMDecoder``): no string work.
    private static func entries(pemBytes bytes: [UInt8], source: String) throws(CertificateLoadingError) -> [CertificateEntry] {
        let decoded = bytes.withUnsafeBufferPointer { buffer -> Result<[[UInt8]], PEMDecoder.Failure> in
            do throws(PEMDecoder.Failure) {
                return .success(try PEMDecoder.certificateDERs(in: buffer))
            } catch {
                return .failure(error)
            }
        }
        let ders: [[UInt8]]
        switch decoded {
        case .success(let found): ders = found
        case .failure(.unterminated(let block)): throw CertificateLoadingError(source: source, kind: .unterminatedPEMBlock(block: block))
        case .failure(.invalidBase64(let block)): throw CertificateLoadingError(source: source, kind: .invalidBase64(block: block))
        }
        var result: [CertificateEntry] = []
        for (index, der) in ders.enumerated() {
            result.append(try entry(der: der, source: source, block: index + 1))
        }
        if result.isEmpty { throw CertificateLoadingError(source: source, kind: .noCertificates) }
        return result
    }

    static func entry(der: [UInt8], source: String, block: Int?) throws(CertificateLoadingError) -> CertificateEntry {
        do {
            return .parsed(try Certificate(derEncoded: der))
        } catch {
            guard let raw = RawCertificate(der: der) else {
                throw CertificateLoadingError(source: source, kind: .malformedCertificate(block: block, detail: String(describing: error)))
            }
            return .unsupported(raw, detail: String(describing: error))
        }
    }

    static func strict(_ entries: [CertificateEntry], source: String) throws(CertificateLoadingError) -> [Certificate] {
        var result: [Certificate] = []
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .parsed(let certificate):
                result.append(certificate)
            case .unsupported(_, let detail):
                throw CertificateLoadingError(source: source, kind: .malformedCertificate(block: entries.count > 1 ? index + 1 : nil, detail: detail))
            }
        }
        return result
    }
}

/// One certificate read leniently: parsed, or recognised but in a form that cannot be processed.
package enum CertificateEntry: Sendable, Hashable {
    case parsed(Certificate)
    case unsupported(RawCertificate, detail: String)

    /// The SPKI pin, available either way.
    package var spkiPin: SPKIPin {
        switch self {
        case .parsed(let certificate): return certificate.spkiPin
        case .unsupported(let raw, _): return raw.spkiPin
        }
    }

    /// The subject as text.
    package var subject: String {
        switch self {
        case .parsed(let certificate): return certificate.subject.description
        case .unsupported(let raw, _): return raw.subject ?? ""
        }
    }

    /// The parsed certificate, or `nil` when the entry is unsupported.
    package var certificate: Certificate? {
        if case .parsed(let certificate) = self { return certificate }
        return nil
    }
}
