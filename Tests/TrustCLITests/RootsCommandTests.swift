import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustTestSupport

/// `trust roots` and `--roots`: which public roots anchor paths, and how a bundle differs from Mozilla's store. Each
/// case runs `trust` in a child with `SSL_CERT_FILE` naming a bundle made here: the lab's roots, one root Mozilla
/// trusts and one Mozilla lists without server trust.
@Suite("trust roots and --roots", .paced)
struct RootsCommandTests {
    private struct Bundle {
        let folder: String
        var path: String { folder + "/bundle.pem" }
        let trusted: MozillaRootEntry
        let withdrawn: MozillaRootEntry

        init() throws {
            folder = try temporaryDirectory()
            let store = MozillaRootStore.shared
            trusted = try #require(store.trusted.first)
            withdrawn = try #require(store.entries.first { $0.label == "Entrust.net Premium 2048 Secure Server CA" })
            var text = try String(contentsOfFile: CLI.lab + "/roots.pem", encoding: .utf8)
            for entry in [trusted, withdrawn] { text += try #require(entry.certificate).pemString }
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        }
    }

    private func trust(_ bundle: Bundle, _ arguments: [String]) async throws -> (Int32, String, String) {
        try await run("/usr/bin/env", ["-u", "SSL_CERT_DIR", "SSL_CERT_FILE=" + bundle.path, CLI.binary] + arguments)
    }

    @Test func theSystemDiffCountsRootByRoot() async throws {
        let bundle = try Bundle()
        defer { try? FileManager.default.removeItem(atPath: bundle.folder) }
        let labRoots = try CertificateSource.certificates(atPath: CLI.lab + "/roots.pem").count
        let (status, output, error) = try await trust(bundle, ["roots", "--system-diff", "--json"])
        #expect(status == 0, "\(error)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(document["store"] as? String == "system+mozilla")
        let mozilla = try #require(document["mozilla"] as? [String: Any])
        #expect(mozilla["trustedForServers"] as? Int == 121)
        #expect((mozilla["serverDistrustAfter"] as? [Any])?.count == 5)
        let diff = try #require(document["systemDiff"] as? [String: Any])
        #expect(diff["inBoth"] as? Int == 1)
        let refused = try #require(diff["notTrustedByMozilla"] as? [[String: Any]])
        #expect(refused.compactMap { $0["label"] as? String } == [bundle.withdrawn.label])
        #expect((diff["notListedByMozilla"] as? [Any])?.count == labRoots)
        #expect((diff["missingFromSystem"] as? [Any])?.count == 120)
        // The text form says the same.
        let (_, text, _) = try await trust(bundle, ["roots", "--system-diff"])
        #expect(text.contains("1 roots in both") && text.contains("120 trusted by Mozilla and missing from the bundle"))
    }

    @Test func rootsChooseWhichPublicRootsAnchor() async throws {
        let bundle = try Bundle()
        defer { try? FileManager.default.removeItem(atPath: bundle.folder) }
        let evaluate = ["evaluate", "--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test"]
        // The lab's root is in the bundle, which Mozilla does not list: kept (and said) by system and system+mozilla…
        for store in ["system", "system+mozilla"] {
            let (status, output, error) = try await trust(bundle, evaluate + ["--roots", store])
            #expect(status == 0, "\(store): \(output)\(error)")
            #expect(output.contains("Mozilla's root store does not list"), "\(store): \(output)")
        }
        // …and not trusted with Mozilla's store only.
        let (mozillaOnly, _, _) = try await trust(bundle, evaluate + ["--roots", "mozilla"])
        #expect(mozillaOnly == 1)
        // A name that is no store is a usage error.
        let (bad, _, badError) = try await trust(bundle, evaluate + ["--roots", "firefox"])
        #expect(bad == 2 && badError.contains("--roots must be"))
    }
}
