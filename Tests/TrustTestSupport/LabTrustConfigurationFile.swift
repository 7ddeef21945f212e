import Foundation
import Trust
import TrustLabPKI

/// A trust configuration file on disk that a test rewrites (for `ReloadingTrustConfiguration`): the lab root as
/// the only anchor and, for `good.lab.test`, pins A (the intermediate + a backup), B (the leaf + another
/// backup) and C (two keys the lab server never presents).
package struct LabTrustConfigurationFile {
    package static let psl = PublicSuffixList(contents: "test\ncom\n")
    package static let intermediate = Lab.pki.intermediate.certificate.spkiPin
    package static let leaf = Lab.chain("good")[0].spkiPin
    package static let backups = (1...3).map { SPKIPin(subjectPublicKeyInfoDER: [UInt8($0)]) }
    package static let pinsA = [intermediate, backups[0]]
    package static let pinsB = [leaf, backups[1]]
    package static let pinsC = [backups[0], backups[2]]

    package let directory: String
    package var path: String { directory + "/trust.json" }

    package init() throws {
        directory = try TestScratch.folder("reloading")
    }

    package static func text(_ pins: [SPKIPin], extra: String = "") -> String {
        let rootPEM = String(reflecting: Lab.pki.root.certificate.pemString)
        return """
            {"version": 1, "base": {"anchors": {"pem": [\(rootPEM)], "replaceSystem": true}},
             "hosts": [{"host": "good.lab.test", "anchors": {"pem": [\(rootPEM)], "replaceSystem": true}, "pins": {"sha256": [\(pins.map { "\"\($0)\"" }.joined(separator: ", "))]\(extra)}}]}
            """
    }

    /// Writes the file in place, as an editor without atomic saves does (a poll may then read it half written);
    /// `atomically`, through a new file renamed over it, so that no reader sees it half written.
    package func write(_ text: String, modified: Date? = nil, atomically: Bool = false) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: atomically ? .atomic : [])
        var attributes: [FileAttributeKey: Any] = [.posixPermissions: 0o600]
        if let modified { attributes[.modificationDate] = modified }
        try FileManager.default.setAttributes(attributes, ofItemAtPath: path)
    }

    package func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
