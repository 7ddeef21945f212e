import Foundation
import FuzzSupport
import TrustConfigurationImport

// JSONValue is package-internal to swift-trust; run.sh builds with -enable-testing.
@testable import Trust

/// A small, fixed Public Suffix List: the results do not depend on the machine, and no file is read per input.
let publicSuffixes = PublicSuffixList(contents: "com\norg\nuk\nco.uk\n*.ck\n!www.ck\ntest\n")

/// The configuration file parser (`TrustConfiguration.parse`) and the importers of other platforms'
/// pinning configurations (`TrustConfigurationImporter`: TrustKit plist/JSON, ATS, Android Network
/// Security Config XML, OkHttp).
///
/// Input: the first byte chooses the parser (`J` or any other byte: the configuration file;
/// `T` TrustKit, `S` ATS, `A` Android, `O` OkHttp), the rest is the file. Properties, besides
/// "no crash, no leak, bounded memory":
/// - the loader either returns a configuration that prints (`jsonText()`) to a file that loads
///   back to the same configuration, or a typed error with at least one problem, each at a JSON
///   path starting at `$`;
/// - an importer either returns a configuration whose `jsonText()` is valid JSON (which then goes
///   through the loader, with the loader's properties), or a typed error with a message.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzConfiguration_main`): libFuzzer's driver.
@_cdecl("FuzzConfiguration_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

/// One input: every property must hold.
func test(_ bytes: [UInt8]) -> CInt {
    guard let selector = bytes.first else { return 0 }
    let file = bytes.dropFirst()
    let source: TrustConfigurationImporter.Source? =
        switch selector {
        case UInt8(ascii: "T"): .trustkit
        case UInt8(ascii: "S"): .ats
        case UInt8(ascii: "A"): .androidNSC
        case UInt8(ascii: "O"): .okhttp
        default: nil
        }
    guard let source else {
        checkLoader(String(decoding: file, as: UTF8.self))
        return 0
    }
    do {
        let result = try TrustConfigurationImporter.convert(Data(file), from: source)
        let text = result.configuration.jsonText()
        require((try? JSONValue.parse(text)) != nil, "an imported configuration prints as invalid JSON: \(text)")
        checkLoader(text)
    } catch {
        require(!error.description.isEmpty, "an import error without a message")
    }
    return 0
}

/// The loader's properties on one file.
func checkLoader(_ text: String) {
    do {
        let configuration = try TrustConfiguration.parse(text, publicSuffixes: publicSuffixes)
        let printed = configuration.jsonText()
        do {
            let again = try TrustConfiguration.parse(printed, publicSuffixes: publicSuffixes)
            require(again == configuration, "round trip changed the configuration:\n\(text)\n→\n\(printed)")
        } catch {
            fatalError("property violated: a loaded configuration prints to a file that does not load (\(error)):\n\(text)\n→\n\(printed)")
        }
    } catch {
        require(!error.problems.isEmpty, "a configuration error without a problem")
        for problem in error.problems {
            require(problem.path.hasPrefix("$"), "a problem without a JSON path: \(problem)")
            require(!problem.message.isEmpty, "a problem without a message at \(problem.path)")
        }
    }
}
