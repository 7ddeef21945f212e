import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport
import X509

@Suite("Mutual TLS: client-certificate challenge and server-side verification", .serialized, .timeLimit(.minutes(5)), .paced)
struct MutualTLSTests {
    static let clientIdentity: ClientIdentity = {
        let leaf = try! Lab.pki.intermediate.leaf(commonName: "lab client", extendedKeyUsage: [.clientAuth])
        return try! ClientIdentity(certificateChainPEM: leaf.chainPEM, privateKeyPEM: leaf.privateKeyPEM)
    }()

    static func identity(_ make: () throws -> LabIdentity) -> ClientIdentity {
        let leaf = try! make()
        return try! ClientIdentity(certificateChainPEM: leaf.chainPEM, privateKeyPEM: leaf.privateKeyPEM)
    }

    func server(_ requirement: ClientAuthentication.Requirement, tls12: Bool = false) async throws -> LabServer {
        let good = Lab.pki.servers["good"]!
        return try await LabServer.start(
            name: "mtls", host: "good.lab.test", chain: good.chain, privateKey: good.privateKey,
            maximumTLSVersion: tls12 ? .tlsv12 : nil,
            clientAuthentication: ClientAuthentication(requirement: requirement, anchors: [Lab.pki.root.certificate]))
    }

    func get(_ server: LabServer, _ configure: (inout TrustHTTPClientConfiguration) -> Void = { _ in }, handler: (any ChallengeHandler)? = nil) async -> Result<
        String, TrustHTTPClientError
    > {
        do {
            let session = try labSession(configure: configure)
            return try await withTeardown({ await session.shutdown() }) {
                return .success(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/whoami"), challengeHandler: handler)).text)
            }
        } catch let error as TrustHTTPClientError {
            return .failure(error)
        } catch {
            return .failure(TrustHTTPClientError(.badServerResponse, "\(error)"))
        }
    }

    @Test(arguments: [false, true])
    func fourDispositionsUnderTLS12And13(_ tls12: Bool) async throws {
        let server = try await server(.required, tls12: tls12)
        try await withTeardown({ try? await server.shutdown() }) {
            let identity = Self.clientIdentity
            // useCredential(identity)
            let used = await get(
                server,
                handler: ClosureChallengeHandler { challenge in
                    challenge.protectionSpace.authenticationMethod == .clientCertificate
                        ? .useCredential(Credential(identity: identity)) : .performDefaultHandling
                })
            #expect((try? used.get())?.hasPrefix("client: ") == true, "\(used)")
            // The server's handler read the same client back from NIOSSL (Channel.verifiedClient()): leaf, intermediate, root.
            #expect((try? used.get())?.contains("validated chain: 3 certificates") == true, "\(used)")
            // performDefaultHandling: the identity configured for the host
            let defaulted = await get(
                server, { $0.clientIdentities["good.lab.test"] = identity }, handler: ClosureChallengeHandler { _ in .performDefaultHandling })
            #expect((try? defaulted.get())?.contains("lab client") == true, "\(defaulted)")
            // rejectProtectionSpace: continue without a certificate → the server requires one
            let rejected = await get(
                server,
                handler: ClosureChallengeHandler { challenge in
                    challenge.protectionSpace.authenticationMethod == .clientCertificate ? .rejectProtectionSpace : .performDefaultHandling
                })
            guard case .failure(let rejectedError) = rejected else {
                Issue.record("no certificate accepted")
                return
            }
            #expect(rejectedError.code == .clientCertificateRequired, "\(rejectedError)")
            // cancel
            let cancelled = await get(
                server, { $0.clientIdentities["good.lab.test"] = identity },
                handler: ClosureChallengeHandler { challenge in
                    challenge.protectionSpace.authenticationMethod == .clientCertificate ? .cancelAuthenticationChallenge : .performDefaultHandling
                })
            guard case .failure(let cancelledError) = cancelled else {
                Issue.record("cancel succeeded")
                return
            }
            #expect(cancelledError.code == .cancelled)
            // No handler and no identity: none is sent, and the error says a certificate is required.
            guard case .failure(let none) = await get(server) else {
                Issue.record("no certificate accepted")
                return
            }
            #expect(none.code == .clientCertificateRequired, "\(none)")
        }
    }

    @Test func optionalClientCertificate() async throws {
        let server = try await server(.optional)
        try await withTeardown({ try? await server.shutdown() }) {
            #expect((try? await get(server).get()) == "anonymous\n")
            let identity = Self.clientIdentity
            #expect((try? await get(server, { $0.defaultClientIdentity = identity }).get())?.contains("lab client") == true)
        }
    }

    @Test func serverRefusesWrongCAExpiredAndWrongEKU() async throws {
        let server = try await server(.required)
        try await withTeardown({ try? await server.shutdown() }) {
            let wrongCA = Self.identity { try Lab.pki.untrustedRoot.leaf(commonName: "stranger", extendedKeyUsage: [.clientAuth]) }
            let expired = Self.identity {
                try Lab.pki.intermediate.leaf(
                    commonName: "old", notBefore: Date(timeIntervalSinceNow: -9 * 86_400), notAfter: Date(timeIntervalSinceNow: -86_400),
                    extendedKeyUsage: [.clientAuth])
            }
            let serverOnly = Self.identity { try Lab.pki.intermediate.leaf(commonName: "server only", extendedKeyUsage: [.serverAuth]) }
            for identity in [wrongCA, expired, serverOnly] {
                let result = await get(server, { $0.defaultClientIdentity = identity })
                guard case .failure(let error) = result else {
                    Issue.record("\(identity.certificate.subject) accepted")
                    continue
                }
                #expect(error.code == .clientCertificateRejected, "\(identity.certificate.subject): \(error)")
            }
        }
    }
}

@Suite("Mutual TLS: details", .serialized, .timeLimit(.minutes(5)), .paced)
struct MutualTLSDetailTests {
    @Test(.requires(.openssl)) func pkcs12IdentityAgainstOurServer() async throws {
        let f = Lab.clientIdentityFiles
        for options in [[String](), ["-legacy"]] {
            let out = f.dir + "/\(UUID().uuidString).p12"
            let (status, _, err) = try await run(
                "/usr/bin/openssl", ["pkcs12", "-export", "-in", f.cert, "-inkey", f.key, "-certfile", f.chain, "-out", out, "-passout", "pass:pw"] + options)
            #expect(status == 0, "\(err)")
            let identity = try ClientIdentity(pkcs12File: out, passphrase: "pw")
            let good = Lab.pki.servers["good"]!
            let server = try await LabServer.start(
                name: "mtls", host: "good.lab.test", chain: good.chain, privateKey: good.privateKey,
                clientAuthentication: ClientAuthentication(requirement: .required, anchors: [Lab.pki.root.certificate]))
            let session = try labSession { $0.defaultClientIdentity = identity }
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/whoami"))).text.contains("lab client"))
            await session.shutdown()
            try await server.shutdown()
        }
    }

    /// The lab's three mutual-TLS servers against each lab client identity, under TLS 1.2 and 1.3.
    @Test(arguments: [false, true])
    func labMutualTLSServersAndClients(_ tls12: Bool) async throws {
        let accepted: [LabServer.MutualTLSMode: Set<String>] = [.required: ["client"], .optional: ["client"], .clientCAOnly: ["partner"]]
        for mode in LabServer.MutualTLSMode.allCases {
            let server = try await LabServer.start(mutualTLS: mode, pki: Lab.pki, maximumTLSVersion: tls12 ? .tlsv12 : nil)
            for name in LabPKI.clientNames {
                let identity = try ClientIdentity(certificateChainPEM: Lab.pki.clients[name]!.chainPEM, privateKeyPEM: Lab.pki.clients[name]!.privateKeyPEM)
                let session = try labSession { $0.clientIdentities[mode.host] = identity }
                let result: Result<String, TrustHTTPClientError>
                do {
                    result = .success(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/whoami"))).text)
                } catch let error as TrustHTTPClientError {
                    result = .failure(error)
                }
                await session.shutdown()
                if accepted[mode]!.contains(name) {
                    #expect((try? result.get())?.contains(Lab.pki.clients[name]!.certificate.subject.description) == true, "\(mode) \(name): \(result)")
                } else if case .failure(let error) = result {
                    #expect(error.code == .clientCertificateRejected, "\(mode) \(name): \(error)")
                } else {
                    Issue.record("\(mode) accepted \(name): \(result)")
                }
            }
            // Without a certificate: refused where one is required, anonymous where it is optional.
            let session = try labSession()
            if mode == .optional {
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/whoami"))).text == "anonymous\n")
            } else {
                let refused = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(server, "/whoami"))) }
                #expect(refused?.code == .clientCertificateRequired, "\(mode): \(String(describing: refused))")
            }
            await session.shutdown()
            try await server.shutdown()
        }
    }

    /// The server side says exactly why it refused a client certificate.
    @Test func serverSideReasonsAreExplicit() async throws {
        let authentication = ClientAuthentication(
            requirement: .required, anchors: [Lab.pki.root.certificate], allowedNames: ["CN=lab client,O=swift-trust lab"])
        func reasons(_ identity: LabIdentity) async -> [String] {
            await authentication.validator.evaluate(ServerTrust(presentedChain: identity.chain, peerName: nil)).reasons.map(\.code)
        }
        let good = try Lab.pki.intermediate.leaf(commonName: "lab client", extendedKeyUsage: [.clientAuth])
        #expect(await reasons(good) == [])
        let expired = try Lab.pki.intermediate.leaf(
            commonName: "lab client", notBefore: Date(timeIntervalSinceNow: -9 * 86_400), notAfter: Date(timeIntervalSinceNow: -86_400),
            extendedKeyUsage: [.clientAuth])
        #expect(await reasons(expired) == ["expired"])
        let serverOnly = try Lab.pki.intermediate.leaf(commonName: "lab client", extendedKeyUsage: [.serverAuth])
        #expect(await reasons(serverOnly) == ["missing-extended-key-usage"])
        let otherName = try Lab.pki.intermediate.leaf(commonName: "someone else", extendedKeyUsage: [.clientAuth])
        #expect(await reasons(otherName) == ["name-mismatch"])
        let stranger = try Lab.pki.untrustedRoot.leaf(commonName: "lab client", extendedKeyUsage: [.clientAuth])
        #expect(await reasons(stranger).first == "no-path-to-trusted-anchor")
    }

    /// The client-certificate challenge is raised only when the server sends a CertificateRequest.
    @Test func challengeOnlyWhenAsked() async throws {
        try await withLabServers(["good"]) { servers in
            let asked = NIOLockedValueBox<[AuthenticationMethod]>([])
            let session = try labSession { configuration in
                configuration.challengeHandler = ClosureChallengeHandler { challenge in
                    asked.withLockedValue { $0.append(challenge.protectionSpace.authenticationMethod) }
                    return .performDefaultHandling
                }
            }
            try await withTeardown({ await session.shutdown() }) { () async throws in
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!))).statusCode == 200)
                #expect(asked.withLockedValue { $0 } == [.serverTrust])
            }
        }
    }
}
