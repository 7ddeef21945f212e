import Foundation
import X509

/// Reads certificates from PEM (one or many blocks), DER, files and folders.
///
/// A folder is read like AFNetworking's `certificatesInBundle:`: every file ending
/// in `.cer`, `.crt`, `.der` or `.pem`, in name order. Each file may be PEM or DER.
/// Malformed input always produces a ``CertificateLoadingError`` naming the file.
public enum CertificateSource {
    /// File name extensions read from a folder.
    public static let certificateFileExtensions: Set<String> = ["cer", "crt", "der", "pem"]

    /// Parses PEM text holding one or more `CERTIFICATE` blocks (other blocks, such as
    /// keys, are skipped; text between blocks is ignored).
    public static func certificates(pem: String, source: String = "<memory>") throws(CertificateLoadingError) -> [Certificate] {
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        var result: [Certificate] = []
        var rest = Substring(pem)
        var block = 0
        while let start = rest.range(of: begin) {
            block += 1
            let afterBegin = rest[start.upperBound...]
            guard let stop = afterBegin.range(of: end) else {
                throw CertificateLoadingError(source: source, kind: .unterminatedPEMBlock(block: block))
            }
            let body = afterBegin[..<stop.lowerBound].filter { !$0.isWhitespace }
            guard !body.contains("-"), let der = Data(base64Encoded: String(body)) else {
                throw CertificateLoadingError(source: source, kind: .invalidBase64(block: block))
            }
            result.append(try certificate(der: Array(der), source: source, block: block))
            rest = afterBegin[stop.upperBound...]
        }
        if result.isEmpty { throw CertificateLoadingError(source: source, kind: .noCertificates) }
        return result
    }

    /// Parses one DER-encoded certificate.
    public static func certificate(der: some Collection<UInt8>, source: String = "<memory>", block: Int? = nil) throws(CertificateLoadingError) -> Certificate {
        do {
            return try Certificate(derEncoded: Array(der))
        } catch {
            throw CertificateLoadingError(source: source, kind: .malformedCertificate(block: block, detail: String(describing: error)))
        }
    }

    /// Parses bytes that are either PEM text or DER: a certificate bundle as found in a file.
    public static func certificates(bytes: some Collection<UInt8>, source: String = "<memory>") throws(CertificateLoadingError) -> [Certificate] {
        let bytes = Array(bytes)
        if bytes.first == 0x30 {
            return [try certificate(der: bytes, source: source)]
        }
        guard let text = String(validating: bytes, as: UTF8.self) ?? String(validating: bytes, as: Unicode.ASCII.self),
            text.contains("-----BEGIN")
        else {
            throw CertificateLoadingError(source: source, kind: .noCertificates)
        }
        return try certificates(pem: text, source: source)
    }

    /// Reads a file (PEM or DER) or, for a folder, every certificate file in it.
    public static func certificates(atPath path: String) throws(CertificateLoadingError) -> [Certificate] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CertificateLoadingError(source: path, kind: .unreadable("no such file or folder"))
        }
        if isDirectory.boolValue { return try certificates(inDirectory: path) }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CertificateLoadingError(source: path, kind: .unreadable(error.localizedDescription))
        }
        return try certificates(bytes: data, source: path)
    }

    /// Reads every `.cer`, `.crt`, `.der` and `.pem` file in a folder (not recursively), in name order.
    public static func certificates(inDirectory path: String) throws(CertificateLoadingError) -> [Certificate] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw CertificateLoadingError(source: path, kind: .unreadable(error.localizedDescription))
        }
        var result: [Certificate] = []
        for name in names.sorted() {
            let ext = (name as NSString).pathExtension.lowercased()
            guard certificateFileExtensions.contains(ext) else { continue }
            result += try certificates(atPath: (path as NSString).appendingPathComponent(name))
        }
        if result.isEmpty { throw CertificateLoadingError(source: path, kind: .noCertificates) }
        return result
    }
}
