import Foundation
import Testing
import TrustLabPKI
import TrustTestSupport
import X509

@testable import Trust

@Suite("PEM on bytes, the lazily parsed system roots, ASCII host names without Foundation", .paced)
struct PEMDecoderTests {
    private func decode(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { PEMDecoder.decodeBase64($0, from: 0, to: $0.count) }
    }

    /// Base64 of random byte strings of every length up to 200, wrapped as PEM wraps it, and
    /// with CR LF, tabs and spaces: decoded exactly as Foundation decodes the unwrapped text.
    @Test func base64AgreesWithFoundation() {
        let seed = UInt64.random(in: 1...UInt64.max)
        print("PEMDecoderTests.base64AgreesWithFoundation seed \(seed)")
        var generator = LabFuzzer.Generator(seed: seed)
        for length in 0...200 {
            let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let plain = Data(data).base64EncodedString()
            #expect(decode(plain) == data, "length \(length), seed \(seed)")
            let wrapped = Data(data).base64EncodedString(options: [.lineLength64Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
            #expect(decode(" \t" + wrapped + "\r\n") == data, "length \(length), seed \(seed)")
        }
    }

    @Test func base64RefusesWhatIsNotStrictBase64() {
        let bad = ["QQ=", "Q===", "QQ=A", "QQ==QQ==", "QUJD-", "QUJ", "QU*D", "QUJD\u{0}", "=QUJ", "QQ== x"]
        // The same, after whole quads (read four at a time) and across a line break.
        let afterQuads = ["QUJDQUJD" + "QU=D", "QUJD\nQU\nJ", "QUJDQUJDQQ=", "QUJD QUJD\u{80}AAA", "QUJDQUJD====", "QUJDQUJDQUJDQQ==QUJD"]
        for bad in bad + afterQuads {
            #expect(decode(bad) == nil, "\(bad.debugDescription)")
        }
        #expect(decode("QQ==") == [0x41])
        #expect(decode("QUI=") == [0x41, 0x42])
        #expect(decode("QUJD") == [0x41, 0x42, 0x43])
        #expect(decode("QQ== \n") == [0x41])
        #expect(decode("") == [])
        #expect(decode("QUJDQUJD\nQUI=\n") == [0x41, 0x42, 0x43, 0x41, 0x42, 0x43, 0x41, 0x42])
        #expect(decode("Q UJ\tD\r\nQUJD") == [0x41, 0x42, 0x43, 0x41, 0x42, 0x43])
    }

    @Test func pemBlocksAreFoundOnBytesWithTheSameErrorsAsBefore() throws {
        let root = try LabAuthority.root(commonName: "PEM Root")
        let leaf = try root.leaf(dnsNames: ["pem.lab.test"])
        // Text around and between blocks, other block types and non-UTF-8 bytes are ignored.
        var bytes = Array("garbage\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8) + [0xFF, 0xFE, 0x0A]
        bytes += Array(leaf.certificate.pemString.utf8) + [0x80, 0x0A] + Array(root.certificate.pemString.utf8)
        #expect(try CertificateSource.certificates(bytes: bytes) == [leaf.certificate, root.certificate])
        #expect(try CertificateSource.certificates(pem: root.certificate.pemString.replacingOccurrences(of: "\n", with: "\r\n")) == [root.certificate])

        let good = root.certificate.pemString
        let broken = good.replacingOccurrences(of: "-----END CERTIFICATE-----\n", with: "")
        #expect(throws: CertificateLoadingError(source: "<memory>", kind: .unterminatedPEMBlock(block: 2))) {
            try CertificateSource.certificates(pem: good + broken)
        }
        let lines = good.split(separator: "\n")
        let invalid = ([lines[0], lines[1].dropLast(2) + "-!"] + lines.dropFirst(2)).joined(separator: "\n")
        #expect(throws: CertificateLoadingError(source: "<memory>", kind: .invalidBase64(block: 2))) {
            try CertificateSource.certificates(pem: good + invalid + good)
        }
        #expect(throws: CertificateLoadingError(source: "<memory>", kind: .noCertificates)) {
            try CertificateSource.certificates(pem: "nothing here")
        }
        // What a client compares: the kind, whatever the block; the errors themselves keep their details.
        do {
            _ = try CertificateSource.certificates(pem: good + invalid)
            Issue.record("invalid Base64 was read")
        } catch {
            #expect(error.kind == .invalidBase64 && error.kind != .unterminatedPEMBlock && error.kind != .malformedCertificate)
            #expect(error != CertificateLoadingError(source: "<memory>", kind: .invalidBase64(block: 1)))
        }
        #expect(CertificateLoadingError.Kind.malformedCertificate(block: 3, detail: "x") == .malformedCertificate)
        #expect(CertificateLoadingError.Kind.unpinnable(block: nil, detail: "encrypted") == .unpinnable)
        #expect(Set([CertificateLoadingError.Kind.unreadable("gone"), .unreadable("denied"), .unreadable, .noCertificates]).count == 2)
    }

    /// The system index reads only subjects; a lookup parses that subject's roots and no other;
    /// a bad or duplicated block costs nothing else.
    @Test func systemRootIndexParsesOnlyWhatIsLookedUp() throws {
        let roots = try (1...5).map { try LabAuthority.root(commonName: "Index Root \($0)") }
        let badBlock = "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n"
        let notACertificate = "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n"
        let bundle = roots.map(\.certificate.pemString).joined() + badBlock + notACertificate + roots[0].certificate.pemString
        let index = SystemRootIndex(bundle: Array(bundle.utf8))
        #expect(index.count == 5)
        #expect(index.parsedCount == 0)
        #expect(index.certificates(subject: roots[2].certificate.subject) == [roots[2].certificate])
        #expect(index.parsedCount == 1)
        #expect(index.contains(roots[2].certificate))
        #expect(!index.contains(try LabAuthority.root(commonName: "Index Root 2").certificate))
        #expect(index.parsedCount == 2)
        #expect(index.allCertificates() == roots.map(\.certificate))
        #expect(index.parsedCount == 5)
        #expect(SystemRootIndex(bundle: []).count == 0)

        // A subject that ends past the decoded prefix (a 600-character name): the whole block is decoded to index it.
        let long = try LabAuthority.root(commonName: "Index Root " + String(repeating: "x", count: 600))
        let withLong = SystemRootIndex(bundle: Array((roots[0].certificate.pemString + long.certificate.pemString).utf8))
        #expect(withLong.count == 2)
        #expect(withLong.certificates(subject: long.certificate.subject) == [long.certificate])
        #expect(withLong.certificates(subject: roots[0].certificate.subject) == [roots[0].certificate])
    }

    @Test func systemRootsMatchTheBundle() throws {
        guard let path = SystemRoots.bundlePath else {
            print("no system root bundle: skipped")
            return
        }
        let blocks = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1
        #expect(SystemRoots.count > 0)
        #expect(SystemRoots.count <= blocks)
        #expect(SystemRoots.certificates.count <= SystemRoots.count)
        #expect(SystemRoots.certificates.count >= SystemRoots.count - 3)
    }

    /// A process whose system store is empty (`SSL_CERT_FILE` names an empty file) says so in the
    /// refusal, instead of an unexplained "untrusted root".
    @Test func anEmptySystemStoreIsSaid() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data().write(to: URL(fileURLWithPath: folder + "/empty.pem"))
        let evaluate = [CLI.binary, "evaluate", "--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test"]
        let (status, output, _) = try await run("/usr/bin/env", ["SSL_CERT_FILE=" + folder + "/empty.pem"] + evaluate + ["--roots", "system"])
        #expect(status == 1)
        #expect(output.contains("no system root certificates were found (\(folder)/empty.pem holds no certificate)"))
        // The default store has Mozilla's roots whatever the bundle holds: nothing to say.
        let (byDefault, quiet, _) = try await run("/usr/bin/env", ["SSL_CERT_FILE=" + folder + "/empty.pem"] + evaluate)
        #expect(byDefault == 1 && !quiet.contains("no system root"))
        // With roots (the lab's, added), no such note.
        let (trusted, fine, _) = try await run("/usr/bin/env", ["SSL_CERT_FILE=" + folder + "/empty.pem"] + evaluate + ["--anchors", CLI.lab + "/roots.pem"])
        #expect(trusted == 0 && !fine.contains("no system root"))
    }

    @Test func asciiHostNamesCanonicaliseAsBefore() throws {
        #expect(try PeerName.canonicalDNSName("WWW.Example.COM.") == "www.example.com")
        #expect(try PeerName.canonicalDNSName("_srv.a-b.example") == "_srv.a-b.example")
        #expect(try PeerName.canonicalDNSName("bücher.example") == "xn--bcher-kva.example")
        let cases: [(String, PeerNameError)] = [
            ("", .empty), (".", .empty), ("a..b", .emptyLabel("a..b")), (".a", .emptyLabel(".a")), ("a b", .invalidCharacter("a b", " ")),
            ("a!.b", .invalidCharacter("a!.b", "!")), (String(repeating: "a", count: 64) + ".b", .labelTooLong(String(repeating: "a", count: 64) + ".b")),
            (String(repeating: "a", count: 64), .labelTooLong(String(repeating: "a", count: 64))),
            (
                Array(repeating: String(repeating: "a", count: 50), count: 6).joined(separator: "."),
                .tooLong(Array(repeating: String(repeating: "a", count: 50), count: 6).joined(separator: "."))
            ),
        ]
        for (name, expected) in cases {
            #expect(throws: expected) { try PeerName.canonicalDNSName(name) }
        }
    }
}
