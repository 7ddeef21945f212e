import Foundation
import Testing

/// Starts `openssl s_server` listening on 127.0.0.1 at a port the kernel picks (`-accept 127.0.0.1:0`), so it
/// can never collide with a port another test's server holds, and returns once it listens, with the port
/// (read from its `ACCEPT 127.0.0.1:PORT` line). Its later output is drained until it exits; stop it with ``stop(_:)``.
package func startOpenSSLServer(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> (Process, Int) {
    struct NoPort: Error, CustomStringConvertible { var description: String }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = ["s_server", "-accept", "127.0.0.1:0"] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let port: Int? = await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            let reader = pipe.fileHandleForReading
            var text = ""
            var found: Int?
            while found == nil {
                let chunk = reader.availableData
                if chunk.isEmpty { break }  // the server exited
                text += String(decoding: chunk, as: UTF8.self)
                if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT ") }), let colon = line.lastIndex(of: ":") {
                    found = Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
            }
            continuation.resume(returning: found)
            while !reader.availableData.isEmpty {}  // keep draining so the server never blocks on a full pipe
        }
    }
    guard let port else {
        stop(process)
        throw NoPort(description: "openssl s_server did not say which port it listens on")
    }
    return (process, port)
}
