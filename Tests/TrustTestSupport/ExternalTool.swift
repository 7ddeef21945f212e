import Foundation
import Testing

/// The tools some tests compare against: implementations we did not write. `.ci/run` installs them, so
/// CI always runs those tests; on a machine without one, a test that needs it is skipped — and says
/// which tool is missing and how to get it — instead of failing (``Testing/Trait/requires(_:)``).
package enum ExternalTool: Sendable, CustomStringConvertible {
    case openssl
    case curl
    /// python3 with the requests package (Debian's python3-requests).
    case python3Requests
    /// python3 alone (its standard library, e.g. `pty`).
    case python3
    /// strace, to see the system calls of a child process.
    case strace

    /// The executable's path, where the tool is installed.
    package var path: String {
        switch self {
        case .openssl: "/usr/bin/openssl"
        case .curl: "/usr/bin/curl"
        case .python3Requests: "/usr/bin/python3"
        case .python3: "/usr/bin/python3"
        case .strace: "/usr/bin/strace"
        }
    }

    package var description: String {
        switch self {
        case .openssl: "openssl"
        case .curl: "curl"
        case .python3Requests: "python3 with requests"
        case .python3: "python3"
        case .strace: "strace"
        }
    }

    /// Whether the tool can be run (for python3, whether it imports requests).
    package var isInstalled: Bool {
        switch self {
        case .openssl: Self.opensslInstalled
        case .curl: Self.curlInstalled
        case .python3Requests: Self.requestsInstalled
        case .python3: Self.python3Installed
        case .strace: Self.straceInstalled
        }
    }

    private static let opensslInstalled = FileManager.default.isExecutableFile(atPath: ExternalTool.openssl.path)
    private static let curlInstalled = FileManager.default.isExecutableFile(atPath: ExternalTool.curl.path)
    private static let python3Installed = FileManager.default.isExecutableFile(atPath: ExternalTool.python3.path)
    private static let straceInstalled = FileManager.default.isExecutableFile(atPath: ExternalTool.strace.path)
    /// Whether python3 has requests: its package folder where Debian's python3-requests (or pip) puts
    /// it. Read from the file system, not by running python3: a trait is evaluated on Swift's
    /// cooperative pool, which a test must never block on a child process.
    private static let requestsInstalled: Bool = {
        guard FileManager.default.isExecutableFile(atPath: ExternalTool.python3Requests.path) else { return false }
        let roots =
            ["/usr/lib/python3/dist-packages", "/usr/local/lib/python3/dist-packages"]
            + ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/local/lib")) ?? []).filter { $0.hasPrefix("python3") }
            .flatMap { ["/usr/local/lib/\($0)/dist-packages", "/usr/local/lib/\($0)/site-packages"] }
        return roots.contains { FileManager.default.fileExists(atPath: $0 + "/requests/__init__.py") }
    }()

    /// How to install the tool (Debian package names, as `.ci/run` installs them).
    var installation: String {
        switch self {
        case .openssl: "apt-get install openssl"
        case .curl: "apt-get install curl"
        case .python3Requests: "apt-get install python3-requests"
        case .python3: "apt-get install python3"
        case .strace: "apt-get install strace"
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where `tool` is installed; elsewhere it is skipped with the reason.
    package static func requires(_ tool: ExternalTool) -> Self {
        .enabled(if: tool.isInstalled, "skipped: \(tool) is not installed at \(tool.path) (\(tool.installation); .ci/run installs it)")
    }
}
