import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ClientIdentity {
    /// The identity a trust configuration entry names (`clientIdentity`: a PKCS#12 file, or a certificate chain and
    /// key in PEM or DER), its files read relative to `baseDirectory` (the configuration file's folder) and its
    /// passphrase from the environment variable the entry names; `nil` when the reference names no file.
    /// - Parameters:
    ///   - reference: the entry's `clientIdentity`.
    ///   - baseDirectory: where relative paths are read from.
    ///   - environment: where `passphraseEnvironment` is looked up (the process's environment by default).
    ///   - now: when the certificate's validity is judged for ``warnings``.
    public static func load(
        _ reference: TrustConfiguration.ClientIdentityReference, baseDirectory: String,
        environment: [String: String] = ProcessInfo.processInfo.environment, now: Date = Date()
    ) throws(ClientIdentityError) -> ClientIdentity? {
        func path(_ file: String) -> String { file.hasPrefix("/") ? file : baseDirectory.joiningPath(file) }
        let passphrase = reference.passphraseEnvironment.flatMap { environment[$0] }
        if let pkcs12 = reference.pkcs12 {
            return try ClientIdentity(pkcs12File: path(pkcs12), passphrase: passphrase, now: now)
        }
        if let certificate = reference.certificate {
            return try ClientIdentity(certificateFile: path(certificate), keyFile: reference.key.map(path), passphrase: passphrase, now: now)
        }
        return nil
    }
}
