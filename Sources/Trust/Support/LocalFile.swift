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

/// Reads a local input file named on a command line or in a configuration, bounded: a device such as `/dev/zero`, a
/// socket or a file larger than the limit for its kind is refused (``LocalFileError``) instead of blocking forever or
/// filling memory, and a FIFO or pipe (a named pipe, or the `/dev/fd/N` of a shell's process substitution
/// `--cacert <(command)`) is read up to the same limit within ``pipeDeadline``.
///
/// The file is opened with `O_NONBLOCK` (opening a FIFO for reading otherwise waits for a writer, POSIX `open(2)`),
/// and every check is made with `fstat(2)` on that descriptor — on what is read, not on a name that may since point
/// elsewhere. Only then are at most `limit` bytes read; from a FIFO or pipe each read waits in `poll(2)` for what
/// remains of the deadline. On Linux a FIFO that no writer has opened yet is not readable to `poll(2)`, so a writer
/// that comes within the deadline is waited for; one that never comes ends the read with
/// a timed-out ``LocalFileError``, as does one that keeps the pipe open without end.
package enum LocalFile {
    /// The limit for certificate files (`--cacert`, anchors): the largest public CA bundles are under 1 MiB.
    package static let certificateLimit = 16 << 20
    /// The limit for a trust configuration file (`--config`), which may embed PEM anchors.
    package static let configurationLimit = 4 << 20
    /// The limit for a CRL file (`--crlfile`): large public CRLs run to tens of megabytes.
    package static let crlLimit = 64 << 20
    /// The limit for a client identity (`--cert`, `--key`: PKCS#12 or PEM), a few kilobytes in practice.
    package static let identityLimit = 4 << 20
    /// How long a FIFO or pipe may take, from its opening, to deliver all its bytes (up to the limit) and its end:
    /// ample for `<(cat FILE)` or `<(pass show NAME)`, short enough that a FIFO nobody writes to is not mistaken for
    /// a hung command.
    package static let pipeDeadline: Duration = .seconds(5)

    /// Who may have written the file.
    package enum Ownership: Sendable {
        /// Anyone (a CA bundle, a CRL: signed or public data).
        case any
        /// Only its reader or root, as ssh requires of its configuration (`secure_permissions` in OpenSSH's
        /// misc.c): owned by root or the effective user, and not group- or world-writable. For files that decide
        /// whom to trust.
        case ownerOnlyWritable
    }

    /// Whether a FIFO or pipe is read.
    package enum Pipes: Sendable {
        /// Read within ``LocalFile/pipeDeadline``.
        case bounded
        /// Refused as not a regular file: for files found by listing a folder rather than named by the user.
        case refused
    }

    /// Whether `path` names a folder (following symbolic links, as `stat(2)` does); false when nothing is there.
    package static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// Whether something is at `path` (following symbolic links).
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The first `count` bytes of the regular file at `path` (fewer when it is shorter), or nil when it cannot be
    /// opened or is not a regular file: for looking at a file's header before deciding to read it all.
    package static func readPrefix(_ path: String, count: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: max(0, count))
        var filled = 0
        while filled < bytes.count {
            let start = filled
            let got = bytes.withUnsafeMutableBytes { buffer in
                systemRead(descriptor, buffer.baseAddress.map { $0 + start }, buffer.count - start)
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            filled += got
        }
        return Array(bytes[..<filled])
    }

    /// The bytes of the regular file, FIFO or pipe at `path`, at most `limit` of them.
    package static func read(_ path: String, limit: Int, ownership: Ownership = .any, pipes: Pipes = .bounded) throws(LocalFileError) -> [UInt8] {
        try read(path, limit: limit, ownership: ownership, pipes: pipes, firstLineOnly: false)
    }

    /// The first line of the regular file, FIFO or pipe at `path`: the bytes before its first LF (all of them when it
    /// has none), which must be found within `limit` bytes (a too-large ``LocalFileError`` otherwise); what
    /// follows that LF is not read. As OpenSSL reads `-passin file:PATH`.
    package static func readFirstLine(_ path: String, limit: Int) throws(LocalFileError) -> [UInt8] {
        try read(path, limit: limit, ownership: .any, pipes: .bounded, firstLineOnly: true)
    }

    private static func read(_ path: String, limit: Int, ownership: Ownership, pipes: Pipes, firstLineOnly: Bool) throws(LocalFileError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw LocalFileError(path: path, kind: .cannotOpen(String(cString: strerror(errno)))) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw LocalFileError(path: path, kind: .cannotOpen(String(cString: strerror(errno)))) }
        let type = info.st_mode & S_IFMT
        let isPipe = type == S_IFIFO
        guard type == S_IFREG || (isPipe && pipes == .bounded) else {
            throw LocalFileError(path: path, kind: .notARegularFile(Self.name(ofType: type)))
        }
        if case .ownerOnlyWritable = ownership {
            let owner = Int(info.st_uid)
            if owner != 0 && owner != Int(geteuid()) { throw LocalFileError(path: path, kind: .ownedByAnotherUser(uid: owner)) }
            if info.st_mode & 0o022 != 0 { throw LocalFileError(path: path, kind: .writableByOthers(mode: Int(info.st_mode & 0o7777))) }
        }
        // A first line may end well before a long file does.
        guard firstLineOnly || Int(info.st_size) <= limit else { throw LocalFileError(path: path, kind: .tooLarge(limit: limit)) }
        let deadline = isPipe ? ContinuousClock.now + pipeDeadline : nil
        // The size may change while it is read (and a pipe has none): read at most limit + 1 bytes and refuse the file
        // if the last came.
        var bytes = [UInt8](repeating: 0, count: min(isPipe ? 64 << 10 : Int(info.st_size), limit) + 1)
        var count = 0
        while true {
            if firstLineOnly, let lineEnd = bytes[..<count].firstIndex(of: 0x0A) { return Array(bytes[..<lineEnd]) }
            if count == bytes.count {
                guard bytes.count <= limit else { throw LocalFileError(path: path, kind: .tooLarge(limit: limit)) }
                bytes += [UInt8](repeating: 0, count: min(bytes.count, limit + 1 - bytes.count))
            }
            if let deadline { try waitUntilReadable(descriptor, deadline: deadline, path: path) }
            let start = count
            // A first line is read a little at a time, so that nothing much past its end is taken from a pipe.
            let wanted = firstLineOnly ? min(bytes.count - count, 256) : bytes.count - count
            let result = bytes.withUnsafeMutableBytes { buffer in
                systemRead(descriptor, buffer.baseAddress.map { $0 + start }, wanted)
            }
            if result < 0 {
                // EAGAIN: a pipe with nothing to read yet (O_NONBLOCK); poll(2) waits again.
                if errno == EINTR || (isPipe && (errno == EAGAIN || errno == EWOULDBLOCK)) { continue }
                throw LocalFileError(path: path, kind: .cannotOpen(String(cString: strerror(errno))))
            }
            if result == 0 { break }
            count += result
        }
        bytes.removeSubrange(count...)
        if firstLineOnly, let lineEnd = bytes.firstIndex(of: 0x0A) { bytes.removeSubrange(lineEnd...) }
        return bytes
    }

    /// Waits in poll(2) until `descriptor` is readable or hung up, or throws when `deadline` has passed.
    private static func waitUntilReadable(_ descriptor: Int32, deadline: ContinuousClock.Instant, path: String) throws(LocalFileError) {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                throw LocalFileError(path: path, kind: .timedOut(seconds: Int(pipeDeadline.components.seconds)))
            }
            // Whole milliseconds, rounded up (a deadline never passes unnoticed in a zero-length wait loop).
            let (seconds, attoseconds) = remaining.components
            let milliseconds = min(seconds, 86_400) * 1000 + attoseconds / 1_000_000_000_000_000 + 1
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let result = poll(&entry, 1, Int32(milliseconds))
            // Readable, hung up or in error: read(2) says which.
            if result > 0 { return }
            if result < 0 && errno != EINTR {
                throw LocalFileError(path: path, kind: .cannotOpen(String(cString: strerror(errno))))
            }
        }
    }

    private static func name(ofType type: mode_t) -> String {
        switch type {
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        case S_IFDIR: return "a folder"
        default: return "a special file"
        }
    }
}

/// read(2), out of `LocalFile`'s scope (where `read` names its own method).
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
