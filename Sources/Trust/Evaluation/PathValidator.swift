import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Builds and validates a certification path for a ``ServerTrust``: the engine under every
/// evaluator.
///
/// Path building is swift-certificates' `Verifier` (a depth-first search that prefers
/// anchors and AKI/SKI matches). Every rule of the ``ValidationPolicy`` runs as a policy
/// inside that search, so a candidate that fails any rule (a pin included) makes the search
/// go on to the next candidate. Lookups are charged to a work budget, so hostile inputs end
/// fast. When no path validates, the decision carries the reasons of the closest candidate,
/// or — when no anchor was reachable — why the presented chain does not link to one.
public struct PathValidator: Sendable {
    /// The certificates a path may end at.
    public var anchors: TrustAnchors {
        didSet {
            anchorIndex = AnchorIndex(anchors)
            prepareRules()
        }
    }
    /// The policy whose rules every candidate path must satisfy.
    public var policy: ValidationPolicy {
        didSet { prepareRules() }
    }
    /// Extra rules, run after the policy's own.
    public var additionalRules: [any PathRule] {
        didSet { prepareRules() }
    }
    /// Named in decisions.
    public var name: TrustDecision.Policy
    /// `false` skips the direct path (tests compare it with the full search).
    var triesDirectPath = true
    /// Built once (not per evaluation): the anchors by subject, and the rules.
    private var anchorIndex: AnchorIndex
    private var rules: [any PathRule] = []
    /// The rules that observe trusted paths (notes, validity).
    private var observingRules: [any PathRule] = []
    /// The critical extensions the rules enforce (RFC 5280 §4.2: any other makes a certificate unusable).
    private var handledCriticalExtensions: [ASN1ObjectIdentifier] = []
    /// The policy's pins in the order decisions list them.
    private var expectedPins: [SPKIPin] = []

    /// Creates a validator.
    public init(
        anchors: TrustAnchors = .system, policy: ValidationPolicy = .webPKI, additionalRules: [any PathRule] = [],
        name: TrustDecision.Policy = .named("default")
    ) {
        self.anchors = anchors
        self.policy = policy
        self.additionalRules = additionalRules
        self.name = name
        self.anchorIndex = AnchorIndex(anchors)
        prepareRules()
        ConstructionCounter.pathValidators.increment()
    }

    /// A validator named in words in its decisions (``TrustDecision/Policy/named(_:)``).
    public init(anchors: TrustAnchors = .system, policy: ValidationPolicy = .webPKI, additionalRules: [any PathRule] = [], name: String) {
        self.init(anchors: anchors, policy: policy, additionalRules: additionalRules, name: .named(name))
    }

    private mutating func prepareRules() {
        rules = policy.rules() + additionalRules
        if policy.certificateTransparency.mode != .off {
            // Added here, not in ValidationPolicy.rules(): which anchors are custom is the validator's to know.
            rules.append(CertificateTransparencyRule(policy: policy.certificateTransparency, customAnchors: Set(anchors.certificates.map(\.spkiPin))))
        }
        if anchors.includesSystemRoots {
            // NSS's refusals for public roots (RootStore): the validator knows which anchors are custom.
            rules.append(MozillaRootRule(customAnchors: Set(anchors.certificates)))
        }
        observingRules = rules.filter(\.observesTrustedPaths)
        handledCriticalExtensions = RulesPolicy.handledCriticalExtensions(of: rules)
        expectedPins = policy.pins.sorted { $0.base64 < $1.base64 }
    }

    /// Searches for a path from `trust`'s chain to an anchor that passes every rule, and decides on it.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await evaluate(trust, triesDirectPath: triesDirectPath)
    }

    /// ``evaluate(_:)`` for a caller that has just had `nil` from ``decisionWithoutSuspending(_:)``: the same
    /// decision, without looking for the direct path (and verifying its signatures) a second time.
    public func evaluate(afterImmediateMiss trust: ServerTrust) async -> TrustDecision {
        await evaluate(trust, triesDirectPath: false)
    }

    private func evaluate(_ trust: ServerTrust, triesDirectPath: Bool) async -> TrustDecision {
        guard let leaf = trust.leaf else {
            return .refused([.emptyChain], trust: trust, policy: name, expectedPins: expectedPins)
        }
        if triesDirectPath, let trusted = decisionWithoutSuspending(trust) { return trusted }
        let context = RuleContext(evaluationTime: trust.evaluationTime, peerName: trust.peerName)
        let budget = WorkBudget(maximumSignatureChecks: policy.maximumSignatureChecks)
        let limit = policy.maximumSignatureChecks
        let rulesPolicy = RulesPolicy(rules: rules, context: context, budget: budget, budgetLimit: limit)
        let handled = rulesPolicy.verifyingCriticalExtensions
        let anchorStore = BudgetedCertificateStore(anchors: anchorIndex, budget: budget, limit: limit)
        let intermediates = BudgetedCertificateStore(Array(trust.presentedChain.dropFirst()) + trust.fetchedIntermediates, budget: budget, limit: limit)

        var verifier = Verifier(rootCertificates: CertificateStore(custom: anchorStore)) { rulesPolicy }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(custom: intermediates))

        if case .validCertificate(let chain) = result {
            let decision = TrustDecision(
                isTrusted: true, reasons: [], presentedChain: trust.presentedChain, validatedPath: Array(chain), peerName: trust.peerName,
                evaluationTime: trust.evaluationTime, policy: name, expectedPins: expectedPins)
            return observed(decision, on: CertificatePath(Array(chain)), context: context)
        }

        var reasons: [TrustFailureReason] = []
        var closest: [Certificate] = []
        if let reason = budget.exhaustedReason { reasons.append(.pathTooCostly(reason)) }
        let failures = rulesPolicy.log.failures
        if let best = failures.min(by: { ($0.reasons.count, $0.path.count) < ($1.reasons.count, $1.path.count) }) {
            reasons += best.reasons
            closest = best.path.certificates
        } else {
            let walk = Self.linkPresentedChain(
                leaf: leaf, presented: trust.presentedChain + trust.fetchedIntermediates, anchors: anchorIndex, handled: handled)
            closest = walk.path
            reasons += walk.problems
            if !budget.isExhausted || walk.problems.isEmpty {
                reasons.append(.noPathToTrustedAnchor(walk.detail))
            }
            reasons += rulesPolicy.evaluate(CertificatePath(walk.path, endsAtAnchor: false))
        }
        let decision = TrustDecision(
            isTrusted: false, reasons: Self.unique(reasons), presentedChain: trust.presentedChain, validatedPath: [],
            closestPath: closest, peerName: trust.peerName, evaluationTime: trust.evaluationTime, policy: name,
            expectedPins: expectedPins)
        // An empty system store is said, never silent: it is why a public chain cannot be trusted.
        if let missing = anchors.missingRootsNote { return decision.adding(notes: [missing]) }
        return decision
    }

    /// The path the search below would return, found without it in the common case: at every step
    /// exactly one candidate issuer — one anchor, or else one presented certificate — that is
    /// usable (no unhandled critical extension, not already on the path, its signature verifies),
    /// and the anchored path passes every rule. The steps, their order and the work charged are
    /// those of swift-certificates' `Verifier` (anchors before intermediates; the same skip
    /// checks; one charge per candidate found and per candidate path), so when this returns a path
    /// the search would have returned that same path first. Whenever there is a choice, a
    /// candidate is unusable, a rule fails or the budget would run out, it returns `nil` and the
    /// full search decides (and explains).
    func directPath(leaf: Certificate, presented: [Certificate], context: RuleContext) -> CertificatePath? {
        let leafFacts = CertificateFactsCache.shared.facts(of: leaf)
        guard !leafFacts.hasUnhandledCriticalExtension(handledCriticalExtensions), !anchorIndex.contains(leaf) else { return nil }
        var chain = [leaf]
        var facts = [leafFacts]
        var charged = 0
        let limit = policy.maximumSignatureChecks
        while chain.count <= presented.count {
            let tip = chain[chain.count - 1]
            if let roots = anchorIndex[tip.issuer] {
                charged += roots.count + 1
                guard roots.count == 1, charged <= limit, let rootFacts = usableIssuerFacts(chain, with: roots[0]) else { return nil }
                let path = CertificatePath(chain + roots, facts: facts + [rootFacts], endsAtAnchor: true)
                return rules.allSatisfy({ $0.check(path, context: context).isEmpty }) ? path : nil
            }
            var parent: Certificate?
            for candidate in presented.dropFirst() where candidate.subject == tip.issuer {
                if let parent {
                    if parent == candidate { continue }
                    return nil
                }
                parent = candidate
            }
            charged += 1
            guard let parent, charged <= limit, let parentFacts = usableIssuerFacts(chain, with: parent) else { return nil }
            chain.append(parent)
            facts.append(parentFacts)
        }
        return nil
    }

    /// The `Verifier`'s test before it adds `candidate` above the tip of `chain`: no critical
    /// extension the rules do not handle; not already on the chain (same subject, key and
    /// subjectAltName — RFC 4158 §5.2 loop detection); and it signed the tip. Its facts when it
    /// passes, else `nil`.
    private func usableIssuerFacts(_ chain: [Certificate], with candidate: Certificate) -> CertificateFacts? {
        let facts = CertificateFactsCache.shared.facts(of: candidate)
        guard !facts.hasUnhandledCriticalExtension(handledCriticalExtensions) else { return nil }
        let onChain = chain.contains { member in
            member.subject == candidate.subject && member.publicKey == candidate.publicKey
                && member.extensions[oid: .X509ExtensionID.subjectAlternativeName]?.value
                    == candidate.extensions[oid: .X509ExtensionID.subjectAlternativeName]?.value
        }
        guard !onChain, let tip = chain.last, candidate.publicKey.isValidSignature(tip.signature, for: tip) else { return nil }
        return facts
    }

    /// The trusted decision on the path the direct path finds (see `directPath(leaf:presented:context:)`), without
    /// suspending; `nil` when the full search must decide (see ``evaluate(_:)``, which tries this first).
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? {
        guard triesDirectPath, let leaf = trust.leaf else { return nil }
        let context = RuleContext(evaluationTime: trust.evaluationTime, peerName: trust.peerName)
        guard let path = directPath(leaf: leaf, presented: trust.presentedChain + trust.fetchedIntermediates, context: context) else { return nil }
        let decision = TrustDecision(
            isTrusted: true, reasons: [], presentedChain: trust.presentedChain, validatedPath: path.certificates, peerName: trust.peerName,
            evaluationTime: trust.evaluationTime, policy: name, expectedPins: expectedPins)
        return observed(decision, on: path, context: context)
    }

    /// `decision` with what the rules observe on its validated path: their notes, and the intersection of their validity.
    private func observed(_ decision: TrustDecision, on path: @autoclosure () -> CertificatePath, context: RuleContext) -> TrustDecision {
        guard !observingRules.isEmpty else { return decision }
        let path = path()
        var notes: [String] = []
        var allowedFailures: [TrustFailureReason] = []
        var validity = decision.validity
        for rule in observingRules {
            let observation = rule.observe(path, context: context)
            notes += observation.notes
            allowedFailures += observation.allowedFailures
            if let window = observation.validity { validity = PathObservation.narrowed(validity, to: window) }
        }
        return decision.observing(notes: notes, allowedFailures: allowedFailures, validity: validity)
    }

    static func unique(_ reasons: [TrustFailureReason]) -> [TrustFailureReason] {
        var seen = Set<TrustFailureReason>()
        return reasons.filter { seen.insert($0).inserted }
    }

    /// Follows the presented chain from the leaf by name and signature (bounded), to explain
    /// why it does not reach an anchor.
    static func linkPresentedChain(
        leaf: Certificate, presented: [Certificate], anchors: AnchorIndex, handled: [ASN1ObjectIdentifier]
    ) -> (path: [Certificate], detail: TrustFailureReason.NoPathDetail, problems: [TrustFailureReason]) {
        var path = [leaf]
        var problems: [TrustFailureReason] = []
        var signatureChecks = 0
        func unhandled(_ certificate: Certificate) {
            for ext in certificate.extensions where ext.critical && !handled.contains(ext.oid) {
                problems.append(.unhandledCriticalExtension(subject: certificate.displayName, oid: ext.oid.description))
            }
        }
        unhandled(leaf)
        while path.count <= 16 {
            let tip = path[path.count - 1]
            func signs(_ candidate: Certificate) -> Bool {
                signatureChecks += 1
                return signatureChecks <= 64 && candidate.publicKey.isValidSignature(tip.signature, for: tip)
            }
            let anchorIssuers = anchors[tip.issuer] ?? []
            if anchorIssuers.contains(where: signs) {
                return (path, .everyCandidateFailed, problems)
            }
            if tip.isSelfIssued && signs(tip) {
                return (path, path.count == 1 ? .selfSignedLeaf(subject: tip.displayName) : .untrustedRoot(subject: tip.displayName), problems)
            }
            let candidates = presented.filter { candidate in
                candidate.subject == tip.issuer && !path.contains(where: { $0.subject == candidate.subject && $0.publicKey == candidate.publicKey })
            }
            guard !candidates.isEmpty || !anchorIssuers.isEmpty else {
                let detail: TrustFailureReason.NoPathDetail =
                    path.count > 1 && tip.isCertificateAuthority
                    ? .issuerNotTrusted(issuer: tip.issuer.description, of: tip.displayName)
                    : .missingIssuer(issuer: tip.issuer.description, of: tip.displayName)
                return (path, detail, problems)
            }
            guard let next = candidates.prefix(8).first(where: signs) else {
                return (path, .badSignature(subject: tip.displayName), problems)
            }
            unhandled(next)
            path.append(next)
        }
        return (path, .missingIssuer(issuer: path[path.count - 1].issuer.description, of: path[path.count - 1].displayName), problems)
    }
}
