import Foundation
import Testing
import Trust
import TrustLabPKI
import X509

/// Certificates made at test time whose subject, issuer and subjectAltNames carry terminal controls (ESC
/// sequences, BEL, BS, CR/LF, NUL, DEL), a C1 control (CSI, U+009B) and U+202E (RIGHT-TO-LEFT OVERRIDE),
/// with checks that an output shows them escaped (``DisplayText``) and never raw.
package enum HostileNames {
    /// In a UTF8String common name: everything. ESC is never right after a character RFC 4514 escapes
    /// (swift-certificates puts a backslash before `;`, `,`…), so a doubled escape would show as `\\x1b`.
    package static let commonName = "evil\u{1B}[2J\u{1B}]0;owned\u{07}host\u{08}\u{08}\r\nforged: line\u{0}\u{7F}\u{9B}31m\u{202E}gpj.exe"
    package static let rootCommonName = "Root\u{1B}[31m\u{07}\r\n\u{0}\u{7F}\u{9B}\u{202E}CA"
    /// A dNSName is an IA5String: ASCII controls only.
    package static let dnsName = "x\u{1B}[31m\u{07}\r\n\u{0}\u{7F}.lab.test"

    /// The hostile root; a leaf for `good.lab.test` and ``dnsName``; the same expired two days ago; their
    /// PEM files in ``directory`` (`root.pem`, `chain.pem`, `expired.pem`).
    package struct PKI: Sendable {
        package let directory: String
        package let root: LabAuthority
        package let leaf: LabIdentity
        package let expiredLeaf: LabIdentity
    }

    /// Made once per test process.
    package static let pki: PKI = {
        do {
            let now = Date()
            let day: TimeInterval = 86_400
            let root = try LabAuthority.root(commonName: rootCommonName)
            let leaf = try root.leaf(commonName: commonName, dnsNames: ["good.lab.test", dnsName])
            let expired = try root.leaf(commonName: commonName, dnsNames: ["good.lab.test", dnsName], notBefore: now - 30 * day, notAfter: now - 2 * day)
            let directory = NSTemporaryDirectory() + "swift-trust-hostile-names-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(root.identity.certificatePEM.utf8).write(to: URL(fileURLWithPath: directory + "/root.pem"))
            try Data(leaf.certificatePEM.utf8).write(to: URL(fileURLWithPath: directory + "/chain.pem"))
            try Data(expired.certificatePEM.utf8).write(to: URL(fileURLWithPath: directory + "/expired.pem"))
            return PKI(directory: directory, root: root, leaf: leaf, expiredLeaf: expired)
        } catch {
            fatalError("cannot make the hostile-names PKI: \(error)")
        }
    }()

    /// No line of `output` holds a raw control, C1 or bidirectional formatting character.
    package static func expectNoRawControl(_ output: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for line in output.split(separator: "\n", omittingEmptySubsequences: false) {
            #expect(!DisplayText.containsUnsafeCharacter(line), "\(what): raw control in \(line.debugDescription)", sourceLocation: sourceLocation)
        }
    }

    /// ``expectNoRawControl(_:_:sourceLocation:)``, and the hostile names were shown, escaped once.
    package static func expectEscaped(_ output: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectNoRawControl(output, what, sourceLocation: sourceLocation)
        #expect(output.contains("\\x1b[31m") || output.contains("\\x1b[2J"), "\(what): the hostile name is not shown escaped:\n\(output)", sourceLocation: sourceLocation)
        #expect(!output.contains("\\\\x1b"), "\(what): escaped twice:\n\(output)", sourceLocation: sourceLocation)
    }
}
