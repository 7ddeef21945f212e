import X509

/// A certificate store for the path builder that charges every issuer lookup to a
/// ``WorkBudget`` and stops answering once it is spent, which ends the search.
struct BudgetedCertificateStore: CustomCertificateStore {
    var bySubject: [DistinguishedName: [Certificate]]
    let budget: WorkBudget
    let limit: Int

    init(_ certificates: [Certificate], budget: WorkBudget, limit: Int) {
        self.init(index: Self.index(certificates), budget: budget, limit: limit)
    }

    /// A store over a prebuilt index (built once per validator for its anchors).
    init(index: [DistinguishedName: [Certificate]], budget: WorkBudget, limit: Int) {
        self.bySubject = index
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
            guard let found = bySubject[subject] else { return nil }
            return budget.chargeCandidates(found.count, limit: limit) ? found : nil
        }
    }

    func contains(_ certificate: Certificate) async -> Bool {
        bySubject[certificate.subject]?.contains(certificate) ?? false
    }

    mutating func append(contentsOf certificates: some Sequence<Certificate>) {
        for certificate in certificates where !(bySubject[certificate.subject]?.contains(certificate) ?? false) {
            bySubject[certificate.subject, default: []].append(certificate)
        }
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.budget === rhs.budget && lhs.bySubject == rhs.bySubject }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(budget)) }
}
