import XCTest
import Geometry
@testable import Meshing

/// The block search and the block table of the TSDF volume, against plain references.
final class TSDFVolumeTests: XCTestCase {
    /// `touchedKeys` (eight samples at a time, single precision, keys only when a box
    /// changes) against the rule written out in double precision: every second pixel of
    /// every second row with depth, its axis-aligned box ±truncation, every block the box
    /// overlaps. A block clearly inside some box must be found; every block found must
    /// touch some box (a margin of 1e-4 block for the float rounding). The frame is 37 wide
    /// (a tail of fewer than eight samples), the set starts tiny (it grows mid-row), and
    /// the pose turns the camera so no axis lines up.
    func testTouchedKeysAreTheBoxesOfTheSamples() {
        let w = 37, h = 29, voxel: Float = 0.015, truncation: Float = 0.06
        var rng = SystemRandomNumberGenerator()
        var depth = [Float](repeating: 0, count: w * h)
        for i in depth.indices where Double.random(in: 0..<1, using: &rng) > 0.15 { depth[i] = Float.random(in: 0.3...4.5, using: &rng) }
        let pose = Pose(rotation: Matrix3.rotation(axis: Vec3(0.3, 1, -0.2), angle: 0.7), translation: Vec3(-1.3, 0.4, 2.2))
        let k = Intrinsics(fx: 29.5, fy: 30.5, cx: 18.3, cy: 13.9, width: w, height: h)
        let volume = TSDFVolume(voxelSize: voxel, coloured: false)
        let set = BlockKeySet(capacity: 16)
        depth.withUnsafeBufferPointer { d in
            let frame = TSDFVolume.Frame(depth: d.baseAddress!, width: w, height: h, pose: pose, intrinsics: k, colours: nil)
            volume.touchedKeys(frame, truncation: truncation, rows: 0 ..< h, into: set)
        }
        let found = Set(set.keys)
        XCTAssertEqual(found.count, set.count, "keys listed twice")
        var required = Set<UInt64>(), allowed = Set<UInt64>()
        let block = Double(voxel) * 8, reach = Double(truncation) / block, margin = 1e-4
        for v in stride(from: 0, to: h, by: 2) {
            for u in stride(from: 0, to: w, by: 2) where depth[v * w + u] > 0 {
                let d = Double(depth[v * w + u])
                let q = (pose.rotation * Vec3((Double(u) - k.cx) / k.fx * d, -(Double(v) - k.cy) / k.fy * d, -d) + pose.translation) / block
                func add(_ into: inout Set<UInt64>, _ e: Double) {
                    let lo = (0..<3).map { Int((q[$0] - reach - e).rounded(.down)) }, hi = (0..<3).map { Int((q[$0] + reach + e).rounded(.down)) }
                    for x in lo[0]...hi[0] { for y in lo[1]...hi[1] { for z in lo[2]...hi[2] { into.insert(TSDFVolume.key(x, y, z)!) } } }
                }
                add(&required, -margin)
                add(&allowed, margin)
            }
        }
        XCTAssertGreaterThan(required.count, 100)
        XCTAssertTrue(required.isSubset(of: found), "\(required.subtracting(found).count) blocks of the boxes missing")
        XCTAssertTrue(found.isSubset(of: allowed), "\(found.subtracting(allowed).count) blocks outside every box")
    }

    /// Block numbers follow the keys' ascending order among the new blocks, whatever order
    /// the keys come in (the two threads' key sets merge in any order), and known blocks
    /// keep their numbers.
    func testBlockNumbersDoNotDependOnKeyOrder() {
        let first = (0..<40).map { TSDFVolume.key($0 % 5, $0 / 5, -$0)! }, second = (20..<90).map { TSDFVolume.key($0 % 5, $0 / 5, -$0)! }
        func volume(_ order: ([UInt64]) -> [UInt64]) -> TSDFVolume {
            let v = TSDFVolume(voxelSize: 0.01, coloured: false)
            let a = order(first), b = order(second)
            XCTAssertEqual(v.blocks(a).map { v.keys[$0] }, a)
            XCTAssertEqual(v.blocks(b).map { v.keys[$0] }, b)
            return v
        }
        let sorted = volume { $0.sorted() }, reversed = volume { $0.sorted().reversed() }, shuffled = volume { $0.shuffled() }
        XCTAssertEqual(sorted.keys, reversed.keys)
        XCTAssertEqual(sorted.keys, shuffled.keys)
        XCTAssertEqual(Array(sorted.keys[..<40]), first.sorted())
        XCTAssertEqual(sorted.blockCount, 90)
    }

    /// Open3D's update with constant weight 1, against the rule written out: a camera at the
    /// origin looking along −z at a wall 1 m away; each voxel of a block around the wall whose
    /// pixel has depth gets min(1, (1 − z) / truncation) where 1 − z ≥ −truncation, and its
    /// weight counts the frames. The 16-bit weight stops at `maxWeight`, where the mean
    /// becomes a running average over that many frames (tsdf moves by 1/maxWeight of the
    /// difference), instead of wrapping to 0 (which would make the next frame replace it).
    func testTheUpdateRuleAndTheWeightCap() {
        let w = 64, h = 64, voxel: Float = 0.015, truncation: Float = 0.06
        let depth = [Float](repeating: 1, count: w * h)
        let k = Intrinsics(fx: 32, fy: 32, cx: 31.5, cy: 31.5, width: w, height: h)
        let volume = TSDFVolume(voxelSize: voxel, coloured: false)
        let b = volume.blocks([TSDFVolume.key(0, 0, -9)!])  // voxel centres z = −1.0725 … −0.9675
        func integrate(_ times: Int) {
            depth.withUnsafeBufferPointer { d in
                let frame = TSDFVolume.Frame(depth: d.baseAddress!, width: w, height: h, pose: Pose(rotation: .identity, translation: Vec3(0, 0, 0)),
                                             intrinsics: k, colours: nil)
                for _ in 0..<times { volume.integrate(frame, blocks: b[...], truncation: truncation) }
            }
        }
        integrate(3)
        var updated = 0
        for i in 0..<TSDFVolume.blockVoxels {
            let centre = (SIMD3<Float>(Float(i & 7), Float(i >> 3 & 7), Float(i >> 6) - 72) + 0.5) * voxel
            let sdf = 1 - (-centre.z), v = volume.voxel(b[0], i)
            if sdf >= -truncation {
                updated += 1
                XCTAssertEqual(v.weight, 3, "voxel \(i)")
                XCTAssertEqual(v.tsdf, min(1, sdf / truncation), accuracy: 1e-5, "voxel \(i)")
            } else {
                XCTAssertEqual(v.weight, 0, "voxel \(i)")
                XCTAssertEqual(v.tsdf, 1, "voxel \(i)")
            }
        }
        XCTAssertEqual(updated, 8 * 8 * 7)  // the deepest layer (z = −1.0725) is beyond the truncation
        // a voxel at the cap: the weight stays, the value takes 1/maxWeight of the new one
        let i = 3 + 8 * 4 + 64 * 3, value = volume.voxel(b[0], i).tsdf
        volume.setVoxel(b[0], i, tsdf: 0, weight: UInt16.max)
        integrate(1)
        XCTAssertEqual(volume.voxel(b[0], i).weight, TSDFVolume.maxWeight)
        XCTAssertEqual(volume.voxel(b[0], i).tsdf, value / TSDFVolume.maxWeight, accuracy: 1e-9)
        XCTAssertEqual(volume.voxel(b[0], i + 1).weight, 4)
    }

    /// The volume keeps sums and divides when read: after 1,500 frames of a wall whose depth
    /// and colour change every frame, each voxel's TSDF and colour are the means of what the
    /// frames observed (computed here in double precision). The bound: each addition rounds
    /// the sum by at most 2^-24 of itself (≤ k after k frames), so the mean is off by at most
    /// n · 2^-25 (4.5e-5 at n = 1,500), plus single precision's rounding of each observation;
    /// colour sums are integers below 2^24, exact.
    func testTheMeansOfManyObservations() {
        let w = 16, h = 16, voxel: Float = 0.015, truncation: Float = 0.06, n = 1_500
        let k = Intrinsics(fx: 8, fy: 8, cx: 7.5, cy: 7.5, width: w, height: h)
        let volume = TSDFVolume(voxelSize: voxel, coloured: true)
        let b = volume.blocks([TSDFVolume.key(0, 0, -9)!])[0]  // voxel centres z = −1.0725 … −0.9675
        func observed(_ f: Int) -> (depth: Float, colour: SIMD3<Float>) {
            (1 + 0.03 * Float(sin(0.7 * Double(f))), SIMD3(Float(f % 256), Float(255 - f % 256), Float(7 * f % 256)))
        }
        for f in 0..<n {
            let (d, c) = observed(f)
            let depth = [Float](repeating: d, count: w * h)
            let colours = [UInt32](repeating: UInt32(c.x) | UInt32(c.y) << 8 | UInt32(c.z) << 16, count: w * h)
            depth.withUnsafeBufferPointer { dp in
                colours.withUnsafeBufferPointer { cp in
                    let frame = TSDFVolume.Frame(depth: dp.baseAddress!, width: w, height: h, pose: Pose(rotation: .identity, translation: Vec3(0, 0, 0)),
                                                 intrinsics: k, colours: cp.baseAddress!)
                    volume.integrate(frame, blocks: [b][...], truncation: truncation)
                }
            }
        }
        var checked = 0
        for i in 0..<TSDFVolume.blockVoxels {
            let z = -(Double(i >> 6) - 72 + 0.5) * Double(voxel)  // depth along the camera axis
            var sum = 0.0, colour = SIMD3<Double>(), count = 0
            for f in 0..<n {
                let (d, c) = observed(f), sdf = Double(d) - z
                guard sdf >= -Double(truncation) else { continue }
                sum += min(1, sdf / Double(truncation)); colour += SIMD3<Double>(c); count += 1
            }
            let v = volume.voxel(b, i)
            XCTAssertEqual(v.weight, Float(count), "voxel \(i)")
            guard count > 0 else { continue }
            checked += 1
            XCTAssertEqual(Double(v.tsdf), sum / Double(count), accuracy: Double(n) * 0x1p-25 + 1e-6, "voxel \(i)")
            for c in 0..<3 { XCTAssertEqual(Double(v.colour[c]), colour[c] / Double(count), accuracy: 1e-4, "voxel \(i) channel \(c)") }
        }
        XCTAssertEqual(checked, 512)
        // the deepest layer is beyond the truncation in some frames only
        XCTAssertTrue((1..<n).contains(Int(volume.voxel(b, 0).weight)))
    }
}
