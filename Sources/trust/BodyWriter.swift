import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed write, with the OS's reason (`errno`).
struct OutputWriteError: Error, CustomStringConvertible {
    var errorNumber: Int32
    /// What was being done (`writing`, `creating /dir/file`…).
    var action: String

    var description: String { "\(action): \(String(cString: strerror(errorNumber)))" }
}

/// Writes through write(2), checking every result: unlike `FileHandle.write`, which traps on
/// `EPIPE` or `ENOSPC`, a failure here is an error the caller turns into curl's exit 23.
enum FileDescriptorOutput {
    /// Writes every byte of `bytes` to `descriptor`, retrying `EINTR` and waiting out `EAGAIN`
    /// (a non-blocking descriptor inherited from the shell).
    static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws(OutputWriteError) {
        guard var pointer = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            #if canImport(Darwin)
            let written = Darwin.write(descriptor, pointer, remaining)
            #else
            let written = Glibc.write(descriptor, pointer, remaining)
            #endif
            if written < 0 {
                let error = errno
                if error == EINTR { continue }
                if error == EAGAIN || error == EWOULDBLOCK {
                    var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, -1)
                    continue
                }
                throw OutputWriteError(errorNumber: error, action: "writing")
            }
            pointer += written
            remaining -= written
        }
    }

    /// Writes `bytes` to `descriptor`.
    static func write(_ descriptor: Int32, _ bytes: [UInt8]) throws(OutputWriteError) {
        let result: Result<Void, OutputWriteError> = bytes.withUnsafeBytes { buffer in
            do throws(OutputWriteError) {
                try write(descriptor, buffer)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// Writes `text` (UTF-8) to `descriptor`.
    static func write(_ descriptor: Int32, _ text: String) throws(OutputWriteError) {
        try write(descriptor, Array(text.utf8))
    }
}

/// Lines on stderr, through write(2) (a closed stderr is ignored: there is nowhere left to say so).
enum StandardError {
    static func line(_ text: String) {
        try? FileDescriptorOutput.write(STDERR_FILENO, text + "\n")
    }

    static func write(_ text: String) {
        try? FileDescriptorOutput.write(STDERR_FILENO, text)
    }
}

/// Where `trust get` puts what it receives: standard output, or a file written as a temporary
/// file in the same folder and renamed into place only once complete (a reader never sees half a
/// file; on any failure or interruption the temporary file is removed).
///
/// `-o` naming something that is not a regular file (`/dev/null`, a FIFO, a terminal) writes to
/// it directly, as curl does: such a file cannot be replaced by a rename.
final class BodyWriter {
    /// What to write to.
    enum Destination: Equatable {
        case standardOutput
        case file(String)
    }

    let destination: Destination
    private var descriptor: Int32 = -1
    /// The temporary file being written (nil for standard output and special files).
    private(set) var temporaryPath: String?
    private var closed = false

    /// Opens the destination: for a regular file, a fresh temporary file beside it.
    init(_ destination: Destination) throws(OutputWriteError) {
        self.destination = destination
        switch destination {
        case .standardOutput:
            descriptor = STDOUT_FILENO
        case .file(let path):
            var status = stat()
            if stat(path, &status) == 0 && (status.st_mode & S_IFMT) != S_IFREG {
                descriptor = open(path, O_WRONLY | O_CLOEXEC)
                guard descriptor >= 0 else { throw OutputWriteError(errorNumber: errno, action: "opening \(path)") }
                return
            }
            let url = URL(fileURLWithPath: path)
            let folder = url.deletingLastPathComponent().path
            var template = Array((folder + "/." + url.lastPathComponent + ".trust-XXXXXX").utf8CString)
            descriptor = template.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress.map { mkstemp($0) } ?? -1
            }
            guard descriptor >= 0 else { throw OutputWriteError(errorNumber: errno, action: "creating a file in \(folder)") }
            temporaryPath = template.withUnsafeBufferPointer { buffer in buffer.baseAddress.map { String(cString: $0) } }
            // mkstemp creates 0600; a downloaded file gets the usual 0666 less the umask, as curl's.
            let mask = umask(0)
            umask(mask)
            _ = fchmod(descriptor, 0o666 & ~mask)
        }
    }

    /// Writes a chunk.
    func write(_ bytes: [UInt8]) throws(OutputWriteError) {
        try FileDescriptorOutput.write(descriptor, bytes)
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
        guard descriptor != STDOUT_FILENO else { return }
        let result = closeDescriptor(descriptor)
        let error = errno
        guard result == 0 else {
            discard()
            throw OutputWriteError(errorNumber: error, action: "closing")
        }
    }

    /// Moves the completed temporary file into place (after ``close()``).
    func commit() throws(OutputWriteError) {
        guard case .file(let path) = destination, let temporaryPath else { return }
        guard rename(temporaryPath, path) == 0 else {
            let error = errno
            discard()
            throw OutputWriteError(errorNumber: error, action: "renaming into \(path)")
        }
        self.temporaryPath = nil
    }

    /// Closes and removes the temporary file (a failed or interrupted transfer leaves nothing).
    func discard() {
        if !closed {
            closed = true
            if descriptor != STDOUT_FILENO { _ = closeDescriptor(descriptor) }
        }
        if let temporaryPath {
            unlink(temporaryPath)
            self.temporaryPath = nil
        }
    }

    private func closeDescriptor(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        Darwin.close(descriptor)
        #else
        Glibc.close(descriptor)
        #endif
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
