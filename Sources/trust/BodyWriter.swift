import NIOCore
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

/// A failed write (TrustHTTP's `FileWriteError`), which `trust get` turns into curl's exit 23.
typealias OutputWriteError = FileWriteError

extension FileDescriptorOutput {
    /// Writes `text` (UTF-8) to `descriptor`.
    static func write(_ descriptor: Int32, _ text: String) throws(FileWriteError) {
        try write(descriptor, Array(text.utf8))
    }
}

/// Lines on stderr, through write(2) (a closed stderr is ignored: there is nowhere left to say so).
enum StandardError {
    /// A line of diagnostics. Whatever a message quotes, no raw control character reaches the terminal:
    /// peer-chosen text is escaped where it is placed (``DisplayText``), and this catches what was not.
    static func line(_ text: String) {
        try? FileDescriptorOutput.write(STDERR_FILENO, DisplayText.neutralizingControls(text) + "\n")
    }

    static func write(_ text: String) {
        try? FileDescriptorOutput.write(STDERR_FILENO, text)
    }
}

/// All of standard input, through read(2): `-d @-`, `-T -`, `-w @-`, `pin -` (as curl, which reads it to its end).
enum StandardInput {
    /// The bytes until end of file. Never inlined, as ``JSONOutput/print(_:)`` (the release build's optimiser crashed
    /// on typed throws inlined into an async `run()`).
    @inline(never)
    static func readAll() throws(FileWriteError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // A non-blocking descriptor inherited from a shell: wait until there is something to read.
                var waiting = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
                _ = poll(&waiting, 1, -1)
                continue
            }
            guard count >= 0 else { throw FileWriteError(errorNumber: errno, action: "reading standard input") }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }
}

/// Where `trust get` puts what it receives: standard output, or a file.
///
/// A new file is written as a temporary file in the same folder and renamed into place only once
/// complete (a reader never sees half a file; on any failure or interruption the temporary file is
/// removed, leaving nothing).
///
/// A file that exists already — of any kind, through symbolic links — is written in place, as curl's
/// `fopen(name, "wb")` writes it: truncated, then written. It keeps its mode (a 0600 file stays 0600),
/// owner, ACLs and hard links, a symbolic link stays and its target receives the body, and a file one
/// may write in a folder one may not write to can still be written. Renaming a new file over it would
/// give it a new file's mode and owner, replace the link rather than its target, and need the folder
/// to be writable. The price is curl's: a failed transfer leaves the file partly written.
final class BodyWriter {
    /// What to write to.
    enum Destination: Equatable {
        case standardOutput
        case file(String)
    }

    let destination: Destination
    private let descriptor: Int32
    /// A regular file's temporary file beside it (TrustHTTP's `AtomicFile`); nil for standard output
    /// and special files.
    private let file: AtomicFile?
    private var closed = false

    /// The temporary file being written (nil for standard output and special files).
    var temporaryPath: String? { file?.temporaryPath }

    /// Opens the destination: for a regular file, a fresh temporary file beside it.
    init(_ destination: Destination) throws(OutputWriteError) {
        self.destination = destination
        switch destination {
        case .standardOutput:
            descriptor = STDOUT_FILENO
            file = nil
        case .file(let path):
            if let existing = try Self.openExisting(path) {
                descriptor = existing
                file = nil
                return
            }
            let file = try AtomicFile(replacing: path)
            self.file = file
            descriptor = file.descriptor
        }
    }

    /// Opens what `path` names when something is there — a file, through symbolic links, or a dangling link, whose
    /// target curl creates — to be written in place, as curl's fopen(name, "wb"): truncated. nil when nothing is
    /// (a new file). The open decides, not a check before it (which something could be swapped in after), and the
    /// kernel follows the links (its own checks apply: Linux `fs.protected_symlinks`).
    /// O_TRUNC is ignored by devices and FIFOs (`/dev/null`, a terminal).
    private static func openExisting(_ path: String) throws(OutputWriteError) -> Int32? {
        let existing = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        if existing >= 0 { return existing }
        guard errno == ENOENT else { throw OutputWriteError(errorNumber: errno, action: "opening \(path)") }
        // ENOENT: nothing there, or a dangling link (or a file made since the open: written in place too).
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        let created = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard created >= 0 else { throw OutputWriteError(errorNumber: errno, action: "opening \(path)") }
        return created
    }

    /// Writes a piece of the body.
    func write(_ buffer: ByteBuffer) throws(OutputWriteError) {
        try FileDescriptorOutput.write(descriptor, buffer)
    }

    /// Writes text (a response head for `-i`/`-I`).
    func write(_ text: String) throws(OutputWriteError) {
        try FileDescriptorOutput.write(descriptor, text)
    }

    /// Closes the destination; for a temporary file, close(2)'s verdict counts (it reports deferred
    /// write errors: NFS, quotas), and a failure removes the file.
    func close() throws(OutputWriteError) {
        guard !closed else { return }
        closed = true
        if let file { return try file.close() }
        guard descriptor != STDOUT_FILENO else { return }
        guard FileDescriptorOutput.close(descriptor) == 0 else { throw OutputWriteError(errorNumber: errno, action: "closing") }
    }

    /// Moves the completed temporary file into place (after ``close()``).
    func commit() throws(OutputWriteError) {
        try file?.commit()
    }

    /// Closes and removes the temporary file (a failed or interrupted transfer leaves nothing).
    func discard() {
        if let file { return file.discard() }
        guard !closed else { return }
        closed = true
        if descriptor != STDOUT_FILENO { _ = FileDescriptorOutput.close(descriptor) }
    }

    /// curl's `-O`: the file name is the URL path's last segment (query and fragment excluded, as
    /// sent — curl 7.88 does not percent-decode it); nil when the URL names no file.
    static func remoteName(of url: URL) -> String? {
        let path = url.path(percentEncoded: true)
        guard let last = path.split(separator: "/", omittingEmptySubsequences: false).last, !last.isEmpty else { return nil }
        let name = String(last)
        return name == "." || name == ".." ? nil : name
    }
}
