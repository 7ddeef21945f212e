import ArgumentParser
import Trust
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `trust config verify --pub P FILE`: verifies a configuration bundle as an application would.
struct ConfigVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a signed configuration bundle as an application would.",
        discussion: """
            Checks, in order: the signature over the file's exact bytes with one of the --pub keys (nothing is parsed \
            before), the envelope and configuration, the sequence (above --after-sequence, when given) and the expiry. \
            Exit 0 valid, 1 refused (the reason on stderr: a bad signature, a malformed bundle, a rollback, an expired \
            bundle), 2 bad usage or an unreadable file.
            """)

    @Option(name: .customLong("pub"), help: "A trusted Ed25519 public key file (PEM, base64 or raw 32 bytes); repeat it during a key rotation.")
    var publicKeys: [String]

    @Option(help: "The signature file (default: FILE.sig).")
    var signature: String?

    @Option(help: "The last accepted sequence: a bundle at or below it is a rollback.")
    var afterSequence: UInt64?

    @Argument(help: "The bundle to verify.")
    var file: String

    func validate() throws {
        if publicKeys.isEmpty { throw ValidationError("give at least one --pub key") }
    }

    func run() throws {
        let keys = try publicKeys.map(ConfigCommand.readPublicKey)
        let bytes = try ConfigCommand.readInput(file, limit: SignedTrustConfiguration.maximumSize)
        let signatureBytes = try ConfigCommand.readInput(signature ?? file + ".sig", limit: 4096)
        let verified: SignedTrustConfiguration
        do {
            verified = try SignedTrustConfiguration.verify(
                bundle: bytes, signature: signatureBytes, trustedKeys: keys, lastAcceptedSequence: afterSequence)
        } catch {
            ConfigCommand.printRejection(error, file: file)
            throw ExitCode(TrustExitCode.notTrusted)
        }
        let hosts = verified.configuration.hosts.count
        print(
            "\(DisplayText.escaped(file)): valid (sequence \(verified.sequence), expires \(RFC3339.string(verified.expires)), signed by \(verified.signedBy.id), \(hosts) host entr\(hosts == 1 ? "y" : "ies"))"
        )
    }
}
