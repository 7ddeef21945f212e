import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// Every `--json` of the `trust` command speaks one dialect (sorted keys, "/" unescaped, RFC 3339 dates),
/// and certificates are described with OpenSSL's names and serial form, compared with openssl itself.
@Suite("trust --json and OpenSSL's names", .serialized, .timeLimit(.minutes(5)), .paced)
struct JSONOutputTests {
    static let openssl = "/usr/bin/openssl"

    /// Checks what every document must be: parseable, no escaped "/", keys in sorted order at every level.
    func checkDialect(_ text: String, _ what: String) throws -> Any {
        #expect(!text.contains("\\/"), "\(what) escapes '/'")
        #expect(text.hasSuffix("}\n") || text.hasSuffix("]\n"), "\(what) ends with one newline")
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        // Keys appear in sorted order: each object's keys, read in document order, are sorted.
        var stack: [[String]] = [[]]
        var index = text.startIndex
        var inString = false
        var current = ""
        var escaped = false
        while index < text.endIndex {
            let c = text[index]
            if inString {
                if escaped {
                    escaped = false
                    current.append(c)
                } else if c == "\\" {
                    escaped = true
                } else if c == "\"" {
                    inString = false
                    // A key is a string followed by " :".
                    let rest = text[text.index(after: index)...].drop(while: { $0 == " " })
                    if rest.first == ":" { stack[stack.count - 1].append(current) }
                } else {
                    current.append(c)
                }
            } else if c == "\"" {
                inString = true
                current = ""
            } else if c == "{" {
                stack.append([])
            } else if c == "}" {
                let keys = stack.removeLast()
                #expect(keys == keys.sorted(), "\(what): keys out of order \(keys)")
            }
            index = text.index(after: index)
        }
        return object
    }

    @Test func everyCommandWritesTheSameDialect() async throws {
        let lab = CLI.lab
        let (evaluateStatus, evaluate, _) = try await run(
            CLI.binary,
            ["evaluate", "--chain", lab + "/good/chain.pem", "--anchors", lab + "/roots.pem", "--anchors-only", "--host", "good.lab.test", "--json"])
        #expect(evaluateStatus == 0)
        let decision = try #require(try checkDialect(evaluate, "evaluate") as? [String: Any])
        let time = try #require(decision["evaluationTime"] as? String)
        #expect(RFC3339.parse(time) != nil, "\(time) is RFC 3339")
        let leaf = try #require((decision["presentedChain"] as? [[String: Any]])?.first)
        #expect((leaf["notAfter"] as? String).flatMap(RFC3339.parse) != nil)

        let (pinStatus, pins, _) = try await run(CLI.binary, ["pin", "--json", lab + "/good/chain.pem"])
        #expect(pinStatus == 0)
        #expect((try checkDialect(pins, "pin") as? [[String: String]])?.first?["pin"] == Lab.chain("good")[0].spkiPin.description)

        let config = try temporaryDirectory() + "/trust.json"
        try
            #"{"version": 1, "hosts": [{"host": "**.good.lab.test", "pins": {"sha256": ["\#(Lab.pki.intermediate.certificate.spkiPin)", "sha256/\#(Data(repeating: 9, count: 32).base64EncodedString())"], "expires": "2030-01-01T00:00:00Z"}}]}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let (checkStatus, check, _) = try await run(CLI.binary, ["check-config", "--json", config])
        #expect(checkStatus == 0)
        let report = try #require(try checkDialect(check, "check-config") as? [String: Any])
        #expect(report["valid"] as? Bool == true)
        let entries = try #require(report["entries"] as? [[String: Any]])
        #expect(entries.map { $0["host"] as? String } == ["base", "**.good.lab.test"])
        #expect((entries[1]["pins"] as? [String])?.count == 2 && entries[1]["pinsEnforced"] as? Bool == true)
        #expect(entries[1]["pinsExpire"] as? String == "2030-01-01T00:00:00.000Z")

        let invalid = try temporaryDirectory() + "/bad.json"
        try #"{"version": 1, "hosts": [{"host": "x.test", "mode": true}]}"#.write(toFile: invalid, atomically: true, encoding: .utf8)
        let (badStatus, bad, badErr) = try await run(CLI.binary, ["check-config", "--json", invalid])
        #expect(badStatus == 1 && badErr.isEmpty, "\(badErr)")
        let badReport = try #require(try checkDialect(bad, "check-config invalid") as? [String: Any])
        #expect(badReport["valid"] as? Bool == false)
        #expect((badReport["problems"] as? [[String: String]])?.first?["path"] == "$.hosts[0].mode")
        #expect(try await run(CLI.binary, ["check-config", "--json", "/nonexistent.json"]).0 == 2)
    }

    /// Serials as `openssl x509 -serial`, signature algorithms as `openssl x509 -text`, for EC, RSA and
    /// Ed25519 certificates made by openssl (serials with and without a DER sign octet, a short one).
    @Test(.requires(.openssl)) func certificatesAreDescribedAsOpenSSLDoes() async throws {
        let dir = try temporaryDirectory()
        let cases: [(String, [String])] = [
            ("ec", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384", "-sha384", "-set_serial", "0x80FF"]),
            ("rsa", ["-newkey", "rsa:2048", "-sha512", "-set_serial", "5"]),
            ("rsa256", ["-newkey", "rsa:2048", "-sha256", "-set_serial", "0x0123456789ABCDEF0123"]),
            ("ed25519", ["-newkey", "ed25519"]),
        ]
        for (name, options) in cases {
            let pem = dir + "/\(name).pem"
            let made = try await run(
                Self.openssl,
                [
                    "req", "-x509", "-nodes", "-keyout", dir + "/\(name).key", "-out", pem, "-days", "30",
                    "-subj", "/CN=\(name).json.test", "-addext", "subjectAltName=DNS:\(name).json.test",
                ] + options)
            try #require(made.0 == 0, "\(made.2)")
            let serial = try await run(Self.openssl, ["x509", "-in", pem, "-noout", "-serial"]).1
                .trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "serial=", with: "")
            let text = try await run(Self.openssl, ["x509", "-in", pem, "-noout", "-text"]).1
            let algorithm = try #require(text.split(separator: "\n").first { $0.contains("Signature Algorithm:") })
                .split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) }
            let (_, out, err) = try await run(CLI.binary, ["evaluate", "--chain", pem, "--anchors", pem, "--anchors-only", "--no-validate-domain", "--json"])
            let decision = try #require(try checkDialect(out, name) as? [String: Any], "\(err)")
            let summary = try #require((decision["presentedChain"] as? [[String: Any]])?.first)
            #expect(summary["serialNumber"] as? String == serial, "\(name)")
            #expect(summary["signatureAlgorithm"] as? String == algorithm, "\(name)")
            let fingerprint = try await run(Self.openssl, ["x509", "-in", pem, "-noout", "-fingerprint", "-sha256"]).1
            #expect(fingerprint.contains(summary["sha256Fingerprint"] as? String ?? "?"), "\(name)")
        }
    }
}
