import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport
import X509

/// OCSP requests and responses (RFC 6960) in the engine: what a response establishes, and every reason one is not
/// believed — wrong signer, a responder without id-kp-OCSPSigning, stale, from the future, another certificate, a
/// replayed signature over altered bytes, a wrong nonce, malformed bytes — and the same bytes judged by `openssl ocsp`.
@Suite("Revocation: OCSP responses", .timeLimit(.minutes(5)), .paced)
struct OCSPResponseTests {
    static let openssl = "/usr/bin/openssl"
    let issuer = Lab.pki.intermediate
    let leaf: LabIdentity

    init() throws {
        leaf = try Lab.pki.intermediate.leaf(dnsNames: ["ocsp.lab.test"])
    }

    func verdict(_ bytes: [UInt8], at time: Date = Date(), nonce: [UInt8]? = nil) throws -> OCSPResponse.Verdict {
        try OCSPResponse(derEncoded: bytes).verdict(for: leaf.certificate, issuer: issuer.certificate, at: time, nonce: nonce)
    }

    func isUnknown(_ verdict: OCSPResponse.Verdict, _ text: String) -> Bool {
        if case .unknown(let why) = verdict { return why.contains(text) }
        return false
    }

    @Test func statusesAndSigners() throws {
        // Good, from the issuer, with every CertID hash.
        for hash in OCSPCertificateID.HashAlgorithm.allCases {
            let bytes = try LabOCSP.response(about: leaf.certificate, issuer: issuer, status: .good, hashAlgorithm: hash)
            guard case .good(let thisUpdate, let until) = try verdict(bytes) else {
                Issue.record("\(hash): not good")
                continue
            }
            #expect(thisUpdate < Date() && until > Date().addingTimeInterval(6 * 86_400))
        }
        // Revoked, with its time and reason.
        let revokedAt = Date(timeIntervalSinceNow: -86_400)
        let revoked = try verdict(LabOCSP.response(about: leaf.certificate, issuer: issuer, status: .revoked(at: revokedAt, reason: .keyCompromise)))
        guard case .revoked(let at, let reason, _) = revoked else {
            Issue.record("not revoked: \(revoked)")
            return
        }
        #expect(abs(at.timeIntervalSince(revokedAt)) < 1 && reason == .keyCompromise)
        #expect(isUnknown(try verdict(LabOCSP.response(about: leaf.certificate, issuer: issuer, status: .unknown)), "does not know"))
        // A delegated responder with id-kp-OCSPSigning, named by name or by key.
        let delegate = try LabOCSP.responder(issuedBy: issuer)
        var byKey = LabOCSP.Variation()
        byKey.responderByKey = true
        for variation in [LabOCSP.Variation(), byKey] {
            let bytes = try LabOCSP.response(about: leaf.certificate, issuer: issuer, status: .good, signer: .delegate(delegate), variation: variation)
            guard case .good = try verdict(bytes) else {
                Issue.record("delegated: not good")
                continue
            }
        }
        // Not authorised: a responder certificate without id-kp-OCSPSigning, one from another CA, a stranger's key.
        let serverAuthOnly = try LabOCSP.responder(issuedBy: issuer, ocspSigning: false)
        #expect(
            isUnknown(
                try verdict(LabOCSP.response(about: leaf.certificate, issuer: issuer, status: .good, signer: .delegate(serverAuthOnly))),
                "lacks extendedKeyUsage id-kp-OCSPSigning"))
        let foreign = try LabOCSP.responder(issuedBy: Lab.pki.root)
        #expect(
            isUnknown(try verdict(LabOCSP.response(about: leaf.certificate, issuer: issuer, status: .good, signer: .delegate(foreign))), "is not issued by"))
        let stranger = try LabAuthority.root(commonName: "stranger").identity
        #expect(
            isUnknown(try verdict(LabOCSP.response(about: leaf.certificate, issuer: issuer, status: .good, signer: .stranger(stranger))), "is not issued by"))
        // A responder certificate that has expired.
        let expired = try LabOCSP.responder(issuedBy: issuer, notAfter: Date(timeIntervalSinceNow: -60))
        #expect(
            isUnknown(
                try verdict(LabOCSP.response(about: leaf.certificate, issuer: issuer, status: .good, signer: .delegate(expired))),
                "not valid at the evaluation time"))
        // A response about another certificate of the same issuer.
        let other = try issuer.leaf(dnsNames: ["other.lab.test"])
        #expect(isUnknown(try verdict(LabOCSP.response(about: other.certificate, issuer: issuer, status: .good)), "no status for this certificate"))
        // Unsuccessful statuses carry no answer.
        for status in [OCSPResponse.Status.malformedRequest, .internalError, .tryLater, .signatureRequired, .unauthorized] {
            #expect(isUnknown(try verdict(LabOCSP.unsuccessful(status)), "answered \(status)"))
        }
    }

    @Test func timesAndNonces() throws {
        func response(_ change: (inout LabOCSP.Variation) -> Void) throws -> [UInt8] {
            var variation = LabOCSP.Variation()
            change(&variation)
            return try LabOCSP.response(about: leaf.certificate, issuer: issuer, status: .good, variation: variation)
        }
        #expect(
            isUnknown(
                try verdict(
                    response {
                        $0.thisUpdate = -7_200
                        $0.nextUpdate = -3_600
                    }), "stale"))
        #expect(isUnknown(try verdict(response { $0.thisUpdate = 3_600 }), "from the future"))
        #expect(isUnknown(try verdict(response { $0.producedAt = 3_600 }), "produced after"))
        // Within the clock-skew tolerance: used.
        guard
            case .good = try verdict(
                response {
                    $0.thisUpdate = 60
                    $0.producedAt = 60
                })
        else {
            Issue.record("a minute ahead is refused")
            return
        }
        // No nextUpdate: a day from thisUpdate.
        guard
            case .good(_, let until) = try verdict(
                response {
                    $0.nextUpdate = nil
                    $0.thisUpdate = -3_600
                })
        else {
            Issue.record("no nextUpdate refused")
            return
        }
        #expect(abs(until.timeIntervalSinceNow - (86_400 - 3_600)) < 5)
        #expect(
            isUnknown(
                try verdict(
                    response {
                        $0.nextUpdate = nil
                        $0.thisUpdate = -2 * 86_400
                    }), "more than a day old"))
        // Nonces: echoed → fine; another → refused; none echoed → accepted (pre-produced responses).
        let sent = OCSPRequest.randomNonce()
        let echoed = try LabOCSP.response(
            for: [OCSPCertificateID(certificate: leaf.certificate, issuer: issuer.certificate)], issuer: issuer, requestNonce: sent
        ) { _ in .good }
        guard case .good = try verdict(echoed, nonce: sent) else {
            Issue.record("echoed nonce refused")
            return
        }
        #expect(try OCSPResponse(derEncoded: echoed).nonce == sent)
        #expect(isUnknown(try verdict(response { $0.nonce = [1, 2, 3] }, nonce: sent), "nonce"))
        guard case .good = try verdict(response { $0.omitsNonce = true }, nonce: sent) else {
            Issue.record("no nonce refused")
            return
        }
    }

    /// What an attacker on the path to the responder would try with a real response.
    @Test func forgeriesAreRefused() throws {
        let good = try LabOCSP.response(about: leaf.certificate, issuer: issuer, status: .revoked(at: Date(timeIntervalSinceNow: -60), reason: nil))
        // Flip "revoked" to "good" inside the signed part (same length): the signature no longer verifies.
        let parsed = try OCSPResponse(derEncoded: good)
        guard case .revoked = parsed.verdict(for: leaf.certificate, issuer: issuer.certificate, at: Date()) else {
            Issue.record("setup")
            return
        }
        var altered = good
        // Find the SingleResponse's certStatus [1] (revoked) and change it to [0] good with the same length: tag A1 → 80.
        if let index = altered.firstIndex(of: 0xA1) { altered[index] = 0x80 }
        if let forged = try? OCSPResponse(derEncoded: altered) {
            let outcome = forged.verdict(for: leaf.certificate, issuer: issuer.certificate, at: Date())
            if case .good = outcome { Issue.record("an altered response was believed") }
        }
        // Every truncation and every single-byte change: never a crash, never a different believed answer.
        for length in 0..<good.count {
            #expect(throws: OCSPParseError.self) { try OCSPResponse(derEncoded: Array(good.prefix(length))) }
        }
        for index in stride(from: 0, to: good.count, by: 3) {
            var changed = good
            changed[index] ^= 0x01
            guard let response = try? OCSPResponse(derEncoded: changed) else { continue }
            let outcome = response.verdict(for: leaf.certificate, issuer: issuer.certificate, at: Date())
            if case .good = outcome { Issue.record("byte \(index) changed: believed good") }
        }
        #expect(throws: OCSPParseError.self) { try OCSPResponse(derEncoded: Array("not DER".utf8)) }
        #expect(throws: OCSPParseError.self) { try OCSPRequest(derEncoded: [0x30, 0x00]) }
    }

    @Test func requestsRoundTrip() throws {
        let id = try OCSPCertificateID(certificate: leaf.certificate, issuer: issuer.certificate)
        #expect(id.identifies(leaf.certificate, issuer: issuer.certificate))
        #expect(!id.identifies(leaf.certificate, issuer: Lab.pki.root.certificate))
        let nonce = OCSPRequest.randomNonce()
        let request = OCSPRequest(certificateIDs: [id], nonce: nonce)
        let parsed = try OCSPRequest(derEncoded: request.derBytes())
        #expect(parsed == request && parsed.nonce?.count == 32)
        #expect(
            OCSPRequest.responderURIs(of: try issuer.leaf(ocspResponders: ["http://ocsp.example/", "ldap://x", "https://ocsp2.example/"]).certificate)
                == ["http://ocsp.example/", "https://ocsp2.example/"])
    }

    /// `openssl ocsp` judges the lab's responses, and answers the engine's requests (both offline, through files).
    @Test(.requires(.openssl)) func interoperatesWithOpenSSL() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try issuer.identity.certificatePEM.write(toFile: dir + "/issuer.pem", atomically: true, encoding: .utf8)
        try issuer.identity.privateKeyPEM.write(toFile: dir + "/issuer.key", atomically: true, encoding: .utf8)
        try leaf.certificatePEM.write(toFile: dir + "/leaf.pem", atomically: true, encoding: .utf8)
        try (issuer.identity.certificatePEM + Lab.pki.root.identity.certificatePEM).write(toFile: dir + "/ca.pem", atomically: true, encoding: .utf8)
        let check = ["ocsp", "-issuer", dir + "/issuer.pem", "-cert", dir + "/leaf.pem", "-CAfile", dir + "/ca.pem", "-no_nonce", "-respin", dir + "/resp.der"]
        // The lab's responses, from the issuer and from a delegated responder, judged by openssl.
        let delegate = try LabOCSP.responder(issuedBy: issuer)
        let cases: [(LabOCSP.Status, LabOCSP.Signer, String)] = [
            (.good, .issuer, "leaf.pem: good"), (.revoked(at: Date(timeIntervalSinceNow: -600), reason: .superseded), .issuer, "leaf.pem: revoked"),
            (.unknown, .issuer, "leaf.pem: unknown"), (.good, .delegate(delegate), "leaf.pem: good"),
        ]
        for (status, signer, expected) in cases {
            try Data(LabOCSP.response(about: leaf.certificate, issuer: issuer, status: status, signer: signer)).write(
                to: URL(fileURLWithPath: dir + "/resp.der"))
            let (code, out, err) = try await run(Self.openssl, check)
            #expect(code == 0 && out.contains(expected) && (out + err).contains("Response verify OK"), "\(out) \(err)")
        }
        // openssl as the responder: the engine's request in, openssl's response out, judged by the engine.
        let serial = leaf.certificate.openSSLSerial.replacingOccurrences(of: ":", with: "").uppercased()
        for (line, expectRevoked) in [
            ("V\t301231235959Z\t\t\(serial)\tunknown\t/CN=x\n", false), ("R\t301231235959Z\t240101000000Z,keyCompromise\t\(serial)\tunknown\t/CN=x\n", true),
        ] {
            try line.write(toFile: dir + "/index.txt", atomically: true, encoding: .utf8)
            let request = OCSPRequest(certificateIDs: [try OCSPCertificateID(certificate: leaf.certificate, issuer: issuer.certificate)])
            try Data(request.derBytes()).write(to: URL(fileURLWithPath: dir + "/req.der"))
            let (code, _, err) = try await run(
                Self.openssl,
                [
                    "ocsp", "-index", dir + "/index.txt", "-CA", dir + "/issuer.pem", "-rsigner", dir + "/issuer.pem", "-rkey", dir + "/issuer.key",
                    "-reqin", dir + "/req.der", "-respout", dir + "/resp.der", "-ndays", "1",
                ])
            #expect(code == 0, "\(err)")
            let verdict = try verdict(Array(Data(contentsOf: URL(fileURLWithPath: dir + "/resp.der"))))
            switch verdict {
            case .revoked(_, let reason, _): #expect(expectRevoked && reason == .keyCompromise, "\(verdict)")
            case .good: #expect(!expectRevoked)
            case .unknown(let why): Issue.record("openssl's response not believed: \(why)")
            }
        }
    }

    /// Both revocation caches are bounded and forget the entry used longest ago.
    @Test func cachesAreBoundedLeastRecentlyUsedFirst() throws {
        let crls = CRLCache(capacity: 2)
        for url in ["a", "b"] { crls.store(CRLCache.Entry(crls: []), for: url) }
        _ = crls.entry(for: "a")
        crls.store(CRLCache.Entry(crls: []), for: "c")
        #expect(crls.entry(for: "a") != nil && crls.entry(for: "b") == nil && crls.entry(for: "c") != nil)
        let responses = OCSPCache(capacity: 2)
        let leaves = try (0..<3).map { _ in try issuer.leaf(dnsNames: ["ocsp.lab.test"]).certificate }
        for leaf in leaves.prefix(2) { responses.store(OCSPCache.Entry(response: nil, failure: "x"), for: leaf) }
        _ = responses.entry(for: leaves[0])
        responses.store(OCSPCache.Entry(response: nil, failure: "x"), for: leaves[2])
        #expect(responses.entry(for: leaves[0]) != nil && responses.entry(for: leaves[1]) == nil && responses.entry(for: leaves[2]) != nil)
        responses.removeAll()
        #expect(responses.entry(for: leaves[0]) == nil)
    }
}
