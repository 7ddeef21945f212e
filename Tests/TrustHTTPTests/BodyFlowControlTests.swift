import Testing

@testable import TrustHTTP

/// Every transition of the response body's backpressure, as a value (its exchange carries out the reads).
@Suite("BodyFlowControl: holding and resuming reads")
struct BodyFlowControlTests {
    @Test func readsPassWhileTheReaderKeepsUp() {
        var flow = BodyFlowControl(highWatermark: 10, lowWatermark: 5)
        flow.produced(10)
        let step1 = flow.shouldRead()  // at the high watermark, not above it
        #expect(step1)
        #expect(!flow.readPending)
        let step2 = flow.consumed(10)  // nothing was held: nothing to resume
        #expect(!step2)
        #expect(flow.buffered == 0)
    }

    @Test func aReadAboveTheHighWatermarkIsHeldUntilTheLowOne() {
        var flow = BodyFlowControl(highWatermark: 10, lowWatermark: 5)
        flow.produced(11)
        let step3 = flow.shouldRead()
        #expect(!step3)
        #expect(flow.readPending)
        let step4 = flow.shouldRead()  // held again: still one read pending
        #expect(!step4)
        let step5 = flow.consumed(5)  // 6 left: above the low watermark
        #expect(!step5)
        #expect(flow.readPending)
        let step6 = flow.consumed(1)  // 5 left: at the low watermark, the held read goes
        #expect(step6)
        #expect(!flow.readPending)
        let step7 = flow.consumed(5)  // resumed once only
        #expect(!step7)
        #expect(flow.buffered == 0)
    }

    @Test func bytesArrivingWhileHeldKeepTheReadHeld() {
        var flow = BodyFlowControl(highWatermark: 10, lowWatermark: 5)
        flow.produced(20)
        let step8 = flow.shouldRead()
        #expect(!step8)
        flow.produced(8)  // already in the pipeline when the read was held
        let step9 = flow.consumed(20)  // 8 left
        #expect(!step9)
        let step10 = flow.consumed(3)
        #expect(step10)
        let step11 = flow.shouldRead()
        #expect(step11)
    }
}
