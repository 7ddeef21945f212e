import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// `-m`, `--connect-timeout` and `--expect100-timeout` as curl's (tool_paramhlp.c): not a number, negative, infinite or
/// over curl's `LONG_MAX / 1000` seconds is a usage error (exit 2); a large accepted value is used as 31 years. No
/// value makes an arithmetic conversion trap: before, `-m 1e300` crashed (`Int64(_:)` of the milliseconds, signal 4,
/// status 132), and so did `-m 1e10` with a PKCS#12 `--cert` (its decoding budget in nanoseconds) and
/// `--connect-timeout 1e300 --revocation soft` (the revocation fetch budget); `trust inspect --connect-timeout 1e300`
/// too.
@Suite("Time options of get and inspect: validated, never trapping", .serialized, .timeLimit(.minutes(5)), .paced)
struct TimeLimitOptionsTests {
    @Test func invalidValuesAreUsageErrors() async throws {
        let url = "https://127.0.0.1:9/"  // never reached: every case fails while its options are validated
        let cases: [([String], String)] = [
            (["-m", "1e300"], "option -m/--max-time: too large number"),
            (["-m", "inf"], "option -m/--max-time: too large number"),
            (["-m", "1e16"], "option -m/--max-time: too large number"),
            (["-m", "nan"], "option -m/--max-time: expected a proper numerical parameter"),
            (["--max-time=-1"], "option -m/--max-time: expected a positive numerical parameter"),
            (["--connect-timeout", "1e300", "--revocation", "soft"], "option --connect-timeout: too large number"),
            (["--connect-timeout", "nan"], "option --connect-timeout: expected a proper numerical parameter"),
            (["--connect-timeout=-0.5"], "option --connect-timeout: expected a positive numerical parameter"),
            (["--expect100-timeout", "nan"], "option --expect100-timeout: expected a proper numerical parameter"),
            (["-m", "1e300", "--cert", "/missing.p12:secret"], "option -m/--max-time: too large number"),
        ]
        for (arguments, message) in cases {
            let (status, _, err) = try await run(CLI.binary, ["get", url] + arguments)
            #expect(status == 2 && err.contains(message), "\(arguments): \(status) \(err)")
        }
        for value in ["1e300", "nan"] {
            let (status, _, err) = try await run(CLI.binary, ["inspect", "127.0.0.1:9", "--connect-timeout", value])
            #expect(status == 2 && err.contains("option --connect-timeout:"), "inspect \(value): \(status) \(err)")
        }
    }

    /// Accepted values as large as curl takes reach every conversion (the PKCS#12 decoding budget, the revocation
    /// fetch budget, NIO's deadlines) and the request succeeds.
    @Test(.requires(.openssl)) func largeAcceptedValuesNeverTrap() async throws {
        let server = try await LabServer.start(mutualTLS: .required, pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let dir = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let p12 = try await labClientPKCS12(password: "TimeSecret-1", in: dir)
            let lab = ["--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem", "-s", "-S"]
            for extra in [["-m", "1e10"], ["-m", "9e15", "--connect-timeout", "9e15"]] {
                let (status, _, err) = try await run(CLI.binary, ["get", server.baseURL + "/whoami", "--cert", p12 + ":TimeSecret-1"] + extra + lab)
                #expect(status == 0, "\(extra): \(status) \(err)")
            }
            let (status, _, err) = try await run(
                CLI.binary,
                [
                    "get", server.baseURL + "/whoami", "--cert", p12 + ":TimeSecret-1",
                    "--connect-timeout", "1e15", "--revocation", "soft",
                ] + lab)
            // Soft revocation: allowed whatever the lab's responders say; what matters is a status, never a signal.
            #expect(status == 0, "--connect-timeout 1e15 --revocation soft: \(status) \(err)")
        }
    }
}
