import Foundation
import Trust
import TrustHTTP

/// Limits for tests that assert what an in-process responder or CRL server *answered*: far past what a loaded
/// machine adds to a loopback exchange. The fetchers' own defaults (OCSP 5 s, CRL 10 s, a 4 s fetch budget, a
/// 10 s handshake) suit public CAs; on a 2-core machine running a build beside the suite, a loopback answer has
/// taken longer, and the test then saw `revocation-status-unknown` or a timeout instead of the answer it checks.
/// Tests of the limits themselves (a stalled responder cut short, the budget) set their own.
package enum PatientFetchers {
    /// Each fetch's timeout.
    package static let timeout: Duration = .seconds(30)
    /// The wait for fetches in one evaluation: past two fetches' timeouts (OCSP, then the CRL fallback).
    package static let fetchBudget: Duration = .seconds(70)
    /// The handshake a fetching evaluation runs in: past the fetch budget.
    package static let connectTimeout: Duration = .seconds(80)

    package static func ocsp(options: OCSPFetcher.Options = OCSPFetcher.Options()) throws -> OCSPFetcher {
        try OCSPFetcher(limits: OCSPFetcher.Limits(timeout: timeout), options: options)
    }

    package static func crl(maximumSize: Int = CRLFetcher.Limits().maximumSize) throws -> CRLFetcher {
        try CRLFetcher(limits: CRLFetcher.Limits(maximumSize: maximumSize, timeout: timeout))
    }

    /// A session whose handshakes may wait for a patient fetcher (see ``connectTimeout``).
    package static func session(_ trust: any TrustEvaluator) throws -> TrustHTTPClient {
        try labSession(trust) {
            $0.connectTimeout = connectTimeout
            $0.requestTimeout = connectTimeout + .seconds(10)
        }
    }
}
