import Foundation
import SwiftASN1
import X509

/// The operating system's root certificates, read once per process, when first needed.
///
/// As in OpenSSL, the bundle is `SSL_CERT_FILE` when that names a readable file, else the first
/// readable file of ``bundlePaths``. `SSL_CERT_DIR` (folders separated by `:`) is read when
/// `SSL_CERT_FILE` is not set: every PEM file in those folders, each file once whatever its names
/// (`c_rehash` links included). OpenSSL reads both, looking a folder up by subject hash at each
/// miss; reading a whole folder eagerly beside a bundle would double every process's start-up for
/// the usual setup where both name the same store (`/etc/ssl/certs` and its bundle), so a folder
/// next to a named file is not read (lookup by subject hash is future work). Reading it decodes each PEM block and reads only its
/// subject name; a root is parsed in full (its key included) the first time a path search looks
/// it up, so a process that validates one chain parses one or two roots, not the ~150 of a bundle.
public enum SystemRoots {
    /// Bundle files tried in order (Debian/Ubuntu, Fedora/RHEL, Alpine/macOS, SUSE).
    public static let bundlePaths = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/cert.pem",
        "/etc/ssl/ca-bundle.pem",
    ]

    /// The bundle file in use, if any: `SSL_CERT_FILE`, else the first readable of ``bundlePaths``.
    public static let bundlePath: String? = {
        if let variable = ProcessInfo.processInfo.environment["SSL_CERT_FILE"], !variable.isEmpty,
            FileManager.default.isReadableFile(atPath: variable) {
            return variable
        }
        return bundlePaths.first { FileManager.default.isReadableFile(atPath: $0) }
    }()

    /// The `SSL_CERT_DIR` folders, if that variable is set.
    public static let certificateDirectories: [String] = {
        let environment = ProcessInfo.processInfo.environment
        guard environment["SSL_CERT_FILE"]?.isEmpty ?? true else { return [] }
        guard let variable = environment["SSL_CERT_DIR"], !variable.isEmpty else { return [] }
        return variable.split(separator: ":").map(String.init).filter { !$0.isEmpty }
    }()

    /// Every system root, parsed (all of them: prefer the lazy lookups of a ``PathValidator``);
    /// empty when no bundle is installed (see ``bundlePath``). A block that swift-certificates cannot
    /// parse (an RSA-PSS key, say) is skipped instead of losing the whole store.
    public static var certificates: [Certificate] { SystemRootIndex.shared.allCertificates() }

    /// How many roots the bundle holds (parsed or not).
    public static var count: Int { SystemRootIndex.shared.count }
}

/// The system bundle indexed by subject, each root parsed on its first lookup (see ``SystemRoots``).
final class SystemRootIndex: @unchecked Sendable {
    static let shared: SystemRootIndex = {
        var bundle: [UInt8] = []
        if let path = SystemRoots.bundlePath, let data = FileManager.default.contents(atPath: path) { bundle = Array(data) }
        var read: Set<String> = SystemRoots.bundlePath.map { [URL(fileURLWithPath: $0).resolvingSymlinksInPath().path] } ?? []
        for folder in SystemRoots.certificateDirectories {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names.sorted() {
                // PEM only, as OpenSSL reads a certificate folder; each file once, whatever links name it.
                let path = URL(fileURLWithPath: folder + "/" + name).resolvingSymlinksInPath().path
                guard read.insert(path).inserted, let data = FileManager.default.contents(atPath: path) else { continue }
                bundle += [0x0A] + Array(data)
            }
        }
        return SystemRootIndex(bundle: bundle)
    }()

    private let ders: [[UInt8]]
    private let bySubject: [DistinguishedName: [Int]]
    // Guards `parsed`, written on first lookups (from any thread); everything else is immutable.
    private let lock = NSLock()
    private var parsed: [Int: Certificate?] = [:]

    /// Reads a PEM bundle: each block's subject only; a block that is not a certificate is skipped.
    init(bundle: [UInt8]) {
        let blocks = bundle.withUnsafeBufferPointer { PEMDecoder.blocks(in: $0) }
        var ders: [[UInt8]] = []
        var bySubject: [DistinguishedName: [Int]] = [:]
        for case let der? in blocks {
            let bytes = ArraySlice(der)
            guard bytes.first == 0x30, let outer = DERWalker.element(in: bytes, at: bytes.startIndex),
                let tbs = DERWalker.element(in: bytes, at: outer.contentStart),
                let subjectBytes = DERWalker.subjectName(inTBSCertificate: bytes[outer.contentStart..<tbs.end]),
                let node = try? DER.parse(Array(subjectBytes)),
                let subject = try? DistinguishedName(derEncoded: node)
            else { continue }
            // The same root listed twice is indexed once.
            if let existing = bySubject[subject], existing.contains(where: { ders[$0] == der }) { continue }
            bySubject[subject, default: []].append(ders.count)
            ders.append(der)
        }
        self.ders = ders
        self.bySubject = bySubject
    }

    /// Roots in the bundle.
    var count: Int { ders.count }

    /// Roots parsed so far (or found unparsable): what a lookup has cost.
    var parsedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return parsed.count
    }

    /// The roots whose subject is `subject`, parsed now if not yet.
    func certificates(subject: DistinguishedName) -> [Certificate] {
        guard let indices = bySubject[subject] else { return [] }
        return indices.compactMap(certificate(at:))
    }

    /// Whether `certificate` is one of the roots.
    func contains(_ certificate: Certificate) -> Bool {
        certificates(subject: certificate.subject).contains(certificate)
    }

    /// Every root, parsed.
    func allCertificates() -> [Certificate] {
        ders.indices.compactMap(certificate(at:))
    }

    private func certificate(at index: Int) -> Certificate? {
        lock.lock()
        if let known = parsed[index] {
            lock.unlock()
            return known
        }
        lock.unlock()
        // Parsed outside the lock; two first lookups may both parse, and agree.
        let certificate = try? Certificate(derEncoded: ders[index])
        lock.lock()
        parsed[index] = .some(certificate)
        lock.unlock()
        return certificate
    }
}
