import ArgumentParser
import Foundation
import Trust

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
        var isFolder: ObjCBool = false
        if !FileManager.default.fileExists(atPath: out, isDirectory: &isFolder) {
            do {
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw UsageError("\(DisplayText.escaped(out)): cannot create the folder")
            }
        } else if !isFolder.boolValue {
            throw UsageError("\(DisplayText.escaped(out)): not a folder")
        }
        let keyPath = (out as NSString).appendingPathComponent("signing.key")
        let publicPath = (out as NSString).appendingPathComponent("signing.pub")
        for path in [keyPath, publicPath] where FileManager.default.fileExists(atPath: path) {
            throw UsageError("\(DisplayText.escaped(path)) already exists: a key is never replaced (remove it first)")
        }
        let key = TrustConfigurationSigningKey()
        do {
            try PrivateFile.write(Array(key.pemRepresentation.utf8), to: keyPath)
            try PrivateFile.write(Array(key.publicKey.pemRepresentation.utf8), to: publicPath, mode: 0o644)
        } catch {
            throw UsageError(DisplayText.escaped(error.description))
        }
        print("wrote \(DisplayText.escaped(keyPath)) (private, 0600) and \(DisplayText.escaped(publicPath))")
        print("public key \(key.publicKey.id): \(key.publicKey.base64)")
    }
}
