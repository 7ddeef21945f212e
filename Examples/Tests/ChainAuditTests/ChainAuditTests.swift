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
        #expect(error.isEmpty && error.problem == .empty && error.source == "empty.pem")
        // A block cut short, and a block that is Base64 but no certificate, are told apart.
        guard case .failure(let cut) = ChainAudit.chain(pem: String(pem.prefix(200)), file: "cut.pem"),
            case .failure(let notACertificate) = ChainAudit.chain(
                pem: "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n", file: "odd.pem")
        else {
            Issue.record("a damaged or odd block was read")
            return
        }
        #expect(cut.problem == .damagedPEM && notACertificate.problem == .notACertificate, "\(cut) / \(notACertificate)")
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

/// Settings as code, written as the file services load, loaded and applied to lab chains.
@Suite struct TrustPolicyAsCodeTests {
    static let pki = ChainAuditTests.pki

    @Test("CT and CRLs from the settings decide; the review names what a reviewer must see")
    func policy() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("policy-as-code-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let logged = try Self.pki.intermediate.leaf(dnsNames: ["ct.lab.test"], scts: [.good(Self.pki.ctLogs[0]), .good(Self.pki.ctLogs[2])])
        let unlogged = try Self.pki.intermediate.leaf(dnsNames: ["ct.lab.test"], scts: [])
        let revoked = try Self.pki.intermediate.leaf(dnsNames: ["ct.lab.test"], scts: [.good(Self.pki.ctLogs[0]), .good(Self.pki.ctLogs[2])])
        let bad = try Self.pki.intermediate.leaf(dnsNames: ["ct.lab.test"], scts: [.badSignature(Self.pki.ctLogs[0]), .futureTimestamp(Self.pki.ctLogs[2])])
        try Data(Self.pki.ctLogListJSON.utf8).write(to: folder.appendingPathComponent("log_list.json"))
        let intermediateCRL = try LabCRL(issuer: Self.pki.intermediate, revoked: [LabCRL.Revoked(revoked.certificate, reason: .keyCompromise)])
        try Data(intermediateCRL.pem.utf8).write(to: folder.appendingPathComponent("intermediate.crl"))
        try Data(LabCRL(issuer: Self.pki.root).pem.utf8).write(to: folder.appendingPathComponent("root.crl"))

        let settings = ServiceTrustSettings(
            hosts: [try HostPattern("ct.lab.test"), try HostPattern("**.example.org")], pins: [], crls: ["intermediate.crl", "root.crl"],
            ctLogList: "log_list.json", anchorsPEM: [try Self.pki.root.certificate.serializeAsPEM().pemString],
            debugProxyCA: try Self.pki.otherRoot.certificate.serializeAsPEM().pemString)
        // The settings survive the repository's JSON (HostPattern is Codable as its text).
        let stored = try JSONEncoder().encode(settings)
        #expect(try JSONDecoder().decode(ServiceTrustSettings.self, from: stored) == settings)
        #expect(String(decoding: stored, as: UTF8.self).contains(#""**.example.org""#))

        let configuration = try TrustPolicyAsCode.configuration(settings)
        let file = folder.appendingPathComponent("trust.json")
        try Data(TrustPolicyAsCode.file(configuration).utf8).write(to: file)
        let evaluator = try ConfiguredTrustEvaluator(contentsOf: file.path)
        func codes(_ leaf: LabIdentity) async throws -> [String] {
            await evaluator.evaluate(try ServerTrust(presentedChain: leaf.chain, host: "ct.lab.test")).reasons.map(\.code)
        }
        #expect(try await codes(logged) == [])
        #expect(try await codes(unlogged) == ["ct-policy-not-met"])
        #expect(try await codes(bad) == ["ct-policy-not-met"])
        #expect(try await codes(revoked).contains("revoked"))

        let review = TrustPolicyAsCode.review(configuration, samples: ["ct.lab.test", "a.b.example.org", "example.com"], at: Date())
        #expect(review.contains("ct.lab.test: CT enforce (custom anchors too)"))
        #expect(review.contains("ct.lab.test: revocation hard (chain) from intermediate.crl, root.crl, short-lived exempt"))
        #expect(review.contains("ct.lab.test: debug builds also trust 1 proxy CA(s), over the pins"))
        #expect(review.contains("a.b.example.org -> **.example.org") && review.contains("example.com -> base entry"))
        #expect(review.contains("CT log list: log_list.json"))

        let policy = CertificateTransparencyPolicy(mode: .enforce, logList: try CTLogList(json: Self.pki.ctLogListJSON), appliesToCustomAnchors: true)
        #expect(TrustPolicyAsCode.describe(policy) == "CT enforce: a log list dated, used up to 70 days old, 2 operators")
    }

    @Test("a reviewer is told about pins that expire soon and a missing backup")
    func pinReview() throws {
        let pin = Self.pki.intermediate.certificate.spkiPin.description
        let settings = ServiceTrustSettings(
            hosts: [try HostPattern("api.example.com")], pins: [pin], pinsExpire: Date() + 10 * 86_400, anchorsPEM: [])
        let review = TrustPolicyAsCode.review(try TrustPolicyAsCode.configuration(settings), samples: [], at: Date())
        #expect(review == ["api.example.com: pins expire within 30 days", "api.example.com: no backup pin"])
    }
}

@Suite struct ChainAuditDetailsTests {
    static let pki = ChainAuditTests.pki

    @Test("report-only lifetimes are let through and noted; an IP host is refused; basic X.509 described; bundle pins")
    func details() async throws {
        let long = try Self.pki.intermediate.leaf(dnsNames: [ChainAuditTests.host], notAfter: Date() + 365 * 86_400)
        let lenient = ChainAudit(anchors: .only([Self.pki.root.certificate]), rule: ShortLivedLeafRule(reportsOnly: true))
        let report = try await lenient.audit(long.chain, host: ChainAuditTests.host)
        #expect(report.trusted && !report.overridden)
        #expect(report.notes.contains { $0.hasPrefix("report-only: ") && $0.contains("at most 90") })
        await #expect(throws: PeerNameError.self) { try await lenient.audit(long.chain, host: "127.0.0.1") }
        #expect(ChainAudit.describe(.basicX509).contains("peer name checked: false") || ChainAudit.describe(.basicX509).contains("purpose: basicX509"))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("app-bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(Self.pki.intermediate.certificate.serializeAsPEM().pemString.utf8).write(to: folder.appendingPathComponent("api.pem"))
        let app = try AppPolicyCheck.pinningCertificates(in: folder.path)
        #expect(app.summary.hasPrefix("AFSSLPinningMode certificate: 1 certificates, 1 keys"))
    }

    @Test("a pattern on a public suffix is refused before the file is written; a client identity is written")
    func policyFileChecks() throws {
        var settings = ServiceTrustSettings(hosts: [try HostPattern("**.co.uk")], anchorsPEM: [try Self.pki.root.certificate.serializeAsPEM().pemString])
        #expect(throws: TrustConfigurationFileError.self) { try TrustPolicyAsCode.file(TrustPolicyAsCode.configuration(settings)) }
        settings.hosts = [try HostPattern("api.example.com")]
        settings.clientPKCS12 = "client.p12"
        settings.clientPassphraseVariable = "CLIENT_P12_PASSPHRASE"
        let text = try TrustPolicyAsCode.file(TrustPolicyAsCode.configuration(settings))
        #expect(text.contains(#""pkcs12":"client.p12""#) || text.contains(#""pkcs12": "client.p12""#))
        #expect(text.contains("CLIENT_P12_PASSPHRASE"))
    }
}
