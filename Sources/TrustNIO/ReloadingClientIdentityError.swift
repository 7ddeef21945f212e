import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a ``ReloadingClientIdentity`` did not take its files (on its first load, or on a reload, when it keeps
/// the identity it had). Each case names the file, never a passphrase or a key; text a file controls (a
/// certificate's name) is not repeated here.
public struct ReloadingClientIdentityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error with its data, for this package's code (cases come in minor versions without breaking a
    /// client, who shows the error: its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// The reload error for a loader's error.
    init(_ error: ClientIdentityError) { self.init(Detail(error)) }

    /// The identity's main file (the PKCS#12 file, or the certificate chain), or the passphrase's source.
    public var path: String { detail.path }

    /// Whether the same files may be taken later without changing (a certificate not yet valid).
    public var dependsOnTime: Bool { detail.dependsOnTime }

    /// The problem, in words, with the file's name escaped (`DisplayText`).
    public var description: String { detail.description }

    /// The file cannot be read (missing, no permission, not a regular file, too large).
    package static func unreadable(path: String) -> Self { Self(.unreadable(path: path)) }
    /// The passphrase's source gave nothing: the environment variable is not set, or the passphrase file cannot
    /// be read. Names the variable or the file.
    package static func passphraseUnavailable(source: String) -> Self { Self(.passphraseUnavailable(source: source)) }
    /// The passphrase does not decrypt the PKCS#12 file or the private key.
    package static func wrongPassphrase(path: String) -> Self { Self(.wrongPassphrase(path: path)) }
    /// The private key does not belong to the leaf certificate (for PEM, often a certificate already replaced
    /// whose key is not yet: the next change of the files is tried again).
    package static func keyDoesNotMatchCertificate(path: String) -> Self { Self(.keyDoesNotMatchCertificate(path: path)) }
    /// The leaf certificate expired (RFC 5280 §4.1.2.5) at `notValidAfter`: a server would refuse it.
    package static func expired(path: String, notValidAfter: Date) -> Self { Self(.expired(path: path, notValidAfter: notValidAfter)) }
    /// The leaf certificate is valid only from `notValidBefore` (RFC 5280 §4.1.2.5); polling tries the same files
    /// again until it is.
    package static func notYetValid(path: String, notValidBefore: Date) -> Self { Self(.notYetValid(path: path, notValidBefore: notValidBefore)) }
    /// Another problem with the identity itself (not PKCS#12 or PEM, no key, no certificate, an unsupported
    /// key, a PKCS#12 file over its ``PKCS12Budget``): the loader's own error, which names no secret either.
    package static func unusable(_ value0: ClientIdentityError) -> Self { Self(.unusable(value0)) }
}

extension ReloadingClientIdentityError {
    /// The cases, exhaustive inside this package.
    package enum Detail: Hashable, Sendable {
        /// The file cannot be read (missing, no permission, not a regular file, too large).
        case unreadable(path: String)
        /// The passphrase's source gave nothing: the environment variable is not set, or the passphrase file cannot
        /// be read. Names the variable or the file.
        case passphraseUnavailable(source: String)
        /// The passphrase does not decrypt the PKCS#12 file or the private key.
        case wrongPassphrase(path: String)
        /// The private key does not belong to the leaf certificate (for PEM, often a certificate already replaced
        /// whose key is not yet: the next change of the files is tried again).
        case keyDoesNotMatchCertificate(path: String)
        /// The leaf certificate expired (RFC 5280 §4.1.2.5) at `notValidAfter`: a server would refuse it.
        case expired(path: String, notValidAfter: Date)
        /// The leaf certificate is valid only from `notValidBefore` (RFC 5280 §4.1.2.5); polling tries the same files
        /// again until it is.
        case notYetValid(path: String, notValidBefore: Date)
        /// Another problem with the identity itself (not PKCS#12 or PEM, no key, no certificate, an unsupported
        /// key, a PKCS#12 file over its ``PKCS12Budget``): the loader's own error, which names no secret either.
        case unusable(ClientIdentityError)

        /// The identity's main file (the PKCS#12 file, or the certificate chain), or the passphrase's source.
        package var path: String {
            switch self {
            case .unreadable(let path), .wrongPassphrase(let path), .keyDoesNotMatchCertificate(let path): return path
            case .expired(let path, _), .notYetValid(let path, _): return path
            case .passphraseUnavailable(let source): return source
            case .unusable(let error): return error.source
            }
        }

        /// Whether the same files may be taken later without changing (a certificate not yet valid).
        package var dependsOnTime: Bool {
            if case .notYetValid = self { return true }
            return false
        }

        /// The problem, in words, with the file's name escaped (`DisplayText`).
        package var description: String {
            let file = DisplayText.escaped(path)
            switch self {
            case .unreadable: return "\(file): cannot read the file"
            case .passphraseUnavailable: return "the passphrase from \(file) is not available"
            case .wrongPassphrase: return "\(file): wrong passphrase"
            case .keyDoesNotMatchCertificate: return "\(file): the private key does not belong to the certificate"
            case .expired(_, let date): return "\(file): the certificate expired at \(RFC3339.string(date))"
            case .notYetValid(_, let date): return "\(file): the certificate is not valid before \(RFC3339.string(date))"
            case .unusable(let error): return DisplayText.escaped(error.description)
            }
        }

        /// The reload error for a loader's error.
        init(_ error: ClientIdentityError) {
            switch error.kind {
            case .unreadable: self = .unreadable(path: error.source)
            case .wrongPassphrase: self = .wrongPassphrase(path: error.source)
            case .keyDoesNotMatchCertificate: self = .keyDoesNotMatchCertificate(path: error.source)
            default: self = .unusable(error)
            }
        }
    }
}
