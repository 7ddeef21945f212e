import X509

/// A certificate store for the path builder that charges every issuer lookup to a
/// ``WorkBudget`` and stops answering once it is spent, which ends the search.
struct BudgetedCertificateStore: CustomCertificateStore {
    var bySubject: [DistinguishedName: [Certificate]]
    /// A validator's anchors, consulted after `bySubject` (see ``AnchorIndex``).
    var anchors: AnchorIndex?
    let budget: WorkBudget
    let limit: Int

    init(_ certificates: [Certificate], budget: WorkBudget, limit: Int) {
        self.init(index: Self.index(certificates), budget: budget, limit: limit)
    }

    /// A store over a validator's anchors (indexed once per validator).
    init(anchors: AnchorIndex, budget: WorkBudget, limit: Int) {
        self.bySubject = [:]
        self.anchors = anchors
        self.budget = budget
        self.limit = limit
    }

    private init(index: [DistinguishedName: [Certificate]], budget: WorkBudget, limit: Int) {
        self.bySubject = index
        self.anchors = nil
        self.budget = budget
        self.limit = limit
    }

    /// Certificates grouped by subject, without duplicates.
    static func index(_ certificates: [Certificate]) -> [DistinguishedName: [Certificate]] {
        var bySubject: [DistinguishedName: [Certificate]] = [:]
        for certificate in certificates where !(bySubject[certificate.subject]?.contains(certificate) ?? false) {
            bySubject[certificate.subject, default: []].append(certificate)
        }
        return bySubject
    }

    subscript(subject: DistinguishedName) -> [Certificate]? {
        get async {
            var found = bySubject[subject] ?? []
            if let fromAnchors = anchors?[subject] {
                found += fromAnchors.filter { !found.contains($0) }
            }
            guard !found.isEmpty else { return nil }
            return budget.chargeCandidates(found.count, limit: limit) ? found : nil
        }
    }

    func contains(_ certificate: Certificate) async -> Bool {
        (bySubject[certificate.subject]?.contains(certificate) ?? false) || (anchors?.contains(certificate) ?? false)
    }

    mutating func append(contentsOf certificates: some Sequence<Certificate>) {
        for certificate in certificates where !(bySubject[certificate.subject]?.contains(certificate) ?? false) {
            bySubject[certificate.subject, default: []].append(certificate)
        }
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.budget === rhs.budget && lhs.bySubject == rhs.bySubject && (lhs.anchors == nil) == (rhs.anchors == nil)
    }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(budget)) }
}
