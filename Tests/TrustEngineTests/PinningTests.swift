import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport
import X509

@Suite("Pins: SPKI SHA-256, matched only on the validated path", .paced)
struct PinningTests {
    /// Every key type pins from the certificate's own SPKI bytes, equal to openssl's pin.
    @Test(.requires(.openssl), arguments: LabKeyType.allCases)
    func pinEqualsOpenSSLForEveryKeyType(_ keyType: LabKeyType) async throws {
        let identity = try LabAuthority.selfSignedLeaf(dnsNames: ["pin.lab.test"], keyType: keyType)
        let openssl = "/usr/bin/openssl"
        let (_, spkiPEM, _) = try await run(openssl, ["x509", "-pubkey", "-noout"], stdin: identity.certificatePEM)
        let (_, derHex, _) = try await run(openssl, ["pkey", "-pubin", "-outform", "der"], stdin: spkiPEM).self
        _ = derHex
        let dir = try temporaryDirectory()
        let pemPath = dir + "/pub.pem"
        try spkiPEM.write(toFile: pemPath, atomically: true, encoding: .utf8)
        let (status, digest, stderr) = try await run(
            "/bin/sh", ["-c", "\(openssl) pkey -pubin -in \(pemPath) -outform der | \(openssl) dgst -sha256 -binary | base64"])
        #expect(status == 0, "\(stderr)")
        #expect(identity.certificate.spkiPin.base64 == digest.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func pinTextFormsParseAndRender() async throws {
        let pin = Lab.pki.root.certificate.spkiPin
        #expect(try SPKIPin(parsing: pin.description) == pin)
        #expect(try SPKIPin(parsing: pin.headerForm) == pin)
        #expect(try SPKIPin(parsing: pin.base64) == pin)
        #expect(pin.headerForm == "pin-sha256=\"\(pin.base64)\"")
        // A bare base64 pin may contain "/" (it is in the base64 alphabet).
        let slashy = try SPKIPin(digest: [UInt8](repeating: 0xFF, count: 32))
        #expect(slashy.base64.contains("/"))
        #expect(try SPKIPin(parsing: slashy.base64) == slashy)
        // The prefixes in any case, and blanks around the text.
        #expect(try SPKIPin(parsing: "SHA256/" + pin.base64) == pin)
        #expect(try SPKIPin(parsing: " PIN-SHA256=\"\(pin.base64)\"\t") == pin)
        // Each refusal says why.
        #expect(throws: PinParsingError.wrongLength(3)) { try SPKIPin(parsing: "sha256/AAAA") }
        #expect(throws: PinParsingError.wrongLength(3)) { try SPKIPin(parsing: "AAAA") }
        #expect(throws: PinParsingError.unsupportedAlgorithm("sha1")) { try SPKIPin(parsing: "sha1/" + pin.base64) }
        #expect(throws: PinParsingError.unsupportedAlgorithm("SHA384")) { try SPKIPin(parsing: "SHA384/" + pin.base64) }
        #expect(throws: PinParsingError.unsupportedAlgorithm("abc")) { try SPKIPin(parsing: "abc/def") }
        // A bare digest of another length whose Base64 starts with letters and a "/" (a SHA-1 digest here) is a wrong
        // length, not a hash named "AAA".
        let sha1Shaped = Data([0x00, 0x00, 0x3F] + [UInt8](repeating: 0, count: 17)).base64EncodedString()
        #expect(sha1Shaped.hasPrefix("AAA/"))
        #expect(throws: PinParsingError.wrongLength(20)) { try SPKIPin(parsing: sha1Shaped) }
        #expect(throws: PinParsingError.malformed("not a pin")) { try SPKIPin(parsing: "not a pin") }
        #expect(throws: PinParsingError.malformed("pin-sha256=\(pin.base64)")) { try SPKIPin(parsing: "pin-sha256=\(pin.base64)") }
        #expect(throws: PinParsingError.malformed("sha256/%%%%")) { try SPKIPin(parsing: "sha256/%%%%") }
    }

    @Test func pinOnIntermediateRootOrLeafOfTheValidatedPathIsAccepted() async throws {
        for certificate in [Lab.chain("good")[0], Lab.pki.intermediate.certificate, Lab.pki.root.certificate] {
            let evaluator = try PublicKeysTrustEvaluator(pins: [certificate.spkiPin], anchors: Lab.anchors)
            #expect(await evaluator.evaluate(Lab.trust("good")).isTrusted)
        }
    }

    /// A leaf from another trusted CA with the (public) pinned intermediate appended is refused,
    /// and the error shows the pins seen on the validated path against those expected.
    @Test func pinnedCertificateAppendedToForeignChainIsRejected() async throws {
        let pinned = Lab.pki.intermediate.certificate.spkiPin
        let evaluator = try PublicKeysTrustEvaluator(pins: [pinned], anchors: Lab.anchors)
        let decision = await evaluator.evaluate(Lab.trust("mitm"))
        #expect(!decision.isTrusted)
        guard case .pinMismatch(let seen, let expected)? = decision.reasons.first?.detail else {
            Issue.record("expected a pin mismatch, got \(decision.reasons)")
            return
        }
        #expect(expected == [pinned])
        #expect(!seen.contains(pinned))
        #expect(seen == [Lab.chain("mitm")[0].spkiPin, Lab.pki.otherRoot.certificate.spkiPin])
        // Without pinning the same chain validates (it is a genuine chain from a trusted CA).
        #expect(await Lab.evaluate("mitm").isTrusted)
    }

    /// The pin is a rule inside the path search: when one candidate path lacks the pin, another is still found.
    @Test func pinSelectsTheAlternativePathThatCarriesIt() async throws {
        // The intermediate is also trusted directly as an anchor: the shortest path (leaf → intermediate)
        // has no root, but the pin is on the root, so the search must continue to the longer path.
        let anchors = TrustAnchors.only([Lab.pki.intermediate.certificate, Lab.pki.root.certificate])
        let evaluator = try PublicKeysTrustEvaluator(pins: [Lab.pki.root.certificate.spkiPin], anchors: anchors)
        let decision = await evaluator.evaluate(Lab.trust("good"))
        #expect(decision.isTrusted, "\(decision.reasons)")
        #expect(decision.validatedPath.last == Lab.pki.root.certificate)
    }

    /// Pinning requested with zero pins is a configuration error, never "pin nothing".
    @Test func emptyPinSetIsAConfigurationError() {
        #expect(throws: TrustConfigurationError.noPins) { try PublicKeysTrustEvaluator(pins: []) }
        #expect(throws: TrustConfigurationError.noPinnedCertificates) { try PinnedCertificatesTrustEvaluator(certificates: []) }
        #expect(throws: TrustConfigurationError.noEvaluators) { try CompositeTrustEvaluator([]) }
    }

    @Test func pinnedCertificatesEvaluatorTrustsOnlyPathsToThePinnedCertificate() async throws {
        let evaluator = try PinnedCertificatesTrustEvaluator(certificates: [Lab.pki.intermediate.certificate])
        #expect(await evaluator.evaluate(Lab.trust("good")).isTrusted)
        #expect(await !evaluator.evaluate(Lab.trust("mitm")).isTrusted)
        let selfSigned = try PinnedCertificatesTrustEvaluator(certificates: [Lab.chain("self-signed")[0]])
        #expect(await selfSigned.evaluate(Lab.trust("self-signed")).isTrusted)
        // Pinning never switches the name check off: a pinned certificate for another host is still refused.
        #expect(await selfSigned.evaluate(Lab.trust("self-signed", host: "elsewhere.lab.test")).codes == ["name-mismatch"])
    }

    @Test func compositeEvaluatorNeedsEveryEvaluator() async throws {
        let both = try CompositeTrustEvaluator([
            DefaultTrustEvaluator(anchors: Lab.anchors),
            try PublicKeysTrustEvaluator(pins: [Lab.pki.root.certificate.spkiPin], anchors: Lab.anchors),
        ])
        #expect(await both.evaluate(Lab.trust("good")).isTrusted)
        #expect(await !both.evaluate(Lab.trust("mitm")).isTrusted)
    }
}
