import Execution

/// The next batch's frames, decoded by whichever thread of the current batch's consumer has
/// finished its part early (`DepthBatch.idle`), one frame at a time; the stream decodes
/// what is left once the consumer is done.
///
/// Where decoding is a large part of the work (PNG depth and confidence: about 40% of a
/// Stray cloud's CPU), a batch that is decoded, then fused, leaves one thread waiting at
/// the end of each phase for the other's last frame or band. Filling that wait with the
/// next batch's decoding keeps both cores busy; which thread decodes which frame does not
/// change any byte of the output.
public final class IdleDecode: @unchecked Sendable {  // `decode` writes frame k's own slots, each k claimed once
    private let frames: IndexClaims
    private let decode: (Int) -> Void

    /// `decode(k)` decodes frame `k` (0 ..< `count`) of the next batch into its place.
    init(count: Int, decode: @escaping (Int) -> Void) {
        frames = IndexClaims(count)
        self.decode = decode
    }

    /// Decodes frames of the next batch until none is left unclaimed.
    public func help() { frames.drain(decode) }
}
