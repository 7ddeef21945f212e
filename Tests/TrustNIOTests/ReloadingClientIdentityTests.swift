import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import Testing
import Trust
import TrustLab
import TrustNIO
import TrustTestSupport

@Suite("ReloadingClientIdentity: files followed, bad replacements refused", .timeLimit(.minutes(5)), .paced)
struct ReloadingClientIdentityTests {
    static func pkcs12(_ identity: LabIdentity, passphrase: String) throws -> [UInt8] {
        let chain = try identity.chain.map { try NIOSSLCertificate(bytes: Array($0.pemString.utf8), format: .pem) }
        let key = try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)
        return try NIOSSLPKCS12Bundle(certificateChain: chain, privateKey: key).serialize(passphrase: Array(passphrase.utf8))
    }

    static func commonName(_ identity: ReloadingClientIdentity) -> String {
        identity.current.certificate.subject.description
    }

    @Test func aReplacedPEMPairIsTakenUnderANewGeneration() throws {
        let folder = try IdentityFolder()
        try folder.writePEM(try Lab.rotatingClient("rotation A"))
        let identity = try ReloadingClientIdentity(.pem(certificateChain: folder.chain, key: folder.key))
        let events = NIOLockedValueBox<[ReloadingClientIdentity.Event]>([])
        identity.observe { event in events.withLockedValue { $0.append(event) } }
        #expect(identity.generation == 1)
        #expect(Self.commonName(identity).contains("rotation A"))
        // The same bytes again (rewritten): no new identity.
        let chain = try String(contentsOfFile: folder.chain, encoding: .utf8)
        try chain.write(toFile: folder.chain, atomically: true, encoding: .utf8)
        #expect(identity.reload() == .unchanged)
        try folder.writePEM(try Lab.rotatingClient("rotation B"))
        #expect(identity.reload() == .reloaded(generation: 2))
        #expect(identity.generation == 2)
        #expect(Self.commonName(identity).contains("rotation B"))
        #expect(identity.reload() == .unchanged)
        #expect(identity.lastRejection == nil)
        let seen = events.withLockedValue { $0 }
        #expect(seen.count == 1)
        if case .reloaded(let generation, let reloaded)? = seen.first {
            #expect(generation == 2)
            #expect(reloaded.certificate.subject.description.contains("rotation B"))
        } else {
            Issue.record("no reload event: \(seen)")
        }
    }

    @Test func pollReadsFilesOnlyWhenTheyMayHaveChanged() throws {
        let folder = try IdentityFolder()
        // The passphrase comes from the environment, read at each load but stamped by no file: changing it shows
        // whether a poll read the files although their stamps did not move. A variable of this test's own.
        let variable = "SWIFT_TRUST_TEST_PASSPHRASE_" + UUID().uuidString.replacingOccurrences(of: "-", with: "_")
        setenv(variable, "first secret", 1)
        defer { unsetenv(variable) }
        let p12 = URL(fileURLWithPath: folder["id.p12"])
        try Data(try Self.pkcs12(try Lab.rotatingClient("rotation A"), passphrase: "first secret")).write(to: p12)
        // Modified an hour ago: settled (FileFingerprint.settlingTime), so only a stamp that moves makes a poll read.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3_600)], ofItemAtPath: p12.path)
        let identity = try ReloadingClientIdentity(.pkcs12(path: p12.path, passphrase: .environment(variable)))
        setenv(variable, "second secret", 1)
        #expect(identity.poll() == .unchanged)
        #expect(identity.lastRejection == nil)
        // reload() reads whatever the stamps: the file does not open with the new passphrase.
        #expect(identity.reload() == .rejected(.wrongPassphrase(path: p12.path)))
        // A new file (its stamps moved) under the new passphrase: taken at the next poll.
        try Data(try Self.pkcs12(try Lab.rotatingClient("rotation B"), passphrase: "second secret")).write(to: p12)
        #expect(identity.poll() == .reloaded(generation: 2))
        #expect(Self.commonName(identity).contains("rotation B"))
        // Rewritten with the same bytes: the stamps moved, the digest did not.
        try Data(contentsOf: p12).write(to: p12, options: .atomic)
        #expect(identity.poll() == .unchanged)
        #expect(identity.generation == 2)
    }

    /// Observers are called once the reload is over: one that polls (or reloads) does not deadlock.
    @Test func anObserverMayPoll() throws {
        let folder = try IdentityFolder()
        try folder.writePEM(try Lab.rotatingClient("rotation A"))
        let identity = try ReloadingClientIdentity(.pem(certificateChain: folder.chain, key: folder.key))
        let polled = NIOLockedValueBox<[ReloadingClientIdentity.Outcome]>([])
        identity.observe { [weak identity] _ in
            if let outcome = identity?.poll() { polled.withLockedValue { $0.append(outcome) } }
        }
        try folder.writePEM(try Lab.rotatingClient("rotation B"))
        #expect(identity.reload() == .reloaded(generation: 2))
        #expect(polled.withLockedValue { $0 } == [.unchanged])
    }

    @Test func aKeyThatDoesNotMatchKeepsTheIdentityInForce() throws {
        let folder = try IdentityFolder()
        let a = try Lab.rotatingClient("rotation A")
        try folder.writePEM(a)
        let identity = try ReloadingClientIdentity(.pem(certificateChain: folder.chain, key: folder.key))
        // A new certificate whose key has not been written yet.
        try Lab.rotatingClient("rotation B").chainPEM.write(toFile: folder.chain, atomically: true, encoding: .utf8)
        #expect(identity.reload() == .rejected(.keyDoesNotMatchCertificate(path: folder.chain)))
        #expect(identity.lastRejection == .keyDoesNotMatchCertificate(path: folder.chain))
        #expect(identity.generation == 1)
        #expect(Self.commonName(identity).contains("rotation A"))
        // The same files again at a poll: not loaded again, not reported again.
        #expect(identity.poll() == .unchanged)
        // Once the pair is whole, it is taken.
        let b = try Lab.rotatingClient("rotation B")
        try folder.writePEM(b)
        #expect(identity.reload() == .reloaded(generation: 2))
        #expect(identity.lastRejection == nil)
    }

    @Test func anExpiredOrNotYetValidCertificateIsRefused() throws {
        let folder = try IdentityFolder()
        try folder.writePEM(try Lab.rotatingClient("rotation A"))
        let identity = try ReloadingClientIdentity(.pem(certificateChain: folder.chain, key: folder.key))
        let expired = try Lab.rotatingClient("expired", notBefore: Date(timeIntervalSinceNow: -3 * 86_400), notAfter: Date(timeIntervalSinceNow: -86_400))
        try folder.writePEM(expired)
        guard case .rejected(let rejection) = identity.reload(), case .expired(let path, let notValidAfter) = rejection.detail else {
            Issue.record("an expired certificate was not refused as expired")
            return
        }
        #expect(path == folder.chain)
        #expect(notValidAfter == expired.certificate.notValidAfter)
        let future = try Lab.rotatingClient("future", notBefore: Date(timeIntervalSinceNow: 86_400), notAfter: Date(timeIntervalSinceNow: 3 * 86_400))
        try folder.writePEM(future)
        guard case .rejected(let error) = identity.reload(), case .notYetValid = error.detail else {
            Issue.record("a certificate not yet valid was not refused as such")
            return
        }
        #expect(error.dependsOnTime)
        #expect(Self.commonName(identity).contains("rotation A"))
        #expect(identity.generation == 1)
    }

    @Test func unreadableOrCorruptFilesKeepTheIdentityInForce() throws {
        let folder = try IdentityFolder()
        try folder.writePEM(try Lab.rotatingClient("rotation A"))
        let identity = try ReloadingClientIdentity(.pem(certificateChain: folder.chain, key: folder.key))
        try FileManager.default.removeItem(atPath: folder.key)
        #expect(identity.reload() == .rejected(.unreadable(path: folder.key)))
        try "not a key".write(toFile: folder.key, atomically: true, encoding: .utf8)
        guard case .rejected(let rejection) = identity.reload(), case .unusable(let underlying) = rejection.detail else {
            Issue.record("a file without a key was not refused as unusable")
            return
        }
        #expect(underlying.source == folder.chain)
        #expect(Self.commonName(identity).contains("rotation A"))
    }

    @Test func aPKCS12FileWithTheWrongPassphraseIsRefusedWithoutSayingIt() throws {
        let folder = try IdentityFolder()
        let passphraseFile = folder["passphrase"]
        try "first secret\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        try Data(try Self.pkcs12(try Lab.rotatingClient("rotation A"), passphrase: "first secret")).write(to: URL(fileURLWithPath: folder["id.p12"]))
        let identity = try ReloadingClientIdentity(.pkcs12(path: folder["id.p12"], passphrase: .file(passphraseFile)))
        #expect(Self.commonName(identity).contains("rotation A"))
        // A new file under a new passphrase, the passphrase file not yet changed.
        try Data(try Self.pkcs12(try Lab.rotatingClient("rotation B"), passphrase: "second secret")).write(to: URL(fileURLWithPath: folder["id.p12"]))
        let outcome = identity.reload()
        #expect(outcome == .rejected(.wrongPassphrase(path: folder["id.p12"])))
        if case .rejected(let error) = outcome {
            #expect(!error.description.contains("secret"))
            #expect(!String(reflecting: error).contains("secret"))
        }
        #expect(Self.commonName(identity).contains("rotation A"))
        // The passphrase file follows: taken.
        try "second secret\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        #expect(identity.reload() == .reloaded(generation: 2))
        #expect(Self.commonName(identity).contains("rotation B"))
        #expect(!"\(identity.files)".contains("secret"))
        #expect(!"\(ReloadingClientIdentity.Passphrase.value("hunter2"))".contains("hunter2"))
        // Nor through reflection: `dump`, debuggers and `String(reflecting:)` see the description only.
        for value in [ReloadingClientIdentity.Files.pem(certificateChain: "chain.pem", passphrase: .value("hunter2")), identity.files] as [Any] {
            var dumped = ""
            dump(value, to: &dumped)
            #expect(!dumped.contains("hunter2") && !dumped.contains("secret") && !String(reflecting: value).contains("hunter2"), "\(dumped)")
        }
        var dumped = ""
        dump(ReloadingClientIdentity.Passphrase.value("hunter2"), to: &dumped)
        #expect(!dumped.contains("hunter2") && dumped.contains("a passphrase given in code"), "\(dumped)")
    }

    @Test func aFirstLoadThatFailsThrowsItsReason() throws {
        let folder = try IdentityFolder()
        #expect(throws: ReloadingClientIdentityError.unreadable(path: folder["missing.pem"])) {
            try ReloadingClientIdentity(.pem(certificateChain: folder["missing.pem"]))
        }
        #expect(throws: ReloadingClientIdentityError.passphraseUnavailable(source: "$SWIFT_TRUST_UNSET_PASSPHRASE_VARIABLE")) {
            try "x".write(toFile: folder["id.p12"], atomically: true, encoding: .utf8)
            _ = try ReloadingClientIdentity(.pkcs12(path: folder["id.p12"], passphrase: .environment("SWIFT_TRUST_UNSET_PASSPHRASE_VARIABLE")))
        }
    }

    @Test func pollingTakesAChangeWithoutBeingAsked() async throws {
        let folder = try IdentityFolder()
        try folder.writePEM(try Lab.rotatingClient("rotation A"))
        let identity = try ReloadingClientIdentity(.pem(certificateChain: folder.chain, key: folder.key), pollInterval: .milliseconds(20))
        let (reloads, continuation) = AsyncStream<UInt64>.makeStream()
        identity.observe { event in
            if case .reloaded(let generation, _) = event { continuation.yield(generation) }
        }
        identity.startPolling()
        defer { identity.stopPolling() }
        try folder.writePEM(try Lab.rotatingClient("rotation B"))
        // The observer's signal, not a timed wait: the suite's time limit bounds it.
        var iterator = reloads.makeAsyncIterator()
        #expect(await iterator.next() == 2)
        #expect(Self.commonName(identity).contains("rotation B"))
    }
}
