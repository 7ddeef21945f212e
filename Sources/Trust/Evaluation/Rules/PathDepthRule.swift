import X509

/// At most `maximumIntermediates` intermediate certificates between leaf and anchor
/// (self-issued re-keyings of the same CA do not count).
package struct PathDepthRule: PathRule {
    /// The most intermediates allowed, not counting self-issued ones.
    package var maximumIntermediates: Int

    /// Creates the rule with the given maximum.
    package init(maximumIntermediates: Int) {
        self.maximumIntermediates = maximumIntermediates
    }

    /// The reasons `path` fails this rule; empty when it passes.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        guard path.endsAtAnchor, path.count > 2 else { return [] }
        let intermediates = path.facts[1..<(path.count - 1)].filter { !$0.isSelfIssued }.count
        return intermediates > maximumIntermediates ? [.pathTooLong(intermediates: intermediates, maximum: maximumIntermediates)] : []
    }
}
