import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The operating system's root certificates, read once per process, when first needed.
///
/// As in OpenSSL, the bundle is `SSL_CERT_FILE` when that names a readable file, else the first
/// readable file of `bundlePaths`. `SSL_CERT_DIR` (folders separated by `:`) is read when
/// `SSL_CERT_FILE` is not set: every PEM file in those folders, each file once whatever its names
/// (`c_rehash` links included). OpenSSL reads both, looking a folder up by subject hash at each
/// miss; reading a whole folder eagerly beside a bundle would double every process's start-up for
/// the usual setup where both name the same store (`/etc/ssl/certs` and its bundle), so a folder
/// next to a named file is not read (lookup by subject hash is future work). Reading it decodes each PEM block and reads only its
/// subject name; a root is parsed in full (its key included) the first time a path search looks
/// it up, so a process that validates one chain parses one or two roots, not the ~150 of a bundle.
public enum SystemRoots {
    /// Bundle files tried in order (Debian/Ubuntu, Fedora/RHEL, Alpine/macOS, SUSE).
    package static let bundlePaths = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/cert.pem",
        "/etc/ssl/ca-bundle.pem",
    ]

    /// The bundle file in use, if any: `SSL_CERT_FILE`, else the first readable of ``bundlePaths``.
    package static let bundlePath: String? = {
        if let variable = ProcessInfo.processInfo.environment["SSL_CERT_FILE"], !variable.isEmpty,
            FileManager.default.isReadableFile(atPath: variable)
        {
            return variable
        }
        return bundlePaths.first { FileManager.default.isReadableFile(atPath: $0) }
    }()

    /// The `SSL_CERT_DIR` folders, if that variable is set.
    package static let certificateDirectories: [String] = {
        let environment = ProcessInfo.processInfo.environment
        guard environment["SSL_CERT_FILE"]?.isEmpty ?? true else { return [] }
        guard let variable = environment["SSL_CERT_DIR"], !variable.isEmpty else { return [] }
        return variable.split(separator: ":").map(String.init).filter { !$0.isEmpty }
    }()

    /// Every system root, parsed (all of them: prefer the lazy lookups of a ``PathValidator``);
    /// empty when no bundle is installed (see `bundlePath`). A block that swift-certificates cannot
    /// parse (an RSA-PSS key, say) is skipped instead of losing the whole store.
    public static var certificates: [Certificate] { SystemRootIndex.shared.allCertificates() }

    /// How many roots the bundle holds (parsed or not).
    package static var count: Int { SystemRootIndex.shared.count }

    /// Why no system root can anchor a path, when none was found: which file was read or which
    /// places were searched. `nil` when the system store holds roots.
    package static var missingNote: String? {
        guard count == 0 else { return nil }
        var looked = bundlePath.map { "\($0) holds no certificate" } ?? "no bundle in SSL_CERT_FILE or " + bundlePaths.joined(separator: ", ")
        if !certificateDirectories.isEmpty { looked += "; SSL_CERT_DIR " + certificateDirectories.joined(separator: ":") + " holds none either" }
        return "no system root certificates were found (\(looked)): only configured anchors can be trusted"
    }
}

/// The system bundle indexed by subject, each root parsed on its first lookup (see ``SystemRoots``).
///
/// Indexing works on the PEM text's bytes: for each block only the Base64 that covers the start
/// of the certificate is decoded (up to the end of the subject name, ~300 bytes of a ~1,300-byte
/// root), and the subject's DER bytes are the key — no `DistinguishedName` is built and no
/// certificate parsed. A lookup by `DistinguishedName` serialises the name once (remembered) and
/// finds the roots whose subject is encoded exactly so: DER is canonical, so equal names have
/// equal encodings. A root is decoded and parsed in full on its first lookup.
final class SystemRootIndex: @unchecked Sendable {
    static let shared: SystemRootIndex = {
        var bundle: [UInt8] = []
        // Bounded as every local input: SSL_CERT_FILE or a folder entry naming a device or an oversized file is
        // skipped, never read without end; SSL_CERT_FILE may be a pipe (`<(command)`), read within LocalFile's
        // deadline, while a FIFO found in a folder is skipped at once (nobody named it).
        func contents(_ path: String, pipes: LocalFile.Pipes = .bounded) -> [UInt8]? {
            try? LocalFile.read(path, limit: LocalFile.certificateLimit, pipes: pipes)
        }
        if let path = SystemRoots.bundlePath, let data = contents(path) { bundle = data }
        let folders = SystemRoots.certificateDirectories
        if !folders.isEmpty {
            var read: Set<String> = SystemRoots.bundlePath.map { [URL(fileURLWithPath: $0).resolvingSymlinksInPath().path] } ?? []
            for folder in folders {
                guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
                for name in names.sorted() {
                    // PEM only, as OpenSSL reads a certificate folder; each file once, whatever links name it.
                    let path = URL(fileURLWithPath: folder + "/" + name).resolvingSymlinksInPath().path
                    guard read.insert(path).inserted, let data = contents(path, pipes: .refused) else { continue }
                    bundle += [0x0A] + data
                }
            }
        }
        return SystemRootIndex(bundle: bundle)
    }()

    /// The PEM text; each root is the Base64 body `bodies[i]` of it.
    private let bundle: [UInt8]
    private let bodies: [Range<Int>]
    private let bySubject: [BulkBytes: [Int]]
    // Guards `parsed` and `byName`, written on lookups (from any thread); everything else is immutable.
    private let lock = Lock()
    private var parsed: [Int: Certificate?] = [:]
    /// Names already looked up, with the roots they found (bounded: cleared past 4,096 names).
    private var byName: [DistinguishedName: [Int]] = [:]

    /// Reads a PEM bundle: each block's subject only; a block that is not a certificate is skipped.
    convenience init(bundle: [UInt8]) {
        self.init(bundle: bundle, bodies: bundle.withUnsafeBufferPointer { PEMDecoder.bodies(in: $0) })
    }

    /// Indexes the Base64 bodies `blocks` of `bundle` (of the PEM blocks chosen by the caller: Mozilla's trusted
    /// roots among the entries of its store).
    init(bundle: [UInt8], bodies blocks: [Range<Int>]) {
        var bodies: [Range<Int>] = []
        var bySubject: [BulkBytes: [Int]] = [:]
        bundle.withUnsafeBufferPointer { text in
            for body in blocks {
                guard let subject = Self.subject(of: body, in: text) else { continue }
                let key = BulkBytes(subject)
                // The same root listed twice (the same Base64) is indexed once.
                if let existing = bySubject[key], existing.contains(where: { text[bodies[$0]].elementsEqual(text[body]) }) { continue }
                bySubject[key, default: []].append(bodies.count)
                bodies.append(body)
            }
        }
        self.bundle = bundle
        self.bodies = bodies
        self.bySubject = bySubject
    }

    /// The subject name's DER (header included) of the certificate whose Base64 is `text[body]`,
    /// decoding only as much as reaches the end of the name; `nil` when it is not a certificate.
    private static func subject(of body: Range<Int>, in text: UnsafeBufferPointer<UInt8>) -> ArraySlice<UInt8>? {
        // 640 Base64 characters (480 bytes) hold the subject of nearly every root; longer names
        // decode the whole block.
        for limit in [640, Int.max] {
            // A whole number of quads: the prefix is valid Base64 by itself.
            let end = body.count <= limit ? body.upperBound : PEMDecoder.prefixEnd(text, from: body.lowerBound, to: body.upperBound, characters: limit)
            guard let prefix = PEMDecoder.decodeBase64(text, from: body.lowerBound, to: end) else { return nil }
            if let subject = DERWalker.subjectName(inCertificatePrefix: ArraySlice(prefix)) { return subject }
            if end == body.upperBound { return nil }
        }
        return nil
    }

    /// Roots in the bundle.
    var count: Int { bodies.count }

    /// Roots parsed so far (or found unparsable): what a lookup has cost.
    var parsedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return parsed.count
    }

    /// The roots whose subject is `subject`, parsed now if not yet (each distinct root once).
    func certificates(subject: DistinguishedName) -> [Certificate] {
        lock.lock()
        var indices = byName[subject]
        lock.unlock()
        if indices == nil {
            var serializer = DER.Serializer()
            let found = (try? serializer.serialize(subject)).flatMap { bySubject[BulkBytes(ArraySlice(serializer.serializedBytes))] } ?? []
            indices = found
            lock.lock()
            if byName.count >= 4096 { byName.removeAll(keepingCapacity: true) }
            byName[subject] = found
            lock.unlock()
        }
        var roots: [Certificate] = []
        for index in indices ?? [] {
            // The same root listed twice is one root.
            if let root = certificate(at: index), !roots.contains(root) { roots.append(root) }
        }
        return roots
    }

    /// Whether `certificate` is one of the roots.
    func contains(_ certificate: Certificate) -> Bool {
        certificates(subject: certificate.subject).contains(certificate)
    }

    /// Every root, parsed (each distinct root once).
    func allCertificates() -> [Certificate] {
        var roots: [Certificate] = []
        var seen = Set<Certificate>()
        for index in bodies.indices {
            if let root = certificate(at: index), seen.insert(root).inserted { roots.append(root) }
        }
        return roots
    }

    private func certificate(at index: Int) -> Certificate? {
        lock.lock()
        if let known = parsed[index] {
            lock.unlock()
            return known
        }
        lock.unlock()
        // Parsed outside the lock; two first lookups may both parse, and agree.
        let body = bodies[index]
        let der = bundle.withUnsafeBufferPointer { PEMDecoder.decodeBase64($0, from: body.lowerBound, to: body.upperBound) }
        let certificate = der.flatMap { try? Certificate(derEncoded: $0) }
        lock.lock()
        parsed[index] = .some(certificate)
        lock.unlock()
        return certificate
    }
}
