import Testing

@testable import TrustHTTP

/// Every transition of the response body's backpressure, as a value (its exchange carries out the reads): each case
/// is a list of steps, each checked for what it answers and for the state it leaves.
@Suite("BodyFlowControl: holding and resuming reads")
struct BodyFlowControlTests {
    enum Step: CustomStringConvertible {
        /// Bytes handed to the reader.
        case produced(Int)
        /// A `read` event, passed on (true) or held (false).
        case read(passes: Bool)
        /// The reader took bytes; whether the held read is issued now.
        case consumed(Int, resumes: Bool)

        var description: String {
            switch self {
            case .produced(let count): "produced \(count)"
            case .read(let passes): "read \(passes ? "passes" : "held")"
            case .consumed(let count, let resumes): "consumed \(count)\(resumes ? ", resumes" : "")"
            }
        }
    }

    /// Runs `steps` from a fresh value (high watermark 10, low 5), checking each answer and, after each step, the
    /// bytes buffered and whether a read is held (`then`).
    private func run(_ steps: [(step: Step, then: (buffered: Int, held: Bool))]) {
        var flow = BodyFlowControl(highWatermark: 10, lowWatermark: 5)
        for (step, then) in steps {
            switch step {
            case .produced(let count): flow.produced(count)
            case .read(let passes):
                let passed = flow.shouldRead()
                #expect(passed == passes, "\(step)")
            case .consumed(let count, let resumes):
                let resumed = flow.consumed(count)
                #expect(resumed == resumes, "\(step)")
            }
            #expect(flow.buffered == then.buffered, "buffered after \(step)")
            #expect(flow.readPending == then.held, "held after \(step)")
        }
    }

    @Test func readsPassWhileTheReaderKeepsUp() {
        run([
            (.produced(10), (10, false)),
            (.read(passes: true), (10, false)),  // at the high watermark, not above it
            (.consumed(10, resumes: false), (0, false)),  // nothing was held: nothing to resume
        ])
    }

    @Test func aReadAboveTheHighWatermarkIsHeldUntilTheLowOne() {
        run([
            (.produced(11), (11, false)),
            (.read(passes: false), (11, true)),
            (.read(passes: false), (11, true)),  // held again: still one read pending
            (.consumed(5, resumes: false), (6, true)),  // above the low watermark
            (.consumed(1, resumes: true), (5, false)),  // at the low watermark, the held read goes
            (.consumed(5, resumes: false), (0, false)),  // resumed once only
        ])
    }

    @Test func bytesArrivingWhileHeldKeepTheReadHeld() {
        run([
            (.produced(20), (20, false)),
            (.read(passes: false), (20, true)),
            (.produced(8), (28, true)),  // already in the pipeline when the read was held
            (.consumed(20, resumes: false), (8, true)),
            (.consumed(3, resumes: true), (5, false)),
            (.read(passes: true), (5, false)),
        ])
    }
}
