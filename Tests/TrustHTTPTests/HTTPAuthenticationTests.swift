import Crypto
import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@testable import TrustHTTP

@Suite("HTTP authentication: header parsing, Basic, Digest computations", .paced)
struct HTTPAuthenticationTests {
    @Test func sha512t256MatchesFIPSAndOpenSSL() async throws {
        #expect(DigestAlgorithm.hex(SHA512t256.hash(Array("abc".utf8))) == "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23")
        #expect(
            DigestAlgorithm.hex(
                SHA512t256.hash(Array("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".utf8)))
                == "3928e184fb8690f840da3988121d31be65cb9d3ef83ee6146feac861e19b563a")
        // Lengths around the padding boundaries, against OpenSSL.
        for length in [0, 1, 111, 112, 127, 128, 129, 1000] {
            let text = String(repeating: "a", count: length)
            let (status, out, err) = try await run("/bin/sh", ["-c", "printf '%s' \"$0\" | /usr/bin/openssl dgst -sha512-256 -r", text])
            #expect(status == 0, "\(err)")
            #expect(out.hasPrefix(DigestAlgorithm.hex(SHA512t256.hash(Array(text.utf8)))), "length \(length)")
        }
    }

    /// RFC 7616 §3.9.1: the same request answered with MD5 and with SHA-256.
    @Test func rfc7616Example391() throws {
        for (algorithm, expected) in [
            ("MD5", "8ca523f5e9506fed4657c9700eebdbec"), ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
        ] {
            let header = """
                Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=\(algorithm), \
                nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
                """
            let parsed = AuthenticationHeaderParser.challenges(header)
            #expect(parsed.diagnostics.isEmpty)
            let challenge = try DigestChallenge(try #require(parsed.challenges.first))
            #expect(challenge.chosenQualityOfProtection == .auth)
            let answer = DigestAuthorization(
                challenge: challenge, user: "Mufasa", password: "Circle of Life", method: "GET", uri: "/dir/index.html",
                nonceCount: 1, clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
            #expect(answer.fieldValue.contains("response=\"\(expected)\""), "\(answer.fieldValue)")
            #expect(answer.fieldValue.contains("nc=00000001"))
            #expect(answer.fieldValue.contains("opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\""))
        }
    }

    /// RFC 7616 §3.9.2: SHA-512-256, userhash, a non-ASCII user name.
    @Test func rfc7616Example392() throws {
        let header = """
            Digest realm="api@example.org", qop="auth", algorithm=SHA-512-256, nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", \
            opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", charset=UTF-8, userhash=true
            """
        let challenge = try DigestChallenge(try #require(AuthenticationHeaderParser.challenges(header).challenges.first))
        #expect(challenge.userhash && challenge.charsetUTF8 && challenge.algorithm == .sha512_256)
        let answer = DigestAuthorization(
            challenge: challenge, user: "J\u{E4}s\u{F8}n Doe", password: "Secret, or not?", method: "GET", uri: "/doe.json",
            nonceCount: 1, clientNonce: "NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v")
        // The values printed in the RFC were computed with SHA-512 truncated to 256 bits, not SHA-512/256
        // (RFC errata 4897); these are the corrected ones — and equal OpenSSL's SHA-512-256 (test above).
        #expect(answer.fieldValue.contains("username=\"793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b\""), "\(answer.fieldValue)")
        #expect(answer.fieldValue.contains("response=\"3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5\""), "\(answer.fieldValue)")
        let truncatedSHA512 = DigestAlgorithm.hex(Array(SHA512.hash(data: Array("J\u{E4}s\u{F8}n Doe:api@example.org".utf8)).prefix(32)))
        #expect(truncatedSHA512 == "488869477bf257147b804c45308cd62ac4e25eb717b12b298c79e62dcea254ec")  // the RFC's printed value
        #expect(answer.fieldValue.contains("userhash=true"))
        // Without userhash the name goes in RFC 8187 notation.
        var plain = challenge
        plain.userhash = false
        let extended = DigestAuthorization(challenge: plain, user: "J\u{E4}s\u{F8}n Doe", password: "x", method: "GET", uri: "/", nonceCount: 1)
        #expect(extended.fieldValue.contains("username*=UTF-8''J%C3%A4s%C3%B8n%20Doe"))
    }

    @Test func basicIsUTF8AndRefusesWhatCannotBeSent() throws {
        #expect(try BasicAuthorization(user: "Aladdin", password: "open sesame").fieldValue == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        #expect(try BasicAuthorization(user: "test", password: "123\u{A3}").fieldValue == "Basic dGVzdDoxMjPCow==")  // RFC 7617 §2.1
        #expect(throws: BasicAuthorization.Problem.colonInUser) { try BasicAuthorization(user: "a:b", password: "c") }
        // A combining mark after the colon makes one `Character` (`:́`), but the server still splits at the colon byte.
        #expect(throws: BasicAuthorization.Problem.colonInUser) { try BasicAuthorization(user: "a:\u{301}b", password: "c") }
        #expect(throws: BasicAuthorization.Problem.controlCharacter) { try BasicAuthorization(user: "a", password: "b\r\nX-Injected: 1") }
    }

    @Test func parserHandlesTheRFC9110Grammar() {
        func parse(_ value: String) -> [HTTPChallenge] { AuthenticationHeaderParser.challenges(value).challenges }
        // Several challenges in one field, token68, a bare scheme, case-insensitive names, escapes.
        let many = parse(#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple", Negotiate YII+/abc==, NTLM"#)
        #expect(many.map(\.schemeName) == ["newauth", "basic", "negotiate", "ntlm"])
        #expect(many[0]["TITLE"] == #"Login to "apps""#)
        #expect(many[0]["type"] == "1")
        #expect(many[2].token68 == "YII+/abc==")
        #expect(many[3].parameters.isEmpty && many[3].token68 == nil)
        // Across fields, with empty list elements and odd whitespace.
        let fields = AuthenticationHeaderParser.challenges([" , Basic  realm = \"a,b\" ,, ", "DIGEST realm=\"r\",nonce=\"n\",\talgorithm=sha-256"])
        #expect(fields.challenges.count == 2)
        #expect(fields.challenges[0].realm == "a,b")
        #expect(fields.challenges[1]["algorithm"] == "sha-256")
        #expect(fields.diagnostics.isEmpty)
        // A token68 that looks like a parameter is a parameter; a parameter with an empty quoted value is fine.
        #expect(parse("Basic realm=x").first?.realm == "x")
        #expect(parse("Basic realm=\"\"").first?.realm == "")
        // A tab after the scheme is accepted like a space, silently.
        let tabbed = AuthenticationHeaderParser.challenges("Basic\trealm=\"x\"")
        #expect(tabbed.challenges.map(\.realm) == ["x"] && tabbed.diagnostics.isEmpty)
        // The grammar's ambiguity: `realm=` followed by a comma is a token68, not an empty parameter.
        #expect(parse(#"Basic realm=, Digest realm="r", nonce="n""#).map(\.token68) == ["realm=", nil])
    }

    /// A quote or backslash followed by a combining mark is one `Character` that is neither: quoting must
    /// still escape it, or the printed value ends early and its rest is read as more parameters.
    @Test func quotingEscapesQuotesFollowedByCombiningMarks() {
        let mark = "\u{301}"
        for value in ["a\"" + mark + "b", "\\" + mark, "\"" + mark + ", admin=\"true", "x\"" + mark + "\"" + mark] {
            let printed = HTTPChallenge(scheme: "Basic", parameters: [("realm", value)]).description
            let reparsed = AuthenticationHeaderParser.challenges(printed)
            #expect(reparsed.diagnostics.isEmpty, "\(printed.debugDescription): \(reparsed.diagnostics)")
            #expect(reparsed.challenges.map(\.parameters.count) == [1], "\(printed.debugDescription)")
            #expect(reparsed.challenges.first?.realm == value, "\(printed.debugDescription)")
        }
        // The property checker the fuzz target runs: no violation on such a field, nor on a Digest challenge
        // whose realm, nonce and opaque carry them (its answer quotes them back).
        let field = "Digest realm=\"r\\\"" + mark + "\", nonce=\"n\\\"" + mark + "\", opaque=\"\\\\" + mark + "\", qop=\"auth\""
        let outcome = AuthenticationHeaderProperties.check([field, "Basic realm=\"\\\"" + mark + "x\""])
        #expect(outcome.violations.isEmpty, "\(outcome.violations)")
        #expect(outcome.challenges == 2 && outcome.digestAnswers == 1)
        // An answer to that challenge parses back to the same realm, nonce and opaque.
        if let challenge = AuthenticationHeaderParser.challenges(field).challenges.first, let digest = try? DigestChallenge(challenge) {
            let answer = DigestAuthorization(challenge: digest, user: "alice", password: "wonderland", method: "GET", uri: "/x", nonceCount: 1)
            let fields = AuthenticationHeaderParser.parameters(String(answer.fieldValue.dropFirst("Digest ".count)))
            #expect(fields.diagnostics.isEmpty)
            let values = Dictionary(fields.parameters.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            #expect(values["realm"] == digest.realm && values["nonce"] == digest.nonce && values["opaque"] == digest.opaque)
        } else {
            Issue.record("the Digest challenge did not parse: \(field.debugDescription)")
        }
    }

    @Test func malformedChallengesAreSkippedWithADiagnostic() {
        let cases: [(String, [String])] = [
            (#"Basic realm="unterminated, Digest realm="ok", nonce="n""#, []),  // the quote swallows the rest
            (#"Basic realm="a", realm="b", Digest realm="r", nonce="n""#, ["digest"]),  // repeated parameter
            (#"Basic realm="x" garbage, Digest realm="r", nonce="n""#, ["digest"]),
            (#"=oops, Basic realm="x""#, ["basic"]),
            ("Basic realm=\"a\u{1}b\", Digest realm=\"r\", nonce=\"n\"", ["digest"]),  // control character
        ]
        for (value, schemes) in cases {
            let parsed = AuthenticationHeaderParser.challenges(value)
            #expect(parsed.challenges.map(\.schemeName) == schemes, "\(value) \(parsed.diagnostics)")
            #expect(!parsed.diagnostics.isEmpty, "\(value): skipped without a diagnostic")
        }
        // Bounds: an oversized field, and too many challenges.
        let huge = AuthenticationHeaderParser.challenges("Basic realm=\"" + String(repeating: "a", count: 20_000) + "\"")
        #expect(huge.challenges.isEmpty && !huge.diagnostics.isEmpty)
        let flood = AuthenticationHeaderParser.challenges(Array(repeating: "Basic realm=\"x\"", count: 100).joined(separator: ", "))
        #expect(flood.challenges.count == AuthenticationHeaderParser.maximumChallenges)
    }

    @Test func strongestAnswerableChallengeIsChosen() {
        let header =
            #"Basic realm="r", Digest realm="r", nonce="a", algorithm=MD5, qop="auth", Digest realm="r", nonce="b", algorithm=SHA-256, qop="auth", Digest realm="r", nonce="c", algorithm=SHA3-512, Bearer realm="r""#
        let (offers, skipped) = OfferedAuthentication.rank(AuthenticationHeaderParser.challenges(header).challenges, allowed: .any)
        #expect(offers.map(\.scheme) == [.digest(.sha256), .digest(.md5), .basic])
        #expect(skipped.count == 2)  // SHA3-512, Bearer
        #expect(OfferedAuthentication.rank(AuthenticationHeaderParser.challenges(header).challenges, allowed: .basic).offers.map(\.scheme) == [.basic])
    }

    @Test func authenticationInfoParameters() {
        let info = AuthenticationHeaderParser.parameters(#"nextnonce="abc", qop=auth, rspauth="d1f", cnonce="x", nc=00000001"#)
        #expect(info.parameters.first { $0.name == "nextnonce" }?.value == "abc")
        #expect(info.parameters.count == 5)
        #expect(AuthenticationHeaderParser.parameters(#"nextnonce="abc"#).parameters.isEmpty)
    }

    /// The parsers under random and mutated input (the CLI's fuzzer: bounds, print/parse round
    /// trip, clean Digest answers); the million-input run is `trust-dev fuzz auth-headers --count 1000000`.
    @Test func fuzzedHeadersKeepEveryProperty() async throws {
        for seed in ["11", "12"] {
            let (status, out, err) = try await run(CLI.devBinary, ["fuzz", "auth-headers", "--count", "10000", "--seed", seed])
            #expect(status == 0, "\(out) \(err)")
            #expect(out.contains("0 property violations"), "\(out)")
        }
    }

    /// The checks shared by `trust-dev fuzz` and the libFuzzer target, on a header sent in several fields.
    @Test func authenticationHeaderPropertiesHoldAcrossSeveralFields() {
        let fields = [#"Basic realm="one""#, #"Digest realm="two", nonce="n", algorithm=MD5, qop="auth""#, "Bearer, ,", #"Broken realm="unterminated"#]
        let outcome = AuthenticationHeaderProperties.check(fields)
        #expect(outcome.violations.isEmpty, "\(outcome.violations)")
        #expect(outcome.challenges == 3)  // the unterminated one is skipped, with a diagnostic
        #expect(outcome.diagnostics == 1)
        #expect(outcome.digestAnswers == 1)
    }
}
