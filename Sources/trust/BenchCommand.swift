import ArgumentParser
import Foundation
import Trust
import TrustLab
import X509

/// `trust bench`: medians of the engine's hot operations, each beside a baseline measured in
/// the same run (one signature verification; one SHA-256 over the same bytes).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure trust evaluation and pin computation (run with -c release).",
        discussion: "Depth-3 chains (root → intermediate → leaf), evaluated with name and pin checks, against the cost of their two signature verifications measured in the same run.")

    @Option(help: "Measured iterations per figure.")
    var iterations = 300

    func run() async throws {
        #if DEBUG
        print("note: this is a debug build; use `swift run -c release trust bench` for meaningful figures")
        #endif
        print("operation                                       median   baseline (same run)               median   ratio")
        for keyType in [LabKeyType.p256, .rsa2048] {
            let root = try LabAuthority.root(keyType: keyType)
            let intermediate = try root.intermediate(commonName: "Bench Issuing CA", keyType: keyType)
            let leaf = try intermediate.leaf(dnsNames: ["bench.lab.test"], keyType: keyType)
            let trust = try ServerTrust(presentedChain: leaf.chain, host: "bench.lab.test")
            let evaluator = try PublicKeysTrustEvaluator(pins: [intermediate.certificate.spkiPin], anchors: .only([root.certificate]))
            guard await evaluator.evaluate(trust).isTrusted else { throw UsageError("benchmark chain did not validate") }

            let evaluation = await Self.median(iterations) { _ = await evaluator.evaluate(trust) }
            let leafCertificate = leaf.certificate
            let intermediateCertificate = intermediate.certificate
            let rootCertificate = root.certificate
            let verifications = await Self.median(iterations) {
                _ = intermediateCertificate.publicKey.isValidSignature(leafCertificate.signature, for: leafCertificate)
                _ = rootCertificate.publicKey.isValidSignature(intermediateCertificate.signature, for: intermediateCertificate)
            }
            Self.report("evaluate depth-3 \(keyType.rawValue) (name + pin)", evaluation, "2 signature verifications", verifications)
            if keyType == .p256 {
                // A trust configuration entry (system roots + the lab root, two pins): its validators are
                // built once; the baseline builds one per evaluation (indexing the system roots each time).
                let pins = [intermediate.certificate.spkiPin, try SPKIPin(digest: [UInt8](repeating: 7, count: 32))]
                var entry = TrustConfiguration.Entry(host: try HostPattern("**.lab.test"))
                entry.anchors = TrustConfiguration.Anchors(pem: [root.certificate.pemString])
                entry.pins = TrustConfiguration.Pins(sha256: pins)
                let configured = try ConfiguredTrustEvaluator(configuration: TrustConfiguration(hosts: [entry]))
                guard await configured.evaluate(trust).isTrusted else { throw UsageError("benchmark configuration did not validate") }
                let prepared = await Self.median(iterations) { _ = await configured.evaluate(trust) }
                var policy = ValidationPolicy.webPKI
                policy.pins = Set(pins)
                let rootCertificate = root.certificate
                let perCall = await Self.median(iterations) {
                    _ = await PathValidator(anchors: .system(adding: [rootCertificate]), policy: policy).evaluate(trust)
                }
                Self.report("configuration entry (**.lab.test, 2 pins)", prepared, "validator built per call", perCall)
            }
        }
        let certificate = try LabAuthority.selfSignedLeaf(dnsNames: ["pin.lab.test"]).certificate
        let spki = certificate.subjectPublicKeyInfoDER
        let batch = 1000
        let pin = await Self.median(iterations) { for _ in 0..<batch { _ = certificate.spkiPin } }
        let hash = await Self.median(iterations) { for _ in 0..<batch { _ = SPKIPin(subjectPublicKeyInfoDER: spki) } }
        Self.report("SPKI pin of a certificate (P-256)", pin / batch, "SHA-256 of the SPKI bytes", hash / batch)
        let der = certificate.derBytes
        let parse = await Self.median(iterations) { for _ in 0..<100 { _ = try? Certificate(derEncoded: der) } }
        let hashDER = await Self.median(iterations) { for _ in 0..<100 { var h = Hasher(); h.combine(der); _ = h.finalize() } }
        Self.report("parse a DER certificate (P-256)", parse / 100, "hash its DER bytes", hashDER / 100)
    }

    static func median(_ iterations: Int, _ body: () async -> Void) async -> Duration {
        for _ in 0..<max(3, iterations / 10) { await body() }
        var samples: [Duration] = []
        samples.reserveCapacity(iterations)
        let clock = ContinuousClock()
        for _ in 0..<iterations {
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

    static func report(_ name: String, _ value: Duration, _ baselineName: String, _ baseline: Duration) {
        let ratio = micros(value) / max(micros(baseline), 1e-9)
        let pad = { (text: String, width: Int) in text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0) }
        print(pad(name, 42) + String(format: " %9.2f µs   ", micros(value)) + pad(baselineName, 26) + String(format: " %9.2f µs   %5.2f×", micros(baseline), ratio))
    }
}
