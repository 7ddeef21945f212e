import ArgumentParser
import Dispatch
import Trust
import TrustHTTP
import TrustLab

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `trust lab`: the lab's servers, kept running for your own client (or curl) until Ctrl-C.
struct LabCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab",
        abstract: "Keep the TrustLab servers running on 127.0.0.1 and print how to reach them (Ctrl-C stops).",
        discussion: """
            Writes the lab PKI to --dir (roots.pem is the CA file to trust, pins.txt every pin, clients/ the client
            identities), starts every lab server (good and bad configurations, mutual TLS, a plain-http server and a
            forward proxy with Digest authentication, and one hostile server per LabHostileServer behaviour), and prints each URL with the curl --resolve it needs.
            Credentials for /basic and /digest: alice / wonderland.
            Exit 0 when stopped (Ctrl-C or --duration), 2 when the lab cannot be written to --dir.
            """)

    @Option(help: "Where to write the lab PKI (default: a new temporary folder).")
    var dir: String?

    @Option(help: "Stop after this many seconds (default: run until interrupted).")
    var duration: Double?

    func run() async throws {
        let folder = dir ?? FileManager.default.temporaryDirectory.path.joiningPath("trust-lab-" + UUID().uuidString)
        if dir == nil {
            // A new folder, ours alone (mkdir fails if the name exists: never a folder another user made in /tmp,
            // where the lab's private keys could be swapped), 0700 from the start.
            // mkdir(2) with the mode itself: Foundation creates the folder with 0777 less the umask, then changes it.
            guard mkdir(folder, 0o700) == 0 else { throw UsageError("cannot create the lab folder \(folder): \(String(cString: strerror(errno)))") }
        }
        let pki = try LabPKI.make()
        do {
            try pki.write(to: folder)
        } catch {
            throw UsageError("cannot write the lab to \(folder): \(error)")
        }
        var servers: [LabServer] = []
        for name in LabPKI.serverNames { servers.append(try await LabServer.start(name, pki: pki)) }
        for mode in LabServer.MutualTLSMode.allCases { servers.append(try await LabServer.start(mutualTLS: mode, pki: pki)) }
        let plain = try await LabServer.startPlain(name: "plain")
        let proxy = try await LabProxy.start(authentication: .digest)
        let hostile = try await Self.startHostileServers(pki: pki)

        say("TrustLab is running on 127.0.0.1 (Ctrl-C stops it).")
        say("")
        say("  CA file to trust:  \(folder)/roots.pem")
        say("  pins:              \(folder)/pins.txt")
        say("  CRLs:              \(folder)/crls/all.pem (the root's and the intermediate's, which revokes expired and client-expired; --crlfile)")
        say("  OCSP responses:    \(folder)/ocsp/good.der, good-delegated.der, expired-revoked.der (DER; openssl ocsp -respin)")
        say("  CT log list:       \(folder)/ct/log_list.json (3 lab logs, 2 operators; --ct-log-list; servers sct, no-sct, one-sct, bad-sct)")
        say("  client identities: \(folder)/clients/<name>/{chain,key}.pem  (client, partner, client-expired, client-server-eku, client-foreign)")
        say("  credentials:       alice / wonderland  (routes /basic, /digest?algorithm=SHA-256, /multi)")
        say("  forward proxy:     \(proxy.url)  (Digest, alice / wonderland; CONNECT for https)")
        say("")
        for server in servers + [plain] {
            let resolve = "--resolve \(server.host):\(server.port):127.0.0.1"
            let pad = String(repeating: " ", count: max(1, 26 - server.name.count))
            say("  \(server.name)\(pad)\(server.baseURL)/   \(resolve)")
        }
        say("")
        say("  hostile servers (every connection is attacked; each closes after 60 s):")
        for server in hostile {
            let name = server.behaviour.rawValue
            let pad = String(repeating: " ", count: max(1, 36 - name.count))
            let reach =
                server.behaviour.isProxy
                ? "proxy \(server.baseURL)   (curl -x \(server.baseURL) …)"
                : "\(server.baseURL)/   --resolve \(server.host):\(server.port):127.0.0.1"
            say("  \(name)\(pad)\(reach)   \(server.behaviour.summary)")
        }
        say("")
        let good = servers.first { $0.name == "good" }
        if let good {
            say("  try:  curl --cacert \(folder)/roots.pem --resolve \(good.host):\(good.port):127.0.0.1 \(good.baseURL)/")
            say(
                "        trust get \(good.baseURL)/digest?algorithm=SHA-256 -u alice:wonderland --cacert \(folder)/roots.pem --resolve \(good.host):\(good.port):127.0.0.1"
            )
        }

        await Self.waitForInterrupt(duration: duration)
        say("\nstopping the lab…")
        for server in servers + [plain] { try? await server.shutdown() }
        try? await proxy.shutdown()
        for server in hostile { await server.shutdown() }
    }

    /// One ``LabHostileServer`` per behaviour, presenting `good`'s certificate (TLS; `h2` for the HTTP/2
    /// behaviours) — but the CONNECT-answering proxy, which is plain HTTP like any forward proxy.
    static func startHostileServers(pki: LabPKI) async throws -> [LabHostileServer] {
        guard let good = pki.servers["good"], let chain = pki.presentedChains["good"] else {
            throw UsageError("the lab PKI has no good server")
        }
        var servers: [LabHostileServer] = []
        for behaviour in LabHostileServer.Behaviour.allCases {
            if behaviour.isProxy {
                servers.append(try await LabHostileServer.startPlain(behaviour, host: "127.0.0.1"))
            } else {
                servers.append(try await LabHostileServer.start(behaviour, host: LabPKI.hostName(for: "good"), chain: chain, privateKey: good.privateKey))
            }
        }
        return servers
    }

    /// Written at once (stdout to a file is otherwise buffered until exit, and a lab runs until interrupted).
    func say(_ text: String) {
        try? FileDescriptorOutput.write(STDOUT_FILENO, text + "\n")
    }

    /// Returns on SIGINT or SIGTERM, or after `duration` seconds.
    static func waitForInterrupt(duration: Double?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = OnceFlag()
            let queue = DispatchQueue(label: "trust.lab.signals")
            var sources: [any DispatchSourceSignal] = []
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { if once.claim() { continuation.resume() } }
                source.resume()
                sources.append(source)
            }
            if let duration {
                queue.asyncAfter(deadline: .now() + duration) { if once.claim() { continuation.resume() } }
            }
            SignalSources.keep(sources)  // they must outlive the wait
        }
    }
}

/// True exactly once.
final class OnceFlag: @unchecked Sendable {
    private let lock = Lock()
    private var done = false

    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if done { return false }
        done = true
        return true
    }
}

/// Keeps signal sources alive for the life of the process.
enum SignalSources {
    nonisolated(unsafe) private static var kept: [any DispatchSourceSignal] = []
    private static let lock = Lock()

    static func keep(_ sources: [any DispatchSourceSignal]) {
        lock.lock()
        kept += sources
        lock.unlock()
    }
}
