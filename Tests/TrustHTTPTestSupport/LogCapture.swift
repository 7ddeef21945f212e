import Logging
import NIOConcurrencyHelpers

/// Captures the log lines of a session or a verifier (a swift-log handler of its own: nothing global is bootstrapped).
package final class LogCapture: Sendable {
    package init() {}

    package struct Record: Sendable {
        package var level: Logger.Level
        package var message: String
        package var metadata: Logger.Metadata

        /// Every string the record carries, for the secret check.
        package var text: String { message + " " + metadata.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
    }

    private let records = NIOLockedValueBox<[Record]>([])
    package var all: [Record] { records.withLockedValue { $0 } }

    package func messages(_ message: String) -> [Record] { all.filter { $0.message == message } }

    package var logger: Logger {
        let capture = self
        var logger = Logger(label: "swift-trust.tests") { _ in Handler(capture: capture) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func append(_ record: Record) { records.withLockedValue { $0.append(record) } }

    package struct Handler: LogHandler {
        let capture: LogCapture
        package var metadata: Logger.Metadata = [:]
        package var logLevel: Logger.Level = .trace
        package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        package func log(event: LogEvent) {
            capture.append(Record(level: event.level, message: event.message.description, metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
        }
    }
}
