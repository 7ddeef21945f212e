import Foundation
import Testing
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// `trust get` with internationalised URLs: the canonical name is what is connected to, sent and checked.
@Suite("IDNA through trust get", .serialized, .timeLimit(.minutes(5)), .paced)
struct IDNACommandTests {
    @Test func unicodeHostsReachTheirCanonicalName() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            func get(_ host: String, resolve: String, path: String = "/") async throws -> (Int32, String, String) {
                try await run(
                    CLI.binary,
                    [
                        "get", "https://\(host):\(good.port)\(path)", "--resolve", "\(resolve):\(good.port):127.0.0.1",
                        "--cacert", CLI.lab + "/roots.pem", "--http1.1",
                    ])
            }
            let fullwidth = try await get("ＧＯＯＤ．lab．test", resolve: "good.lab.test")
            #expect(fullwidth.0 == 0 && fullwidth.1 == "hello from good\n", "\(fullwidth.2)")
            // The wildcard *.good.lab.test covers the A-label; ß is kept (nontransitional), and the Host header is ASCII.
            let sharpS = try await get("straße.good.lab.test", resolve: "xn--strae-oqa.good.lab.test", path: "/headers")
            #expect(sharpS.0 == 0, "\(sharpS.2)")
            #expect(sharpS.1.contains("host: xn--strae-oqa.good.lab.test:\(good.port)\n"), "\(sharpS.1)")
            // A name IDNA2008 refuses ends with curl's "malformed URL" code and the rule, never a connection.
            let snowman = try await get("☃.good.lab.test", resolve: "xn--n3h.good.lab.test")
            #expect(snowman.0 == 3, "\(snowman.2)")
            #expect(snowman.2.contains("U+2603 SNOWMAN"), "\(snowman.2)")
        }
    }
}
