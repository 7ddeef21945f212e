import Foundation
import FuzzSupport
import TrustHTTP
import TrustLabPKI
import TrustNIO
import X509

@testable import Trust

/// Arbitrary bytes as the names and texts a peer chooses — a certificate's subject, issuer and dNSName,
/// a reason's subject and detail, a note, a host, an error's message, a CT finding — through every
/// human-readable rendering: `DisplayText` itself, each `TrustFailureReason` description, `trust evaluate`'s
/// report and `trust inspect`'s certificate blocks, path line and verdict (`DecisionText`),
/// `TrustHTTPClientError.description`, `TrustDecisionLog`'s metadata and a CT report's summary.
///
/// Properties, besides "no crash, no leak": no line of any rendering holds a raw control character (C0,
/// DEL, C1), a bidirectional formatting character or a line/paragraph separator
/// (`DisplayText.containsUnsafeCharacter`), and no raw LF adds a line (a single-line rendering has one line, a
/// report as many as the same report of a benign name); `DisplayText.escaped(utf8:)` of valid UTF-8 equals
/// `DisplayText.escaped(_:)` of its text; escaping is unambiguous (undoing it gives the input back).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzDisplayText_main`): libFuzzer's driver.
@_cdecl("FuzzDisplayText_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

/// No line of `text` holds a character a terminal or a log viewer would act on, and `text` has `lines` lines
/// (1, the default: a single-line rendering holds no LF). Lines end at a raw LF scalar (splitting by `Character`
/// would keep a CR LF whole and hide a lone LF), so a raw LF from the input shows as one line too many.
func requireSafe(_ text: String, _ what: String, lines: Int = 1) {
    let split = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
    for line in split {
        require(
            !DisplayText.containsUnsafeCharacter(String(String.UnicodeScalarView(line))),
            "\(what) holds a raw control: \(String(String.UnicodeScalarView(line)).debugDescription)")
    }
    require(split.count == lines, "\(what) has \(split.count) lines, not \(lines) (a raw LF): \(text.debugDescription)")
}

/// Each line of a multi-line rendering safe, and a single line.
func requireSafe(_ lines: [String], _ what: String) {
    for line in lines { requireSafe(line, what) }
}

/// The number of lines of `text`: the expected count of a rendering, taken from the same rendering of a benign input.
func lineCount(_ text: String) -> Int {
    text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).count
}

/// `DisplayText`'s escaped form read back: `\\`, `\xNN` (a byte), `\u{N…}` (a scalar). Bytes, so that a
/// `\xNN` of invalid UTF-8 comes back as that byte.
func unescape(_ text: String) -> [UInt8]? {
    var out: [UInt8] = []
    var scalars = text.unicodeScalars[...]
    while let scalar = scalars.popFirst() {
        guard scalar == "\\" else {
            out += Array(String(scalar).utf8)
            continue
        }
        switch scalars.popFirst() {
        case "\\": out.append(0x5C)
        case "x":
            guard scalars.count >= 2, let byte = UInt8(String(String.UnicodeScalarView(scalars.prefix(2))), radix: 16) else { return nil }
            scalars = scalars.dropFirst(2)
            out.append(byte)
        case "u":
            guard scalars.popFirst() == "{", let end = scalars.firstIndex(of: "}"),
                let value = UInt32(String(String.UnicodeScalarView(scalars[..<end])), radix: 16), let decoded = Unicode.Scalar(value)
            else { return nil }
            scalars = scalars[scalars.index(after: end)...]
            out += Array(String(decoded).utf8)
        default: return nil
        }
    }
    return out
}

/// Every reason, with `text` in each of its strings.
func reasons(_ text: String) -> [TrustFailureReason] {
    let date = Date(timeIntervalSince1970: 1_700_000_000)
    return [
        .noPathToTrustedAnchor(.selfSignedLeaf(subject: text)), .noPathToTrustedAnchor(.untrustedRoot(subject: text)),
        .noPathToTrustedAnchor(.missingIssuer(issuer: text, of: text)), .noPathToTrustedAnchor(.issuerNotTrusted(issuer: text, of: text)),
        .noPathToTrustedAnchor(.badSignature(subject: text)), .noPathToTrustedAnchor(.everyCandidateFailed),
        .expired(subject: text, notAfter: date, at: date), .notYetValid(subject: text, notBefore: date, at: date),
        .nameMismatch(expected: text, presented: [text, text]), .nameMismatch(expected: text, presented: []),
        .missingSubjectAlternativeName(subject: text), .missingExtendedKeyUsage(subject: text, required: text),
        .extendedKeyUsageExcludedByIssuer(subject: text, required: text), .weakKey(subject: text, key: text, minimum: text),
        .weakSignatureAlgorithm(subject: text, algorithm: text), .pinMismatch(seen: [], expected: []),
        .pinnedCertificateNotInPath(pinned: [text]), .pinningRequired(text), .malformedCertificate(subject: text, detail: text),
        .issuerNotCertificateAuthority(subject: text), .pathLengthConstraintViolated(subject: text, maxPathLength: 1),
        .leafIsCertificateAuthority(subject: text), .issuerKeyUsageForbidsCertificateSigning(subject: text),
        .leafKeyUsageInvalid(subject: text, detail: text), .unhandledCriticalExtension(subject: text, oid: text),
        .nameConstraintViolation(subject: text, name: text, constrainedBy: text), .pathTooLong(intermediates: 9, maximum: 8),
        .pathTooCostly(text), .emptyChain, .peerNameRequired, .refusedByApplication(text),
        .revoked(subject: text, serialNumber: text, reason: text, revokedAt: date, source: text),
        .revocationStatusUnknown(subject: text, detail: text),
        .certificateTransparencyPolicyNotMet(
            subject: text, validSCTs: 0, requiredSCTs: 2, operators: 0, requiredOperators: 2, invalidSCTs: 0, unknownLogSCTs: 0, detail: text),
        .svidURICount(subject: text, uris: [text, text]), .svidInvalidSPIFFEID(subject: text, error: .invalidPathCharacter(text, character: text)),
        .svidRequirementNotMet(subject: text, spiffeID: text, requirement: .leafIsNotCA),
        .spiffeTrustDomainNotTrusted(spiffeID: text, trustDomain: text, anchor: text), .spiffeIDNotAllowed(spiffeID: text, allowed: [text]),
    ]
}

/// A root named `text` and a leaf named `text` (its dNSName: the ASCII of `text`, an IA5String), or none
/// when swift-certificates refuses the name.
func certificates(_ text: String) -> [Certificate] {
    let ascii = String(String.UnicodeScalarView(text.unicodeScalars.filter(\.isASCII)))
    guard let root = try? LabAuthority.root(commonName: text),
        let leaf = try? root.leaf(commonName: text, dnsNames: ["good.lab.test", ascii])
    else { return [] }
    return [leaf.certificate, root.certificate]
}

/// One input: every property must hold.
func test(_ bytes: [UInt8]) -> CInt {
    let shown = DisplayText.escaped(utf8: bytes)
    requireSafe(shown, "DisplayText.escaped(utf8:)")
    require(unescape(shown) == bytes, "the escaped form does not read back to the input: \(bytes) → \(shown.debugDescription)")
    let text = String(decoding: bytes, as: UTF8.self)
    if Array(text.utf8) == bytes {
        require(DisplayText.escaped(text) == shown, "escaped(_:) and escaped(utf8:) differ on valid UTF-8")
    }
    requireSafe(DisplayText("a \(text) b \(bytes.count)").description, "DisplayText interpolation")

    for reason in reasons(text) { requireSafe(reason.description, "the description of \(reason.code)") }
    let chain = certificates(text)
    func makeDecision(_ text: String, _ chain: [Certificate], trusted: Bool = false) -> TrustDecision {
        TrustDecision(
            isTrusted: trusted, reasons: reasons(text), notes: [text], presentedChain: chain, validatedPath: trusted ? chain : [], closestPath: chain,
            peerName: nil, evaluationTime: Date(timeIntervalSince1970: 1_700_000_000), policy: .named(text))
    }
    var decision = makeDecision(text, chain)
    // The same report of a benign name (and chain of benign names) has the number of lines this one must have.
    var benign = makeDecision("x", chain.isEmpty ? [] : certificates("x"))
    requireSafe(DecisionText.report(decision), "evaluate's report", lines: lineCount(DecisionText.report(benign)))
    requireSafe(DecisionText.pathLine(decision), "the path line")
    requireSafe(DecisionText.explanation(decision, presented: chain, name: text), "inspect's verdict")
    for (index, certificate) in chain.enumerated() {
        requireSafe(DecisionText.inspectedCertificate(certificate, index: index, validity: "1 day left"), "inspect's certificate block")
    }
    requireSafe(TrustHTTPClientError(.badServerResponse, text, trustDecision: decision, underlying: text).description, "SessionError.description")
    for (key, value) in TrustDecisionLog.metadata(for: decision, host: text, port: 443, cached: nil) {
        requireSafe("\(value)", "log metadata \(key)")
    }
    decision = makeDecision(text, chain, trusted: true)
    benign = makeDecision("x", benign.presentedChain, trusted: true)
    requireSafe(DecisionText.report(decision), "evaluate's report (trusted)", lines: lineCount(DecisionText.report(benign)))
    requireSafe(DecisionText.pathLine(decision), "the path line (trusted)")
    requireSafe(DecisionText.explanation(decision, presented: chain, name: text), "inspect's verdict (trusted)")
    let report = CertificateTransparencyReport(entries: [], requiredSCTs: 2, requiredOperators: 2, malformed: text)
    requireSafe(report.summary, "a CT report's summary")
    return 0
}
