import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a local input file named on a command line or in a configuration, bounded: a FIFO without a writer, a device
/// such as `/dev/zero` or a file larger than the limit for its kind is refused (``LocalFileError``) instead of
/// blocking forever or filling memory.
///
/// The file is opened with `O_NONBLOCK` (opening a FIFO for reading otherwise waits for a writer, POSIX `open(2)`),
/// and every check is made with `fstat(2)` on that descriptor — on what is read, not on a name that may since point
/// elsewhere. Only then are at most `limit` bytes read.
package enum LocalFile {
    /// The limit for certificate files (`--cacert`, anchors): the largest public CA bundles are under 1 MiB.
    package static let certificateLimit = 16 << 20
    /// The limit for a trust configuration file (`--config`), which may embed PEM anchors.
    package static let configurationLimit = 4 << 20
    /// The limit for a CRL file (`--crlfile`): large public CRLs run to tens of megabytes.
    package static let crlLimit = 64 << 20
    /// The limit for a client identity (`--cert`, `--key`: PKCS#12 or PEM), a few kilobytes in practice.
    package static let identityLimit = 4 << 20

    /// Who may have written the file.
    package enum Ownership: Sendable {
        /// Anyone (a CA bundle, a CRL: signed or public data).
        case any
        /// Only its reader or root, as ssh requires of its configuration (`secure_permissions` in OpenSSH's
        /// misc.c): owned by root or the effective user, and not group- or world-writable. For files that decide
        /// whom to trust.
        case ownerOnlyWritable
    }

    /// The bytes of the regular file at `path`, at most `limit` of them.
    package static func read(_ path: String, limit: Int, ownership: Ownership = .any) throws(LocalFileError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw LocalFileError(path: path, kind: .cannotOpen(String(cString: strerror(errno)))) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw LocalFileError(path: path, kind: .cannotOpen(String(cString: strerror(errno)))) }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else { throw LocalFileError(path: path, kind: .notARegularFile(Self.name(ofType: type))) }
        if case .ownerOnlyWritable = ownership {
            let owner = Int(info.st_uid)
            if owner != 0 && owner != Int(geteuid()) { throw LocalFileError(path: path, kind: .ownedByAnotherUser(uid: owner)) }
            if info.st_mode & 0o022 != 0 { throw LocalFileError(path: path, kind: .writableByOthers(mode: Int(info.st_mode & 0o7777))) }
        }
        guard Int(info.st_size) <= limit else { throw LocalFileError(path: path, kind: .tooLarge(limit: limit)) }
        // The size may change while it is read: read at most limit + 1 bytes and refuse the file if the last came.
        var bytes = [UInt8](repeating: 0, count: min(Int(info.st_size), limit) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard bytes.count <= limit else { throw LocalFileError(path: path, kind: .tooLarge(limit: limit)) }
                bytes += [UInt8](repeating: 0, count: min(bytes.count, limit + 1 - bytes.count))
            }
            let result = bytes.withUnsafeMutableBytes { buffer in
                systemRead(descriptor, buffer.baseAddress.map { $0 + count }, buffer.count - count)
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw LocalFileError(path: path, kind: .cannotOpen(String(cString: strerror(errno))))
            }
            if result == 0 { break }
            count += result
        }
        bytes.removeSubrange(count...)
        return bytes
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
