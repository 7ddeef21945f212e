/// The properties the HTTP authentication parsers must have on any input, whatever its bytes:
/// checked by `trust-dev fuzz auth-headers` and by the libFuzzer target in `Fuzz/`.
///
/// - Bounds: at most `AuthenticationHeaderParser.maximumChallenges` challenges,
///   `AuthenticationHeaderParser.maximumDiagnostics` diagnostics and
///   `AuthenticationHeaderParser.maximumParameters` parameters per challenge; diagnostic offsets
///   inside the field.
/// - Round trip: every challenge parsed prints back to a field that parses to the same challenge.
/// - Several fields: parsing them together gives the challenges of each, in order, up to the limit.
/// - Digest: the answer to any accepted Digest challenge parses as a clean parameter list with a
///   `response`.
package enum AuthenticationHeaderProperties {
    /// What checking one input found.
    package struct Outcome: Sendable {
        /// Challenges parsed.
        package var challenges = 0
        /// Diagnostics given.
        package var diagnostics = 0
        /// Digest answers built (and checked).
        package var digestAnswers = 0
        /// One line for each property that did not hold; empty when all held.
        package var violations: [String] = []
    }

    /// Checks every property on `fieldValues`, as one `WWW-Authenticate` header sent in that many
    /// fields, and on each of them as an `Authentication-Info` field.
    package static func check(_ fieldValues: [String]) -> Outcome {
        var outcome = Outcome()
        let parsed = AuthenticationHeaderParser.challenges(fieldValues)
        outcome.challenges = parsed.challenges.count
        outcome.diagnostics = parsed.diagnostics.count
        checkBounds(parsed, fieldValues, &outcome)
        checkSeveralFields(parsed, fieldValues, &outcome)
        for challenge in parsed.challenges {
            checkRoundTrip(challenge, fieldValues, &outcome)
            checkDigestAnswer(challenge, fieldValues, &outcome)
        }
        for value in fieldValues {
            checkParameterBounds(value, &outcome)
        }
        return outcome
    }

    /// What `AuthenticationHeaderParser.challenges(_:)` returns.
    private typealias Parsed = (challenges: [HTTPChallenge], diagnostics: [AuthenticationHeaderDiagnostic])

    /// The input, as a violation quotes it.
    private static func quoted(_ fieldValues: [String]) -> String {
        fieldValues.joined(separator: "\n").debugDescription
    }

    /// Bounds: challenges, diagnostics and parameters per challenge within the parser's limits;
    /// diagnostic offsets inside the field.
    private static func checkBounds(_ parsed: Parsed, _ fieldValues: [String], _ outcome: inout Outcome) {
        let longest = fieldValues.map(\.utf8.count).max() ?? 0
        if parsed.challenges.count > AuthenticationHeaderParser.maximumChallenges || parsed.diagnostics.count > AuthenticationHeaderParser.maximumDiagnostics
            || parsed.challenges.contains(where: { $0.parameters.count > AuthenticationHeaderParser.maximumParameters })
            || parsed.diagnostics.contains(where: { $0.offset < 0 || $0.offset > longest })
        {
            outcome.violations.append("bounds: \(quoted(fieldValues))")
        }
    }

    /// Several fields: parsed together, the challenges of each, in order, up to the limit.
    private static func checkSeveralFields(_ parsed: Parsed, _ fieldValues: [String], _ outcome: inout Outcome) {
        guard fieldValues.count > 1 else { return }
        let separately = fieldValues.flatMap { AuthenticationHeaderParser.challenges($0).challenges }
        if parsed.challenges != Array(separately.prefix(AuthenticationHeaderParser.maximumChallenges)) {
            outcome.violations.append("several fields: \(quoted(fieldValues))")
        }
    }

    /// Round trip: the challenge printed parses back to the same challenge (when the printed field is
    /// within the parser's field limit).
    private static func checkRoundTrip(_ challenge: HTTPChallenge, _ fieldValues: [String], _ outcome: inout Outcome) {
        let printed = challenge.description
        let reparsed = AuthenticationHeaderParser.challenges(printed).challenges
        if printed.utf8.count <= AuthenticationHeaderParser.maximumFieldBytes && reparsed != [challenge] {
            outcome.violations.append("round trip: \(quoted(fieldValues)) → \(printed.debugDescription)")
        }
    }

    /// Digest: the answer to an accepted Digest challenge parses as a clean parameter list with a
    /// `response`.
    private static func checkDigestAnswer(_ challenge: HTTPChallenge, _ fieldValues: [String], _ outcome: inout Outcome) {
        guard challenge.schemeName == "digest", let digest = try? DigestChallenge(challenge) else { return }
        let answer = DigestAuthorization(challenge: digest, user: "alice", password: "wonderland", method: "GET", uri: "/x", nonceCount: 1)
        let fields = AuthenticationHeaderParser.parameters(String(answer.fieldValue.dropFirst("Digest ".count)))
        outcome.digestAnswers += 1
        if !fields.diagnostics.isEmpty || !fields.parameters.contains(where: { $0.name == "response" }) {
            outcome.violations.append("digest answer: \(quoted(fieldValues)) → \(answer.fieldValue.debugDescription)")
        }
    }

    /// One field as `Authentication-Info`: parameters and diagnostics within the limits, and not both.
    private static func checkParameterBounds(_ value: String, _ outcome: inout Outcome) {
        let info = AuthenticationHeaderParser.parameters(value)
        if info.parameters.count > AuthenticationHeaderParser.maximumParameters || info.diagnostics.count > AuthenticationHeaderParser.maximumDiagnostics
            || (!info.parameters.isEmpty && !info.diagnostics.isEmpty)
        {
            outcome.violations.append("parameters bounds: \(value.debugDescription)")
        }
    }
}
