import ClientRecipes
import Foundation
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustLabPKI

@Suite struct RotatingIdentityTests {
    /// Writes `identity`'s chain and key where the sidecar would, private from the first byte.
    static func install(_ identity: LabIdentity, chain: URL, key: URL) throws {
        for (text, file) in [(identity.chainPEM, chain), (identity.privateKeyPEM, key)] {
            let temporary = file.appendingPathExtension("new")
            guard FileManager.default.createFile(atPath: temporary.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown)
            }
            // rename(2): the new file replaces the old in one step, as a sidecar does.
            guard rename(temporary.path, file.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
        }
    }

    @Test("a renewed certificate is presented on the next connection; a broken renewal leaves the old one in force")
    func rotation() async throws {
        try await RecipesLab.withTemporaryFolder { folder in
            let chain = folder.appendingPathComponent("client.pem")
            let key = folder.appendingPathComponent("client.key")
            let first = try #require(RecipesLab.pki.clients["client"])
            // The renewal: a new key and certificate from the same CA.
            let renewed = try RecipesLab.pki.intermediate.leaf(commonName: "client renewed", extendedKeyUsage: [.clientAuth])
            try Self.install(first, chain: chain, key: key)
            let rotating = try RotatingIdentity(certificateChain: chain.path, key: key.path, pollInterval: .seconds(3600))
            #expect(rotating.watchedFiles == [chain.path, key.path])
            #expect(rotating.summary.hasSuffix("passphrase: no passphrase") && rotating.iterationLimit == 200_000)

            let server = try await LabServer.start(mutualTLS: .required, pki: RecipesLab.pki)
            func whoami() async throws -> String {
                // A client per request: each connection is new, and presents the identity in force when it is made.
                let client = try TrustHTTPClient(configuration: rotating.configuration(RecipesLab.configuration(), hosts: [server.host]))
                let result = await Result { try await client.data(for: TrustHTTPClientRequest(url: RecipesLab.url(server, "/whoami"))).text }
                await client.shutdown()
                return try result.get()
            }
            let before = await Result { try await whoami() }
            try Self.install(renewed, chain: chain, key: key)
            let generation = rotating.renewNow()
            let after = await Result { try await whoami() }
            // Half a renewal: a new chain with the old key.
            try Data(first.chainPEM.utf8).write(to: chain)
            try Data(renewed.privateKeyPEM.utf8).write(to: key)
            let broken = rotating.renewNow()
            let still = await Result { try await whoami() }
            try await server.shutdown()

            #expect(try before.get().contains("\(first.certificate.subject)"))
            #expect(try generation.get() == 2)
            #expect(try after.get().contains("\(renewed.certificate.subject)"))
            guard case .failure(let refusal) = broken else {
                Issue.record("a mismatched key and certificate were taken")
                return
            }
            #expect(RotatingIdentity.advice(for: refusal).hasPrefix(chain.path) || RotatingIdentity.advice(for: refusal).hasPrefix(key.path))
            #expect(try still.get().contains("\(renewed.certificate.subject)"))
        }
    }

    @Test("the same identity for every host that asks, and a PKCS#12 upload checked before use")
    func defaultIdentityAndUploadCheck() async throws {
        try await RecipesLab.withTemporaryFolder { folder in
            let chain = folder.appendingPathComponent("client.pem")
            let key = folder.appendingPathComponent("client.key")
            try Self.install(try #require(RecipesLab.pki.clients["client"]), chain: chain, key: key)
            let rotating = try RotatingIdentity(certificateChain: chain.path, key: key.path)
            #expect(rotating.configuration(TrustHTTPClientConfiguration()).defaultReloadingClientIdentity === rotating.identity)
            rotating.start()
            rotating.stop()
        }
        let problem = RotatingIdentity.check(pkcs12: Array("not a PKCS#12 file".utf8), passphrase: "secret", source: "upload.p12")
        guard case .failure(let failure) = problem else {
            Issue.record("garbage was taken for an identity")
            return
        }
        #expect(failure.source == "upload.p12" && failure.kind == .notAnIdentity)
    }
}
