import ClientRecipes
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustLabPKI

@Suite struct UpstreamFailureTests {
    @Test("an expired certificate is a refusal with its reason code, not retryable")
    func expiredIsRefused() async throws {
        try await RecipesLab.withServer("expired") { server, client in
            let error = await #expect(throws: TrustHTTPClientError.self) {
                try await client.data(for: TrustHTTPClientRequest(url: RecipesLab.url(server, "/")))
            }
            let failure = UpstreamFailure(try #require(error))
            #expect(failure.kind == .refusedCertificate(["expired"]))
            #expect(!failure.isRetryable)
            #expect(failure.errorCode == TrustHTTPClientError.Code.serverCertificateHasBadDate.rawValue)
            #expect(failure.url?.host == server.host)
            #expect(!failure.advice.isEmpty)
        }
    }

    @Test("an answer past the request's limit says how large it was and what the limit is")
    func tooLarge() async throws {
        try await RecipesLab.withServer("good") { server, client in
            let downloads = Downloads(client: client)
            let error = await #expect(throws: TrustHTTPClientError.self) { try await downloads.small(RecipesLab.url(server, "/bytes/5000"), limit: 100) }
            let failure = UpstreamFailure(try #require(error))
            #expect(failure.kind == .tooLarge(observed: 5000, limit: 100, fromProxy: false))
        }
    }

    @Test("a port that does not speak TLS is a handshake failure")
    func notTLS() async throws {
        let plain = try await LabServer.startPlain(name: "plain")
        let client = try TrustHTTPClient(configuration: RecipesLab.configuration())
        let url = try #require(URL(string: "https://plain.lab.test:\(plain.port)/"))
        let error = await #expect(throws: TrustHTTPClientError.self) { try await client.data(for: TrustHTTPClientRequest(url: url)) }
        await client.shutdown()
        try await plain.shutdown()
        let failure = UpstreamFailure(try #require(error))
        #expect(failure.kind == .handshake("the port does not speak TLS"))
    }
}

@Suite struct LoginChallengeHandlerTests {
    static let account = LoginChallengeHandler.Account(
        host: LabPKI.hostName(for: "good"), realm: LabHTTPAuthentication.realm, user: "alice", password: "wonderland")

    @Test("Digest over TLS: the handler logs in once and sees the challenge's parameters, never a password")
    func digestLogin() async throws {
        let seen = NIOLockedValueBox<[LoginChallengeHandler.Seen]>([])
        let handler = LoginChallengeHandler(accounts: [Self.account]) { record in seen.withLockedValue { $0.append(record) } }
        try await RecipesLab.withServer("good", configure: { $0.challengeHandler = handler }) { server, client in
            let response = try await client.data(for: TrustHTTPClientRequest(url: RecipesLab.url(server, "/digest?algorithm=SHA-256")))
            #expect(response.status == .ok)
            #expect(response.text.contains("authenticated alice via Digest"))
        }
        let records = seen.withLockedValue { $0 }
        #expect(records.count == 1)
        let first = try #require(records.first)
        #expect(first.method == .httpDigest && first.realm == "lab" && first.scheme == "https" && !first.isProxy)
        #expect(first.status == 401 && first.previousFailureCount == 0 && first.challengeScheme == "digest")
        #expect(first.parameterNames.contains("nonce"))
    }

    @Test("a wrong password is tried once, then the handler cancels")
    func wrongPasswordOnce() async throws {
        var account = Self.account
        account.password = "not it"
        let seen = NIOLockedValueBox(0)
        let handler = LoginChallengeHandler(accounts: [account]) { _ in seen.withLockedValue { $0 += 1 } }
        try await RecipesLab.withServer("good", configure: { $0.challengeHandler = handler }) { server, client in
            let outcome = await Result { try await client.data(for: TrustHTTPClientRequest(url: RecipesLab.url(server, "/basic"))) }
            switch outcome {
            case .success(let response): #expect(response.statusCode == 401)
            case .failure(let error): #expect((error as? TrustHTTPClientError)?.code == .userCancelledAuthentication)
            }
        }
        #expect(seen.withLockedValue { $0 } == 2)
    }

    @Test("an unknown realm is refused without sending anything")
    func unknownRealm() async throws {
        var account = Self.account
        account.realm = "elsewhere"
        let handler = LoginChallengeHandler(accounts: [account])
        try await RecipesLab.withServer("good", configure: { $0.challengeHandler = handler }) { server, client in
            let response = try await client.data(for: TrustHTTPClientRequest(url: RecipesLab.url(server, "/basic")))
            #expect(response.statusCode == 401)
        }
    }
}

@Suite struct SavedLoginsTests {
    @Test("a remembered login answers the next run's 401, from a file only its owner can read")
    func rememberedLogin() async throws {
        try await RecipesLab.withTemporaryFolder { folder in
            let file = folder.appendingPathComponent("credentials.json")
            try await RecipesLab.withServer("good") { server, _ in
                let url = try RecipesLab.url(server, "/digest")
                let space = try #require(SavedLogins.space(for: url, realm: LabHTTPAuthentication.realm))
                try SavedLogins(file: file).remember(user: "alice", password: "wonderland", for: space)

                // The next run: a new store reads the file.
                let logins = try SavedLogins(file: file)
                #expect(logins.file == file)
                #expect(logins.login(for: space)?.isUser == true)
                #expect(logins.users(for: space) == ["alice"])
                #expect(logins.listing() == ["https://\(server.host):\(server.port) realm=lab: alice"])
                #expect(!logins.listing().joined().contains("wonderland"))
                let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
                #expect(mode == 0o600)

                let client = try TrustHTTPClient(configuration: logins.configuration(RecipesLab.configuration()))
                let response = await Result { try await client.data(for: TrustHTTPClientRequest(url: url)) }
                await client.shutdown()
                #expect(try response.get().text.contains("authenticated alice via Digest"))

                try logins.forget(user: "alice", for: space)
                #expect(logins.login(for: space) == nil)
                try logins.remember(user: "alice", password: "wonderland", for: space)
                try logins.forgetAll()
                #expect(try SavedLogins(file: file).listing().isEmpty)
            }
        }
    }

    @Test("a logins file that others can read is refused, and the message names no password")
    func refusesReadableFile() async throws {
        try await RecipesLab.withTemporaryFolder { folder in
            let file = folder.appendingPathComponent("credentials.json")
            let json =
                #"{"version": 1, "credentials": [{"host": "h", "port": 443, "scheme": "https", "realm": "r", "method": "httpBasic", "proxy": false, "user": "u", "password": "hunter2", "default": true}]}"#
            try Data(json.utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
            let error = #expect(throws: (any Error).self) { try SavedLogins(file: file) }
            let thrown = try #require(error)
            let message = SavedLogins.message(for: thrown)
            #expect(message.contains("cannot use the saved logins"))
            #expect(!message.contains("hunter2"))
        }
    }
}

@Suite struct DownloadsTests {
    @Test("a download reaches the file whole, with progress to 1, over HTTP/2 and TLS 1.3")
    func download() async throws {
        try await RecipesLab.withTemporaryFolder { folder in
            try await RecipesLab.withServer("good") { server, client in
                let fractions = NIOLockedValueBox<[Double]>([])
                let file = folder.appendingPathComponent("bytes")
                let fetched = try await Downloads(client: client).download(RecipesLab.url(server, "/bytes/300000"), to: file) { fraction in
                    fractions.withLockedValue { $0.append(fraction) }
                }
                #expect(try Data(contentsOf: file).count == 300_000)
                #expect(fractions.withLockedValue { $0.last } == 1)
                #expect(fetched.status == 200 && fetched.redirects == 0 && fetched.httpVersion == "2" && fetched.tlsVersion == "TLSv1.3")

                let saved = try await Downloads(client: client).save(RecipesLab.url(server, "/bytes/70000"), to: file, limit: 1 << 20)
                #expect(saved == 70_000)
                #expect(try Data(contentsOf: file).count == 70_000)
            }
        }
    }

    @Test("the first line of a large body, without reading the rest")
    func firstLine() async throws {
        try await RecipesLab.withServer("good", protocols: .http1Only) { server, client in
            let line = try await Downloads(client: client).firstLine(of: RecipesLab.url(server, "/headers"))
            #expect(line?.contains(":") == true)
            let next = try await client.data(for: TrustHTTPClientRequest(url: RecipesLab.url(server, "/")))
            #expect(next.status == .ok)
        }
    }
}

@Suite struct StatusAPITests {
    @Test("operations go through the pinned client; a pin mismatch is a refusal the caller can read")
    func operations() async throws {
        let pin = RecipesLab.pki.intermediate.certificate.spkiPin
        try await RecipesLab.withServer("good", configure: RecipesLab.pinned([pin, RecipesLab.pki.otherRoot.certificate.spkiPin])) { server, client in
            let api = StatusAPI(serverURL: try RecipesLab.url(server, ""), client: client)
            #expect(try await api.status(204) == .noContent)
            #expect(try await api.echo("hello") == "POST\nhello")
        }
        let wrong = try SPKIPin(digest: [UInt8](repeating: 9, count: 32))
        try await RecipesLab.withServer("good", configure: RecipesLab.pinned([wrong, RecipesLab.pki.otherRoot.certificate.spkiPin])) { server, client in
            let api = StatusAPI(serverURL: try RecipesLab.url(server, ""), client: client)
            let error = await #expect(throws: (any Error).self) { try await api.status(200) }
            let thrown = try #require(error)
            let refusal = try #require(StatusAPI.refusal(in: thrown))
            #expect(refusal.reasons.map(\.kind).contains(.pinMismatch))
        }
    }
}

@Suite struct UpstreamClientTests {
    @Test("the client and the file's poller run in a service group; a bad change is refused and the old trust stays")
    func serviceGroup() async throws {
        try await RecipesLab.withTemporaryFolder { folder in
            try RecipesLab.writeRoots(into: folder)
            let file = folder.appendingPathComponent("trust.json")
            let good = #"{"version": 1, "hosts": [{"host": "**.lab.test", "anchors": {"certificates": ["lab-roots.pem"], "replaceSystem": true}}]}"#
            try Data(good.utf8).write(to: file)
            let server = try await LabServer.start("good", pki: RecipesLab.pki)
            var logger = Logger(label: "upstream")
            logger.logLevel = .critical
            let upstream = try UpstreamClient(trustFile: file.path, pollInterval: .milliseconds(100), logger: logger) {
                $0.resolve = LabPKI.loopbackResolve
            }
            let group = ServiceGroup(services: [LabServerService([server])] + upstream.services, logger: logger)
            let changes = upstream.changes()
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                var request = TrustHTTPClientRequest(url: try RecipesLab.url(server, "/"))
                request.timeout = .seconds(30)
                #expect(try await upstream.client.data(for: request).status == .ok)

                try Data(#"{"version": 1, "hosts": [{"host": "**.lab.test", "pins": {"sha256": ["nonsense"]}}]}"#.utf8).write(to: file)
                var iterator = changes.makeAsyncIterator()
                let event = await iterator.next()
                #expect(event?.rejection?.code == "malformed")
                #expect(event?.rejection?.problems.isEmpty == false)
                #expect(upstream.trust.generation == 1)
                #expect(try await upstream.client.data(for: request).status == .ok)

                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            #expect(upstream.client.openConnectionCount == 0)
        }
    }
}
