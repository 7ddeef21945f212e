import Foundation
import Trust
import X509

/// Runs one x509-limbo case through ``PathValidator`` with the default (Web-PKI) policy.
enum LimboRunner {
    static func run(_ testCase: LimboCase) async -> CaseOutcome {
        let expectSuccess = testCase.expected_result == "SUCCESS"
        // CRL cases: the CRLs given decide, strictly — revocation is hard and covers the whole chain (a missing or
        // unusable CRL refuses, as OpenSSL's X509_V_FLAG_CRL_CHECK_ALL does), with no short-lived exemption.
        var revocation = RevocationPolicy.off
        if testCase.features?.contains("has-crl") == true {
            var crls: [CertificateRevocationList] = []
            for pem in testCase.crls ?? [] {
                do {
                    crls += try CertificateRevocationList.parseAll(Array(pem.utf8))
                } catch {
                    return CaseOutcome(expectedSuccess: expectSuccess, trusted: false, reasons: ["unparseable CRL: \(error)"])
                }
            }
            revocation = RevocationPolicy(mode: .hard, depth: .chain, shortLivedExemption: nil, crls: crls)
        }
        let leaf: Certificate
        var trusted: [Certificate] = []
        var intermediates: [Certificate] = []
        do {
            leaf = try CertificateSource.certificates(pem: testCase.peer_certificate)[0]
        } catch {
            return CaseOutcome(expectedSuccess: expectSuccess, trusted: false, reasons: ["unparseable leaf: \(error)"])
        }
        // Like a TLS client, drop extra certificates it cannot parse (they can only be distractors).
        for pem in testCase.trusted_certs { trusted += (try? CertificateSource.certificates(pem: pem)) ?? [] }
        for pem in testCase.untrusted_intermediates { intermediates += (try? CertificateSource.certificates(pem: pem)) ?? [] }
        var policy = ValidationPolicy.webPKI
        policy.revocation = revocation
        let peerName: PeerName?
        do {
            peerName = try Self.peerName(of: testCase)
        } catch {
            return CaseOutcome(expectedSuccess: expectSuccess, trusted: false, reasons: ["bad peer name: \(error)"])
        }
        if peerName == nil { policy.checksPeerName = false }
        if let depth = testCase.max_chain_depth { policy.maximumIntermediates = depth }
        if let ekus = testCase.extended_key_usage, ekus.contains("clientAuth"), !ekus.contains("serverAuth") {
            policy.purpose = .tlsClient
        }
        var time = Date()
        if let text = testCase.validation_time {
            guard let parsed = RFC3339.parse(text) else {
                return CaseOutcome(expectedSuccess: expectSuccess, trusted: false, reasons: ["bad validation_time \(text)"])
            }
            time = parsed
        }
        let trust = ServerTrust(presentedChain: [leaf] + intermediates, peerName: peerName, evaluationTime: time)
        let decision = await PathValidator(anchors: .only(trusted), policy: policy).evaluate(trust)
        return CaseOutcome(expectedSuccess: expectSuccess, trusted: decision.isTrusted, reasons: decision.reasons.map(\.description))
    }
}

extension LimboRunner {
    /// The case's expected peer name (DNS name or IP address), or `nil` when none is to be checked.
    static func peerName(of testCase: LimboCase) throws -> PeerName? {
        guard let expected = testCase.expected_peer_name else { return nil }
        return expected.kind == "IP" ? .ipAddress(try IPAddress(expected.value).orThrow()) : try PeerName(dnsName: expected.value)
    }
}

struct MissingValue: Error {}

extension Optional {
    func orThrow() throws -> Wrapped {
        guard let self else { throw MissingValue() }
        return self
    }
}
