import HTTPTypes
import Trust
import TrustHTTP

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

/// curl's `-w/--write-out FORMAT` (curl 7.88 names and meanings): `%{variable}`, `%header{name}`,
/// `%%`, and the escapes `\n`, `\r`, `\t`, `\\`; `%{stdout}` and `%{stderr}` switch where the rest
/// goes. Written after the transfer, also when it failed (`%{http_code}` is then `000`).
///
/// Times come from what the client sees: `time_appconnect` is when the server-trust challenge was
/// answered (the handshake's last step), `time_connect` when the server's certificate arrived — an
/// upper bound of the TCP connect — and both are 0 over plain http, where `time_connect` is not measured.
struct WriteOut: Sendable {
    /// The format as given (after `@FILE` was read).
    let format: String

    /// Variables this implementation knows (others are warned about and print nothing, as curl's).
    static let variables: Set<String> = [
        "http_code", "response_code", "url_effective", "num_redirects", "remote_ip", "remote_port", "time_namelookup", "time_connect",
        "time_appconnect", "time_pretransfer", "time_starttransfer", "time_total", "time_redirect", "size_download", "size_header",
        "size_upload", "speed_download", "speed_upload", "ssl_verify_result", "content_type", "http_version", "method", "scheme", "exitcode", "errormsg",
        "num_headers", "stdout", "stderr",
    ]

    /// curl's `-w @FILE` (`@-`: standard input) reads the format from a file.
    static func load(_ argument: String) throws -> WriteOut {
        guard argument.hasPrefix("@") else { return WriteOut(format: argument) }
        let path = String(argument.dropFirst())
        // A file is read bounded (a device or a file over 1 MiB refused, a FIFO read within a deadline); standard input as curl.
        let data: Data
        if path == "-" {
            data = Data(try StandardInput.readAll())
        } else {
            do {
                data = Data(try LocalFile.read(path, limit: 1 << 20))
            } catch {
                throw UsageError("-w: cannot read \(error.description)")
            }
        }
        return WriteOut(format: String(decoding: data, as: UTF8.self))
    }

    /// Renders and writes the format.
    func emit(facts: TransferFacts, exitCode: Int32, errorMessage: String, remote: () -> (address: String, port: Int)?, diagnostics: Diagnostics) {
        for (descriptor, text) in render(facts: facts, exitCode: exitCode, errorMessage: errorMessage, remote: remote, warn: { diagnostics.warning($0) })
        where !text.isEmpty {
            try? FileDescriptorOutput.write(descriptor, text)
        }
    }

    /// The output pieces with their file descriptors (1 or 2), in order.
    func render(
        facts: TransferFacts, exitCode: Int32, errorMessage: String, remote: () -> (address: String, port: Int)?,
        warn: (String) -> Void
    ) -> [(Int32, String)] {
        var pieces: [(Int32, String)] = []
        var descriptor = STDOUT_FILENO
        var text = ""
        var lookedUp: (address: String, port: Int)??
        func remoteEndpoint() -> (address: String, port: Int)? {
            if lookedUp == nil { lookedUp = .some(remote()) }
            return lookedUp ?? nil
        }
        var index = format.startIndex
        while index < format.endIndex {
            let character = format[index]
            let next = format.index(after: index)
            if character == "\\", next < format.endIndex {
                switch format[next] {
                case "n": text += "\n"
                case "r": text += "\r"
                case "t": text += "\t"
                case "\\": text += "\\"
                default: text += "\\" + String(format[next])
                }
                index = format.index(after: next)
                continue
            }
            if character == "%", next < format.endIndex {
                if format[next] == "%" {
                    text += "%"
                    index = format.index(after: next)
                    continue
                }
                if format[next...].hasPrefix("{"), let close = format[next...].firstIndex(of: "}") {
                    let name = String(format[format.index(after: next)..<close])
                    index = format.index(after: close)
                    switch name {
                    case "stdout", "stderr":
                        pieces.append((descriptor, text))
                        text = ""
                        descriptor = name == "stdout" ? STDOUT_FILENO : STDERR_FILENO
                    default:
                        if let value = value(of: name, facts: facts, exitCode: exitCode, errorMessage: errorMessage, remote: remoteEndpoint) {
                            text += value
                        } else {
                            warn("unknown --write-out variable: '\(name)'")
                        }
                    }
                    continue
                }
                if format[next...].hasPrefix("header{"), let close = format[next...].firstIndex(of: "}") {
                    let name = String(format[format.index(next, offsetBy: "header{".count)..<close])
                    text += HTTPField.Name(name).map { facts.headers[values: $0].joined(separator: ", ") } ?? ""
                    index = format.index(after: close)
                    continue
                }
            }
            text.append(character)
            index = next
        }
        pieces.append((descriptor, text))
        return pieces
    }

    /// One variable's value; nil for a variable curl 7.88 has and this does not, or none at all.
    func value(of name: String, facts: TransferFacts, exitCode: Int32, errorMessage: String, remote: () -> (address: String, port: Int)?) -> String? {
        func time(_ duration: Duration?) -> String { FixedPoint.text(duration.map(TransferMonitor.seconds) ?? 0, digits: 6) }
        let total = facts.endedAt
        switch name {
        case "http_code", "response_code":
            let code = String(facts.statusCode ?? 0)
            return String(repeating: "0", count: max(0, 3 - code.count)) + code
        case "url_effective": return facts.effectiveURL
        case "num_redirects": return String(facts.redirects)
        case "remote_ip": return facts.statusCode == nil ? "" : remote()?.address ?? ""
        case "remote_port": return facts.statusCode == nil ? "0" : remote().map { String($0.port) } ?? "0"
        case "time_namelookup": return time(nil)
        case "time_connect": return time(facts.trustChallengeAt)
        case "time_appconnect": return time(facts.trustAnsweredAt)
        case "time_pretransfer": return time(facts.trustAnsweredAt)
        case "time_starttransfer": return time(facts.headAt)
        case "time_total": return time(total)
        case "time_redirect": return time(nil)
        case "size_download": return String(facts.bytes)
        case "size_header": return String(facts.headerSize)
        case "size_upload": return String(facts.uploaded)
        case "speed_download", "speed_upload":
            let seconds = total.map(TransferMonitor.seconds) ?? 0
            let bytes = name == "speed_upload" ? facts.uploaded : facts.bytes
            return FixedPoint.text(seconds > 0 ? Double(bytes) / seconds : 0, digits: 0)
        case "ssl_verify_result": return String(facts.verifyResult)
        case "content_type": return facts.headers[.contentType] ?? ""
        case "http_version":
            switch facts.httpVersion {
            case "HTTP/2": return "2"
            case "HTTP/1.1": return "1.1"
            case "HTTP/1.0": return "1"
            default: return "0"
            }
        case "method": return facts.method
        case "scheme": return URL(string: facts.effectiveURL)?.scheme?.uppercased() ?? ""
        case "exitcode": return String(exitCode)
        case "errormsg": return errorMessage
        case "num_headers": return String(facts.headers.count)
        default: return nil
        }
    }
}

/// OpenSSL's `X509_V_*` verify results (what curl's `%{ssl_verify_result}` prints) for a trust decision.
enum TrustVerdictCode {
    static func code(for decision: TrustDecision?) -> Int {
        guard let decision, !decision.isTrusted else { return 0 }
        for reason in decision.reasons {
            switch reason.kind {
            case .expired: return 10  // X509_V_ERR_CERT_HAS_EXPIRED
            case .notYetValid: return 9  // X509_V_ERR_CERT_NOT_YET_VALID
            case .noPathToTrustedAnchor: return 20  // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
            case .nameMismatch: return 62  // X509_V_ERR_HOSTNAME_MISMATCH
            case .weakKey: return 66  // X509_V_ERR_EE_KEY_TOO_SMALL
            case .weakSignatureAlgorithm: return 68  // X509_V_ERR_CA_MD_TOO_WEAK
            case .missingExtendedKeyUsage, .extendedKeyUsageExcludedByIssuer: return 26  // X509_V_ERR_INVALID_PURPOSE
            case .issuerNotCertificateAuthority: return 24  // X509_V_ERR_INVALID_CA
            case .pathLengthConstraintViolated: return 25  // X509_V_ERR_PATH_LENGTH_EXCEEDED
            case .unhandledCriticalExtension: return 34  // X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION
            case .nameConstraintViolation: return 47  // X509_V_ERR_PERMITTED_VIOLATION
            default: continue
            }
        }
        return 1  // X509_V_ERR_UNSPECIFIED
    }
}
