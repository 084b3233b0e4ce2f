import XCTest
@testable import depthpose
import Batch
import Gestures
import Stages
import Trajectories
import TestSupport

/// Every stage's options are stated once, in the library: the command line's defaults are
/// read from the options structs, and this test fails if they ever drift apart.
final class DefaultsTests: XCTestCase {
    func testCommandLineDefaultsAreTheLibrarysDefaults() throws {
        XCTAssertEqual(try CloudArguments.parse([]).value, CloudStage.Options())
        XCTAssertEqual(try MeshArguments.parse([]).value, MeshStage.Options())
        XCTAssertEqual(try DecodeArguments.parse([]).value, DecodeStage.Options())
        XCTAssertEqual(try GestureArguments.parse([]).value, GestureOptions())
        XCTAssertEqual(try TrajectoryArguments.parse([]).value, TrajectoryStage.Options())
        XCTAssertEqual(try RunArguments.parse([]).value(threads: nil), RunOptions())
        XCTAssertEqual(try EvalArguments.parse(["tum", "ref.txt", "est.txt"]).options(.ape), Evaluation.Options())
    }

    /// Flags land in the right fields (a swapped assignment would pass the test above).
    func testFlagsReachTheirOptions() throws {
        let c = try CloudArguments.parse(["--voxel", "0.05", "--min-depth", "0.3", "--max-depth", "4", "--stride", "3", "--min-confidence", "2",
                                          "--flying-pixel", "0.1", "--min-support", "4", "--normals", "--normal-radius", "3", "--frame", "gravity",
                                          "--ascii", "--extras", "confidence,count", "--color-frames", "reference"]).value
        XCTAssertEqual([c.voxel, Double(c.minDepth), Double(c.maxDepth), Double(c.stride), Double(c.minConfidence), Double(c.flyingPixel), Double(c.minSupport), Double(c.normalRadius)],
                       [0.05, Double(Float(0.3)), 4, 3, 2, Double(Float(0.1)), 4, 3])
        XCTAssertTrue(c.normals && c.ascii && !c.noFilters)
        XCTAssertEqual(c.frame, .gravity)
        XCTAssertEqual(c.extras, [.confidence, .count])
        XCTAssertEqual(c.colorFrames, .reference)
        XCTAssertEqual(c.builder(threads: 1).colourFrames, .reference)
        XCTAssertThrowsError(try CloudArguments.parse(["--color-frames", "some"]))
        let m = try MeshArguments.parse(["--color-frames", "reference", "--no-color"]).value
        XCTAssertEqual(m.colorFrames, .reference); XCTAssertFalse(m.color)
        XCTAssertEqual(m.builder(threads: 1).colourFrames, .reference)
        XCTAssertThrowsError(try CloudArguments.parse(["--extras", "colour"]))
        XCTAssertThrowsError(try CloudArguments.parse(["--frame", "up"]))

        let r = try RunArguments.parse(["--stages", "cloud,inspect", "--decode", "--voxel", "0.05", "--decode-format", "npy"]).value(threads: 3)
        XCTAssertEqual(r.stages, [.inspect, .cloud, .decode])
        XCTAssertEqual(r.voxel, 0.05); XCTAssertEqual(r.decodeFormat, .npy); XCTAssertEqual(r.threads, 3)
        let rc = try RunArguments.parse(["--color-frames", "reference", "--stages", "cloud,mesh"]).value(threads: 1)
        XCTAssertEqual(rc.colorFrames, .reference)
        XCTAssertEqual(rc.cloud.colorFrames, .reference); XCTAssertEqual(rc.mesh.colorFrames, .reference)
        XCTAssertEqual(rc.cloud.builder(threads: 1).colourFrames, .reference); XCTAssertEqual(rc.mesh.builder(threads: 1).colourFrames, .reference)
        XCTAssertThrowsError(try RunArguments.parse(["--stages", "inspect,colour"]))
    }

    /// `run --options FILE`: the file's options, defaults for what it leaves out, flags on top;
    /// a misspelt key or a value out of range is an error naming the file.
    func testRunOptionsFromAFile() throws {
        let dir = TestSupport.temporaryDirectory("options")
        try #"{"voxel": 0.05, "stages": ["inspect", "cloud"], "normals": true}"#.write(toFile: dir + "/o.json", atomically: true, encoding: .utf8)
        let r = try RunArguments.parse(["--options", dir + "/o.json", "--stride", "2"]).value(threads: nil)
        var expected = RunOptions()
        expected.voxel = 0.05; expected.stages = [.inspect, .cloud]; expected.normals = true; expected.stride = 2
        XCTAssertEqual(r, expected)
        // the file's colour frames stand unless the flag is given
        try #"{"color_frames": "reference"}"#.write(toFile: dir + "/c.json", atomically: true, encoding: .utf8)
        XCTAssertEqual(try RunArguments.parse(["--options", dir + "/c.json"]).value(threads: nil).colorFrames, .reference)
        XCTAssertEqual(try RunArguments.parse(["--options", dir + "/c.json", "--color-frames", "all"]).value(threads: nil).colorFrames, .all)
        for (text, message) in [(#"{"voxl": 0.05}"#, "unknown option 'voxl'"), (#"{"voxel": 5}"#, "voxel size 5.0 m outside"),
                                (#"{"stages": ["colour"]}"#, "stages"), (#"{"color_frames": "some"}"#, "color_frames"), ("[1]", "expected a JSON object")] {
            try text.write(toFile: dir + "/bad.json", atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try RunArguments.parse(["--options", dir + "/bad.json"]).value(threads: nil)) {
                XCTAssertTrue("\($0)".contains(dir + "/bad.json") && "\($0)".contains(message), "\($0)")
            }
        }
    }
}
