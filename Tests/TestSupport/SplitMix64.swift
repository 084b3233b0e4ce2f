import Foundation

/// SplitMix64 (Steele, Lea and Flood 2014): a reproducible sequence for test scenes and
/// matrices, the same on every platform. The generator `synth` uses (Synthesis's
/// `SeededRandom`) is the same algorithm; this copy lets the tests of lower modules
/// (LinearAlgebra's) draw numbers without linking Synthesis and its video stack.
public struct SplitMix64 {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in [`lo`, `hi`).
    public mutating func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * Double(next() >> 11) / Double(1 << 53) }
    /// Normal with mean 0 and standard deviation `sigma` (Box–Muller).
    public mutating func gaussian(_ sigma: Double) -> Double {
        let u = max(uniform(0, 1), 1e-300), v = uniform(0, 1)
        return sigma * (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}
