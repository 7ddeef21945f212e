import Foundation
import Trust
import TrustLab
import X509

/// `trust-dev bench` rows for revocation: a serial number looked up in a 100,000-entry CRL (against a plain `Set` of the
/// same serials), parsing that CRL (against hashing its bytes), and an uncached depth-3 evaluation with hard,
/// whole-chain CRL checking (against the same evaluation without revocation); an OCSP response parsed (against one
/// ECDSA signature verification, its dominant cost when uncached), and an uncached evaluation with hard leaf OCSP
/// checking from the cache (against the same evaluation without revocation).
struct RevocationBench {
    let iterations: Int

    func run(wants: (String) -> Bool) async throws {
        guard wants("CRL") || wants("revocation") || wants("OCSP") || wants("CT") else { return }
        let day: TimeInterval = 86_400
        let root = try LabAuthority.root(commonName: "bench CRL root", keyType: .p256, notBefore: Date() - day, notAfter: Date() + 365 * day)
        let intermediate = try root.intermediate(
            commonName: "bench CRL issuing CA", keyType: .p256, pathLength: 0, notBefore: Date() - day, notAfter: Date() + 365 * day)
        let leaf = try intermediate.leaf(dnsNames: ["bench.lab.test"])
        var generator = SystemRandomNumberGenerator()
        let serials: [[UInt8]] = (0..<100_000).map { _ in (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        let revoked = serials.map { serial -> LabCRL.Revoked in
            var entry = LabCRL.Revoked(leaf.certificate)
            entry.serialNumber = serial
            return entry
        }
        let big = try LabCRL(issuer: intermediate, revoked: revoked).crl
        let rootCRL = try LabCRL(issuer: root).crl

        if wants("CRL lookup") {
            let probes = [Array(leaf.certificate.serialNumber.bytes)] + serials.prefix(999)
            let plain = Set(serials)
            let lookup = await BenchCommand.median(iterations) { for probe in probes { _ = big.entry(forSerialNumber: probe) } }
            let baseline = await BenchCommand.median(iterations) { for probe in probes { _ = plain.contains(probe) } }
            BenchCommand.report("CRL lookup (100,000 entries)", lookup / probes.count, "Set<[UInt8]>.contains, same", baseline / probes.count)
        }
        if wants("parse a 100,000-entry CRL") {
            let der = big.derBytes
            let parse = await BenchCommand.median(max(3, iterations / 50)) { _ = try? CertificateRevocationList(derEncoded: der) }
            let hash = await BenchCommand.median(max(3, iterations / 50)) {
                var hasher = Hasher()
                der.withUnsafeBytes { hasher.combine(bytes: $0) }
                _ = hasher.finalize()
            }
            BenchCommand.report("parse a 100,000-entry CRL (\(der.count / 1024) KiB)", parse, "hash its DER bytes (bulk)", hash)
        }
        if wants("revocation") {
            let trust = try ServerTrust(presentedChain: leaf.chain, host: "bench.lab.test")
            var checked = ValidationPolicy.webPKI
            checked.revocation = RevocationPolicy(mode: .hard, depth: .chain, crls: [big, rootCRL])
            let withRevocation = PathValidator(anchors: .only([root.certificate]), policy: checked)
            let without = PathValidator(anchors: .only([root.certificate]))
            guard await withRevocation.evaluate(trust).isTrusted, await without.evaluate(trust).isTrusted else {
                print("  revocation: the bench chain was not trusted; skipped")
                return
            }
            let revocation = await BenchCommand.median(iterations) { _ = await withRevocation.evaluate(trust) }
            let plain = await BenchCommand.median(iterations) { _ = await without.evaluate(trust) }
            BenchCommand.report("evaluate depth-3 p256 + CRLs (hard, chain)", revocation, "the same without revocation", plain)
        }
        if wants("CT") {
            // Three SCTs from three logs of two operators: the check against three raw P-256 verifications of the same
            // signed entries (the floor: parsing, rebuilding the TBS, policy counting on top).
            let logs = [
                LabCTLog(description: "bench A1", operatorName: "A"), LabCTLog(description: "bench A2", operatorName: "A"),
                LabCTLog(description: "bench B", operatorName: "B"),
            ]
            let logged = try intermediate.leaf(dnsNames: ["bench.lab.test"], scts: logs.map { .good($0) }, notAfter: Date() + 300 * day)
            let policy = CertificateTransparencyPolicy(mode: .enforce, logList: try CTLogList(json: LabCTLog.logList(logs)), appliesToCustomAnchors: true)
            guard CertificateTransparencyReport.check(leaf: logged.certificate, issuer: intermediate.certificate, policy: policy, at: Date()).meetsPolicy else {
                print("  CT: the bench leaf does not meet the policy; skipped")
                return
            }
            let scts = try SignedCertificateTimestamp.embedded(in: logged.certificate)
            let keys = try logs.map { try Certificate.PublicKey(derEncoded: $0.publicKeyDER) }
            let signedData = try CertificateTransparencyReport.signedEntries(leaf: logged.certificate, issuer: intermediate.certificate, scts: scts)
            let check = await BenchCommand.median(iterations) {
                _ = CertificateTransparencyReport.check(leaf: logged.certificate, issuer: intermediate.certificate, policy: policy, at: Date())
            }
            let verify = await BenchCommand.median(iterations) {
                for index in scts.indices {
                    _ = keys[index].isValidSignature(scts[index].signature, for: signedData[index], signatureAlgorithm: .ecdsaWithSHA256)
                }
            }
            BenchCommand.report("CT check (3 SCTs, 2 operators)", check, "its 3 P-256 SCT signature verifications", verify)
        }
        if wants("OCSP") {
            let der = try LabOCSP.response(about: leaf.certificate, issuer: intermediate, status: .good)
            let parse = await BenchCommand.median(iterations) { _ = try? OCSPResponse(derEncoded: der) }
            let signature = try intermediate.identity.privateKey.sign(bytes: der, signatureAlgorithm: .ecdsaWithSHA256)
            let verify = await BenchCommand.median(iterations) {
                _ = intermediate.certificate.publicKey.isValidSignature(signature.rawRepresentation, for: der, signatureAlgorithm: .ecdsaWithSHA256)
            }
            BenchCommand.report("parse an OCSP response (\(der.count) B)", parse, "one P-256 signature verification", verify)
            let trust = try ServerTrust(presentedChain: leaf.chain, host: "bench.lab.test")
            let cache = OCSPCache()
            cache.store(OCSPCache.Entry(response: try OCSPResponse(derEncoded: der)), for: leaf.certificate)
            var checked = ValidationPolicy.webPKI
            checked.revocation = RevocationPolicy(mode: .hard, ocspCache: cache)
            let withOCSP = PathValidator(anchors: .only([root.certificate]), policy: checked)
            let without = PathValidator(anchors: .only([root.certificate]))
            guard await withOCSP.evaluate(trust).isTrusted else {
                print("  OCSP: the bench chain was not trusted; skipped")
                return
            }
            let ocsp = await BenchCommand.median(iterations) { _ = await withOCSP.evaluate(trust) }
            let plain = await BenchCommand.median(iterations) { _ = await without.evaluate(trust) }
            BenchCommand.report("evaluate depth-3 p256 + OCSP (hard, leaf, cached response)", ocsp, "the same without revocation", plain)
        }
    }
}
