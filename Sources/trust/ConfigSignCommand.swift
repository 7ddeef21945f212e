import ArgumentParser
import Trust
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `trust config sign --key K FILE`: signs a configuration bundle, writing FILE.sig.
struct ConfigSignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign a configuration bundle (writes FILE.sig).",
        discussion: """
            The bundle is checked first (envelope and configuration, every problem with its JSON path): an invalid one is \
            not signed. The signature covers the file's exact bytes; FILE.sig holds it as one line of base64. KEY is a \
            PEM PKCS#8 or raw 32-byte Ed25519 private key, refused when other users can read or write it; it is never \
            printed. Exit 0 signed, 1 the bundle is invalid, 2 bad usage or an unreadable file.
            """)

    @Option(help: "The Ed25519 private key file (PEM or raw 32 bytes; mode 0600).")
    var key: String

    @Argument(help: "The bundle to sign.")
    var file: String

    func run() throws {
        let signingKey = try ConfigCommand.readPrivateKey(key)
        let bytes = try ConfigCommand.readInput(file, limit: SignedTrustConfiguration.maximumSize)
        let bundle: TrustConfigurationBundle
        do {
            bundle = try TrustConfigurationBundle(parsing: bytes)
        } catch {
            ConfigCommand.printRejection(error, file: file)
            throw ExitCode(TrustExitCode.notTrusted)
        }
        if bundle.expires <= Date() { printError("warning: the bundle expired at \(RFC3339.string(bundle.expires)): no application will use it") }
        let signature: [UInt8]
        do {
            signature = try signingKey.signature(for: bytes)
            try PrivateFile.write(Array((Data(signature).base64EncodedString() + "\n").utf8), to: file + ".sig", mode: 0o644)
        } catch {
            throw UsageError(DisplayText.escaped("\(error)"))
        }
        print(
            "signed \(DisplayText.escaped(file)) (sequence \(bundle.sequence), expires \(RFC3339.string(bundle.expires))) with \(signingKey.publicKey.id): \(DisplayText.escaped(file)).sig"
        )
    }
}
