import Foundation

/// Where the `trust` binary under test is, and the lab PKI written to files for it (once per process).
package enum CLI {
    /// The `trust` executable built beside the test bundle.
    package static let binary: String = builtExecutable("trust")

    /// The developers' `trust-dev` executable (load and construction checks, fuzzer) built beside the test bundle.
    package static let devBinary: String = builtExecutable("trust-dev")

    private static func builtExecutable(_ name: String) -> String {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [here, here.deletingLastPathComponent(), here.deletingLastPathComponent().deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return ".build/debug/" + name
    }

    /// A folder holding ``Lab/pki`` as files (`roots.pem`, `good/chain.pem`, `clients/…`; see `LabPKI.write(to:)`).
    package static let lab: String = {
        do {
            let dir = try TestScratch.folder("cli")
            _ = try? Lab.pki.write(to: dir)
            return dir
        } catch {
            fatalError("cannot make the CLI lab folder: \(error)")
        }
    }()
}
