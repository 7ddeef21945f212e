import ArgumentParser
import Trust
import TrustHTTP
import TrustLab
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `trust demo`: the embedded lab — servers on loopback in good and bad configurations — against a
/// matrix of trust policies, mutual TLS and HTTP authentication, each outcome checked.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the built-in lab: policies × servers on loopback, every outcome checked (exit 1 if any differs).",
        discussion: """
            Starts TrustLab servers on 127.0.0.1 (good, expired, wrong host, self-signed, untrusted root, the MITM chain with
            the pinned intermediate appended, mutual TLS, Basic and Digest, leaves revoked by CRL and by OCSP, an X.509-SVID
            with no DNS name), then connects to each under the policies a client would use — default, custom anchor,
            anchors-only, public-key pin, certificate pin, AFNetworking allowInvalidCertificates with pinning, a report-only
            configuration, hard and soft revocation checking, a configuration file reloaded while the session runs, a signed
            configuration bundle followed by a replayed older one, a SPIFFE ID — and prints what happened and why.
            """)

    @Flag(help: "Print every decision's reasons and the validated path.")
    var verbose = false

    struct Scenario {
        var policy: String
        var server: String
        var path = "/"
        var expected: Expected
        var configure: @Sendable (inout TrustHTTPClientConfiguration) -> Void = { _ in }
        var credential: Credential?
        /// A live row's steps around its requests (nil: one request).
        var steps: Steps?
    }

    enum Expected: Equatable {
        case ok
        case refused(TrustHTTPClientError.Code)
        case status(Int)
        /// A live row's step went otherwise than it should (never expected).
        case stepFailed

        var text: String {
            switch self {
            case .ok: return "200"
            case .status(let code): return "\(code)"
            case .refused(let code): return "\(code)"
            case .stepFailed: return "step failed"
            }
        }
    }

    func run() async throws {
        let started = ContinuousClock.now
        print("Starting the lab (a fresh PKI and servers on 127.0.0.1)…")
        let pki = try LabPKI.make()
        var servers: [String: LabServer] = [:]
        for name in ["good", "expired", "wrong-host", "self-signed", "untrusted-root", "mitm", "incomplete-chain", "sct", "one-sct", "bad-sct"] {
            servers[name] = try await LabServer.start(name, pki: pki)
        }
        servers["mtls"] = try await LabServer.start(mutualTLS: .required, pki: pki)
        // Revocation: a CRL distribution point and an OCSP responder on loopback, and leaves of the lab intermediate
        // that name them — one good, one revoked in its CRL, one revoked by the responder, one whose responder is down.
        let crls = try await LabCRLServer.start()
        let responder = try await LabOCSPResponder.start(authorities: [pki.intermediate, pki.root])
        let down = "http://127.0.0.1:9/"  // the discard port: nothing answers OCSP there
        let revocable = try pki.intermediate.leaf(dnsNames: ["good.lab.test"], ocspResponders: [responder.url])
        let revokedByCRL = try pki.intermediate.leaf(dnsNames: ["good.lab.test"], crlDistributionPoints: [crls.url("intermediate.crl")])
        let revokedByOCSP = try pki.intermediate.leaf(dnsNames: ["good.lab.test"], ocspResponders: [responder.url])
        let unreachable = try pki.intermediate.leaf(dnsNames: ["good.lab.test"], ocspResponders: [down])
        crls.publish(
            try LabCRL(issuer: pki.intermediate, revoked: [LabCRL.Revoked(revokedByCRL.certificate, reason: .keyCompromise)]).crl, as: "intermediate.crl")
        responder.set(.revoked(at: Date(timeIntervalSinceNow: -3_600), reason: .keyCompromise), for: revokedByOCSP.certificate)
        for (name, identity) in [("revocable", revocable), ("revoked-crl", revokedByCRL), ("revoked-ocsp", revokedByOCSP), ("ocsp-down", unreachable)] {
            servers[name] = try await LabServer.start(name: name, host: "good.lab.test", chain: identity.chain, privateKey: identity.privateKey)
        }
        // A server that leaves out its intermediate, whose leaf says where to fetch it (Authority Information Access):
        // the CA's publication point is the same loopback server as its CRLs.
        crls.publish(bytes: pki.intermediate.certificate.derBytes, as: "intermediate.der", contentType: "application/pkix-cert")
        let leafOnly = try pki.intermediate.leaf(dnsNames: ["good.lab.test"], caIssuers: [crls.url("intermediate.der")])
        servers["aia-fetched"] = try await LabServer.start(
            name: "aia-fetched", host: "good.lab.test", chain: [leafOnly.certificate], privateKey: leafOnly.privateKey)
        let live = try await LiveTrustLab.start(pki)
        servers["spiffe"] = live.spiffeServer
        defer {
            live.removeFiles()
            let all = Array(servers.values)
            Task {
                for server in all { try? await server.shutdown() }
                await live.configurationServer.shutdown()
                await crls.shutdown()
                await responder.shutdown()
            }
        }
        let scenarios = try Self.scenarios(pki) + live.scenarios(pki)
        print("Running \(scenarios.count) scenarios…\n")
        let header = Self.row("#", "policy", "server", "expected", "outcome", "why")
        print(header)
        print(String(repeating: "─", count: min(header.count, 150)))
        var failures = 0
        for (index, scenario) in scenarios.enumerated() {
            guard let server = servers[scenario.server] else { continue }
            let outcome = try await outcome(of: scenario, on: server)
            let matches = outcome.result == scenario.expected
            if !matches { failures += 1 }
            print(
                Self.row(
                    "\(index + 1)", scenario.policy, scenario.server + (scenario.path == "/" ? "" : " " + scenario.path.prefix { $0 != "?" }),
                    scenario.expected.text, (matches ? "✓ " : "✗ ") + outcome.result.text, outcome.why))
        }
        let elapsed = ContinuousClock.now - started
        print(
            "\n\(scenarios.count - failures) of \(scenarios.count) outcomes as expected in \(FixedPoint.text(TransferMonitor.seconds(elapsed), digits: 1)) s."
        )
        if failures > 0 {
            print("\(failures) outcome(s) differ from what they should be.")
            throw ExitCode(1)
        }
    }

    /// What `scenario` comes to, in a session of its own: one request, or a live row's steps around its requests.
    func outcome(of scenario: Scenario, on server: LabServer) async throws -> Outcome {
        var configuration = TrustHTTPClientConfiguration()
        configuration.resolve = LabPKI.loopbackResolve
        configuration.requestTimeout = .seconds(10)
        configuration.evaluationCache = nil
        scenario.configure(&configuration)
        let session = try TrustHTTPClient(configuration: configuration)
        let request = { try await self.request(scenario, on: server, session: session) }
        let outcome: Outcome
        if let steps = scenario.steps {
            do {
                outcome = try await steps(request)
            } catch {
                outcome = Outcome(result: .stepFailed, why: "\(error)")
            }
        } else {
            outcome = try await request()
        }
        await session.shutdown()
        return outcome
    }

    /// The scenario's request through `session`: its status, or why it was refused.
    func request(_ scenario: Scenario, on server: LabServer, session: TrustHTTPClient) async throws -> Outcome {
        guard let url = URL(string: server.baseURL + scenario.path) else { return Outcome(result: .stepFailed, why: "not a URL") }
        do {
            let response = try await session.data(for: TrustHTTPClientRequest(url: url, credential: scenario.credential))
            let firstLine = response.text.split(separator: "\n").first.map(String.init) ?? ""
            if response.statusCode != 200 {
                return Outcome(result: .status(response.statusCode), why: "HTTP \(response.statusCode): \(firstLine)")
            } else if firstLine.hasPrefix("authenticated") || firstLine.hasPrefix("client:") {
                return Outcome(result: .ok, why: firstLine.count > 60 ? String(firstLine.prefix(57)) + "…" : firstLine)
            }
            return Outcome(result: .ok, why: response.serverTrust.map(Self.trusted) ?? "trusted")
        } catch let error as TrustHTTPClientError {
            if verbose, let decision = error.trustDecision {
                for reason in decision.reasons { print("      [\(reason.code)] \(reason)") }
            }
            return Outcome(result: .refused(error.code), why: Self.explain(error))
        }
    }

    /// One row of the table; `why` can quote a server (a body's first line, an error's message): escaped.
    static func row(_ number: String, _ policy: String, _ server: String, _ expected: String, _ outcome: String, _ why: String) -> String {
        func pad(_ text: String, _ width: Int) -> String { text.count >= width ? text : text + String(repeating: " ", count: width - text.count) }
        return pad(number, 3) + pad(policy, 36) + pad(server, 20) + pad(expected, 34) + pad(outcome, 36) + DisplayText.escaped(why)
    }

    /// A few words on why a request was refused: the library's summary of the first trust reason
    /// (`TrustFailureReason.explanation`), else of the error (`TrustHTTPClientError.explanation`).
    static func explain(_ error: TrustHTTPClientError) -> String {
        error.trustDecision?.reasons.first?.explanation.summary ?? error.explanation.summary
    }

    /// A few words on a trusted connection: what a lenient mode let through (soft revocation checking, CT or
    /// pins report-only), else the decision's first note, else the validated path.
    static func trusted(_ decision: TrustDecision) -> String {
        if let allowed = decision.allowedFailures.first {
            return "trusted, let through: " + allowed.explanation.summary
        }
        if let note = decision.notes.first {
            return "trusted; " + note
        }
        if let id = decision.validatedPath.first?.spiffeID {
            return "trusted as \(id)"
        }
        return "trusted, validated path of \(decision.validatedPath.count)"
    }

    static func scenarios(_ pki: LabPKI) throws -> [Scenario] {
        let anchors = pki.trustedRoots
        let intermediatePin = pki.intermediate.certificate.spkiPin
        let backupPin = try SPKIPin(digest: [UInt8](repeating: 0x42, count: 32))
        let custom: @Sendable (inout TrustHTTPClientConfiguration) -> Void = {
            $0.serverTrust = DefaultTrustEvaluator(anchors: .system(adding: anchors))
        }
        let only: @Sendable (inout TrustHTTPClientConfiguration) -> Void = { $0.serverTrust = DefaultTrustEvaluator(anchors: .only(anchors)) }
        let publicKeyPin = try PublicKeysTrustEvaluator(pins: [intermediatePin, backupPin], anchors: .only(anchors))
        let pinned: @Sendable (inout TrustHTTPClientConfiguration) -> Void = { $0.serverTrust = publicKeyPin }
        let certificatePolicy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [pki.intermediate.certificate], systemAnchors: .only(anchors))
        let certificatePinned: @Sendable (inout TrustHTTPClientConfiguration) -> Void = { $0.serverTrust = certificatePolicy }
        let selfSigned = pki.servers["self-signed"].map { [$0.certificate] } ?? []
        let allowInvalid = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: selfSigned, allowInvalidCertificates: true)
        let afAllowInvalid: @Sendable (inout TrustHTTPClientConfiguration) -> Void = { $0.serverTrust = allowInvalid }
        let reportOnlyText = """
            {"version": 1, "base": {"anchors": {"pem": [\(anchors.map { String(reflecting: $0.pemString) }.joined(separator: ", "))], "replaceSystem": true}},
             "hosts": [{"host": "**.lab.test", "mode": "report-only", "pins": {"sha256": ["\(backupPin)"]},
                        "anchors": {"pem": [\(anchors.map { String(reflecting: $0.pemString) }.joined(separator: ", "))], "replaceSystem": true}}]}
            """
        let reportOnlyEvaluator = try ConfiguredTrustEvaluator(
            configuration: try TrustConfiguration.parse(reportOnlyText, publicSuffixes: PublicSuffixList(contents: "test\n")))
        let reportOnly: @Sendable (inout TrustHTTPClientConfiguration) -> Void = { $0.serverTrust = reportOnlyEvaluator }
        let clientLeaf = try pki.clients["client"].map { try ClientIdentity(certificateChainPEM: $0.chainPEM, privateKeyPEM: $0.privateKeyPEM) }
        let alice = Credential(user: "alice", password: "wonderland", persistence: .none)
        // Certificate Transparency against the lab's logs, applied to the lab's (custom) anchors.
        let ctList = try CTLogList(json: pki.ctLogListJSON)
        func transparency(_ mode: CertificateTransparencyPolicy.Mode) -> @Sendable (inout TrustHTTPClientConfiguration) -> Void {
            var policy = ValidationPolicy.webPKI
            policy.certificateTransparency = CertificateTransparencyPolicy(mode: mode, logList: ctList, appliesToCustomAnchors: true)
            let validator = PathValidator(anchors: .only(anchors), policy: policy)
            return { $0.serverTrust = validator }
        }
        // Hard and soft revocation checking (OCSP first, CRLs as the fallback), a fresh evaluator per connection. The
        // responder is the lab's, on loopback: the fetch budget and the handshake are given room for a loaded machine
        // (the 4 s default is for public responders, and a busy newcomer's machine has taken longer), which costs
        // nothing when the answer comes at once.
        func revocation(_ mode: RevocationPolicy.Mode) -> @Sendable (inout TrustHTTPClientConfiguration) -> Void {
            { configuration in
                var policy = ValidationPolicy.webPKI
                policy.revocation = RevocationPolicy(mode: mode)
                if let evaluator = try? RevocationCheckingEvaluator(anchors: .only(anchors), policy: policy, fetchBudget: .seconds(20)) {
                    configuration.serverTrust = evaluator
                    configuration.connectTimeout = .seconds(30)
                    configuration.requestTimeout = .seconds(40)
                }
            }
        }

        return [
            Scenario(policy: "default (system roots)", server: "good", expected: .refused(.serverCertificateHasUnknownRoot)),
            Scenario(policy: "custom anchor (system + lab CA)", server: "good", expected: .ok, configure: custom),
            Scenario(policy: "custom anchor (system + lab CA)", server: "expired", expected: .refused(.serverCertificateHasBadDate), configure: custom),
            Scenario(policy: "custom anchor (system + lab CA)", server: "wrong-host", expected: .refused(.serverCertificateUntrusted), configure: custom),
            Scenario(policy: "custom anchor (system + lab CA)", server: "self-signed", expected: .refused(.serverCertificateHasUnknownRoot), configure: custom),
            Scenario(
                policy: "custom anchor (system + lab CA)", server: "untrusted-root", expected: .refused(.serverCertificateHasUnknownRoot), configure: custom),
            Scenario(
                policy: "custom anchor (system + lab CA)", server: "incomplete-chain", expected: .refused(.serverCertificateHasUnknownRoot), configure: custom),
            // The same omission, with the leaf naming its issuer's location: fetched, as iOS does, and trusted.
            Scenario(policy: "custom anchor, intermediate by AIA", server: "aia-fetched", expected: .ok, configure: custom),
            Scenario(policy: "custom anchor (system + lab CA)", server: "mitm", expected: .ok, configure: custom),
            Scenario(policy: "anchors-only (lab CAs)", server: "good", expected: .ok, configure: only),
            Scenario(policy: "anchors-only (lab CAs)", server: "expired", expected: .refused(.serverCertificateHasBadDate), configure: only),
            Scenario(policy: "public-key pin (intermediate)", server: "good", expected: .ok, configure: pinned),
            Scenario(policy: "public-key pin (intermediate)", server: "mitm", expected: .refused(.serverCertificateUntrusted), configure: pinned),
            Scenario(policy: "certificate pin (AF .certificate)", server: "good", expected: .ok, configure: certificatePinned),
            // AF certificate mode: the pinned certificates are the anchors — the MITM leaf has no path to them.
            Scenario(
                policy: "certificate pin (AF .certificate)", server: "mitm", expected: .refused(.serverCertificateHasUnknownRoot), configure: certificatePinned),
            Scenario(policy: "AF allowInvalid + key pin", server: "self-signed", expected: .ok, configure: afAllowInvalid),
            // Invalid certificates allowed, but the pinned key must still be on the chain the leaf signs into.
            Scenario(
                policy: "AF allowInvalid + key pin", server: "untrusted-root", expected: .refused(.serverCertificateHasUnknownRoot), configure: afAllowInvalid),
            Scenario(policy: "report-only config (wrong pin)", server: "good", expected: .ok, configure: reportOnly),
            Scenario(policy: "report-only config (wrong pin)", server: "expired", expected: .refused(.serverCertificateHasBadDate), configure: reportOnly),
            Scenario(
                policy: "mutual TLS, no client certificate", server: "mtls", path: "/whoami", expected: .refused(.clientCertificateRequired), configure: only),
            Scenario(
                policy: "mutual TLS, lab client identity", server: "mtls", path: "/whoami", expected: .ok,
                configure: { configuration in
                    only(&configuration)
                    configuration.defaultClientIdentity = clientLeaf
                }),
            Scenario(policy: "HTTP Basic, alice", server: "good", path: "/basic", expected: .ok, configure: only, credential: alice),
            Scenario(
                policy: "HTTP Basic, wrong password", server: "good", path: "/basic", expected: .status(401), configure: only,
                credential: Credential(user: "alice", password: "nope", persistence: .none)),
            Scenario(
                policy: "HTTP Digest SHA-256, alice", server: "good", path: "/digest?algorithm=SHA-256", expected: .ok, configure: only, credential: alice),
            Scenario(policy: "revocation hard (OCSP, then CRLs)", server: "revocable", expected: .ok, configure: revocation(.hard)),
            Scenario(
                policy: "revocation hard (OCSP, then CRLs)", server: "revoked-crl", expected: .refused(.serverCertificateUntrusted),
                configure: revocation(.hard)),
            Scenario(
                policy: "revocation hard (OCSP, then CRLs)", server: "revoked-ocsp", expected: .refused(.serverCertificateUntrusted),
                configure: revocation(.hard)),
            Scenario(
                policy: "revocation hard (OCSP, then CRLs)", server: "ocsp-down", expected: .refused(.serverCertificateUntrusted), configure: revocation(.hard)),
            Scenario(policy: "revocation soft", server: "ocsp-down", expected: .ok, configure: revocation(.soft)),
            Scenario(policy: "CT enforce (lab logs)", server: "sct", expected: .ok, configure: transparency(.enforce)),
            Scenario(policy: "CT enforce (lab logs)", server: "one-sct", expected: .refused(.serverCertificateUntrusted), configure: transparency(.enforce)),
            Scenario(policy: "CT enforce (lab logs)", server: "bad-sct", expected: .refused(.serverCertificateUntrusted), configure: transparency(.enforce)),
            Scenario(policy: "CT report-only (lab logs)", server: "one-sct", expected: .ok, configure: transparency(.reportOnly)),
        ]
    }
}
