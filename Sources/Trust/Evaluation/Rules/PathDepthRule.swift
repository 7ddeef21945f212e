import X509

/// At most `maximumIntermediates` intermediate certificates between leaf and anchor
/// (self-issued re-keyings of the same CA do not count).
public struct PathDepthRule: PathRule {
    public var maximumIntermediates: Int

    public init(maximumIntermediates: Int) {
        self.maximumIntermediates = maximumIntermediates
    }

    public func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        guard path.endsAtAnchor, path.count > 2 else { return [] }
        let intermediates = path.certificates[1..<(path.count - 1)].filter { !$0.isSelfIssued }.count
        return intermediates > maximumIntermediates ? [.pathTooLong(intermediates: intermediates, maximum: maximumIntermediates)] : []
    }
}
