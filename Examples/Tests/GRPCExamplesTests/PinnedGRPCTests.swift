import GRPCCore
import PinnedGRPC
import Testing
import Trust
import TrustGRPC

/// A gRPC client whose connections TrustGRPC verifies, against echo servers presenting the lab's chains over
/// 127.0.0.1: the RPCs go through with a good pin, and a refused handshake fails the RPC with its typed reason.
@Suite struct PinnedGRPCTests {
    @Test func unaryAndStreamingRPCsWithTheIssuingCAPinned() async throws {
        let server = try await GRPCLab.startServer("good")
        let trust = try GRPCLab.pinnedTrust(host: "good.lab.test")
        let (answer, words) = try await GRPCLab.withEcho(trust, port: server.port) { echo in
            (try await echo.get("hello"), try await echo.expand("one two three"))
        }
        #expect(answer == "anonymous: hello")
        #expect(words == ["anonymous: one", "anonymous: two", "anonymous: three"])
        await server.stop()
    }

    @Test func theMITMChainIsRefusedForItsPins() async throws {
        // A leaf for good.lab.test from another trusted root, with the pinned intermediate appended: it validates
        // (to the other root), but the pinned key is not on the path.
        let server = try await GRPCLab.startServer("mitm")
        let trust = try GRPCLab.pinnedTrust(host: "good.lab.test")
        let error = await GRPCLab.rpcError { _ = try await GRPCLab.withEcho(trust, port: server.port) { try await $0.get("hello") } }
        await server.stop()
        #expect(error?.code == .unavailable)
        let reasons = try #require(error?.trustDecision?.reasons)
        #expect(reasons.contains { $0.kind == .pinMismatch })
        #expect(error?.trustRefusal?.host == "good.lab.test")
        #expect(error?.trustRefusal?.decision.isTrusted == false)
    }

    @Test func anExpiredLeafIsRefusedAsExpired() async throws {
        let server = try await GRPCLab.startServer("expired")
        let trust = try GRPCLab.pinnedTrust(host: "expired.lab.test")
        let error = await GRPCLab.rpcError { _ = try await GRPCLab.withEcho(trust, port: server.port) { try await $0.expand("a b") } }
        await server.stop()
        let reasons = try #require(error?.trustDecision?.reasons)
        #expect(reasons.contains { $0.kind == .expired })
    }

    @Test func theNameCheckedIsTheTargetHostNotTheAddress() async throws {
        // The good server's certificate names good.lab.test (and 127.0.0.1); a client meaning another host must
        // refuse it, though it connects to the same address.
        let server = try await GRPCLab.startServer("good")
        let trust = try GRPCLab.pinnedTrust(host: "other.lab.test")
        let error = await GRPCLab.rpcError { _ = try await GRPCLab.withEcho(trust, port: server.port) { try await $0.get("hello") } }
        await server.stop()
        let decision = try #require(error?.trustDecision)
        #expect(decision.peerName == .dnsName("other.lab.test"))
        #expect(decision.reasons.contains { $0.kind == .nameMismatch })
    }

    @Test func aCachedDecisionServesTheNextConnection() async throws {
        let server = try await GRPCLab.startServer("good")
        let cache = TrustEvaluationCache()
        let evaluator = try PublicKeysTrustEvaluator(pins: try GRPCLab.pins, anchors: .only(GRPCLab.pki.trustedRoots))
        let trust = try GRPCClientTrust(host: "good.lab.test", evaluator: evaluator, cache: cache)
        for round in 1...2 {
            let answer = try await GRPCLab.withEcho(trust, port: server.port) { try await $0.get("round \(round)") }
            #expect(answer == "anonymous: round \(round)")
        }
        await server.stop()
        #expect(cache.statistics.hits >= 1)
    }

    @Test func anInvalidHostIsATypedError() {
        #expect(throws: GRPCClientTrustError.self) {
            try GRPCClientTrust(host: "exa mple.com", evaluator: DefaultTrustEvaluator())
        }
    }
}
