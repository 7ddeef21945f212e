import NIOCore
import Trust

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

/// A failed file operation, with the OS's reason (`errno`).
package struct FileWriteError: Error, Sendable, CustomStringConvertible {
    package var errorNumber: Int32
    /// What was being done (`writing`, `creating a file in /dir`…).
    package var action: String

    package init(errorNumber: Int32, action: String) {
        self.errorNumber = errorNumber
        self.action = action
    }

    package var description: String { "\(action): \(String(cString: strerror(errorNumber)))" }
}

/// Writes through write(2), checking every result: unlike `FileHandle.write`, which traps on `EPIPE`
/// or `ENOSPC`, a failure here is an error.
package enum FileDescriptorOutput {
    /// Writes every byte of `bytes` to `descriptor`, retrying `EINTR` and waiting out `EAGAIN`
    /// (a non-blocking descriptor inherited from a shell).
    package static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws(FileWriteError) {
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
                throw FileWriteError(errorNumber: error, action: "writing")
            }
            pointer += written
            remaining -= written
        }
    }

    /// Writes `bytes` to `descriptor`.
    package static func write(_ descriptor: Int32, _ bytes: [UInt8]) throws(FileWriteError) {
        try write(descriptor, lending: { body in bytes.withUnsafeBytes(body) })
    }

    /// Writes the readable bytes of `buffer` to `descriptor`, from where they are (no copy).
    package static func write(_ descriptor: Int32, _ buffer: ByteBuffer) throws(FileWriteError) {
        try write(descriptor, lending: { body in buffer.withUnsafeReadableBytes(body) })
    }

    /// Writes the bytes `lend` lends to its closure. The closure returns a `Result`: the lenders rethrow an untyped
    /// error, which would lose the write's typed one.
    private static func write(
        _ descriptor: Int32, lending lend: ((UnsafeRawBufferPointer) -> Result<Void, FileWriteError>) -> Result<Void, FileWriteError>
    ) throws(FileWriteError) {
        try lend { bytes in Result { () throws(FileWriteError) in try write(descriptor, bytes) } }.get()
    }

    /// Closes `descriptor` (close(2)'s result: it reports deferred write errors — NFS, quotas).
    package static func close(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
            Darwin.close(descriptor)
        #else
            Glibc.close(descriptor)
        #endif
    }
}

/// A file written whole or not at all: the bytes go to a new temporary file in the destination's folder
/// (`.NAME.trust-XXXXXX`), which ``commit()`` renames over the destination — a reader never sees half a
/// file — and ``discard()`` removes (a failed or interrupted transfer leaves nothing behind). Used by
/// ``TrustHTTPClient/download(for:to:progress:)`` and `trust get -o` (for a new file; one that exists is written in place).
///
/// What the destination names is replaced, never written through: a regular file keeps its permission bits (a 0600
/// file is not made 0644); a symbolic link is itself replaced by the file, its target untouched. A link is never
/// resolved here: resolving it in user space and writing to what it names would bypass the kernel's check on links
/// in sticky world-writable folders (Linux `fs.protected_symlinks`), so a link planted in `/tmp` could aim a
/// download at another user's file. rename(2) replaces a link, never follows it (POSIX.1-2017 rename()).
package final class AtomicFile {
    /// The destination path, as given.
    package let path: String
    /// The temporary file's descriptor.
    package let descriptor: Int32
    /// The temporary file, until committed or discarded.
    package private(set) var temporaryPath: String?
    private var closed = false

    /// Creates the temporary file beside `path`, with the permission bits of the regular file it replaces, or those
    /// a new file gets (0666 less the umask) — also when `path` is a symbolic link, which the file replaces.
    package init(replacing path: String) throws(FileWriteError) {
        var existingMode: mode_t?
        // lstat: what the path itself names, a link not followed.
        var status = stat()
        if lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG { existingMode = status.st_mode & 0o777 }
        self.path = path
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var template = Array((folder + "/." + url.lastPathComponent + ".trust-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mkstemp($0) } ?? -1
        }
        guard descriptor >= 0 else { throw FileWriteError(errorNumber: errno, action: "creating a file in \(folder)") }
        self.descriptor = descriptor
        temporaryPath = template.withUnsafeBufferPointer { buffer in buffer.baseAddress.map { String(cString: $0) } }
        // mkstemp creates 0600; a downloaded file gets the replaced file's bits, or the usual 0666 less the umask,
        // as curl's does. The umask is read without setting it (FileCreationMask): setting it, even back, is
        // process-wide and races with every other thread creating a file.
        _ = fchmod(descriptor, existingMode ?? (0o666 & ~FileCreationMask.current))
    }

    deinit { discard() }

    /// Appends the readable bytes of `buffer`.
    package func write(_ buffer: ByteBuffer) throws(FileWriteError) {
        try FileDescriptorOutput.write(descriptor, buffer)
    }

    /// Closes the temporary file; a failure (close(2) reports deferred write errors) removes it.
    package func close() throws(FileWriteError) {
        guard !closed else { return }
        closed = true
        let result = FileDescriptorOutput.close(descriptor)
        let error = errno
        guard result == 0 else {
            discard()
            throw FileWriteError(errorNumber: error, action: "closing")
        }
    }

    /// Closes the file if still open and renames it over the destination.
    package func commit() throws(FileWriteError) {
        try close()
        guard let temporaryPath else { return }
        guard rename(temporaryPath, path) == 0 else {
            let error = errno
            discard()
            throw FileWriteError(errorNumber: error, action: "renaming into \(path)")
        }
        self.temporaryPath = nil
    }

    /// Closes and removes the temporary file (nothing after ``commit()``).
    package func discard() {
        if !closed {
            closed = true
            _ = FileDescriptorOutput.close(descriptor)
        }
        if let temporaryPath {
            unlink(temporaryPath)
            self.temporaryPath = nil
        }
    }
}
