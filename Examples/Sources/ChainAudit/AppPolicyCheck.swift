// The same chain as the organisation's iOS app judges it: the app pins with AFNetworking's `AFSecurityPolicy`, and
// `SecurityPolicy` decides with its semantics, so the audit can fail a rollout that the app would refuse.
import Foundation
import Trust
import X509

/// What the app would decide about a chain.
public struct AppPolicyCheck: Sendable {
    /// The app's policy.
    public let policy: SecurityPolicy

    public init(policy: SecurityPolicy) {
        self.policy = policy
    }

    /// The app pins the public keys of `certificates` (`AFSSLPinningModePublicKey`), with `anchors` as its roots.
    public static func pinningKeys(of certificates: [Certificate], anchors: TrustAnchors) -> AppPolicyCheck {
        AppPolicyCheck(policy: SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: certificates, systemAnchors: anchors))
    }

    /// The app pins the certificates it ships in `directory` (its bundle's `.cer`/`.pem` files, as AFNetworking's
    /// `+certificatesInBundle:` reads them), over the system roots.
    public static func pinningCertificates(in directory: String) throws -> AppPolicyCheck {
        AppPolicyCheck(policy: SecurityPolicy(pinningMode: .certificate, pinnedCertificates: try SecurityPolicy.certificates(inDirectory: directory)))
    }

    /// One line for the job's log: the app's mode and flags, as AFNetworking names them.
    public var summary: String {
        let anchors = policy.systemAnchors.includesSystemRoots ? "system roots" : "\(policy.systemAnchors.certificates.count) anchors"
        return "AFSSLPinningMode \(policy.pinningMode.rawValue): \(policy.pinnedCertificates.count) certificates, "
            + "\(policy.pinnedPublicKeys.count) keys; allowInvalidCertificates=\(policy.allowInvalidCertificates) "
            + "validatesDomainName=\(policy.validatesDomainName); \(anchors); \(policy.validationPolicy.purpose)"
    }

    /// Whether the app accepts `chain` (leaf first) for `host` at `time`, and why not.
    public func accepts(_ chain: [Certificate], host: String, at time: Date = Date()) async -> (accepted: Bool, reasonCodes: [String]) {
        let decision = await policy.evaluate(chain, forDomain: host, at: time)
        return (decision.isTrusted, decision.reasons.map(\.code))
    }

    /// AFNetworking's default policy (no pinning, names validated), for comparison.
    public static var appDefault: AppPolicyCheck { AppPolicyCheck(policy: .default) }
}
