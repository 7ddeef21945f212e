import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// Records every HTTP-authentication challenge and answers with a closure.
final class RecordingHandler: ChallengeHandler {
    let seen = NIOLockedValueBox<[AuthenticationChallenge]>([])
    let answer: @Sendable (AuthenticationChallenge) -> ChallengeDisposition

    init(_ answer: @escaping @Sendable (AuthenticationChallenge) -> ChallengeDisposition) {
        self.answer = answer
    }

    func handle(_ challenge: AuthenticationChallenge) async -> ChallengeDisposition {
        guard challenge.protectionSpace.authenticationMethod == .httpBasic || challenge.protectionSpace.authenticationMethod == .httpDigest else {
            return .performDefaultHandling
        }
        seen.withLockedValue { $0.append(challenge) }
        return answer(challenge)
    }

    var challenges: [AuthenticationChallenge] { seen.withLockedValue { $0 } }
}

@Suite("HTTP authentication through the Session", .serialized, .timeLimit(.minutes(5)), .paced)
struct HTTPAuthenticationSessionTests {
    static let alice = Credential(user: "alice", password: "wonderland", persistence: .none)

    func server() async throws -> LabServer {
        try await LabServer.start("good", pki: Lab.pki)
    }

    @Test func everyDigestAlgorithmAndQop() async throws {
        let server = try await server()
        let session = try labSession()
        for algorithm in ["MD5", "MD5-sess", "SHA-256", "SHA-256-sess", "SHA-512-256", "SHA-512-256-sess"] {
            for qop in ["auth", "auth-int", "auth,auth-int", "none"] {
                for userhash in [false, true] {
                    let path = "/digest?algorithm=\(algorithm)&qop=\(qop)" + (userhash ? "&userhash=1" : "")
                    let response = try await session.data(
                        for: TrustHTTPClientRequest(
                            url: url(server, path), method: "POST", body: .text("body \(qop)"),
                            credential: Self.alice))
                    if algorithm.hasSuffix("-sess") && qop == "none" {
                        #expect(response.statusCode == 401)  // -sess needs a client nonce, sent only with a qop: not answered
                        continue
                    }
                    #expect(response.statusCode == 200, "\(path)")
                    #expect(response.text == "authenticated alice via Digest \(algorithm)\n", "\(path)")
                }
            }
        }
        // A non-ASCII user name: hashed (userhash) or in RFC 8187 notation.
        let jason = Credential(user: "J\u{E4}s\u{F8}n Doe", password: "Secret, or not?", persistence: .none)
        for path in ["/digest?algorithm=SHA-512-256&userhash=1", "/digest?algorithm=SHA-256"] {
            let response = try await session.data(for: TrustHTTPClientRequest(url: url(server, path), credential: jason))
            #expect(response.text == "authenticated J\u{E4}s\u{F8}n Doe via Digest \(path.contains("512") ? "SHA-512-256" : "SHA-256")\n", "\(path)")
        }
        #expect(
            try await session.data(for: TrustHTTPClientRequest(url: url(server, "/basic"), credential: Self.alice)).text == "authenticated alice via Basic\n")
        await session.shutdown()
        try await server.shutdown()
    }

    /// A wrong password ends after a bounded number of attempts, with the 401.
    @Test func wrongPasswordIsBounded() async throws {
        let server = try await server()
        for path in ["/basic", "/digest?algorithm=SHA-256"] {
            let handler = RecordingHandler { _ in .useCredential(Credential(user: "alice", password: "wrong", persistence: .none)) }
            let session = try labSession { $0.challengeHandler = handler }
            let response = try await session.data(for: TrustHTTPClientRequest(url: url(server, path)))
            #expect(response.statusCode == 401)
            #expect(handler.challenges.map(\.previousFailureCount) == [0, 1], "\(path)")
            #expect(handler.challenges.last?.failureResponse?.statusCode == 401)
            #expect(handler.challenges.first?.protectionSpace.realm == "lab")
            await session.shutdown()
            // Default handling with a wrong request credential: one try, then the 401.
            let defaults = try labSession()
            let again = try await defaults.data(
                for: TrustHTTPClientRequest(url: url(server, path), credential: Credential(user: "alice", password: "nope", persistence: .none)))
            #expect(again.statusCode == 401)
            await defaults.shutdown()
        }
        // A server inventing a new realm on every 401 is bounded too.
        let handler = RecordingHandler { _ in .useCredential(Self.alice) }
        let session = try labSession { $0.challengeHandler = handler }
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/shifting-realm"))).statusCode == 401)
        #expect(handler.challenges.count <= 8)
        await session.shutdown()
        try await server.shutdown()
    }

    /// No answer crashes — nil credential, the wrong kind, cancel, and default handling with nothing stored.
    @Test func everyDispositionEndsCleanly() async throws {
        let server = try await server()
        for path in ["/basic", "/digest?algorithm=MD5"] {
            func get(_ disposition: @escaping @Sendable (AuthenticationChallenge) -> ChallengeDisposition) async throws -> Result<
                TrustHTTPClientResponse, TrustHTTPClientError
            > {
                let session = try labSession { $0.challengeHandler = RecordingHandler(disposition) }
                return try await withTeardown({ await session.shutdown() }) {
                    do { return .success(try await session.data(for: TrustHTTPClientRequest(url: url(server, path)))) } catch let error as TrustHTTPClientError
                    {
                        return .failure(error)
                    }
                }
            }
            #expect((try? await get { _ in .useCredential(nil) }.get())?.statusCode == 401)
            #expect((try? await get { _ in .performDefaultHandling }.get())?.statusCode == 401)
            #expect((try? await get { _ in .rejectProtectionSpace }.get())?.statusCode == 401)
            guard case .failure(let cancelled) = try await get({ _ in .cancelAuthenticationChallenge }) else {
                Issue.record("cancel went on")
                continue
            }
            #expect(cancelled.code == .userCancelledAuthentication)
            guard case .failure(let wrongKind) = try await get({ _ in .useCredential(Credential(identity: MutualTLSTests.clientIdentity)) }) else {
                Issue.record("an identity answered an HTTP challenge")
                continue
            }
            #expect(wrongKind.code == .userAuthenticationRequired)
        }
        // No handler, nothing stored: the 401 comes back (URLSession on Linux hangs here).
        let session = try labSession()
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/digest"))).statusCode == 401)
        await session.shutdown()
        try await server.shutdown()
    }

    @Test func strongestFirstAndRejectMovesOn() async throws {
        let server = try await server()
        let session = try labSession()
        #expect(
            try await session.data(for: TrustHTTPClientRequest(url: url(server, "/multi"), credential: Self.alice)).text
                == "authenticated alice via Digest SHA-256\n")
        // A user and password in the URL act as the request's credential (percent-decoded).
        let inURL = URL(string: "https://alice:wonder%6Cand@good.lab.test:\(server.port)/digest?algorithm=SHA-256")!
        #expect(try await session.data(for: TrustHTTPClientRequest(url: inURL)).text == "authenticated alice via Digest SHA-256\n")
        await session.shutdown()
        // Reject Digest (both) → Basic.
        let handler = RecordingHandler { challenge in
            challenge.protectionSpace.authenticationMethod == .httpDigest ? .rejectProtectionSpace : .useCredential(Self.alice)
        }
        let rejecting = try labSession { $0.challengeHandler = handler }
        #expect(try await rejecting.data(for: TrustHTTPClientRequest(url: url(server, "/multi"))).text == "authenticated alice via Basic\n")
        #expect(handler.challenges.compactMap { $0.httpChallenge?["algorithm"] } == ["SHA-256", "MD5"])
        #expect(handler.challenges.last?.protectionSpace.authenticationMethod == .httpBasic)
        await rejecting.shutdown()
        // The task-level handler first; its default handling defers to the session's.
        let sessionLevel = RecordingHandler { _ in .useCredential(Self.alice) }
        let taskLevel = RecordingHandler { _ in .performDefaultHandling }
        let both = try labSession { $0.challengeHandler = sessionLevel }
        #expect(try await both.data(for: TrustHTTPClientRequest(url: url(server, "/basic"), challengeHandler: taskLevel)).statusCode == 200)
        #expect(taskLevel.challenges.count == 1 && sessionLevel.challenges.count == 1)
        await both.shutdown()
        try await server.shutdown()
    }

    @Test func staleNoncesAndNextNonceAreNotFailures() async throws {
        let server = try await server()
        for path in ["/digest?algorithm=SHA-256&stale=1", "/digest?algorithm=SHA-256-sess&qop=auth-int&nextnonce=1", "/digest?algorithm=MD5&nextnonce=1"] {
            // Remembered for the session: later requests (without a credential of their own) reuse the Digest session.
            let handler = RecordingHandler { _ in .useCredential(Credential(user: "alice", password: "wonderland", persistence: .forSession)) }
            let session = try labSession { $0.challengeHandler = handler }
            for _ in 0..<4 {
                let response = try await session.data(for: TrustHTTPClientRequest(url: url(server, path), method: "PUT", body: .text("x")))
                #expect(response.statusCode == 200, "\(path)")
            }
            // One challenge raised in all: later requests reuse the nonce (or nextnonce); a stale one is retried silently.
            #expect(handler.challenges.count == 1, "\(path): \(handler.challenges.map(\.previousFailureCount))")
            await session.shutdown()
        }
        try await server.shutdown()
    }

    @Test func basicNeverInClearTextUnlessAllowed() async throws {
        let plain = try await LabServer.startPlain(name: "plain")
        let strict = try labSession()
        let refused = await sessionError { try await strict.data(for: TrustHTTPClientRequest(url: url(plain, "/basic"), credential: Self.alice)) }
        #expect(refused?.code == .userAuthenticationRequired)
        #expect(refused?.message.contains("clear text") == true)
        // Preemptive Basic is not sent over http either.
        let headers = try await strict.data(for: TrustHTTPClientRequest(url: url(plain, "/headers"), credential: Self.alice, authenticatesPreemptively: true))
        #expect(!headers.text.lowercased().contains("authorization"))
        // Digest never sends the password: answered over http.
        #expect(try await strict.data(for: TrustHTTPClientRequest(url: url(plain, "/digest?algorithm=SHA-256"), credential: Self.alice)).statusCode == 200)
        await strict.shutdown()
        let allowing = try labSession { $0.allowsCredentialsOverHTTP = true }
        #expect(try await allowing.data(for: TrustHTTPClientRequest(url: url(plain, "/basic"), credential: Self.alice)).statusCode == 200)
        await allowing.shutdown()
        try await plain.shutdown()
    }

    @Test func credentialsNeverFollowARedirectToAnotherOrigin() async throws {
        let a = try await server()
        let b = try await server()  // the same host on another port: another origin
        let session = try labSession()
        // Preemptive Basic to A, redirected to B: B sees no Authorization.
        let target = "https://good.lab.test:\(b.port)/headers"
        let redirected = try await session.data(
            for: TrustHTTPClientRequest(url: url(a, "/redirect?to=\(target)"), credential: Self.alice, authenticatesPreemptively: true))
        #expect(redirected.statusCode == 200)
        #expect(!redirected.text.lowercased().contains("authorization"), "\(redirected.text)")
        // Same origin: kept.
        let same = try await session.data(
            for: TrustHTTPClientRequest(url: url(a, "/redirect?to=/headers"), credential: Self.alice, authenticatesPreemptively: true))
        #expect(same.text.lowercased().contains("authorization: basic"))
        // B challenges after the redirect: the request's credential is not proposed there.
        let handler = RecordingHandler { _ in .performDefaultHandling }
        let challenged = try await session.data(
            for: TrustHTTPClientRequest(url: url(a, "/redirect?to=https://good.lab.test:\(b.port)/basic"), challengeHandler: handler, credential: Self.alice))
        #expect(challenged.statusCode == 401)
        #expect(handler.challenges.count == 1 && handler.challenges.first?.proposedCredential == nil)
        await session.shutdown()
        try await a.shutdown()
        try await b.shutdown()
    }

    @Test func workingCredentialsAreStoredPerPersistence() async throws {
        let server = try await server()
        let store = CredentialStore()
        let session = try labSession { $0.credentialStore = store }
        let remembered = Credential(user: "alice", password: "wonderland", persistence: .forSession)
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/basic"), credential: remembered)).statusCode == 200)
        let space = ProtectionSpace(host: "good.lab.test", port: server.port, scheme: "https", realm: "lab", authenticationMethod: .httpBasic)
        #expect(store.defaultCredential(for: space)?.description.contains("alice") == true)
        // The next request needs no credential of its own; the store's is proposed and used.
        let handler = RecordingHandler { _ in .performDefaultHandling }
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/basic"), challengeHandler: handler)).statusCode == 200)
        #expect(handler.challenges.first?.proposedCredential?.description.contains("alice") == true)
        // .none is never stored.
        let other = CredentialStore()
        let forgetful = try labSession { $0.credentialStore = other }
        #expect(try await forgetful.data(for: TrustHTTPClientRequest(url: url(server, "/basic"), credential: Self.alice)).statusCode == 200)
        #expect(other.protectionSpaces.isEmpty)
        await forgetful.shutdown()
        await session.shutdown()
        try await server.shutdown()
    }
}

extension HTTPAuthenticationSessionTests {
    /// What an attacker (or a careless caller) would try.
    @Test func attackerScenarios() async throws {
        let server = try await server()
        // A preemptive wrong password counts as the realm's first failure: it is not sent a second time.
        let handler = RecordingHandler { _ in .performDefaultHandling }
        let session = try labSession()
        let wrong = Credential(user: "alice", password: "wrong", persistence: .none)
        #expect(
            try await session.data(
                for: TrustHTTPClientRequest(url: url(server, "/basic"), challengeHandler: handler, credential: wrong, authenticatesPreemptively: true)
            )
            .statusCode == 401)
        #expect(handler.challenges.map(\.previousFailureCount) == [1])
        // A Digest session answers only for its own user: a later request without credentials is not sent as alice.
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/digest?algorithm=SHA-256"), credential: Self.alice)).statusCode == 200)
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/digest?algorithm=SHA-256"))).statusCode == 401)
        let bob = Credential(user: "bob", password: "x", persistence: .none)
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/digest?algorithm=SHA-256"), credential: bob)).statusCode == 401)
        // Header injection through the method, the host, or a user name: refused before anything is sent.
        let method = await sessionError {
            try await session.data(for: TrustHTTPClientRequest(url: url(server, "/"), method: "GET / HTTP/1.1\r\nX-Injected: 1"))
        }
        #expect(method?.code == .badURL)
        // Foundation decodes %0D%0A in a host name: it must not reach a Host header or a CONNECT line.
        let evil = try #require(URL(string: "https://evil%0D%0AX-Injected.lab.test/"))
        #expect(evil.host?.contains("\r\n") == true)
        #expect(await sessionError { try await session.data(for: TrustHTTPClientRequest(url: evil)) }?.code == .badURL)
        let injected = Credential(user: "alice\r\nX-Injected: 1", password: "p", persistence: .none)
        #expect(
            await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(server, "/digest"), credential: injected)) }?.code
                == .userAuthenticationRequired)
        // Passwords never appear in errors or descriptions.
        let withPassword = URL(string: "https://alice:s3cret@good.lab.test:1/")!
        let refused = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: withPassword)) }
        #expect(refused.map { !"\($0)".contains("s3cret") } == true)
        #expect(!"\(TrustHTTPClientRequest(url: withPassword, headers: [.authorization: "Basic c2VjcmV0"], credential: Self.alice))".contains("s3cret"))
        #expect(!"\(TrustHTTPClientRequest(url: withPassword, headers: [.authorization: "Basic c2VjcmV0"]))".contains("c2VjcmV0"))
        do {
            _ = try ProxyConfiguration(url: "http://user:hunter2@proxy:badport")
            Issue.record("a malformed proxy URL was accepted")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
        }
        // A combining mark after the '@' makes one `Character` that is not '@'; the password is still cut off.
        do {
            _ = try ProxyConfiguration(url: "http://user:hunter3@\u{301}proxy")
            Issue.record("a malformed proxy URL was accepted")
        } catch {
            #expect(Data("\(error)".utf8).range(of: Data("hunter3".utf8)) == nil, "\(error)")
        }
        await session.shutdown()
        // An origin sending 407 through a tunnel cannot ask for (or receive) proxy credentials.
        let proxy = try await LabProxy.start()
        let asked = RecordingHandler { _ in .useCredential(Self.alice) }
        let tunnelled = try labSession {
            $0.proxy = try? ProxyConfiguration(url: proxy.url, credential: Self.alice)
            $0.challengeHandler = asked
        }
        #expect(try await tunnelled.data(for: TrustHTTPClientRequest(url: url(server, "/status/407"))).statusCode == 407)
        #expect(asked.challenges.isEmpty)
        await tunnelled.shutdown()
        try await proxy.shutdown()
        try await server.shutdown()
    }
}

@Suite("Credential store: persistence, file safety, no secrets in text", .paced)
struct CredentialStoreTests {
    let space = ProtectionSpace(host: "API.example.com", port: 443, scheme: "https", realm: "api", authenticationMethod: .httpDigest)

    @Test func permanentCredentialsGoToA0600FileAtomically() throws {
        let dir = try temporaryDirectory() + "/config/swift-trust"
        let file = URL(fileURLWithPath: dir + "/credentials.json")
        let store = try CredentialStore(fileURL: file)
        try store.set(Credential(user: "alice", password: "s3cret-password", persistence: .permanent), for: space)
        try store.set(Credential(user: "bob", password: "session-only", persistence: .forSession), for: space, asDefault: false)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let folderMode = try FileManager.default.attributesOfItem(atPath: dir)[.posixPermissions] as? NSNumber
        #expect(folderMode?.intValue == 0o700)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.contains("\"version\" : 1") && text.contains("alice") && !text.contains("bob"))
        // No temporary files left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["credentials.json"])
        // The same credential again (as after every authenticated request) writes nothing: every save
        // replaces the file by a rename, so the file would be a new one.
        let inode = { try FileManager.default.attributesOfItem(atPath: file.path)[.systemFileNumber] as? NSNumber }
        let before = try inode()
        try store.set(Credential(user: "alice", password: "s3cret-password", persistence: .permanent), for: space)
        #expect(try inode() == before)
        try store.set(Credential(user: "alice", password: "changed-password", persistence: .permanent), for: space)
        #expect(try inode() != before)
        try store.set(Credential(user: "alice", password: "s3cret-password", persistence: .permanent), for: space)
        // Reloaded: the permanent one only, still the default; host case does not matter.
        let reloaded = try CredentialStore(fileURL: file)
        #expect(reloaded.credentials(for: space).keys.sorted() == ["alice"])
        var lower = space
        lower.host = "api.example.com"
        #expect(reloaded.defaultCredential(for: lower)?.description.contains("alice") == true)
        // Never a password in descriptions.
        #expect(!store.description.contains("s3cret") && !store.description.contains("session-only"))
        #expect(!"\(reloaded.defaultCredential(for: space)!)".contains("s3cret"))
        // Removal rewrites the file.
        try reloaded.remove(user: "alice", for: space)
        #expect(try CredentialStore(fileURL: file).protectionSpaces.isEmpty)
    }

    /// Two stores on one file (two processes, or two stores in one): each save is made to the file as it is then,
    /// so neither drops what the other wrote. Before, each wrote its own snapshot: the second store's save removed
    /// the first store's credential from the file.
    @Test func storesSharingAFileKeepEachOthersCredentials() async throws {
        let file = URL(fileURLWithPath: try temporaryDirectory() + "/swift-trust/credentials.json")
        let first = try CredentialStore(fileURL: file)
        let second = try CredentialStore(fileURL: file)
        try first.set(Credential(user: "alice", password: "first-store", persistence: .permanent), for: space)
        try second.set(Credential(user: "bob", password: "second-store", persistence: .permanent), for: space, asDefault: false)
        #expect(try CredentialStore(fileURL: file).credentials(for: space).keys.sorted() == ["alice", "bob"])
        #expect(try CredentialStore(fileURL: file).defaultCredential(for: space)?.description.contains("alice") == true)
        // The second store took the first one's credential in as it saved.
        #expect(second.credentials(for: space).keys.sorted() == ["alice", "bob"])
        // Forty saves at once from both: all forty on the file.
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask { try? first.set(Credential(user: "a\(index)", password: "p", persistence: .permanent), for: space, asDefault: false) }
                group.addTask { try? second.set(Credential(user: "b\(index)", password: "p", persistence: .permanent), for: space, asDefault: false) }
            }
        }
        #expect(try CredentialStore(fileURL: file).credentials(for: space).count == 42)
        // A removal through a store that never held the credential reaches the file.
        let third = try CredentialStore(fileURL: file)
        try first.set(Credential(user: "carol", password: "late", persistence: .permanent), for: space, asDefault: false)
        try third.remove(user: "carol", for: space)
        #expect(try CredentialStore(fileURL: file).credentials(for: space)["carol"] == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path) == ["credentials.json"])
    }

    @Test func unsafeOrMalformedFilesAreRefusedWithTypedErrors() throws {
        let dir = try temporaryDirectory()
        let file = dir + "/credentials.json"
        try #"{"version": 1, "credentials": []}"#.write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        #expect(throws: CredentialStoreError.insecurePermissions(file, 0o644)) { try CredentialStore(fileURL: URL(fileURLWithPath: file)) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        #expect(throws: Never.self) { try CredentialStore(fileURL: URL(fileURLWithPath: file)) }
        for bad in [
            "not json", #"{"version": 2, "credentials": []}"#, #"{"version": 1, "credentials": [{"host": 1}]}"#,
            #"{"version": 1, "credentials": [{"host": "h", "port": 1, "scheme": "https", "method": "httpBasic", "proxy": false, "user": "u", "default": true}]}"#,
        ] {
            try bad.write(toFile: file, atomically: false, encoding: .utf8)
            do {
                _ = try CredentialStore(fileURL: URL(fileURLWithPath: file))
                Issue.record("accepted \(bad)")
            } catch {
                if case .malformed = error.detail {} else { Issue.record("\(bad): \(error)") }
                #expect(!"\(error)".contains("\"u\""))
            }
        }
        #expect(throws: CredentialStoreError.notAUserCredential) {
            try CredentialStore().set(Credential(identity: MutualTLSTests.clientIdentity), for: space)
        }
    }
}
