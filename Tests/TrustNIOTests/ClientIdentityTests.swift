import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

@testable import TrustNIO

/// PKCS#12 and PEM identities made at test time by openssl; every malformed input gives its typed error.
@Suite("ClientIdentity: PKCS#12 and PEM, typed errors, no crashes", .paced)
struct ClientIdentityTests {
    static let openssl = "/usr/bin/openssl"

    func openssl(_ arguments: [String]) async throws {
        let (status, _, err) = try await run(Self.openssl, arguments)
        #expect(status == 0, "openssl \(arguments.joined(separator: " ")): \(err)")
    }

    func kind(_ body: () throws -> ClientIdentity) -> ClientIdentityError.Kind.Detail? {
        do {
            _ = try body()
            return nil
        } catch let error as ClientIdentityError {
            return error.kind.detail
        } catch {
            Issue.record("untyped error \(error)")
            return nil
        }
    }

    /// A client compares kinds, details aside; two errors are equal only with the same source and details.
    @Test func kindsCompareWithoutTheirDetails() {
        let corrupt = ClientIdentityError.Kind.corrupt("truncated")
        #expect(corrupt == .corrupt && corrupt == .corrupt("other words") && corrupt != .noPrivateKey && corrupt != .unreadable)
        #expect(ClientIdentityError.Kind.timedOut(.seconds(3)) == .timedOut && ClientIdentityError.Kind.unsupportedKey("DSA") == .unsupportedKey)
        #expect(Set([corrupt, .corrupt, .tooMuchWork("9 million"), .tooMuchWork]).count == 2)
        let a = ClientIdentityError(source: "a.p12", kind: .corrupt("truncated"))
        #expect(a == ClientIdentityError(source: "a.p12", kind: .corrupt("truncated")))
        #expect(a != ClientIdentityError(source: "a.p12", kind: .corrupt("bad MAC")))
        #expect(a != ClientIdentityError(source: "b.p12", kind: .corrupt("truncated")))
        #expect(a.kind == ClientIdentityError(source: "b.p12", kind: .corrupt("bad MAC")).kind)
        // What the library throws for garbage is the kind a client compares.
        do {
            _ = try ClientIdentity(pkcs12: Array("not a p12".utf8), passphrase: nil)
            Issue.record("text accepted as p12")
        } catch {
            #expect(error.kind == .corrupt, "\(error)")
        }
    }

    @Test(.requires(.openssl), arguments: [["-passout", "pass:secret"], ["-legacy", "-passout", "pass:secret"], ["-passout", "pass:"]])
    func opensslPKCS12Loads(_ options: [String]) async throws {
        let f = Lab.clientIdentityFiles
        let out = f.dir + "/\(UUID().uuidString).p12"
        try await openssl(["pkcs12", "-export", "-in", f.cert, "-inkey", f.key, "-certfile", f.chain, "-out", out] + options)
        let passphrase = options.last == "pass:" ? "" : "secret"
        let identity = try ClientIdentity(pkcs12File: out, passphrase: passphrase)
        #expect(identity.certificate.subject.description.contains("lab client"))
        #expect(identity.certificateChain.count == 2)  // the intermediate is kept and sent
        #expect(identity.warnings.isEmpty)
        #expect(kind { try ClientIdentity(pkcs12File: out, passphrase: passphrase + "wrong") } == .wrongPassphrase)
    }

    @Test(.requires(.openssl)) func malformedPKCS12GivesTypedErrorsNeverACrash() async throws {
        let f = Lab.clientIdentityFiles
        let noKey = f.dir + "/nokey.p12"
        try await openssl(["pkcs12", "-export", "-in", f.cert, "-nokeys", "-out", noKey, "-passout", "pass:secret"])
        if case .noPrivateKey? = kind({ try ClientIdentity(pkcs12File: noKey, passphrase: "secret") }) {
        } else {
            Issue.record("a key-less p12 was not refused as such")
        }
        let noCert = f.dir + "/nocert.p12"
        try await openssl(["pkcs12", "-export", "-inkey", f.key, "-nocerts", "-out", noCert, "-passout", "pass:secret"])
        #expect(kind { try ClientIdentity(pkcs12File: noCert, passphrase: "secret") } == .noCertificate)
        let good = f.dir + "/good.p12"
        try await openssl(["pkcs12", "-export", "-in", f.cert, "-inkey", f.key, "-out", good, "-passout", "pass:secret"])
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: good)))
        for length in [0, 1, 10, bytes.count / 2, bytes.count - 1] {
            if case .corrupt? = kind({ try ClientIdentity(pkcs12: Array(bytes.prefix(length)), passphrase: "secret") }) {
            } else {
                Issue.record("truncated to \(length) bytes was not reported as corrupt")
            }
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var mutated = bytes
            mutated[Int.random(in: 0..<mutated.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            _ = kind { try ClientIdentity(pkcs12: mutated, passphrase: "secret") }  // any typed error or success, never a trap
        }
        #expect(kind { try ClientIdentity(pkcs12File: f.dir + "/missing.p12", passphrase: nil) } == .unreadable)
        if case .corrupt? = kind({ try ClientIdentity(pkcs12: Array("not a p12".utf8), passphrase: nil) }) {} else { Issue.record("text accepted as p12") }
    }

    @Test(.requires(.openssl)) func pemIdentitiesInEveryKeyFormat() async throws {
        let f = Lab.clientIdentityFiles
        // PKCS#8 (as the lab writes it) and SEC1 for EC.
        #expect(try ClientIdentity(certificateFile: f.cert, keyFile: f.key).certificate.subject.description.contains("lab client"))
        let sec1 = f.dir + "/sec1.pem"
        try await openssl(["ec", "-in", f.key, "-out", sec1])
        #expect(try ClientIdentity(certificateFile: f.cert, keyFile: sec1).certificateChain.count == 1)
        // PKCS#1 for RSA, and a PKCS#8 key encrypted with a passphrase.
        let rsa = try Lab.pki.intermediate.leaf(commonName: "rsa client", keyType: .rsa2048, extendedKeyUsage: [.clientAuth])
        let rsaCert = f.dir + "/rsa-cert.pem"
        let rsaKey = f.dir + "/rsa-key.pem"
        try rsa.certificatePEM.write(toFile: rsaCert, atomically: true, encoding: .utf8)
        try rsa.privateKeyPEM.write(toFile: rsaKey, atomically: true, encoding: .utf8)
        let pkcs1 = f.dir + "/pkcs1.pem"
        try await openssl(["rsa", "-in", rsaKey, "-traditional", "-out", pkcs1])
        #expect(try String(contentsOfFile: pkcs1, encoding: .utf8).contains("BEGIN RSA PRIVATE KEY"))
        #expect(try ClientIdentity(certificateFile: rsaCert, keyFile: pkcs1).certificate.subject.description.contains("rsa client"))
        let encrypted = f.dir + "/encrypted.pem"
        try await openssl(["pkcs8", "-topk8", "-in", f.key, "-out", encrypted, "-passout", "pass:secret"])
        #expect(try ClientIdentity(certificateFile: f.cert, keyFile: encrypted, passphrase: "secret").warnings.isEmpty)
        #expect(kind { try ClientIdentity(certificateFile: f.cert, keyFile: encrypted, passphrase: "nope") } == .wrongPassphrase)
        // The key of another certificate.
        #expect(kind { try ClientIdentity(certificateFile: f.cert, keyFile: rsaKey) } == .keyDoesNotMatchCertificate)
        // No key at all.
        if case .noPrivateKey? = kind({ try ClientIdentity(certificateFile: f.cert, keyFile: f.cert) }) {
        } else {
            Issue.record("a certificate accepted as a key")
        }
    }

    @Test func expiredIdentityLoadsWithAWarning() async throws {
        let expired = try Lab.pki.intermediate.leaf(
            commonName: "old client", notBefore: Date(timeIntervalSinceNow: -40 * 86_400), notAfter: Date(timeIntervalSinceNow: -86_400),
            extendedKeyUsage: [.clientAuth])
        let identity = try ClientIdentity(certificateChainPEM: expired.certificatePEM, privateKeyPEM: expired.privateKeyPEM)
        #expect(identity.warnings.first?.contains("expired") == true)
        let soon = try Lab.pki.intermediate.leaf(commonName: "soon client", notAfter: Date(timeIntervalSinceNow: 5 * 86_400), extendedKeyUsage: [.clientAuth])
        #expect(try ClientIdentity(certificateChainPEM: soon.certificatePEM, privateKeyPEM: soon.privateKeyPEM).warnings.first?.contains("expires in") == true)
    }
}
