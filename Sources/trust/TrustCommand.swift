import ArgumentParser
import NIOCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `trust`: server-trust evaluation, pinning and TLS diagnostics from the command line.
///
/// Exit codes follow curl's where curl has one; bad usage or unreadable input is 2.
struct TrustCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Server-trust evaluation, certificate and public-key pinning, and TLS diagnostics.",
        discussion: """
            Exit codes: 0 success (trusted), 1 not trusted, 2 bad usage or unreadable input; trust get exits with \
            curl's codes (trust help get lists them).

            JSON output: every --json (pin, evaluate, inspect, check-config, roots) is written by one writer: UTF-8, \
            pretty-printed, keys sorted at every level, / never escaped, dates as RFC 3339 in UTC with milliseconds \
            (2027-02-22T02:14:11.000Z). Certificates are described alike everywhere: subject, issuer, serialNumber \
            (as openssl x509 -serial: upper-case hex, two digits a byte), notBefore, notAfter, \
            subjectAlternativeNames, key (ECDSA P-256, RSA 2048), signatureAlgorithm (OpenSSL's names: \
            ecdsa-with-SHA256, sha256WithRSAEncryption, ED25519), pin, sha256Fingerprint (as openssl x509 \
            -fingerprint -sha256), isCertificateAuthority, isSelfIssued.

            pin --json: an array of {kind, pin, subject} (kind: certificate, public-key, private-key, \
            certificate-request). pin --plan URL --json: {url, checkedName, validatedPath: [{index, role (leaf, \
            intermediate, root), subject, pin, notAfter}], recommended: [{pin (null: a backup key to make), subject, \
            why}], expiresNoLaterThan, warnings: [{code, message}]}.

            evaluate --json: {trusted, policy, peerName, evaluationTime, reasons: [{code, message}], notes, \
            expectedPins, pinsSeen, validatedPath, closestPath, presentedChain}.

            inspect --json: {url, tlsVersion, alpn, checkedName, clientCertificateRequested, policy, trusted, \
            reasons, explanation, presentedChain, validatedPath, presentedChainPEM (with --showcerts)}.

            check-config --json: {file, valid, problems: [{path, message}], entries: [{host, anchors (system, \
            system+custom, custom-only), anchorSources, pins, pinsExpire, pinsEnforced, mode, minimumTLSVersion, \
            minimumRSABits, minimumECBits, exclude, reportURIs, clientIdentity, debugOverrides}], warnings} (exit 1 \
            with valid: false and the problems). With --chain and --host, also chain: {host, entry, trusted, reasons, \
            matches: [{pin, index, role, subject}], warnings: [{code, message}]}. Pin-set warning codes: single-pin, \
            leaf-only-pin, no-ca-backup, pin-outlives-certificate.

            roots --json: {store, mozilla: {source, trustedForServers, listed, serverDistrustAfter: [root]}, system: \
            {bundle, roots}, systemDiff (with --system-diff): {inBoth, notTrustedByMozilla, notListedByMozilla, \
            missingFromSystem}}, each root {subject, label (Mozilla's), pin, serverDistrustAfter}.

            Environment: SSL_CERT_FILE, else SSL_CERT_DIR, name the system roots as for OpenSSL (default: the first \
            of /etc/ssl/certs/ca-certificates.crt, /etc/pki/tls/certs/ca-bundle.crt, /etc/ssl/cert.pem, \
            /etc/ssl/ca-bundle.pem); TRUST_PUBLIC_SUFFIX_LIST=FILE names a Public Suffix List copy used when newer \
            than the one compiled in (empty: none); trust get reads http_proxy (never HTTP_PROXY), https_proxy, \
            all_proxy and no_proxy as curl does. No variable turns verification off.
            """,
        version: TrustVersion.string,
        subcommands: [
            PinCommand.self, EvaluateCommand.self, GetCommand.self, LabPKICommand.self, DemoCommand.self, LabCommand.self, InspectCommand.self,
            CheckConfigCommand.self, ConfigCommand.self, ImportCommand.self, RootsCommand.self,
        ])
}

/// What `trust --version` prints.
enum TrustVersion {
    static let number = "1.0.0"
    static let string = "trust \(number) (swift-trust)"
}

/// Exit codes shared by the commands (curl's numbers where curl has one).
enum TrustExitCode {
    static let notTrusted: Int32 = 1
    static let usage: Int32 = 2
}

/// Bad usage or unreadable input: printed to stderr, exit 2.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func printError(_ message: String) {
    StandardError.line("trust: " + message)
}

@main
enum TrustMain {
    /// The command to run. `trust get …` is run like curl, often in loops, so it is parsed as a root
    /// command of its own, which reflects over its own options only (through the whole tree,
    /// ArgumentParser first visits every subcommand's options: about 4 ms of a 26 ms run). Anything
    /// that does not parse that way — `--help`, a usage error — goes through the whole tree, so its
    /// message names `trust get` as always.
    static func parse(_ arguments: [String]) throws -> any ParsableCommand {
        if arguments.first == "get", let command = try? GetCommand.parseAsRoot(Array(arguments.dropFirst())), command is GetCommand {
            return command
        }
        return try TrustCommand.parseAsRoot(arguments)
    }

    static func main() async {
        do {
            var command = try parse(Array(CommandLine.arguments.dropFirst()))
            // A one-shot client needs one event loop, not NIO's default of one per core (a thread each, started on
            // first use: 64 on a 64-core machine for one request). Set before anything uses NIO's singletons, and
            // only when the user has not asked for a count (NIO_SINGLETON_GROUP_LOOP_COUNT).
            if command is GetCommand || command is InspectCommand, ProcessInfo.processInfo.environment["NIO_SINGLETON_GROUP_LOOP_COUNT"] == nil {
                NIOSingletons.groupLoopCountSuggestion = 1
            }
            // Secrets leave the argument list (`ps`, /proc/PID/cmdline) before anything else happens.
            if var get = command as? GetCommand {
                try get.prepareCredentials()
                command = get
            }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as UsageError {
            printError(error.description)
            exit(TrustExitCode.usage)
        } catch let error as RevocationOptions.CRLFileError {
            printError(error.description)
            exit(TrustExitCode.usage)
        } catch {
            let code = TrustCommand.exitCode(for: error)
            if code == .validationFailure {
                StandardError.line(TrustCommand.fullMessage(for: error))
                exit(TrustExitCode.usage)
            }
            TrustCommand.exit(withError: error)
        }
    }
}
