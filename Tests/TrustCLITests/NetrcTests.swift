import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustLabPKI
import TrustTestSupport

/// `--netrc`, `--netrc-optional`, `--netrc-file`: curl 7.88's file format and rules, and an entry is
/// used for its own host only — never for another host, also not after a redirect there.
@Suite("trust get --netrc", .serialized, .timeLimit(.minutes(5)), .paced)
struct NetrcTests {
    /// The host a lab server answers for, under a second name the lab certificate also covers
    /// (`*.good.lab.test`): the same server, another origin.
    static let otherHost = "other.good." + LabPKI.domain

    func lab(_ server: LabServer) -> [String] {
        [
            "--resolve", "\(server.host):\(server.port):127.0.0.1", "--resolve", "\(Self.otherHost):\(server.port):127.0.0.1",
            "--cacert", CLI.lab + "/roots.pem",
        ]
    }

    /// A netrc file holding `text`, mode 0600 unless `mode` says otherwise.
    func netrcFile(_ text: String, mode: Int = 0o600) throws -> String {
        let dir = try temporaryDirectory()
        let path = dir + "/.netrc"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    /// `trust get` with `arguments`, the lab's resolution and anchors, `-w` printing the final status.
    func get(_ server: LabServer, _ arguments: [String], environment: [String] = []) async throws -> (Int32, String, String) {
        try await run("/usr/bin/env", environment + [CLI.binary, "get", "-s", "-S", "-w", "\nstatus %{http_code}"] + arguments + lab(server))
    }

    @Test func entryForTheHostIsUsed() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let path = try netrcFile("machine \(good.host) login alice password wonderland\n")
            let viaFile = try await get(good, [good.baseURL + "/basic", "--netrc-file", path])
            #expect(viaFile.0 == 0 && viaFile.1.contains("authenticated alice via"), "\(viaFile)")
            // --netrc: ~/.netrc, the folder from $HOME.
            let home = URL(fileURLWithPath: path).deletingLastPathComponent().path
            for flag in ["--netrc", "-n", "--netrc-optional"] {
                let viaHome = try await get(good, [good.baseURL + "/basic", flag], environment: ["HOME=" + home])
                #expect(viaHome.0 == 0 && viaHome.1.contains("authenticated alice via"), "\(flag): \(viaHome)")
            }
            // Host names compare case-insensitively (RFC 4343), as curl's.
            let upper = try netrcFile("machine \(good.host.uppercased()) login alice password wonderland\n")
            let viaUpper = try await get(good, [good.baseURL + "/basic", "--netrc-file", upper])
            #expect(viaUpper.1.contains("authenticated alice via"), "\(viaUpper)")
        }
    }

    @Test func entryForAnotherHostIsNeverSent() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let path = try netrcFile("machine \(Self.otherHost) login alice password wonderland\n")
            // Preemptive Basic (--basic) would send it at once: nothing is sent, the server asks (401).
            let result = try await get(good, [good.baseURL + "/headers", "--netrc-file", path, "--basic"])
            #expect(result.0 == 0 && result.1.hasSuffix("status 200"), "\(result)")
            #expect(!result.1.lowercased().contains("authorization"), "\(result.1)")
            let challenged = try await get(good, [good.baseURL + "/basic", "--netrc-file", path])
            #expect(challenged.1.hasSuffix("status 401"), "\(challenged)")
        }
    }

    /// The entry for A is A's only: a redirect from A to B (another host, the same server) carries none of it.
    @Test func entryNeverFollowsARedirectToAnotherHost() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let path = try netrcFile("machine \(good.host) login alice password wonderland\n")
            func redirect(to target: String) -> String {
                good.baseURL + "/redirect?to=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target)
            }
            // Same origin: sent (preemptively with --basic), so the test below would see it if it leaked.
            let same = try await get(good, [redirect(to: good.baseURL + "/headers"), "--netrc-file", path, "--basic"])
            #expect(same.1.lowercased().contains("authorization: basic"), "\(same)")
            let other = "https://\(Self.otherHost):\(good.port)"
            let preemptive = try await get(good, [redirect(to: other + "/headers"), "--netrc-file", path, "--basic"])
            #expect(preemptive.0 == 0 && preemptive.1.hasSuffix("status 200"), "\(preemptive)")
            #expect(!preemptive.1.lowercased().contains("authorization"), "\(preemptive.1)")
            // Asked by B: still not answered with A's entry (a final 401 with a credential given is exit 67).
            let challenged = try await get(good, [redirect(to: other + "/basic"), "--netrc-file", path])
            #expect(challenged.0 == 67 && !challenged.1.contains("authenticated"), "\(challenged)")
        }
    }

    @Test func defaultEntry() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let path = try netrcFile("machine \(Self.otherHost) login Mufasa password nope\ndefault login alice password wonderland\n")
            let result = try await get(good, [good.baseURL + "/basic", "--netrc-file", path])
            #expect(result.1.contains("authenticated alice via"), "\(result)")
            // A machine entry for the host wins over default, wherever default is.
            let both = try netrcFile("default login alice password nope\nmachine \(good.host) login alice password wonderland\n")
            let machine = try await get(good, [good.baseURL + "/basic", "--netrc-file", both])
            #expect(machine.1.contains("authenticated alice via"), "\(machine)")
        }
    }

    /// curl 7.88's syntax: comments, `macdef` bodies skipped up to an empty line, quoted tokens with escapes, CRLF line
    /// ends, a login holding a colon.
    @Test func fileSyntax() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let text = """
                # a comment line
                macdef init
                machine \(good.host) login alice password not-this-one

                machine \(good.host) # a comment after a token
                  login "Mufasa" password "Circle of Life"
                """
            let result = try await get(good, [good.baseURL + "/basic", "--netrc-file", try netrcFile(text)])
            #expect(result.1.contains("authenticated Mufasa via"), "\(result)")
            let escaped = try netrcFile("machine \(good.host) login alice password \"wonder\\land\"\n")
            let withEscape = try await get(good, [good.baseURL + "/basic", "--netrc-file", escaped])
            #expect(withEscape.1.contains("authenticated alice via"), "\(withEscape)")
            // CRLF line ends, two machines: each host gets its own entry. Before, the file was one line to the parser
            // and the good host was sent the other host's login and password.
            let crlf = try netrcFile(
                "machine \(good.host) login alice password wonderland\r\nmachine \(Self.otherHost) login Mufasa password \"Circle of Life\"\r\n")
            let crlfGood = try await get(good, [good.baseURL + "/basic", "--netrc-file", crlf])
            #expect(crlfGood.0 == 0 && crlfGood.1.contains("authenticated alice via"), "\(crlfGood)")
            let crlfOther = try await get(good, ["https://\(Self.otherHost):\(good.port)/basic", "--netrc-file", crlf])
            #expect(crlfOther.0 == 0 && crlfOther.1.contains("authenticated Mufasa via"), "\(crlfOther)")
            // A login with a colon is the user name whole (it was joined as USER:PASSWORD and split at its colon).
            let colon = try netrcFile("machine \(good.host) login a:b password wonderland\n")
            let withColon = try await get(good, [good.baseURL + "/basic", "--netrc-file", colon, "-v"])
            #expect(withColon.2.contains("answering with Basic as a:b"), "\(withColon.2)")
            // An unterminated quote: curl's ".netrc parser error", CURLE_READ_ERROR (26); the file's text is not shown.
            let broken = try await get(good, [good.baseURL + "/basic", "--netrc-file", try netrcFile("machine x login alice password \"BrokenSecret-1\n")])
            #expect(broken.0 == 26 && broken.2.contains(".netrc parser error"), "\(broken)")
            #expect(!broken.2.contains("BrokenSecret-1"), "\(broken.2)")
        }
    }

    /// As curl 7.88: a missing file is no error with --netrc, --netrc-optional or --netrc-file (no credentials).
    @Test func missingFile() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let empty = try temporaryDirectory()
            for arguments in [["--netrc"], ["--netrc-optional"], ["--netrc-file", empty + "/missing"]] {
                let result = try await get(good, [good.baseURL + "/basic"] + arguments, environment: ["HOME=" + empty])
                #expect(result.0 == 0 && result.1.hasSuffix("status 401"), "\(arguments): \(result)")
            }
        }
    }

    /// Which credential wins: -u over the file; the file over a URL's user-info with --netrc, the URL with
    /// --netrc-optional; a URL's user name picks the entry with that login.
    @Test func precedence() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let path = try netrcFile("machine \(good.host) login Mufasa password \"Circle of Life\"\nmachine \(good.host) login alice password wonderland\n")
            let withUser = try await get(good, [good.baseURL + "/basic", "--netrc-file", path, "-u", "alice:wonderland"])
            #expect(withUser.1.contains("authenticated alice via"), "\(withUser)")
            let urlWithPassword = good.baseURL.replacingOccurrences(of: "https://", with: "https://alice:UrlWrong-1@") + "/basic"
            let required = try await get(good, [urlWithPassword, "--netrc-file", path])
            #expect(required.1.contains("authenticated alice via"), "\(required)")
            let optional = try await get(good, [urlWithPassword, "--netrc-file", path, "--netrc-optional"])
            #expect(optional.1.hasSuffix("status 401"), "\(optional)")
            let urlWithUser = good.baseURL.replacingOccurrences(of: "https://", with: "https://alice@") + "/basic"
            let byLogin = try await get(good, [urlWithUser, "--netrc-file", path])
            #expect(byLogin.1.contains("authenticated alice via"), "\(byLogin)")
        }
    }

    /// curl's tests 684 and 685: an entry with a password and no login sends Basic with an empty user name, or with
    /// the URL's user name. Before, such an entry was skipped and nothing was sent.
    @Test func entryWithoutALogin() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let path = try netrcFile("machine \(good.host) password 5up3r53cr37\n")
            func basic(_ pair: String) -> String { "authorization: Basic " + Data(pair.utf8).base64EncodedString() }
            let noLogin = try await get(good, [good.baseURL + "/headers", "--netrc-optional", "--netrc-file", path, "--basic"])
            #expect(noLogin.0 == 0 && noLogin.1.contains(basic(":5up3r53cr37")), "\(noLogin)")
            let urlWithUser = good.baseURL.replacingOccurrences(of: "https://", with: "https://user@") + "/headers"
            let withUser = try await get(good, [urlWithUser, "--netrc-optional", "--netrc-file", path, "--basic", "-v"])
            #expect(withUser.0 == 0 && withUser.1.contains(basic("user:5up3r53cr37")), "\(withUser)")
            // The user name came from the URL: -v does not show it; the password is shown nowhere.
            #expect(!withUser.2.contains("5up3r53cr37") && !noLogin.2.contains("5up3r53cr37"), "\(withUser.2)")
            // Answering a challenge (no --basic): the same credential, after the 401.
            let alice = try netrcFile("machine \(good.host) password wonderland\n")
            let urlWithAlice = good.baseURL.replacingOccurrences(of: "https://", with: "https://alice@") + "/basic"
            let challenged = try await get(good, [urlWithAlice, "--netrc-file", alice])
            #expect(challenged.0 == 0 && challenged.1.contains("authenticated alice via"), "\(challenged)")
        }
    }

    /// A file other users can read or write is used with a warning (ssh and ftp expect 0600); the
    /// password is never printed, -v included.
    @Test func exposedFileWarns() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            for mode in [0o644, 0o620] {
                let path = try netrcFile("machine \(good.host) login alice password wonderland\n", mode: mode)
                let result = try await get(good, [good.baseURL + "/basic", "--netrc-file", path, "-v"])
                #expect(result.1.contains("authenticated alice via"), "\(result)")
                #expect(result.2.contains("warning: \(path) is") && result.2.contains("by other users"), "\(result.2)")
                #expect(!result.2.contains("wonderland"), "\(result.2)")
            }
            let quiet = try await get(good, [good.baseURL + "/basic", "--netrc-file", try netrcFile("machine \(good.host) login alice password wonderland\n")])
            #expect(!quiet.2.contains("warning"), "\(quiet.2)")
        }
    }
}
