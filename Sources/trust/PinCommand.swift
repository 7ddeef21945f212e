import ArgumentParser
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `trust pin FILE…`: the SPKI SHA-256 pin of every certificate, public key, private key (its
/// public half) and certificate request in the files, or on standard input (`-`).
struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Print the SPKI SHA-256 pin of every certificate, public key, private key or certificate request given.",
        discussion: """
            Reads PEM (CERTIFICATE, PUBLIC KEY, PRIVATE KEY, EC PRIVATE KEY, RSA PRIVATE KEY, CERTIFICATE REQUEST \
            blocks, any number) or one DER item from each file, from standard input for -, and every .cer/.crt/.der/.pem \
            certificate of a folder. A private key gives the pin of its public half, so a backup key can be pinned \
            before any certificate exists; an encrypted key is refused (pin its public key instead).
            One line per item: sha256/<base64>  <subject or key type>. The value equals
            openssl pkey -pubout -outform der | openssl dgst -sha256 -binary | base64 (for a certificate,
            openssl x509 -pubkey -noout first).
            Exit codes: 0 every item pinned, 2 an unreadable input, an encrypted key, or nothing to pin.
            --plan URL connects instead, validates the server's chain (--cacert, --anchors-only, --roots, --host, \
            --resolve, --connect-timeout as for inspect), shows the validated path with each key's pin, and recommends \
            a pin set that survives renewal — the issuing CA's key with the root's as the backup, or the server's own \
            key with a backup key — with the latest expiry to give it, and the warnings (codes single-pin, \
            leaf-only-pin, no-ca-backup, pin-outlives-certificate) that apply. Exit 0, 1 when the chain is not \
            trusted (no pin can be planned on it), curl's connection codes otherwise.
            """)

    @Argument(help: "Files (PEM or DER), - for standard input, or folders of .cer/.crt/.der/.pem certificates.")
    var files: [String] = []

    @OptionGroup(title: "Planning pins for a server (--plan URL)") var planOptions: PinPlanOptions

    @Flag(help: "Print [{\"kind\": …, \"pin\": …, \"subject\": …}] as JSON.")
    var json = false

    func validate() throws {
        if planOptions.plan != nil {
            if !files.isEmpty { throw ValidationError("--plan URL takes no files") }
            try planOptions.validate()
            return
        }
        if files.isEmpty { throw ValidationError("give at least one file (or - for standard input)") }
    }

    func run() async throws {
        if let url = planOptions.plan {
            try await planOptions.run(url: url, json: json)
            return
        }
        var entries: [PinSource.Entry] = []
        for file in files {
            do {
                // Lenient: a certificate the engine would refuse (RSA-1024, RSA-PSS…) still has a pin.
                if file == "-" {
                    entries += try PinSource.entries(bytes: try StandardInput.readAll(), source: "<stdin>")
                } else if LocalFile.isFolder(file) {
                    entries += try CertificateSource.entries(inDirectory: file).map {
                        PinSource.Entry(pin: $0.spkiPin, kind: .certificate, subject: $0.subject)
                    }
                } else {
                    // Bounded as every local input (a device or an oversized file refused, a FIFO or pipe read within a deadline).
                    let bytes: [UInt8]
                    do {
                        bytes = try LocalFile.read(file, limit: LocalFile.certificateLimit)
                    } catch {
                        throw UsageError(CertificateLoadingError(source: file, kind: .unreadable(error.reason)).description)
                    }
                    entries += try PinSource.entries(bytes: bytes, source: file)
                }
            } catch let error as CertificateLoadingError {
                throw UsageError(error.description)
            }
        }
        if json {
            try JSONOutput.print(entries.map { PinReport(kind: $0.kind.rawValue, pin: $0.pin.description, subject: $0.subject) })
        } else {
            for entry in entries { print(DisplayText("\(entry.pin)  \(entry.subject)")) }
        }
    }
}

/// One element of `trust pin --json`.
struct PinReport: Encodable {
    var kind: String
    var pin: String
    var subject: String
}
