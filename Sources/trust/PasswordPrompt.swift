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

/// curl's password prompt (`-u USER`, `-U USER` without a colon): the prompt goes to stderr and the
/// answer is read from the controlling terminal (`/dev/tty`) with echo off, or — with no terminal to
/// open — from standard input, as curl's `getpass_r` does. Reading stops at the first LF (which is
/// not part of the password) or at end of file (an empty password, as curl sends with `</dev/null`).
///
/// Echo is turned back on whatever happens: on return, and on SIGINT, SIGTERM, SIGHUP and SIGQUIT
/// received while waiting (the terminal is restored, then the signal ends the process as it would have;
/// one the process was started ignoring stays ignored).
enum PasswordPrompt {
    /// The longest answer read (curl's buffer: 2048 bytes, its terminating NUL included).
    static let maximumBytes = 2047

    /// The signals after which echo is restored before the process ends.
    private static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// curl's prompt text: `Enter host password for user 'USER':` (`kind` "host") or `… proxy …`.
    static func text(kind: String, user: String) -> String {
        "Enter \(kind) password for user '\(user)':"
    }

    /// Asks for the password of `user`; `kind` is curl's word for it, "host" (`-u`) or "proxy" (`-U`).
    static func ask(kind: String, user: String) -> String {
        let terminal = open("/dev/tty", O_RDONLY | O_CLOEXEC)
        let descriptor = terminal >= 0 ? terminal : STDIN_FILENO
        defer { if terminal >= 0 { close(terminal) } }
        // The settings are saved and the handlers installed before echo goes off, so that no signal finds echo off
        // without a handler to turn it back on.
        var echoWasOn = EchoGuard.save(descriptor)
        var previous: [Int32: sigaction] = [:]
        if echoWasOn {
            for number in signals {
                // A signal the process was started ignoring (nohup, a background job) stays ignored.
                var current = sigaction()
                sigaction(number, nil, &current)
                #if canImport(Darwin)
                    let ignored = unsafeBitCast(current.__sigaction_u.__sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
                #else
                    let ignored = unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
                #endif
                if ignored { continue }
                var action = sigaction()
                #if canImport(Darwin)
                    action.__sigaction_u.__sa_handler = { number in EchoGuard.restoreAndReraise(number) }
                #else
                    action.__sigaction_handler.sa_handler = { number in EchoGuard.restoreAndReraise(number) }
                #endif
                sigemptyset(&action.sa_mask)
                var old = sigaction()
                sigaction(number, &action, &old)
                previous[number] = old
            }
            echoWasOn = EchoGuard.silence()
        }
        defer {
            if echoWasOn || !previous.isEmpty {
                // The signals are held on this thread while echo and the handlers are put back, so that no handler
                // runs here halfway through (one pending runs after, under the handler restored).
                var held = sigset_t()
                var before = sigset_t()
                sigemptyset(&held)
                for number in signals { sigaddset(&held, number) }
                pthread_sigmask(SIG_BLOCK, &held, &before)
                if echoWasOn { EchoGuard.restore() }
                for (number, old) in previous {
                    var old = old
                    sigaction(number, &old, nil)
                }
                pthread_sigmask(SIG_SETMASK, &before, nil)
            }
        }
        StandardError.write(text(kind: kind, user: user))
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while answer.count < maximumBytes {
            let count = read(descriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1, byte != UInt8(ascii: "\n") else { break }
            answer.append(byte)
        }
        // The LF typed was not echoed: end the prompt's line, as curl does.
        if echoWasOn { StandardError.write("\n") }
        return String(decoding: answer, as: UTF8.self)
    }
}

/// The terminal settings changed by a prompt, kept where a signal handler can restore them (a signal
/// handler can capture nothing; tcsetattr is async-signal-safe, POSIX.1-2017 §2.4.3).
///
/// They are raw memory, not Swift variables: a handler reading a variable that the code it interrupted was writing
/// would trap on Swift's exclusivity check, or read half a value. They are written only by ``save(_:)``, before any
/// handler is installed, and only read afterwards (by ``restore()`` and the handlers, which may run on any thread).
private enum EchoGuard {
    /// The terminal (-1: none saved).
    nonisolated(unsafe) static let descriptor: UnsafeMutablePointer<Int32> = {
        let pointer = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        pointer.initialize(to: -1)
        return pointer
    }()
    /// Its settings before echo was turned off.
    nonisolated(unsafe) static let settings: UnsafeMutablePointer<termios> = {
        let pointer = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        pointer.initialize(to: termios())
        return pointer
    }()

    /// Saves the settings of `terminal` when it is a terminal with echo on; whether it is (and echo is to be turned
    /// off, then restored).
    static func save(_ terminal: Int32) -> Bool {
        var current = termios()
        guard isatty(terminal) == 1, tcgetattr(terminal, &current) == 0, current.c_lflag & tcflag_t(ECHO) != 0 else { return false }
        settings.pointee = current
        descriptor.pointee = terminal
        return true
    }

    /// Turns echo off on the saved terminal; whether it was.
    static func silence() -> Bool {
        var quiet = settings.pointee
        quiet.c_lflag &= ~tcflag_t(ECHO)
        return tcsetattr(descriptor.pointee, TCSAFLUSH, &quiet) == 0
    }

    /// Puts the saved settings back.
    static func restore() {
        guard descriptor.pointee >= 0 else { return }
        tcsetattr(descriptor.pointee, TCSAFLUSH, settings)
    }

    /// A signal's handler while echo is off: echo back on, then the signal's default action.
    static func restoreAndReraise(_ number: Int32) {
        if descriptor.pointee >= 0 { tcsetattr(descriptor.pointee, TCSANOW, settings) }
        signal(number, SIG_DFL)
        raise(number)
    }
}
