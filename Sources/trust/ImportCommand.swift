import ArgumentParser
import Trust
import TrustConfigurationImport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `trust import --from trustkit|android-nsc|ats|okhttp FILE`: converts another platform's pinning
/// configuration into ours (JSON on standard output or -o FILE; what cannot be expressed on stderr).
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Convert a TrustKit, Android Network Security Config, ATS NSPinnedDomains or OkHttp pin configuration into a trust configuration file.",
        discussion: """
            Subdomain semantics are translated: TrustKit and Android "include subdomains" → **.domain (apex and any depth);
            ATS NSIncludesSubdomains → domain + *.domain (one label); OkHttp *. and **. keep their meaning.
            Exit 0 converted (notes about what could not be carried over on stderr), 1 the input could not be converted or the
            result does not validate (problems on stderr), 2 bad usage.
            """)

    @Option(help: "The source format: trustkit, android-nsc, ats, okhttp.")
    var from: String

    @Argument(help: "The file to convert.")
    var file: String

    @Option(name: .shortAndLong, help: "Write the configuration to FILE instead of standard output.")
    var output: String?

    func run() throws {
        guard let source = TrustConfigurationImporter.Source(rawValue: from.lowercased()) else {
            throw UsageError("--from \(from): use one of " + TrustConfigurationImporter.Source.allCases.map(\.rawValue).joined(separator: ", "))
        }
        // Bounded as every local input (a device or an oversized file refused, a FIFO or pipe read within a deadline).
        let data: Data
        do {
            data = Data(try LocalFile.read(file, limit: LocalFile.configurationLimit))
        } catch {
            printError("cannot read \(error.description)")
            throw ExitCode(1)
        }
        let result: TrustConfigurationImporter.Result
        do {
            result = try TrustConfigurationImporter.convert(data, from: source)
        } catch {
            printError("\(file): \(error)")
            throw ExitCode(1)
        }
        for note in result.notes { printError("note: \(note)") }
        let text = result.configuration.jsonText()
        var problems: [TrustConfigurationProblem] = []
        do {
            _ = try TrustConfiguration.parse(text)
        } catch {
            problems = error.problems
        }
        if let output, problems.isEmpty {
            do {
                // 0666 less the umask, as a new file gets, but never writable by others: the loader refuses such a
                // configuration, and a umask of 002 made the file it had just written one it refused. A strict umask
                // (077) keeps the file private: report URIs may carry credentials.
                try PrivateFile.write(Array(text.utf8), to: output, mode: 0o666 & ~FileCreationMask.current & ~0o022)
            } catch {
                printError("cannot write \(DisplayText.escaped(output)): \(DisplayText.escaped(error.reason))")
                throw ExitCode(1)
            }
        } else {
            print(text, terminator: "")  // shown even when invalid, so it can be fixed by hand
        }
        if !problems.isEmpty {
            for problem in problems { printError(problem.description) }
            printError(
                "the converted configuration does not validate as it stands" + (output != nil ? " (nothing written to \(output ?? ""))" : "")
                    + "; fix the problems above")
            throw ExitCode(1)
        }
    }
}
