import CRowPack
import Synthesis
import XCTest

/// `depthpose_pack_row`, the back-projection's pack of a row's pixels with depth, against
/// its definition one pixel at a time.
final class RowPackTests: XCTestCase {
    func testPackedPixelsAreThoseWithDepthInOrder() {
        var rng = SeededRandom(seed: 7)
        let guardValue: Float = -12345, guardLevel: UInt8 = 0xEE
        for width in Array(1...41) + [255, 256, 257] {
            for holes in [0.0, 0.1, 0.5, 0.9, 1.0] {
                // depths: no depth is +0; every other bit pattern counts (as `hasDepth` says),
                // -0 and NaN included, so the pack never looks at values
                let depth: [Float] = (0..<width).map { _ in
                    if Double.random(in: 0..<1, using: &rng) < holes { return 0 }
                    return [Float(-0.0), .nan, .leastNonzeroMagnitude, Float.random(in: 0.1...6, using: &rng)][Int.random(in: 0..<4, using: &rng) == 0 ? Int.random(in: 0..<3, using: &rng) : 3]
                }
                let ray = (0..<width).map { _ in Float.random(in: -1...1, using: &rng) }
                let level = (0..<width).map { _ in UInt8.random(in: 0...2, using: &rng) }
                let kept = (0..<width).filter { depth[$0].bitPattern != 0 }
                for withLevels in [false, true] {
                    var z = [Float](repeating: guardValue, count: width + 7 + 8), r = z
                    var c = [UInt8](repeating: guardLevel, count: width + 7 + 8)
                    let n = withLevels
                        ? Int(depthpose_pack_row(depth, ray, level, Int32(width), &z, &r, &c))
                        : Int(depthpose_pack_row(depth, ray, nil, Int32(width), &z, &r, nil))
                    let what = "width \(width), holes \(holes), levels \(withLevels)"
                    XCTAssertEqual(n, kept.count, what)
                    XCTAssertEqual(z[0..<n].map(\.bitPattern), kept.map { depth[$0].bitPattern }, what)
                    XCTAssertEqual(Array(r[0..<n]), kept.map { ray[$0] }, what)
                    XCTAssertEqual(Array(c[0..<n]), withLevels ? kept.map { level[$0] } : [UInt8](repeating: guardLevel, count: n), what)
                    // nothing past the room it is given (width + 7)
                    XCTAssertEqual(Array(z[(width + 7)...]), [Float](repeating: guardValue, count: 8), what)
                    XCTAssertEqual(Array(r[(width + 7)...]), [Float](repeating: guardValue, count: 8), what)
                    XCTAssertEqual(Array(c[(width + 7)...]), [UInt8](repeating: guardLevel, count: 8), what)
                }
            }
        }
    }
}
