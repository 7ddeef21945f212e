import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

/// `PinSource` and `trust pin`: certificates, public keys, private keys (their public half) and
/// certificate requests, PEM or DER, files or standard input — each pin equal to OpenSSL's.
@Suite("Pins from keys, requests and standard input", .paced)
struct PinSourceTests {
    static let openssl = "/usr/bin/openssl"

    /// A private key gives the pin of the certificate issued for it, in every PEM form swift-certificates writes.
    @Test func aPrivateKeyPinsLikeItsCertificate() throws {
        let root = try LabAuthority.root(commonName: "Pin Source Root")
        for keyType in [LabKeyType.p256, .rsa2048] {
            let leaf = try root.leaf(dnsNames: ["pin.lab.test"], keyType: keyType)
            let pem = try leaf.privateKey.serializeAsPEM().pemString
            let entries = try PinSource.entries(bytes: Array(pem.utf8))
            #expect(entries.map(\.pin) == [leaf.certificate.spkiPin], "\(keyType)")
            #expect(entries.first?.kind == .privateKey)
            // The certificate and its public key, in one file, in either order.
            let publicKey = try leaf.certificate.publicKey.serializeAsPEM().pemString
            let mixed = try PinSource.entries(bytes: Array((publicKey + leaf.certificate.pemString).utf8))
            #expect(mixed.map(\.kind) == [.publicKey, .certificate])
            #expect(Set(mixed.map(\.pin)) == [leaf.certificate.spkiPin])
        }
    }

    @Test func whatCannotBePinnedIsRefusedWithAReason() {
        #expect(throws: CertificateLoadingError.self) { try PinSource.entries(bytes: Array("just text\n".utf8)) }
        #expect(throws: CertificateLoadingError.self) { try PinSource.entries(bytes: [0x30, 0x03, 0x02, 0x01, 0x00]) }
        #expect(throws: CertificateLoadingError.self) {
            try PinSource.entries(bytes: Array("-----BEGIN PUBLIC KEY-----\nMAMCAQA=\n-----END PUBLIC KEY-----\n".utf8))
        }
        #expect(throws: CertificateLoadingError.self) {
            try PinSource.entries(bytes: Array("-----BEGIN PRIVATE KEY-----\nMAMCAQA=\n-----END PRIVATE KEY-----\n".utf8))
        }
        #expect(throws: CertificateLoadingError.self) {
            try PinSource.entries(bytes: Array("-----BEGIN PUBLIC KEY-----\nMAMCAQA=\n".utf8))
        }
        // Other block types are skipped, not refused, when something else can be pinned.
        let parameters = "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n"
        #expect(throws: CertificateLoadingError.self) { try PinSource.entries(bytes: Array(parameters.utf8)) }
    }

    /// `trust pin` on keys and requests made by OpenSSL, PEM and DER, files and stdin: the pins
    /// OpenSSL computes (`openssl pkey -pubout -outform der | sha256 | base64`).
    @Test(.requires(.openssl)) func trustPinAgreesWithOpenSSL() async throws {
        let dir = try temporaryDirectory()
        func openssl(_ arguments: [String]) async throws {
            let (status, _, err) = try await run(Self.openssl, arguments)
            #expect(status == 0, "openssl \(arguments.joined(separator: " ")): \(err)")
        }
        try await openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", dir + "/ec.sec1.pem"])
        try await openssl(["genrsa", "-traditional", "-out", dir + "/rsa.pem", "2048"])
        try await openssl(["genpkey", "-algorithm", "ed25519", "-out", dir + "/ed.pem"])
        try await openssl(["pkcs8", "-topk8", "-nocrypt", "-in", dir + "/ec.sec1.pem", "-out", dir + "/ec.p8.pem"])
        try await openssl(["ec", "-in", dir + "/ec.sec1.pem", "-outform", "der", "-out", dir + "/ec.sec1.der"])
        try await openssl(["pkey", "-in", dir + "/rsa.pem", "-outform", "der", "-out", dir + "/rsa.der"])
        try await openssl(["pkey", "-in", dir + "/rsa.pem", "-pubout", "-out", dir + "/rsa.pub.pem"])
        try await openssl(["pkey", "-in", dir + "/ec.sec1.pem", "-pubout", "-outform", "der", "-out", dir + "/ec.pub.der"])
        try await openssl(["req", "-new", "-key", dir + "/rsa.pem", "-subj", "/CN=backup.example", "-out", dir + "/rsa.csr"])
        try await openssl(["req", "-new", "-key", dir + "/ec.sec1.pem", "-subj", "/CN=backup.example", "-outform", "der", "-out", dir + "/ec.csr.der"])
        try await openssl(["pkcs8", "-topk8", "-in", dir + "/ec.sec1.pem", "-passout", "pass:secret-passphrase", "-out", dir + "/ec.enc.pem"])

        func expected(_ key: String) async throws -> String {
            let (status, pub, _) = try await run(
                "/bin/sh", ["-c", "\(Self.openssl) pkey -in '\(key)' -pubout -outform der | \(Self.openssl) dgst -sha256 -binary | base64"])
            #expect(status == 0)
            return "sha256/" + pub.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let ec = try await expected(dir + "/ec.sec1.pem")
        let rsa = try await expected(dir + "/rsa.pem")
        let ed = try await expected(dir + "/ed.pem")
        let cases: [(String, String)] = [
            ("ec.sec1.pem", ec), ("ec.p8.pem", ec), ("ec.sec1.der", ec), ("ec.pub.der", ec), ("ec.csr.der", ec),
            ("rsa.pem", rsa), ("rsa.der", rsa), ("rsa.pub.pem", rsa), ("rsa.csr", rsa), ("ed.pem", ed),
        ]
        for (file, pin) in cases {
            let (status, out, err) = try await run(CLI.binary, ["pin", dir + "/" + file])
            #expect(status == 0, "\(file): \(err)")
            #expect(out.split(separator: " ").first.map(String.init) == pin, "\(file): \(out)")
        }
        // Standard input.
        let csr = try String(contentsOfFile: dir + "/rsa.csr", encoding: .utf8)
        let (stdinStatus, stdinOut, _) = try await run(CLI.binary, ["pin", "-"], stdin: csr)
        #expect(stdinStatus == 0)
        #expect(stdinOut.hasPrefix(rsa + "  certificate request CN=backup.example"), "\(stdinOut)")
        // An encrypted key: exit 2 with the reason, and the passphrase is nowhere.
        let (encryptedStatus, encryptedOut, encryptedErr) = try await run(CLI.binary, ["pin", dir + "/ec.enc.pem"])
        #expect(encryptedStatus == 2)
        #expect(encryptedErr.contains("encrypted"), "\(encryptedErr)")
        #expect(!(encryptedOut + encryptedErr).contains("secret-passphrase"))
    }
}
