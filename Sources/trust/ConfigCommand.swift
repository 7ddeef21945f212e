import ArgumentParser
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `trust config`: signed trust-configuration bundles — make a signing key, sign a bundle, verify one.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Signed trust-configuration bundles: make a signing key, sign a bundle, verify one.",
        discussion: """
            A bundle is a configuration file's object in an envelope: {"bundleVersion": 1, "sequence": N, "expires": \
            "RFC 3339 date-time", "configuration": {…}}. Its signature is a detached Ed25519 signature (RFC 8032) over the \
            file's exact bytes, in FILE.sig as one line of base64 (64 raw bytes are read too). An application pins the \
            public key and fetches both files (SignedConfigurationUpdater). To check a plain configuration file, use \
            trust check-config.
            """,
        subcommands: [ConfigKeygenCommand.self, ConfigSignCommand.self, ConfigVerifyCommand.self])

    /// The largest key file read (a PEM key is a few hundred bytes).
    static let keyFileLimit = 64 << 10

    /// Reads a private key file: refused, as ssh refuses a private key, when another user could read or write it.
    static func readPrivateKey(_ path: String) throws -> TrustConfigurationSigningKey {
        var status = stat()
        guard stat(path, &status) == 0 else { throw UsageError("\(DisplayText.escaped(path)): cannot read: \(String(cString: strerror(errno)))") }
        if status.st_uid != geteuid() && status.st_uid != 0 {
            throw UsageError("\(DisplayText.escaped(path)): owned by another user (uid \(status.st_uid)): refused, as ssh refuses such a private key")
        }
        let mode = status.st_mode & 0o777
        if (status.st_mode & S_IFMT) == S_IFREG && mode & 0o077 != 0 {
            throw UsageError("\(DisplayText.escaped(path)): readable or writable by other users (mode \(String(mode, radix: 8))): chmod 600 it")
        }
        let bytes = try readInput(path, limit: keyFileLimit, ownership: .ownerOnlyWritable)
        do {
            return try TrustConfigurationSigningKey(parsing: bytes)
        } catch {
            throw UsageError("\(DisplayText.escaped(path)): not an Ed25519 private key: \(error.reason)")
        }
    }

    /// Reads a public key file (PEM, base64 or 32 raw bytes).
    static func readPublicKey(_ path: String) throws -> TrustConfigurationPublicKey {
        let bytes = try readInput(path, limit: keyFileLimit, ownership: .ownerOnlyWritable)
        do {
            return try TrustConfigurationPublicKey(parsing: bytes)
        } catch {
            throw UsageError("\(DisplayText.escaped(path)): not an Ed25519 public key: \(error.reason)")
        }
    }

    /// A bounded read of a local input; unreadable input is a usage error (exit 2).
    static func readInput(_ path: String, limit: Int, ownership: LocalFile.Ownership = .any) throws -> [UInt8] {
        do {
            return try LocalFile.read(path, limit: limit, ownership: ownership)
        } catch {
            throw UsageError("\(DisplayText.escaped(path)): cannot read: \(error.reason)")
        }
    }

    /// Prints a rejection (and a malformed bundle's problems, one a line) to stderr.
    static func printRejection(_ rejection: TrustConfigurationRejection, file: String) {
        if case .malformed(let error) = rejection.detail {
            for problem in error.problems { printError(DisplayText.escaped(problem.description)) }
            printError("\(DisplayText.escaped(file)): invalid bundle (\(error.problems.count) problem\(error.problems.count == 1 ? "" : "s"))")
        } else {
            printError("\(DisplayText.escaped(file)): \(rejection)")
        }
    }
}
