import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a pin set fares against a validated path — which pin matches which certificate, and what will break it at
/// the next renewal — and the pin set that would survive renewal.
///
/// Pins are judged on the validated path (leaf first, anchor last), never on other certificates a server sends.
/// What survives: a CA's key (the issuing CA's, with the root's as the backup for when the CA issues from another of
/// its intermediates, as Let's Encrypt does at random), or the server's own key with a backup key held offline. The
/// leaf's key is the one that changes: since CA/Browser Forum ballot SC-081v3 TLS certificates last at most 200 days
/// (from 2026-03-15), 100 days (from 2027-03-15) and 47 days (from 2029-03-15), and a renewal may bring a new key.
package struct PinPlan: Sendable {
    /// A certificate's place on the path.
    package enum Role: String, Sendable {
        case leaf
        case intermediate
        case root
    }

    /// One certificate of the path, with its key's pin.
    package struct Step: Sendable {
        package let index: Int
        package let role: Role
        package let certificate: Certificate
        package var pin: SPKIPin { certificate.spkiPin }
    }

    /// A pin of the set with the certificate of the path whose key it is (`nil`: none, a backup key).
    package struct Match: Sendable {
        package let pin: SPKIPin
        package let step: Step?
    }

    /// A recommended pin and why.
    package struct Recommendation: Sendable {
        package let pin: SPKIPin?
        package let step: Step?
        package let why: String
    }

    /// Something that will break the pin set, with a stable code (`--json`).
    package struct Warning: Sendable, Hashable {
        /// `single-pin`, `leaf-only-pin`, `no-ca-backup` or `pin-outlives-certificate`.
        package let code: String
        package let message: String
    }

    package let path: [Step]

    package init(path: [Certificate]) {
        self.path = path.enumerated().map { index, certificate in
            Step(index: index, role: index == 0 ? .leaf : index == path.count - 1 ? .root : .intermediate, certificate: certificate)
        }
    }

    /// Each pin of `pins` with the certificate it matches.
    package func matches(_ pins: [SPKIPin]) -> [Match] {
        pins.map { pin in Match(pin: pin, step: path.first { $0.pin == pin }) }
    }

    /// What will break `pins` (enforced until `expires`, `nil`: never) on this path.
    package func warnings(_ pins: [SPKIPin], expires: Date?) -> [Warning] {
        var warnings: [Warning] = []
        let matched = matches(pins).compactMap(\.step)
        if Set(pins).count < 2 {
            warnings.append(
                Warning(
                    code: "single-pin",
                    message: "the pin set has no backup pin: when the pinned key changes, every client refuses the server until it is updated"))
        }
        if !matched.isEmpty, matched.allSatisfy({ $0.role == .leaf }), path.count > 1 {
            warnings.append(
                Warning(
                    code: "leaf-only-pin",
                    message: DisplayText(
                        "only the leaf's key (\(path[0].certificate.subject.description)) matches: a renewal with a new key breaks the pin set; pin a CA's key"
                    ).description))
        }
        if path.count >= 3, let root = path.last, !pins.contains(root.pin) {
            warnings.append(
                Warning(
                    code: "no-ca-backup",
                    message: DisplayText(
                        "the issuing CA (\(path[1].certificate.subject.description)) is not the root, and the root's key (\(root.pin), \(root.certificate.subject.description)) is not pinned as a backup: a CA that issues from another intermediate breaks the pin set"
                    ).description))
        }
        for step in matched {
            let end = step.certificate.notValidAfter
            if expires.map({ $0 > end }) ?? true {
                let until = expires.map { "until \(RFC3339.string($0))" } ?? "without an expiry"
                warnings.append(
                    Warning(
                        code: "pin-outlives-certificate",
                        message: DisplayText(
                            "the pin \(step.pin) is enforced \(until), after the certificate it matches (\(step.certificate.subject.description)) ends at \(RFC3339.string(end)): set the pins' expiry no later, or add the next certificate's key first"
                        ).description))
            }
        }
        return warnings
    }

    /// The pin set that survives renewal on this path, and the latest expiry it should carry.
    package var recommendation: (pins: [Recommendation], expiresNoLaterThan: Date) {
        var pins: [Recommendation] = []
        if path.count >= 3, let root = path.last {
            pins.append(Recommendation(pin: path[1].pin, step: path[1], why: "the issuing CA's key: kept when the leaf is renewed"))
            pins.append(
                Recommendation(pin: root.pin, step: root, why: "the root's key, the backup: kept when the CA issues from another of its intermediates"))
        } else if path.count == 2 {
            pins.append(Recommendation(pin: path[1].pin, step: path[1], why: "the root's key, which issued the leaf: kept when the leaf is renewed"))
            pins.append(Recommendation(pin: nil, step: nil, why: "a backup: the key of a second CA, or a key of your own held offline (`trust pin KEY.pem`)"))
        } else if let only = path.first {
            pins.append(Recommendation(pin: only.pin, step: only, why: "the server's own key: renew its certificate with the same key"))
            pins.append(Recommendation(pin: nil, step: nil, why: "a backup key of your own held offline (`trust pin KEY.pem`), for when that key must change"))
        }
        let ends = pins.compactMap { $0.step?.certificate.notValidAfter }
        return (pins, ends.min() ?? Date())
    }
}
