import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A client certificate (with its intermediates) and its private key, ready to answer a server's
/// certificate request.
///
/// Made from a PKCS#12 file and its passphrase (OpenSSL 3 default, `-legacy` and empty-password
/// files), or from PEM: a certificate chain plus a PKCS#8, SEC1 or PKCS#1 key. Every problem is a
/// ``ClientIdentityError``; nothing in the input can crash the process (NIOSSL's own PKCS#12 loader
/// traps on a file without a key — this type checks first).
public struct ClientIdentity: Sendable {
    /// Leaf first, then the intermediates to send.
    public let certificateChain: [NIOSSLCertificate]
    /// The private key of the leaf.
    public let privateKey: NIOSSLPrivateKey
    /// The leaf, parsed.
    public let certificate: Certificate
    /// Things worth knowing that do not stop the identity from being used (expired, expiring soon).
    public let warnings: [String]

    /// From PKCS#12 bytes and a passphrase (`""` or `nil` for none), within `budget` (``PKCS12Budget``: a file asking
    /// for more key-derivation work than it allows is refused before any is done).
    public init(pkcs12 bytes: [UInt8], passphrase: String?, source: String = "<memory>", now: Date = Date(), budget: PKCS12Budget = PKCS12Budget())
        throws(ClientIdentityError)
    {
        let structure: PKCS12Structure
        do {
            structure = try PKCS12Structure(der: bytes)
        } catch {
            throw ClientIdentityError(source: source, kind: .corrupt("\(error)"))
        }
        guard structure.keyBags > 0 else {
            throw ClientIdentityError(
                source: source,
                kind: .noPrivateKey(
                    structure.encryptedContents > 0
                        ? "no private key outside the encrypted contents (re-export it with `openssl pkcs12 -export`)" : "the file holds no private key"))
        }
        guard structure.certificateBags > 0 || structure.encryptedContents > 0 else {
            throw ClientIdentityError(source: source, kind: .noCertificate)
        }
        // BoringSSL checks the MAC a second time with the other encoding of an empty passphrase.
        let (work, overflow) = structure.iterations.addingReportingOverflow((passphrase ?? "").isEmpty ? structure.macIterations : 0)
        guard !overflow, work <= budget.maximumIterations else {
            throw ClientIdentityError(
                source: source,
                kind: .tooMuchWork(
                    "the file asks for \(overflow ? "more than \(Int.max)" : String(work)) key-derivation iterations, over the budget of \(budget.maximumIterations)"
                ))
        }
        let bundle: NIOSSLPKCS12Bundle
        do {
            bundle = try Self.decode(bytes, passphrase: passphrase, source: source, timeLimit: budget.timeLimit)
        } catch let error as ClientIdentityError {
            throw error
        } catch {
            let text = "\(error)"
            if text.contains("INCORRECT_PASSWORD") || text.contains("PKCS12_R_INCORRECT_PASSWORD") || text.lowercased().contains("mac verify") {
                throw ClientIdentityError(source: source, kind: .wrongPassphrase)
            }
            throw ClientIdentityError(source: source, kind: .corrupt(text))
        }
        try self.init(chain: bundle.certificateChain, key: bundle.privateKey, source: source, now: now)
    }

    /// From a PKCS#12 file, within `budget`.
    public init(pkcs12File path: String, passphrase: String?, now: Date = Date(), budget: PKCS12Budget = PKCS12Budget()) throws(ClientIdentityError) {
        try self.init(pkcs12: try Self.read(path), passphrase: passphrase, source: path, now: now, budget: budget)
    }

    /// Where decodings with a time limit run: a concurrent queue of its own, whose threads libdispatch adds as
    /// decodings block (it targets an overcommitting root queue), so a slow file never takes a thread of Swift
    /// concurrency's cooperative pool, and the caller can stop waiting while the decoding, which cannot be
    /// interrupted, finishes and is dropped. Not a thread per decoding: a thread that ends right after its work
    /// can hold the last reference to the result as it exits, where LeakSanitizer's check after each fuzz input
    /// no longer scans it; libdispatch releases a block on the live worker that ran it.
    private static let decodingQueue = DispatchQueue(label: "swift-trust.pkcs12-decoding", attributes: .concurrent)

    /// NIOSSL's decoding; with a time limit, on `decodingQueue`, waited for until the limit passes (BoringSSL's
    /// key derivation cannot be interrupted).
    private static func decode(_ bytes: [UInt8], passphrase: String?, source: String, timeLimit: Duration?) throws -> NIOSSLPKCS12Bundle {
        let secret = Array((passphrase ?? "").utf8)
        guard let timeLimit else { return try NIOSSLPKCS12Bundle(buffer: bytes, passphrase: secret) }
        let outcome = DecodingOutcome()
        decodingQueue.async {
            outcome.finish(Result { try NIOSSLPKCS12Bundle(buffer: bytes, passphrase: secret) })
        }
        let (seconds, attoseconds) = timeLimit.components
        // Saturating: a limit of Int32.max seconds (68 years) or more waits that long; `seconds * 10^9` traps past 292.
        let nanoseconds = seconds >= Int64(Int32.max) ? Int64(Int32.max) * 1_000_000_000 : max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        guard outcome.done.wait(timeout: .now() + .nanoseconds(Int(min(nanoseconds, Int64(Int32.max) * 1_000_000_000)))) == .success,
            let result = outcome.result
        else { throw ClientIdentityError(source: source, kind: .timedOut(timeLimit)) }
        return try result.get()
    }

    /// From PEM: the certificate chain (leaf first) and the private key (PKCS#8, SEC1 or PKCS#1;
    /// an encrypted key needs `passphrase`).
    public init(certificateChainPEM: String, privateKeyPEM: String, passphrase: String? = nil, source: String = "<memory>", now: Date = Date())
        throws(ClientIdentityError)
    {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8))
        } catch {
            throw ClientIdentityError(source: source, kind: .corrupt("certificate: \(error)"))
        }
        guard !chain.isEmpty else { throw ClientIdentityError(source: source, kind: .noCertificate) }
        guard privateKeyPEM.contains("PRIVATE KEY-----") else {
            throw ClientIdentityError(source: source, kind: .noPrivateKey("no PEM private key block"))
        }
        let key: NIOSSLPrivateKey
        do {
            if let passphrase {
                key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem) { setter in setter(Array(passphrase.utf8)) }
            } else {
                key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
            }
        } catch {
            // NIOSSL says only "failedToLoadPrivateKey"; for an encrypted key that means the passphrase.
            if privateKeyPEM.contains("ENCRYPTED") {
                throw ClientIdentityError(
                    source: source, kind: passphrase == nil ? .noPrivateKey("the private key is encrypted: give its passphrase") : .wrongPassphrase)
            }
            throw ClientIdentityError(source: source, kind: .unsupportedKey("\(error)"))
        }
        try self.init(chain: chain, key: key, source: source, now: now)
    }

    /// From PEM files (the key may be in the certificate file).
    public init(certificateFile: String, keyFile: String?, passphrase: String? = nil, now: Date = Date()) throws(ClientIdentityError) {
        let certificates = try Self.read(certificateFile)
        let key = try keyFile.map { path throws(ClientIdentityError) in try Self.read(path) } ?? certificates
        try self.init(
            certificateChainPEM: String(decoding: certificates, as: UTF8.self), privateKeyPEM: String(decoding: key, as: UTF8.self),
            passphrase: passphrase, source: certificateFile, now: now)
    }

    /// A local identity file, bounded (``LocalFile``): a device, an oversized file or a FIFO without an end within its
    /// deadline is unreadable.
    private static func read(_ path: String) throws(ClientIdentityError) -> [UInt8] {
        do {
            return try LocalFile.read(path, limit: LocalFile.identityLimit)
        } catch {
            throw ClientIdentityError(source: path, kind: .unreadable)
        }
    }

    private init(chain: [NIOSSLCertificate], key: NIOSSLPrivateKey, source: String, now: Date) throws(ClientIdentityError) {
        guard let leafNIO = chain.first else { throw ClientIdentityError(source: source, kind: .noCertificate) }
        let leaf: Certificate
        do {
            leaf = try Certificate(derEncoded: try leafNIO.toDERBytes())
        } catch {
            throw ClientIdentityError(source: source, kind: .unsupportedKey("the certificate cannot be processed: \(error)"))
        }
        // BoringSSL checks that the key belongs to the leaf when both go into a context.
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateChain = chain.map { .certificate($0) }
        configuration.privateKey = .privateKey(key)
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch NIOSSLError.failedToLoadPrivateKey {
            // The key itself loaded above; BoringSSL refuses to pair it with this certificate.
            throw ClientIdentityError(source: source, kind: .keyDoesNotMatchCertificate)
        } catch {
            throw ClientIdentityError(source: source, kind: .unsupportedKey("\(error)"))
        }
        self.certificateChain = chain
        self.privateKey = key
        self.certificate = leaf
        var warnings: [String] = []
        if leaf.notValidAfter < now {
            warnings.append("the client certificate \(leaf.subject) expired at \(RFC3339.string(leaf.notValidAfter))")
        } else if leaf.notValidAfter.timeIntervalSince(now) < 30 * 86_400 {
            warnings.append("the client certificate \(leaf.subject) expires in \(Int(leaf.notValidAfter.timeIntervalSince(now) / 86_400)) days")
        }
        if leaf.notValidBefore > now {
            warnings.append("the client certificate \(leaf.subject) is not valid before \(RFC3339.string(leaf.notValidBefore))")
        }
        self.warnings = warnings
    }

    /// What NIOSSL needs to send this identity.
    public var configurationOverride: NIOSSLContextConfigurationOverride {
        var override = NIOSSLContextConfigurationOverride()
        override.certificateChain = certificateChain.map { .certificate($0) }
        override.privateKey = .privateKey(privateKey)
        return override
    }
}

/// Why a client identity could not be loaded; always names the source.
public struct ClientIdentityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong: compared (`error.kind == .corrupt`) or switched on with a `default:`, as kinds come in minor
    /// versions without breaking a client. Two kinds are equal when they are the same kind, whatever their details
    /// (the error's description says them).
    public struct Kind: Hashable, Sendable {
        /// The kind with its data, for this package's code.
        package let detail: Detail

        package init(_ detail: Detail) { self.detail = detail }

        /// The same kind, details aside.
        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.detail.number == rhs.detail.number }

        /// Hashes the kind, details aside, as `==` compares it.
        public func hash(into hasher: inout Hasher) { hasher.combine(detail.number) }

        /// The file could not be read.
        public static let unreadable = Self(.unreadable)
        /// The passphrase does not decrypt the file or the key.
        public static let wrongPassphrase = Self(.wrongPassphrase)
        /// Not PKCS#12 or PEM, truncated, or otherwise unusable.
        public static let corrupt = Self(.corrupt(""))
        package static func corrupt(_ value0: String) -> Self { Self(.corrupt(value0)) }
        /// No usable private key (none in the input, or one that cannot be read).
        public static let noPrivateKey = Self(.noPrivateKey(""))
        package static func noPrivateKey(_ value0: String) -> Self { Self(.noPrivateKey(value0)) }
        /// The input holds no certificate.
        public static let noCertificate = Self(.noCertificate)
        /// The private key does not belong to the leaf certificate.
        public static let keyDoesNotMatchCertificate = Self(.keyDoesNotMatchCertificate)
        /// The key or certificate cannot be used (an algorithm or size TLS here does not take).
        public static let unsupportedKey = Self(.unsupportedKey(""))
        package static func unsupportedKey(_ value0: String) -> Self { Self(.unsupportedKey(value0)) }
        /// A PKCS#12 file asks for more key-derivation work than the ``PKCS12Budget`` allows.
        public static let tooMuchWork = Self(.tooMuchWork(""))
        package static func tooMuchWork(_ value0: String) -> Self { Self(.tooMuchWork(value0)) }
        /// Decoding a PKCS#12 file took longer than the ``PKCS12Budget/timeLimit``.
        public static let timedOut = Self(.timedOut(.zero))
        package static func timedOut(_ value0: Duration) -> Self { Self(.timedOut(value0)) }

        /// The cases, exhaustive inside this package.
        package enum Detail: Hashable, Sendable {
            /// The file could not be read.
            case unreadable
            /// The passphrase does not decrypt the file or the key.
            case wrongPassphrase
            /// Not PKCS#12 / PEM, truncated, or otherwise unusable.
            case corrupt(String)
            /// No usable private key; the detail says why.
            case noPrivateKey(String)
            /// The input holds no certificate.
            case noCertificate
            /// The private key does not belong to the leaf certificate.
            case keyDoesNotMatchCertificate
            /// The key or certificate cannot be used; the detail says why.
            case unsupportedKey(String)
            /// A PKCS#12 file asks for more key-derivation work than the ``PKCS12Budget`` allows; the detail says how much.
            case tooMuchWork(String)
            /// Decoding a PKCS#12 file took longer than the ``PKCS12Budget/timeLimit``.
            case timedOut(Duration)

            /// Which case, details aside.
            var number: Int {
                switch self {
                case .unreadable: 0
                case .wrongPassphrase: 1
                case .corrupt: 2
                case .noPrivateKey: 3
                case .noCertificate: 4
                case .keyDoesNotMatchCertificate: 5
                case .unsupportedKey: 6
                case .tooMuchWork: 7
                case .timedOut: 8
                }
            }
        }
    }

    /// Where the identity came from: a file path, or `<memory>` by default.
    public let source: String
    /// What went wrong.
    public let kind: Kind

    /// The same source and the same problem, details included.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.source == rhs.source && lhs.kind.detail == rhs.kind.detail }

    /// Hashes the source and the problem, details included, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(source)
        hasher.combine(kind.detail)
    }

    /// Whether decoding ran out of time (the ``PKCS12Budget/timeLimit``).
    public var isTimeout: Bool { kind == .timedOut }

    /// The source and the problem, in words.
    public var description: String {
        switch kind.detail {
        case .unreadable: return "\(source): cannot read the file"
        case .wrongPassphrase: return "\(source): wrong passphrase"
        case .corrupt(let detail): return "\(source): not a usable PKCS#12/PEM identity (\(detail))"
        case .noPrivateKey(let detail): return "\(source): \(detail)"
        case .noCertificate: return "\(source): the file holds no certificate"
        case .keyDoesNotMatchCertificate: return "\(source): the private key does not belong to the certificate"
        case .unsupportedKey(let detail): return "\(source): unsupported key or certificate (\(detail))"
        case .tooMuchWork(let detail): return "\(source): refused: \(detail)"
        case .timedOut(let limit): return "\(source): not decoded within \(limit)"
        }
    }
}

/// The result of a PKCS#12 decoding on ``ClientIdentity``'s decoding queue, and a semaphore signalled when it is there.
private final class DecodingOutcome: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    private let lock = NIOLock()
    private var stored: Result<NIOSSLPKCS12Bundle, any Error>?

    var result: Result<NIOSSLPKCS12Bundle, any Error>? { lock.withLock { stored } }

    func finish(_ result: Result<NIOSSLPKCS12Bundle, any Error>) {
        lock.withLock { stored = result }
        done.signal()
    }
}
