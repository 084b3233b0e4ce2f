import Foundation
import Geometry
import Synthesis
import TestSupport
import Trajectories
import Video
import XCTest

/// Colour conversion against ffmpeg's own (swscale), and `synth`'s colour video against
/// the scene's true colours.
final class ColourTests: XCTestCase {
    func testFramesConvertAsFFmpegConvertsThem() throws {
        // ffmpeg's test pattern blurred (sharp chroma edges would measure the two chroma
        // interpolation filters, not the conversion), H.264 4:2:0, converted by ffmpeg to RGB
        // with accurate rounding and full chroma interpolation, against ours at every pixel
        // centre. A wrong matrix (BT.709 for BT.601) or range costs well over 10 dB.
        let path = try VideoReaderTests.pattern("p.mp4", encoder: "libx264", size: "320x240", frames: 3, filter: "gblur=sigma=3")
        let out = TestSupport.temporaryDirectory("colour") + "/rgb.raw"
        let r = try TestSupport.run(try VideoReaderTests.ffmpeg(), ["-v", "error", "-i", path, "-sws_flags", "bilinear+accurate_rnd+full_chroma_int",
                                                                     "-f", "rawvideo", "-pix_fmt", "rgb24", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let expected = TestSupport.read(out)
        var squared = 0.0, count = 0
        try VideoReader(path: path, threads: 2).forEachFrame { f in
            XCTAssertFalse(f.fullRange); XCTAssertFalse(f.bt709)  // untagged 320-wide video: BT.601, as swscale assumes
            let s = ColourSampler(f)
            for y in 0..<f.height {
                for x in 0..<f.width {
                    let c = s.rgb(x: Float(x), y: Float(y))
                    for k in 0..<3 {
                        let d = Double(c[k]) - Double(expected[3 * (count / 3) + k])
                        squared += d * d
                    }
                    count += 3
                }
            }
        }
        XCTAssertEqual(count, expected.count)
        let psnr = 10 * log10(255 * 255 / (squared / Double(count)))
        XCTAssertGreaterThan(psnr, 40, "PSNR \(psnr) dB against ffmpeg's conversion")
    }

    func testSynthVideoShowsTheScenesTrueColours() throws {
        // Every 4th pixel of every 5th frame: the ray through it meets the scene at a point
        // whose true colour is known. Where the rays 3 pixels away on either side meet the
        // same colour (clear of colour borders and occlusion edges, where x264 at crf 18 and
        // 4:2:0 chroma, which spans 2 pixels, blur), the decoded colour is within 6 levels
        // per channel for 99% of them.
        let scan = TestSupport.temporaryDirectory("colour") + "/scan"
        var o = SynthOptions(); o.frames = 20; o.width = 64; o.height = 48; o.colour = true; o.seed = 5
        _ = try Synthesizer.write(o, to: scan)
        let truth = try JSONDecoder().decode(Synthesizer.SceneTruth.self, from: Data(contentsOf: URL(fileURLWithPath: scan + "/scene.json")))
        let poses = try TrajectoryFiles.read(scan + "/groundtruth.tum", format: .tum).poses
        let size = Synthesizer.colourSize(depthWidth: 64, depthHeight: 48)
        let k = Synthesizer.colourIntrinsics.scaled(toWidth: size.width, height: size.height)
        let reader = try VideoReader(path: scan + "/" + Synthesizer.colourVideoName, threads: 2)
        XCTAssertEqual(reader.info.width, size.width); XCTAssertEqual(reader.info.height, size.height)
        var checked = 0, worst: Float = 0, errors: [Float] = []
        try reader.forEachFrame { f in
            guard f.index % 5 == 0 else { return }
            let s = ColourSampler(f), pose = poses[f.index]
            XCTAssertTrue(f.bt709); XCTAssertFalse(f.fullRange)
            for v in stride(from: 0, to: f.height, by: 4) {
                for u in stride(from: 0, to: f.width, by: 4) {
                    func colour(_ du: Int, _ dv: Int) -> SIMD3<UInt8> {
                        let dir = pose.rotation * Vec3((Double(u + du) - k.cx) / k.fx, -(Double(v + dv) - k.cy) / k.fy, -1)
                        return truth.scene.colour(at: pose.translation + truth.scene.cast(origin: pose.translation, direction: dir).t * dir)
                    }
                    let centre = colour(0, 0)
                    guard [(-3, -3), (3, -3), (-3, 3), (3, 3)].allSatisfy({ colour($0.0, $0.1) == centre }) else { continue }
                    let want = centre, got = s.rgb(x: Float(u), y: Float(v))
                    let d = SIMD3(Float(want.x), Float(want.y), Float(want.z)) - got
                    worst = max(worst, abs(d.x), abs(d.y), abs(d.z))
                    errors.append(max(abs(d.x), abs(d.y), abs(d.z)))

                    checked += 1
                }
            }
        }
        errors.sort()
        XCTAssertEqual(reader.framesDecoded, 20)
        XCTAssertGreaterThan(checked, 2000)
        // Measured: median 1, 99th percentile 5, 99.9th 10 levels; a few dozen ppm up to ~35
        // where x264's ringing reaches past the 3-pixel margin.
        XCTAssertLessThanOrEqual(errors[errors.count / 2], 2)
        XCTAssertLessThanOrEqual(errors[errors.count * 99 / 100], 6)
        XCTAssertLessThanOrEqual(worst, 48, "largest channel error \(worst) over \(checked) pixels")
    }
}
