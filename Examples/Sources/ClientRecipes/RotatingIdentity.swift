// A client certificate that a sidecar (cert-manager, a SPIFFE agent, an ACME client) renews every few hours by
// writing new files: the client presents the identity in force on each new connection, without a restart, and a
// half-written or mismatched pair is refused while the previous identity stays in use.
import Foundation
import Trust
import TrustHTTP
import TrustNIO

/// A client identity that follows its files.
public struct RotatingIdentity: Sendable {
    /// The identity in force and its files.
    public let identity: ReloadingClientIdentity

    /// The PEM chain and key a sidecar writes; the key's passphrase (if any) is the first line of `passphraseFile`,
    /// read again at each load. PKCS#12 work is bounded (200,000 iterations) against a hostile file.
    public init(certificateChain: String, key: String, passphraseFile: String? = nil, pollInterval: Duration = .seconds(60)) throws {
        let files = ReloadingClientIdentity.Files.pem(
            certificateChain: certificateChain, key: key, passphrase: passphraseFile.map { .file($0) } ?? .empty)
        identity = try ReloadingClientIdentity(files, pollInterval: pollInterval, budget: PKCS12Budget(maximumIterations: 200_000))
    }

    /// A PKCS#12 bundle whose passphrase is in the environment variable `passphraseVariable` (a secret mounted as an
    /// environment variable, never in the code or the process's arguments).
    public init(pkcs12 path: String, passphraseVariable: String, pollInterval: Duration = .seconds(60)) throws {
        identity = try ReloadingClientIdentity(.pkcs12(path: path, passphrase: .environment(passphraseVariable)), pollInterval: pollInterval)
    }

    /// The files watched, for the service's startup log (never a passphrase).
    public var watchedFiles: [String] { identity.files.paths }
    /// One line for the log: the files (escaped) and where the passphrase comes from.
    public var summary: String {
        switch identity.files {
        case .pkcs12(_, let passphrase), .pem(_, _, let passphrase): "\(identity.files); passphrase: \(passphrase)"
        }
    }
    /// The most PKCS#12 iterations a file may ask for.
    public var iterationLimit: Int { identity.budget.maximumIterations }

    /// Polls the files in a task of the identity's own until ``stop()``, for code without a service group.
    public func start() { identity.startPolling() }
    public func stop() { identity.stopPolling() }

    /// `base` presenting this identity to `hosts`, or to every host that asks when `hosts` is empty.
    public func configuration(_ base: TrustHTTPClientConfiguration, hosts: [String] = []) -> TrustHTTPClientConfiguration {
        var configuration = base
        if hosts.isEmpty {
            configuration.defaultReloadingClientIdentity = identity
        } else {
            for host in hosts { configuration.reloadingClientIdentities[host] = identity }
        }
        return configuration
    }

    /// Reads the files now (after the sidecar says it wrote them): the new generation, or why they were refused.
    public func renewNow() -> Result<UInt64?, ReloadingClientIdentityError> {
        let outcome = identity.reload()
        if let rejection = outcome.rejection { return .failure(rejection) }
        return .success(outcome.generation)
    }

    /// What an operator is told about a refused renewal.
    public static func advice(for error: ReloadingClientIdentityError) -> String {
        error.dependsOnTime
            ? "\(error.path): not valid yet or expired on this machine's clock: check the clock and the sidecar"
            : "\(error.path): \(error)"
    }

    /// Checks a PKCS#12 bundle before installing it (an upload form, a secret's new version): its subject, or the
    /// kind of problem, named without the passphrase.
    public static func check(pkcs12 bytes: [UInt8], passphrase: String?, source: String) -> Result<String, IdentityProblem> {
        do {
            let identity = try ClientIdentity(
                pkcs12: bytes, passphrase: passphrase, source: source, now: Date(), budget: PKCS12Budget(maximumIterations: 200_000))
            return .success("\(identity.certificate.subject)")
        } catch {
            return .failure(IdentityProblem(error))
        }
    }

    /// A client identity that cannot be used, sorted for the person who uploaded it.
    public struct IdentityProblem: Error, Equatable {
        public enum Kind: Equatable { case unreadable, wrongPassphrase, notAnIdentity, noCertificate, noKey, keyMismatch, unsupported, tooCostly, other }
        public let kind: Kind
        /// The file or upload it came from.
        public let source: String

        init(_ error: ClientIdentityError) {
            source = error.source
            kind =
                switch error.kind {
                case .unreadable: .unreadable
                case .wrongPassphrase: .wrongPassphrase
                case .corrupt: .notAnIdentity
                case .noCertificate: .noCertificate
                case .noPrivateKey: .noKey
                case .keyDoesNotMatchCertificate: .keyMismatch
                case .unsupportedKey: .unsupported
                // Key derivation asked for more work, or took longer, than the budget allows: a file made to
                // tie up the server that checks it.
                case .tooMuchWork, .timedOut: .tooCostly
                default: .other
                }
        }
    }
}
