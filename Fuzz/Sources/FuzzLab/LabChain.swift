import Foundation
import X509

@testable import Trust

/// The lab PKI run.sh wrote: the anchors named by `TRUST_FUZZ_ANCHORS` (its `roots.pem`) and, beside them, the `good`
/// chain (leaf, then the intermediate that issued it) that the revocation targets check against; both empty when
/// the variable is not set.
public let labGoodChain: (anchors: [Certificate], chain: [Certificate]) = {
    guard let path = ProcessInfo.processInfo.environment["TRUST_FUZZ_ANCHORS"] else { return ([], []) }
    let folder = (path as NSString).deletingLastPathComponent
    do {
        return (try CertificateSource.certificates(atPath: path), try CertificateSource.certificates(atPath: folder + "/good/chain.pem"))
    } catch {
        fatalError("TRUST_FUZZ_ANCHORS: \(error)")
    }
}()
