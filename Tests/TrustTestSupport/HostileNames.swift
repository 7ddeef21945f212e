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
    /// PEM files in ``directory`` (`root.pem`, `chain.pem`, `expired.pem`), in the test process's scratch folder
    /// (``TestScratch``).
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
            // One folder per test process, shared by every test that reads these files; removed when it exits.
            let directory = try TestScratch.folder("hostile-names")
            try Data(root.identity.certificatePEM.utf8).write(to: URL(fileURLWithPath: directory + "/root.pem"))
            try Data(leaf.certificatePEM.utf8).write(to: URL(fileURLWithPath: directory + "/chain.pem"))
            try Data(expired.certificatePEM.utf8).write(to: URL(fileURLWithPath: directory + "/expired.pem"))
            return PKI(directory: directory, root: root, leaf: leaf, expiredLeaf: expired)
        } catch {
            fatalError("cannot make the hostile-names PKI: \(error)")
        }
    }()

    /// No line of `output` holds a raw control, C1 or bidirectional formatting character, and no raw LF of a hostile
    /// name started a line of its own (the line ``commonName`` would forge): a line is what ends at a raw LF scalar,
    /// so a CR before it stays in the line and is seen. With `lines`, `output` has exactly that many lines (1 for a
    /// single-line rendering: no raw LF at all).
    package static func expectNoRawControl(_ output: String, _ what: String, lines: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        let split = output.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { String(String.UnicodeScalarView($0)) }
        for line in split {
            #expect(!DisplayText.containsUnsafeCharacter(line), "\(what): raw control in \(line.debugDescription)", sourceLocation: sourceLocation)
            #expect(
                !line.hasPrefix(forgedLine), "\(what): a raw LF of a hostile name started the line \(line.debugDescription)", sourceLocation: sourceLocation)
        }
        if let lines {
            #expect(split.count == lines, "\(what): \(split.count) lines, not \(lines) (a raw LF?):\n\(output)", sourceLocation: sourceLocation)
        }
    }

    /// What follows the CR LF in ``commonName``: a line starting with it was forged by the name.
    static let forgedLine = "forged: line"

    /// ``expectNoRawControl(_:_:sourceLocation:)``, and the hostile names were shown, escaped once.
    package static func expectEscaped(_ output: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectNoRawControl(output, what, sourceLocation: sourceLocation)
        #expect(
            output.contains("\\x1b[31m") || output.contains("\\x1b[2J"), "\(what): the hostile name is not shown escaped:\n\(output)",
            sourceLocation: sourceLocation)
        #expect(!output.contains("\\\\x1b"), "\(what): escaped twice:\n\(output)", sourceLocation: sourceLocation)
    }
}
