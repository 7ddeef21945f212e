import Foundation
import Trust
import TrustLabPKI
import X509

/// One lab PKI per test process (key generation is the slow part).
package enum Lab {
    package static let pki: LabPKI = {
        do { return try LabPKI.make() } catch { fatalError("cannot make the lab PKI: \(error)") }
    }()

    package static var anchors: TrustAnchors { .only(pki.trustedRoots) }

    package static func chain(_ server: String) -> [Certificate] { pki.presentedChains[server] ?? [] }

    package static func trust(_ server: String, host: String? = nil, at time: Date = Date()) -> ServerTrust {
        let name = host ?? LabPKI.hostName(for: server)
        do {
            return try ServerTrust(presentedChain: chain(server), host: name, evaluationTime: time)
        } catch {
            fatalError("bad host \(name)")
        }
    }

    package static func evaluate(_ server: String, host: String? = nil, policy: ValidationPolicy = .webPKI, anchors: TrustAnchors = Lab.anchors) async
        -> TrustDecision
    {
        await PathValidator(anchors: anchors, policy: policy).evaluate(trust(server, host: host))
    }
}

extension TrustDecision {
    package var codes: [String] { reasons.map(\.code) }
}

extension Lab {
    /// A lab client certificate (clientAuth) issued by the lab intermediate, written as PEM files.
    package static let clientIdentityFiles: (dir: String, cert: String, key: String, chain: String) = {
        let dir: String
        do { dir = try TestScratch.folder("identity") } catch { fatalError("cannot make the client identity folder: \(error)") }
        let identity = try! Lab.pki.intermediate.leaf(commonName: "lab client", extendedKeyUsage: [.clientAuth])
        try? identity.certificatePEM.write(toFile: dir + "/cert.pem", atomically: true, encoding: .utf8)
        try? identity.privateKeyPEM.write(toFile: dir + "/key.pem", atomically: true, encoding: .utf8)
        try? Lab.pki.intermediate.certificate.pemString.write(toFile: dir + "/intermediate.pem", atomically: true, encoding: .utf8)
        return (dir, dir + "/cert.pem", dir + "/key.pem", dir + "/intermediate.pem")
    }()
}
