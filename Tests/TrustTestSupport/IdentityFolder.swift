import Foundation
import TrustLabPKI

/// A temporary folder of a test's own (in ``TestScratch``) for identity files that are replaced while a test runs,
/// removed when the last reference goes.
package final class IdentityFolder: Sendable {
    /// The folder.
    package let path: String

    package init() throws {
        path = try TestScratch.folder("rotation")
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of `name` in the folder.
    package subscript(_ name: String) -> String { path + "/" + name }

    /// The chain file written by ``writePEM(_:inPlace:)``.
    package var chain: String { self["chain.pem"] }
    /// The key file written by ``writePEM(_:inPlace:)``.
    package var key: String { self["key.pem"] }

    /// Writes `identity` as PEM: its chain (leaf first) to ``chain``, its key to ``key`` — each by a rename
    /// (atomically), unless `inPlace`.
    package func writePEM(_ identity: LabIdentity, inPlace: Bool = false) throws {
        try identity.chainPEM.write(toFile: chain, atomically: !inPlace, encoding: .utf8)
        try identity.privateKeyPEM.write(toFile: key, atomically: !inPlace, encoding: .utf8)
    }
}

extension Lab {
    /// A new client identity (EKU clientAuth) under the lab intermediate, named `name`, valid from `notBefore`
    /// to `notAfter` (yesterday to tomorrow by default).
    package static func rotatingClient(
        _ name: String, notBefore: Date = Date(timeIntervalSinceNow: -86_400), notAfter: Date = Date(timeIntervalSinceNow: 86_400)
    ) throws -> LabIdentity {
        try pki.intermediate.leaf(commonName: name, notBefore: notBefore, notAfter: notAfter, extendedKeyUsage: [.clientAuth])
    }
}
