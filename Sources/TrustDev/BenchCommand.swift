import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Trust
import TrustLab
import TrustNIO
import X509

/// `trust-dev bench`: medians of the engine's hot operations, each beside a baseline measured in
/// the same run — signature verifications (the physical floor of a path validation), BoringSSL's
/// own verification of the same chain in a loopback handshake, SHA-256 over the same bytes.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure trust evaluation, the evaluation cache, handshakes and pin computation (run with -c release).",
        discussion: """
            Chains of depth 2, 3 and 4 (root → [intermediates →] leaf), P-256 and RSA-2048, evaluated with name and pin \
            checks: uncached against the cost of their signature verifications, cached against uncached. Loopback TLS \
            handshakes (client and server in this process) with our evaluation in NIOSSL's verification callback, \
            uncached and cached, against the same client using BoringSSL's built-in verification (trustRoots, no \
            callback) of the same chain. OpenSSL's X509_verify_cert of the same chains and host names, in a small C \
            program built against the system's libcrypto (skipped without a C compiler and libssl-dev). Cold \
            processes: a new `trust evaluate` (the `trust` built beside this tool) of a depth-3 chain (reading the files, the first validation) against \
            `openssl verify` of the same files, and each tool's bare start. Revocation: a serial number looked up in \
            a 100,000-entry CRL against a plain Set of the same serials, parsing that CRL, and an uncached depth-3 \
            evaluation with hard whole-chain CRL checking against the same without. Every ratio compares two figures \
            measured in the same run.
            """)

    @Option(help: "Measured iterations per evaluation figure.")
    var iterations = 300

    @Option(help: "Handshakes per round in the handshake figures.")
    var handshakes = 200

    @Option(help: "Alternating rounds per handshake figure (the median round is reported).")
    var rounds = 5

    @Option(help: "Only the rows whose name contains this text (e.g. p256, cached, handshake, pin).")
    var filter: String?

    func run() async throws {
        #if DEBUG
            print(
                "note: this is a debug build; for meaningful figures: Scripts/release-build.sh trust && Scripts/release-build.sh trust-dev && .build/release/trust-dev bench"
            )
        #endif
        print("operation                                          median   baseline (same run)                median    ratio")
        var chains: [BenchChain] = []
        for keyType in [LabKeyType.p256, .rsa2048] {
            for depth in 2...4 { chains.append(try BenchChain(keyType: keyType, depth: depth)) }
        }
        let openssl: Result<OpenSSLVerifyHarness, Error> =
            chains.contains(where: { wants($0.evaluationRowName) })
            ? Result { try OpenSSLVerifyHarness() } : .failure(OpenSSLVerifyHarness.Unavailable(description: "filtered out"))
        defer { if case .success(let harness) = openssl { harness.remove() } }
        for chain in chains {
            try await benchEvaluation(chain, openssl: openssl)
        }
        if wants("configuration") { try await benchConfiguration(chains[1]) }
        for chain in chains where chain.depth == 3 {
            try await benchHandshakes(chain)
        }
        await benchPins()
        try await RevocationBench(iterations: iterations).run(wants: wants)
        if let chain = chains.first(where: { $0.depth == 3 && $0.keyType == .p256 }) { try benchColdStart(chain) }
    }

    func wants(_ name: String) -> Bool {
        guard let filter else { return true }
        return name.localizedCaseInsensitiveContains(filter)
    }

    // MARK: Evaluation

    func benchEvaluation(_ chain: BenchChain, openssl: Result<OpenSSLVerifyHarness, Error>) async throws {
        let uncachedName = chain.evaluationRowName
        let cachedName = "  cached (same chain, name, policy)"
        guard wants(uncachedName) || wants(cachedName + " \(chain.keyType.rawValue)") else { return }
        let trust = chain.trust
        let evaluator = chain.evaluator
        guard await evaluator.evaluate(trust).isTrusted else { throw HarnessError("benchmark chain did not validate") }
        let uncached = await Self.median(iterations) { _ = await evaluator.evaluate(trust) }
        let path = chain.path
        let verifications = await Self.median(iterations) {
            for index in 0..<(path.count - 1) {
                _ = path[index + 1].publicKey.isValidSignature(path[index].signature, for: path[index])
            }
        }
        let count = chain.depth - 1
        Self.report(uncachedName, uncached, "\(count) signature verification\(count == 1 ? "" : "s")", verifications)
        switch openssl {
        case .success(let harness):
            let files = try chain.writeFiles()
            defer { try? FileManager.default.removeItem(atPath: files.folder) }
            let theirs = try harness.median(iterations: iterations, rootFile: files.root, chainFile: files.chain, host: chain.host)
            Self.report("  vs OpenSSL (same chain and host name)", uncached, "OpenSSL X509_verify_cert", theirs)
        case .failure(let why):
            print("  OpenSSL X509_verify_cert: skipped (\(why))")
        }

        let cache = TrustEvaluationCache()
        let caching = CachingTrustEvaluator(evaluator, cache: cache, policyIdentity: "bench")
        // A new ServerTrust per call, as each handshake builds one (same bytes, a new time).
        let presented = chain.presented
        let peerName = trust.peerName
        guard await caching.evaluate(trust).isTrusted else { throw HarnessError("benchmark chain did not validate") }
        let cached = await Self.median(iterations) {
            _ = await caching.evaluate(ServerTrust(presentedChain: presented, peerName: peerName))
        }
        guard cache.statistics.hits >= iterations else { throw HarnessError("the evaluation cache did not hit") }
        Self.report(cachedName, cached, "uncached", uncached)
    }

    func benchConfiguration(_ chain: BenchChain) async throws {
        // A trust configuration entry (system roots + the chain's root, two pins): its validators are
        // built once; the baseline builds one per evaluation (indexing the system roots each time).
        let pins = [chain.pin, try SPKIPin(digest: [UInt8](repeating: 7, count: 32))]
        var entry = TrustConfiguration.Entry(host: try HostPattern("**.lab.test"))
        entry.anchors = TrustConfiguration.Anchors(pem: [chain.root.pemString])
        entry.pins = TrustConfiguration.Pins(sha256: pins)
        let configured = try ConfiguredTrustEvaluator(configuration: TrustConfiguration(hosts: [entry]))
        let trust = chain.trust
        guard await configured.evaluate(trust).isTrusted else { throw HarnessError("benchmark configuration did not validate") }
        let prepared = await Self.median(iterations) { _ = await configured.evaluate(trust) }
        var policy = ValidationPolicy.webPKI
        policy.pins = Set(pins)
        let root = chain.root
        let perCall = await Self.median(iterations) {
            _ = await PathValidator(anchors: .system(adding: [root]), policy: policy).evaluate(trust)
        }
        Self.report("configuration entry (**.lab.test, 2 pins)", prepared, "validator built per call", perCall)
    }

    // MARK: Handshakes

    func benchHandshakes(_ chain: BenchChain) async throws {
        let names = ["handshake depth-\(chain.depth) \(chain.keyType.rawValue), our evaluation", "  … cached \(chain.keyType.rawValue)"]
        guard names.contains(where: wants) else { return }
        let server = try await LabServer.start(name: "bench", host: chain.host, chain: chain.presented, privateKey: chain.leafKey, protocols: .http1Only)
        defer { Task { try? await server.shutdown() } }
        let bench = try HandshakeBench(chain: chain, port: server.port)

        var boring: [Double] = []
        var ours: [Double] = []
        var cached: [Double] = []
        for _ in 0..<max(1, rounds) {
            boring.append(try await bench.rate(.boringSSL, count: handshakes))
            ours.append(try await bench.rate(.ours, count: handshakes))
            cached.append(try await bench.rate(.oursCached, count: handshakes))
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        Self.reportRate(names[0], median(ours), "BoringSSL verification", median(boring))
        Self.reportRate(names[1], median(cached), "BoringSSL verification", median(boring))
        let rounds = { (values: [Double]) in values.map { String(format: "%.0f", $0) }.joined(separator: " ") }
        print("    rounds (/s): BoringSSL \(rounds(boring)); ours \(rounds(ours)); cached \(rounds(cached))")
    }

    // MARK: Pins and parsing

    func benchPins() async {
        guard let certificate = try? LabAuthority.selfSignedLeaf(dnsNames: ["pin.lab.test"]).certificate else { return }
        if wants("SPKI pin of a certificate") {
            let spki = certificate.subjectPublicKeyInfoDER
            let batch = 1000
            let pin = await Self.median(iterations) { for _ in 0..<batch { _ = certificate.spkiPin } }
            let hash = await Self.median(iterations) { for _ in 0..<batch { _ = SPKIPin(subjectPublicKeyInfoDER: spki) } }
            Self.report("SPKI pin of a certificate (P-256)", pin / batch, "SHA-256 of the SPKI bytes", hash / batch)
        }
        if wants("parse a DER certificate") {
            let der = certificate.derBytes
            let parse = await Self.median(iterations) { for _ in 0..<100 { _ = try? Certificate(derEncoded: der) } }
            let hashDER = await Self.median(iterations) {
                for _ in 0..<100 {
                    var hasher = Hasher()
                    der.withUnsafeBytes { hasher.combine(bytes: $0) }
                    _ = hasher.finalize()
                }
            }
            Self.report("parse a DER certificate (P-256)", parse / 100, "hash its DER bytes (bulk)", hashDER / 100)
        }
    }

    // MARK: Measuring and printing

    static func median(_ iterations: Int, _ body: () async -> Void) async -> Duration {
        for _ in 0..<max(3, iterations / 10) { await body() }
        var samples: [Duration] = []
        samples.reserveCapacity(iterations)
        let clock = ContinuousClock()
        for _ in 0..<max(1, iterations) {
            let start = clock.now
            await body()
            samples.append(clock.now - start)
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    static func micros(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0)
    }

    static func report(_ name: String, _ value: Duration, _ baselineName: String, _ baseline: Duration) {
        let ratio = micros(value) / max(micros(baseline), 1e-9)
        print(
            pad(name, 46) + String(format: " %9.2f µs   ", micros(value)) + pad(baselineName, 26)
                + String(format: " %9.2f µs   %6.3f×", micros(baseline), ratio))
    }

    static func reportRate(_ name: String, _ value: Double, _ baselineName: String, _ baseline: Double) {
        print(
            pad(name, 46) + String(format: " %9.0f /s   ", value) + pad(baselineName, 26)
                + String(format: " %9.0f /s   %6.3f×", baseline, value / max(baseline, 1e-9)))
    }
}

/// A generated chain of a given depth (leaf, intermediates, root), its trust and a pinned evaluator.
struct BenchChain {
    let keyType: LabKeyType
    let depth: Int
    let host = "bench.lab.test"
    let root: Certificate
    /// Leaf first, without the root (what a server sends).
    let presented: [Certificate]
    let leafKey: Certificate.PrivateKey
    /// Leaf to root.
    var path: [Certificate] { presented + [root] }
    /// The pin: the leaf's issuer.
    let pin: SPKIPin
    let trust: ServerTrust
    let evaluator: PublicKeysTrustEvaluator

    /// The name of the chain's uncached evaluation row.
    var evaluationRowName: String { "evaluate depth-\(depth) \(keyType.rawValue) (name + pin)" }

    /// Writes the root and the presented chain (leaf first) as PEM files in a new temporary folder.
    func writeFiles() throws -> (folder: String, root: String, chain: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trust-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let chainFile = folder.appendingPathComponent("chain.pem")
        let rootFile = folder.appendingPathComponent("root.pem")
        try Data(presented.map(\.pemString).joined().utf8).write(to: chainFile)
        try Data(root.pemString.utf8).write(to: rootFile)
        return (folder.path, rootFile.path, chainFile.path)
    }

    init(keyType: LabKeyType, depth: Int) throws {
        self.keyType = keyType
        self.depth = depth
        let chain = try LabLongChain.make(intermediates: max(0, depth - 2), host: host, keyType: keyType)
        self.root = chain.root.certificate
        self.presented = chain.presentedChain
        self.leafKey = chain.leaf.privateKey
        self.pin = (chain.leaf.intermediates.first ?? chain.root.certificate).spkiPin
        self.trust = try ServerTrust(presentedChain: chain.presentedChain, host: host)
        self.evaluator = try PublicKeysTrustEvaluator(pins: [pin], anchors: .only([root]))
    }
}
