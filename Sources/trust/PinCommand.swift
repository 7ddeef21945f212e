import ArgumentParser
import Foundation
import Trust
import X509

/// `trust pin FILE…`: the SPKI SHA-256 pin of every certificate in the files.
struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Print the SPKI SHA-256 pin of every certificate in the given files (PEM or DER) or folders.",
        discussion: """
            One line per certificate: sha256/<base64>  <subject>. The value equals
            openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
            """)

    @Argument(help: "Certificate files (PEM with one or more certificates, or DER) or folders of .cer/.crt/.der/.pem files.")
    var files: [String]

    @Flag(help: "Print [{\"pin\": …, \"subject\": …}] as JSON.")
    var json = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one certificate file") }
    }

    func run() async throws {
        var entries: [(pin: SPKIPin, subject: String)] = []
        for file in files {
            do {
                // Lenient: a certificate the engine would refuse (RSA-1024, RSA-PSS…) still has a pin.
                for entry in try CertificateSource.entries(atPath: file) {
                    entries.append((entry.spkiPin, entry.subject))
                }
            } catch {
                throw UsageError(error.description)
            }
        }
        if json {
            let objects = entries.map { ["pin": $0.pin.description, "subject": $0.subject] }
            let data = try JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for entry in entries { print("\(entry.pin)  \(entry.subject)") }
        }
    }
}
