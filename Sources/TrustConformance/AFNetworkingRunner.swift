import Foundation
import Trust
import X509

/// Runs one AFNetworking `AFSecurityPolicyTests` assertion through ``SecurityPolicy``.
enum AFNetworkingRunner {
    static func run(_ testCase: AFNetworkingSuite.Case, suite: AFNetworkingSuite) async -> CaseOutcome {
        func certificate(_ name: String) throws -> Certificate {
            guard let b64 = suite.certificates_der_b64[name], let der = Data(base64Encoded: b64) else { throw MissingValue() }
            return try Certificate(derEncoded: Array(der))
        }
        do {
            let mode: PinningMode
            switch testCase.policy.pinning_mode {
            case "none": mode = .none
            case "publicKey": mode = .publicKey
            case "certificate": mode = .certificate
            default: throw MissingValue()
            }
            let policy = SecurityPolicy(
                pinningMode: mode,
                pinnedCertificates: try testCase.policy.pinned.map(certificate),
                allowInvalidCertificates: testCase.policy.allow_invalid_certificates,
                validatesDomainName: testCase.policy.validates_domain_name)
            let chain = try testCase.server_chain.map(certificate)
            guard let time = RFC3339.parse(suite.validation_time) else { throw MissingValue() }
            let decision = await policy.evaluate(chain, forDomain: testCase.domain, at: time)
            return CaseOutcome(expectedSuccess: testCase.expected, trusted: decision.isTrusted, reasons: decision.reasons.map(\.description))
        } catch {
            return CaseOutcome(expectedSuccess: testCase.expected, trusted: false, reasons: ["setup failed: \(error)"])
        }
    }
}
