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
        var input: String { fieldValues.joined(separator: "\n").debugDescription }  // only for a violation
        let parsed = AuthenticationHeaderParser.challenges(fieldValues)
        outcome.challenges = parsed.challenges.count
        outcome.diagnostics = parsed.diagnostics.count
        let longest = fieldValues.map(\.utf8.count).max() ?? 0
        if parsed.challenges.count > AuthenticationHeaderParser.maximumChallenges || parsed.diagnostics.count > AuthenticationHeaderParser.maximumDiagnostics
            || parsed.challenges.contains(where: { $0.parameters.count > AuthenticationHeaderParser.maximumParameters })
            || parsed.diagnostics.contains(where: { $0.offset < 0 || $0.offset > longest })
        {
            outcome.violations.append("bounds: \(input)")
        }
        if fieldValues.count > 1 {
            let separately = fieldValues.flatMap { AuthenticationHeaderParser.challenges($0).challenges }
            if parsed.challenges != Array(separately.prefix(AuthenticationHeaderParser.maximumChallenges)) {
                outcome.violations.append("several fields: \(input)")
            }
        }
        for challenge in parsed.challenges {
            let printed = challenge.description
            let reparsed = AuthenticationHeaderParser.challenges(printed).challenges
            if printed.utf8.count <= AuthenticationHeaderParser.maximumFieldBytes && reparsed != [challenge] {
                outcome.violations.append("round trip: \(input) → \(printed.debugDescription)")
            }
            if challenge.schemeName == "digest", let digest = try? DigestChallenge(challenge) {
                let answer = DigestAuthorization(challenge: digest, user: "alice", password: "wonderland", method: "GET", uri: "/x", nonceCount: 1)
                let fields = AuthenticationHeaderParser.parameters(String(answer.fieldValue.dropFirst("Digest ".count)))
                outcome.digestAnswers += 1
                if !fields.diagnostics.isEmpty || !fields.parameters.contains(where: { $0.name == "response" }) {
                    outcome.violations.append("digest answer: \(input) → \(answer.fieldValue.debugDescription)")
                }
            }
        }
        for value in fieldValues {
            let info = AuthenticationHeaderParser.parameters(value)
            if info.parameters.count > AuthenticationHeaderParser.maximumParameters || info.diagnostics.count > AuthenticationHeaderParser.maximumDiagnostics
                || (!info.parameters.isEmpty && !info.diagnostics.isEmpty)
            {
                outcome.violations.append("parameters bounds: \(value.debugDescription)")
            }
        }
        return outcome
    }
}
