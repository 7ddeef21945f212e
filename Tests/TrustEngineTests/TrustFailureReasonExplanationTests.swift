import Foundation
import Testing
import Trust

/// Every ``TrustFailureReason`` has one wording of what it means and its likely fix, safe to show.
@Suite("TrustFailureReason.Explanation: every reason worded, with its fix")
struct TrustFailureReasonExplanationTests {
    /// One of each reason (and each way no path can be built), with `name` wherever a certificate chooses the text.
    static func everyReason(_ name: String) throws -> [TrustFailureReason] {
        let pin = try SPKIPin(digest: [UInt8](repeating: 1, count: 32))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        return [
            .noPathToTrustedAnchor(.selfSignedLeaf(subject: name)), .noPathToTrustedAnchor(.untrustedRoot(subject: name)),
            .noPathToTrustedAnchor(.missingIssuer(issuer: name, of: name)), .noPathToTrustedAnchor(.issuerNotTrusted(issuer: name, of: name)),
            .noPathToTrustedAnchor(.badSignature(subject: name)), .noPathToTrustedAnchor(.everyCandidateFailed),
            .expired(subject: name, notAfter: now, at: now), .notYetValid(subject: name, notBefore: now, at: now),
            .nameMismatch(expected: name, presented: [name]), .nameMismatch(expected: name, presented: []),
            .missingSubjectAlternativeName(subject: name), .missingExtendedKeyUsage(subject: name, required: name),
            .extendedKeyUsageExcludedByIssuer(subject: name, required: name), .weakKey(subject: name, key: name, minimum: name),
            .weakSignatureAlgorithm(subject: name, algorithm: name), .pinMismatch(seen: [pin], expected: [pin]),
            .pinnedCertificateNotInPath(pinned: [name]), .pinningRequired(name), .malformedCertificate(subject: name, detail: name),
            .issuerNotCertificateAuthority(subject: name), .pathLengthConstraintViolated(subject: name, maxPathLength: 0),
            .leafIsCertificateAuthority(subject: name), .issuerKeyUsageForbidsCertificateSigning(subject: name),
            .leafKeyUsageInvalid(subject: name, detail: name), .unhandledCriticalExtension(subject: name, oid: name),
            .nameConstraintViolation(subject: name, name: name, constrainedBy: name), .pathTooLong(intermediates: 9, maximum: 8),
            .pathTooCostly(name), .emptyChain, .peerNameRequired, .refusedByApplication(name),
            .revoked(subject: name, serialNumber: name, reason: name, revokedAt: now, source: name),
            .revocationStatusUnknown(subject: name, detail: name),
            .certificateTransparencyPolicyNotMet(
                subject: name, validSCTs: 1, requiredSCTs: 2, operators: 1, requiredOperators: 2, invalidSCTs: 1, unknownLogSCTs: 0, detail: name),
            .svidURICount(subject: name, uris: [name, name]), .svidInvalidSPIFFEID(subject: name, error: .wrongScheme(name)),
            .svidRequirementNotMet(subject: name, spiffeID: name, requirement: .leafIsNotCA),
            .spiffeTrustDomainNotTrusted(spiffeID: name, trustDomain: name, anchor: name), .spiffeIDNotAllowed(spiffeID: name, allowed: [name]),
            .rootDistrusted(root: name, label: name, rule: .notTrustedForServers), .rootDistrusted(root: name, label: name, rule: .distrusted),
            .rootDistrusted(root: name, label: name, rule: .issuedAfterDistrustDate(distrustAfter: now, leafNotBefore: now)),
        ]
    }

    @Test func everyReasonHasASummaryAMeaningAndAFix() throws {
        let reasons = try Self.everyReason("CN=example.test")
        // Every code is covered (34 today): a new reason must be added here, and its words are then checked.
        #expect(Set(reasons.map(\.code)).count == 34)
        for reason in reasons {
            let explanation = reason.explanation
            #expect(!explanation.summary.isEmpty && !explanation.meaning.isEmpty && !explanation.fix.isEmpty, "\(reason.code)")
            #expect(explanation.meaning == reason.description)
            #expect(explanation.fix != explanation.meaning, "\(reason.code)")
            #expect(explanation.description == "\(explanation.summary): \(explanation.meaning). Fix: \(explanation.fix).")
        }
        // The ways no path can be built are told apart in words, as they are in data.
        let noPath = reasons.prefix(6).map(\.explanation.fix)
        #expect(Set(noPath).count == 6, "\(noPath)")
    }

    /// Text a certificate chose is shown escaped in every part (a subject with ESC, CR LF and a bidi override).
    @Test func peerTextIsEscapedInEveryPart() throws {
        let hostile = "CN=evil\u{1B}]0;owned\u{07}\r\n\u{202E}x"
        for reason in try Self.everyReason(hostile) {
            let explanation = reason.explanation
            for part in [explanation.summary, explanation.meaning, explanation.fix, explanation.description] {
                #expect(!DisplayText.containsUnsafeCharacter(part) && !part.contains("\n"), "\(reason.code): \(part.debugDescription)")
            }
        }
        let missing = TrustFailureReason.noPathToTrustedAnchor(.missingIssuer(issuer: hostile, of: "CN=leaf")).explanation.fix
        #expect(missing.contains(DisplayText.escaped(hostile)), "\(missing.debugDescription)")
    }

    /// A reason's kind is a value a client compares (`reason.kind == .pinMismatch`), so a kind added in a minor
    /// version breaks no client's `switch`; its code is the stable identifier `--json` prints.
    @Test func everyReasonHasAKindWhoseCodeIsTheReasons() throws {
        let reasons = try Self.everyReason("CN=example.test")
        for reason in reasons {
            #expect(reason.kind.code == reason.code && reason.kind.description == reason.code, "\(reason)")
        }
        // One kind per code: two reasons share a kind exactly when they share a code.
        #expect(Set(reasons.map(\.kind)).count == Set(reasons.map(\.code)).count)
        #expect(TrustFailureReason.emptyChain.kind == .emptyChain)
        #expect(TrustFailureReason.pinMismatch(seen: [], expected: []).kind == .pinMismatch)
        #expect(TrustFailureReason.pinMismatch(seen: [], expected: []).kind != .pinnedCertificateNotInPath)
        // What an application's own evaluator refuses with keeps its words.
        let refusal = TrustFailureReason.refusedByApplication("not on the list")
        #expect(refusal.kind == .refusedByApplication && refusal.code == "refused-by-application" && refusal.description == "not on the list")
    }
}
