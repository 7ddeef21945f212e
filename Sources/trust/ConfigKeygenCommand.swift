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

/// `trust config keygen --out DIR`: a new Ed25519 key pair for signing configuration bundles.
struct ConfigKeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make an Ed25519 key pair for signing configuration bundles.",
        discussion: """
            Writes DIR/signing.key (PKCS#8 PEM, mode 0600 from its first byte: keep it offline, it is never printed) and \
            DIR/signing.pub (PEM), and prints the public key's id and its base64 form, to pin in the application. DIR is \
            created (0700) if needed; an existing key is never replaced. Exit 0 written, 2 the folder cannot be written \
            or a key is already there.
            """)

    @Option(help: "The folder to write the key pair into.")
    var out: String

    func run() throws {
        if !LocalFile.exists(out) {
            do {
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw UsageError("\(DisplayText.escaped(out)): cannot create the folder")
            }
        } else if !LocalFile.isFolder(out) {
            throw UsageError("\(DisplayText.escaped(out)): not a folder")
        }
        let keyPath = out.joiningPath("signing.key")
        let publicPath = out.joiningPath("signing.pub")
        let key = TrustConfigurationSigningKey()
        let publicPEM = Array(key.publicKey.pemRepresentation.utf8)
        // Each file takes its name only if the name is free (PrivateFile's `.newFile`: link(2), decided by the
        // kernel), so of several runs at once exactly one writes the pair and every other is refused; a check for
        // the names first would let them all pass it. The public half comes first: whoever finds signing.key finds
        // its own signing.pub beside it, never another run's.
        do {
            try PrivateFile.write(publicPEM, to: publicPath, mode: 0o644, publication: .newFile)
        } catch {
            throw Self.refusal(error)
        }
        do {
            try PrivateFile.write(Array(key.pemRepresentation.utf8), to: keyPath, publication: .newFile)
        } catch {
            // signing.key was there without this signing.pub: take back the public half written above (still ours:
            // no other run can have replaced it, and its bytes are checked), and leave the existing key alone.
            if (try? LocalFile.read(publicPath, limit: publicPEM.count + 1)) == publicPEM { unlink(publicPath) }
            throw Self.refusal(error)
        }
        print("wrote \(DisplayText.escaped(keyPath)) (private, 0600) and \(DisplayText.escaped(publicPath))")
        print("public key \(key.publicKey.id): \(key.publicKey.base64)")
    }

    /// Exit 2 for a file that could not be written: "already exists" when the name was taken.
    private static func refusal(_ error: PrivateFile.WriteError) -> UsageError {
        guard error.destinationExists else { return UsageError(DisplayText.escaped(error.description)) }
        return UsageError("\(DisplayText.escaped(error.path)) already exists: a key is never replaced (remove it first)")
    }
}
