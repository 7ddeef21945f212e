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

/// The process's file mode creation mask (umask(2)), read without changing it.
///
/// umask(2) can only be read by setting it, and the `umask(0); umask(mask)` pair leaves a window in which every file
/// any other thread creates gets mode 0666 or 0777. Linux 4.7 and later show the mask in `/proc/self/status`
/// (`Umask:` line, proc(5)); only where that line is missing (no procfs, an older kernel, Darwin) is the pair used.
package enum FileCreationMask {
    /// The current mask (its permission bits).
    package static var current: mode_t {
        if let mask = fromProcStatus() { return mask }
        let mask = umask(0)
        umask(mask)
        return mask & 0o777
    }

    /// The `Umask:` line of `/proc/self/status` (an octal number), or nil without one.
    package static func fromProcStatus() -> mode_t? {
        #if os(Linux)
            let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            // The file is a couple of KiB; the mask is on its fourth line. Read at most 64 KiB.
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while bytes.count < 65536 {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                bytes += buffer[0..<count]
            }
            for line in bytes.split(separator: UInt8(ascii: "\n")) {
                let text = String(decoding: line, as: UTF8.self)
                guard text.hasPrefix("Umask:") else { continue }
                let value = text.dropFirst("Umask:".count).trimmingASCIIBlanks()
                guard let mask = mode_t(value, radix: 8), mask <= 0o777 else { return nil }
                return mask
            }
            return nil
        #else
            return nil
        #endif
    }
}
