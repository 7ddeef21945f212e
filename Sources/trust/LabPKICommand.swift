import ArgumentParser
import TrustLab

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `trust lab-pki DIR`: writes a fresh TrustLab PKI to try `trust evaluate` on.
struct LabPKICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab-pki",
        abstract: "Write a fresh test PKI (roots, intermediate, good and bad server certificates) as PEM files.",
        discussion:
            "Servers: \(LabPKI.serverNames.joined(separator: ", ")). Each gets NAME/chain.pem, NAME/cert.pem and NAME/key.pem; roots.pem holds the anchors to trust. Exit 0 written, 2 an unknown key type or a folder that cannot be written."
    )

    @Argument(help: "The folder to write into (created if needed).")
    var directory: String

    @Option(help: "Key type: \(LabKeyType.allCases.map(\.rawValue).joined(separator: ", ")).")
    var keyType: String = LabKeyType.p256.rawValue

    func run() async throws {
        guard let type = LabKeyType(rawValue: keyType) else { throw UsageError("unknown key type \(keyType)") }
        let pki = try LabPKI.make(keyType: type)
        do {
            try pki.write(to: directory)
        } catch {
            throw UsageError("\(error)")
        }
        print("wrote the lab PKI to \(directory): roots.pem (anchors), pins.txt, and per server NAME/chain.pem")
        for name in LabPKI.serverNames {
            print("  \(name + String(repeating: " ", count: max(0, 18 - name.count))) host \(LabPKI.hostName(for: name))")
        }
        print("try: trust evaluate --chain \(directory)/good/chain.pem --anchors \(directory)/roots.pem --anchors-only --host good.lab.test")
    }
}
