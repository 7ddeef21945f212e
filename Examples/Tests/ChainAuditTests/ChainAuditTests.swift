import ChainAudit
import Foundation
import SwiftASN1
import Testing
import Trust
import TrustLabPKI
import X509

/// The audit run against certificates the lab makes at test time.
@Suite struct ChainAuditTests {
    static let pki: LabPKI = {
        do { return try LabPKI.make() } catch { fatalError("cannot make the lab PKI: \(error)") }
    }()
    static let host = "api.\(LabPKI.domain)"
    static let now = Date()

    static func leaf(days: Double) throws -> [Certificate] {
        try pki.intermediate.leaf(dnsNames: [host], notBefore: now - 86_400, notAfter: now + days * 86_400).chain
    }

    @Test("a 60-day leaf under the internal CA passes, with the rule's note and the path's pins")
    func shortLeafPasses() async throws {
        let audit = ChainAudit(anchors: .only([Self.pki.root.certificate]), pins: [Self.pki.intermediate.certificate.spkiPin])
        let report = try await audit.audit(Self.leaf(days: 59), host: Self.host, at: Self.now)
        #expect(report.trusted, "\(report.reasons)")
        #expect(report.validatedPath.count == 3)
        #expect(report.pins.allSatisfy { $0.hasPrefix("pin-sha256=\"") })
        #expect(report.pins.contains(Self.pki.intermediate.certificate.spkiPin.headerForm))
        #expect(report.notes.contains { $0.contains("has 58 days left") || $0.contains("has 59 days left") })
        #expect(report.policy.contains("internal-ca"))
        #expect(report.leaf?.contains(Self.host) == true)
    }

    @Test("a one-year leaf is refused by the organisation's rule, in its words")
    func longLeafRefused() async throws {
        let audit = ChainAudit(anchors: .only([Self.pki.root.certificate]))
        let report = try await audit.audit(Self.leaf(days: 365), host: Self.host, at: Self.now)
        #expect(!report.trusted)
        #expect(report.reasonCodes == ["refused-by-application"])
        #expect(report.reasons.first?.contains("the internal CA issues at most 90") == true)
    }

    @Test("a pin of another key is a pin mismatch; a path through the wrong host is a name mismatch")
    func refusals() async throws {
        let pinned = ChainAudit(anchors: .only([Self.pki.root.certificate]), pins: [Self.pki.otherRoot.certificate.spkiPin])
        #expect(try await pinned.audit(Self.leaf(days: 30), host: Self.host, at: Self.now).reasonCodes == ["pin-mismatch"])
        let audit = ChainAudit(anchors: .only([Self.pki.root.certificate]))
        #expect(try await audit.audit(Self.leaf(days: 30), host: "other.\(LabPKI.domain)", at: Self.now).reasonCodes == ["name-mismatch"])
    }

    @Test("the policy is described line by line")
    func describesPolicy() {
        let lines = ChainAudit.describe(ChainAudit.internalPolicy(pins: [Self.pki.intermediate.certificate.spkiPin]))
        #expect(lines.contains("minimum keys: RSA 3072, EC 256 bits"))
        #expect(lines.contains("serverAuth required in the leaf: true"))
        #expect(lines.contains("pins: \(Self.pki.intermediate.certificate.spkiPin.base64)"))
        #expect(lines.contains("SHA-1 signatures: refused"))
    }

    @Test("inputs: PEM and DER read, an empty file and a folder of anchors")
    func inputs() throws {
        let chain = try Self.leaf(days: 30)
        let pem = try chain.map { try $0.serializeAsPEM().pemString }.joined(separator: "\n")
        #expect(try ChainAudit.chain(pem: pem, file: "chain.pem").get() == chain)
        let empty = ChainAudit.chain(pem: "", file: "empty.pem")
        guard case .failure(let error) = empty else {
            Issue.record("an empty file was read")
            return
        }
        #expect(error.isEmpty && error.source == "empty.pem")
        let der = try chain[0].serializeAsPEM().derBytes
        #expect(try ChainAudit.certificates(bytes: der, source: "leaf.der").get() == [chain[0]])

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chain-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(Self.pki.root.certificate.serializeAsPEM().pemString.utf8).write(to: folder.appendingPathComponent("root.pem"))
        let anchors = try ChainAudit.anchors(inDirectory: folder.path)
        #expect(anchors.certificates == [Self.pki.root.certificate] && !anchors.includesSystemRoots)
    }

    @Test("a backup pin from a spare key's SubjectPublicKeyInfo equals the pin of a certificate later issued for it")
    func backupPin() throws {
        let certificate = Self.pki.intermediate.certificate
        var serializer = DER.Serializer()
        try serializer.serialize(certificate.publicKey)
        let pin = ChainAudit.backupPin(subjectPublicKeyInfoDER: serializer.serializedBytes)
        #expect(pin.pin == certificate.spkiPin.description)
        #expect(pin.digestBytes == 32)
    }

    @Test("the iOS app's AFSecurityPolicy: pinned keys accept the chain, the default policy without the lab root does not")
    func appPolicy() async throws {
        let chain = try Self.leaf(days: 30)
        let app = AppPolicyCheck.pinningKeys(of: [Self.pki.intermediate.certificate], anchors: .only([Self.pki.root.certificate]))
        #expect(app.summary.hasPrefix("AFSSLPinningMode publicKey: 1 certificates, 1 keys; allowInvalidCertificates=false validatesDomainName=true"))
        #expect(await app.accepts(chain, host: Self.host, at: Self.now).accepted)
        let refused = await AppPolicyCheck.appDefault.accepts(chain, host: Self.host, at: Self.now)
        #expect(!refused.accepted && refused.reasonCodes.contains("no-path-to-trusted-anchor"))
    }
}
