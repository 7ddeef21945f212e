extension TrustDecision {
    /// Which evaluator or policy made a decision. Its ``description`` is the wording logs, `trust`'s
    /// output and its JSON (`policy`) show.
    public enum Policy: Sendable, Hashable, CustomStringConvertible {
        /// `DefaultTrustEvaluator`: the system roots (when `systemRoots`), and `customAnchors` more.
        case systemDefault(systemRoots: Bool, customAnchors: Int)
        /// `PublicKeysTrustEvaluator` with `pins` pins.
        case publicKeyPins(pins: Int)
        /// `PinnedCertificatesTrustEvaluator` with `certificates` certificates.
        case pinnedCertificates(certificates: Int)
        /// AFNetworking's `AFSecurityPolicy` (``SecurityPolicy``) with its mode and flags.
        case securityPolicy(mode: PinningMode, pinnedCertificates: Int, allowsInvalidCertificates: Bool, validatesDomainName: Bool)
        /// A trust configuration's entry for `host` (`nil`: its base entry); `debugOverride` when its debug
        /// override anchors decided.
        case configurationEntry(host: HostPattern?, debugOverride: Bool)
        /// A challenge handler: its refusal (it did not answer, or not usably), or — `acceptedWithCredential` —
        /// its `useCredential` answer.
        case challengeHandler(acceptedWithCredential: Bool)
        /// The leaf certificate could not be parsed: no evaluator was asked.
        case certificateParsing
        /// A composite evaluator with nothing to ask.
        case composite
        /// Validation switched off (debug builds only).
        case disabled
        /// A server judging its clients' certificates.
        case clientAuthentication
        /// Any other evaluator, named in words (a `PathValidator`'s default name is `default`).
        case named(String)

        /// The policy in words.
        public var description: String {
            switch self {
            case .systemDefault(let systemRoots, let custom):
                guard systemRoots else { return "default (\(custom) custom anchors only)" }
                return custom == 0 ? "default (system roots)" : "default (system roots + \(custom) custom anchors)"
            case .publicKeyPins(let pins):
                return "public-key pinning (\(pins) pins)"
            case .pinnedCertificates(let certificates):
                return "certificate pinning (\(certificates) certificates)"
            case .securityPolicy(let mode, let pinned, let allowsInvalid, let validatesDomainName):
                return
                    "SecurityPolicy(pinningMode: \(mode.rawValue), pinned: \(pinned), allowInvalidCertificates: \(allowsInvalid), validatesDomainName: \(validatesDomainName))"
            case .configurationEntry(let host, let debugOverride):
                return "configuration " + (host.map { "\"\($0)\"" } ?? "base") + (debugOverride ? " (debug override)" : "")
            case .challengeHandler(let accepted):
                return accepted ? "challenge handler (useCredential)" : "challenge handler"
            case .certificateParsing:
                return "certificate parsing"
            case .composite:
                return "composite"
            case .disabled:
                return "disabled (debug only)"
            case .clientAuthentication:
                return "client authentication"
            case .named(let name):
                return name
            }
        }
    }
}
