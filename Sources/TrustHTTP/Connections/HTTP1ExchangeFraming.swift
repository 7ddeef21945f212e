import NIOCore
import NIOHTTP1

/// HTTP/1.1: the parts as they are, for NIO's HTTP/1.1 encoder and decoder below the exchange handler (or, on an
/// HTTP/2 stream with a decompressor, for ``HTTP2ExchangeCodec`` and that decompressor).
struct HTTP1ExchangeFraming: ExchangeFraming {
    @inline(__always)
    func read(_ message: HTTPClientResponsePart) -> (HTTPClientResponsePart?, HTTPClientResponsePart?) {
        (message, nil)
    }

    @inline(__always)
    func write(_ part: HTTPClientRequestPart, promise: EventLoopPromise<Void>?) -> (FramedWrite<HTTPClientRequestPart>?, FramedWrite<HTTPClientRequestPart>?) {
        (FramedWrite(message: part, promise: promise), nil)
    }

    @inline(__always)
    func flush() -> FramedWrite<HTTPClientRequestPart>? {
        nil
    }
}
