import ArgumentParser
import Trust
import TrustHTTP
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `trust pin --plan URL`: the validated path of a server and the pin set that survives its renewals.
struct PinPlanOptions: ParsableArguments {
    @Option(name: .long, help: "Connect to this https URL (or host[:port]) and recommend a pin set that survives renewal.")
    var plan: String?

    @Option(help: "Anchor certificates (file or folder) added to the public roots; repeatable.")
    var cacert: [String] = []

    @Flag(help: "Use only the --cacert anchors.")
    var anchorsOnly = false

    @Option(help: "The public roots: system+mozilla (the default), system or mozilla.")
    var roots: String?

    @Option(help: "Check this name instead of the URL's host (SNI still uses the URL's host).")
    var host: String?

    @Option(help: "HOST:PORT:ADDRESS, as curl's --resolve; repeatable.")
    var resolve: [String] = []

    @Option(help: "Seconds to connect and handshake.")
    var connectTimeout: Double = 10

    func validate() throws {
        try GetConnectionOptions.validateSeconds(connectTimeout, option: "--connect-timeout")
    }

    /// `pin --plan --json`.
    struct Report: Encodable {
        struct Step: Encodable {
            var index: Int
            var role: String
            var subject: String
            var pin: String
            var notAfter: Date
        }
        struct Pin: Encodable {
            /// `nil` for a backup key to make.
            var pin: String?
            var subject: String?
            var why: String
        }
        struct Warning: Encodable {
            var code: String
            var message: String
        }
        var url: String
        var checkedName: String
        var validatedPath: [Step]
        var recommended: [Pin]
        var expiresNoLaterThan: Date
        var warnings: [Warning]
    }

    func run(url target: String, json: Bool) async throws {
        let server = try ServerTarget(target, host: host, resolve: resolve, option: "--plan")
        let store = try TrustOptions.rootStore(named: roots)
        var anchors: [Certificate] = []
        for path in cacert { anchors += try TrustOptions.load(path, what: "--cacert") }
        let observed = try await server.handshake(connectTimeout: connectTimeout)
        let (text, nameToCheck, peerName) = (server.text, server.nameToCheck, server.peerName)
        let validator = PathValidator(anchors: TrustAnchors(includesSystemRoots: !anchorsOnly, certificates: anchors, rootStore: store), name: "pin plan")
        let decision = await validator.evaluate(ServerTrust(presentedChain: observed.chain, peerName: peerName))
        guard decision.isTrusted else {
            // Pins are planned on the validated path only: a chain that does not validate has none.
            for reason in decision.reasons { printError(reason.explanation.description) }
            printError("the chain is not trusted: no pin set can be planned on it")
            throw ExitCode(1)
        }
        let plan = PinPlan(path: decision.validatedPath)
        let (recommended, expires) = plan.recommendation
        let warnings = plan.warnings(recommended.compactMap(\.pin), expires: expires)
        if json {
            try JSONOutput.print(
                Report(
                    url: Secrets.redactedURL(text), checkedName: nameToCheck,
                    validatedPath: plan.path.map {
                        Report.Step(
                            index: $0.index, role: $0.role.rawValue, subject: $0.certificate.subject.description, pin: $0.pin.description,
                            notAfter: $0.certificate.notValidAfter)
                    },
                    recommended: recommended.map { Report.Pin(pin: $0.pin?.description, subject: $0.step?.certificate.subject.description, why: $0.why) },
                    expiresNoLaterThan: expires, warnings: warnings.map { Report.Warning(code: $0.code, message: $0.message) }))
            return
        }
        print(DisplayText("Validated path for \(nameToCheck):").description)
        for step in plan.path {
            print(
                DisplayText(
                    "  \(step.index) \(step.role.rawValue)  \(step.pin)  \(step.certificate.subject.description) (until \(RFC3339.string(step.certificate.notValidAfter)))"
                ).description)
        }
        print("Recommended pin set (survives the leaf's renewal):")
        for pin in recommended {
            print(DisplayText("  \(pin.pin?.description ?? "(backup)")  \(pin.why)").description)
        }
        print("  expiry: no later than \(RFC3339.string(expires)), when the first pinned certificate ends")
        print(
            "TLS certificates issued from 2026-03-15 last at most 200 days (100 from 2027-03-15, 47 from 2029-03-15), and a renewal may bring a new key: pin CA keys, not the leaf's."
        )
        for warning in warnings { printError("warning [\(warning.code)]: \(warning.message)") }
    }
}
