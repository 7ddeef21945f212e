import CLibFuzzer

/// What libFuzzer calls with each input.
public typealias FuzzerCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer's driver on `callback`: the body of every target's entry point.
///
/// SwiftPM links an executable target `T` with `--defsym main=T_main` (so tests can link
/// executables), which leaves libFuzzer's own `main` out; each target therefore defines
/// `@_cdecl("T_main")` and hands over to libFuzzer here.
public func runFuzzer(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ callback: FuzzerCallback) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, callback)
}

/// The bytes of one input, whatever pointer libFuzzer passes for an empty one.
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
    guard let data, count > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: count))
}

/// The bytes of one input, as `LLVMFuzzerTestOneInput` receives them.
public func fuzzInput(_ start: UnsafeRawPointer, _ count: Int) -> [UInt8] {
    Array(UnsafeRawBufferPointer(start: start, count: count))
}
