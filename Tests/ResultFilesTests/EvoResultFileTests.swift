import Foundation
import XCTest
import Codecs
import ResultFiles
import TestSupport

/// evo's result files: read evo's own (committed, written by evo 1.38.1), write ours, and
/// refuse what is not one.
final class EvoResultFileTests: XCTestCase {
    let results = TestSupport.repositoryRoot + "/Notebooks-data/evo/results/"

    struct Expected: Decodable {
        struct Case: Decodable { var title: String; var stats: [String: Double]; var n_errors: Int }
        var cases: [String: Case]
    }

    /// evo's zips read back with the title, statistics and array length expected.json holds
    /// for the same evo command, and the header of an array byte for byte as numpy wrote it.
    func testEvoResultFilesAreRead() throws {
        let expected = try JSONDecoder().decode(Expected.self, from: Data(TestSupport.read(TestSupport.repositoryRoot + "/Notebooks-data/evo/expected.json")))
        let names = try FileManager.default.contentsOfDirectory(atPath: results).filter { $0.hasSuffix(".zip") }.sorted()
        XCTAssertEqual(names.count, 2)
        for name in names {
            let r = try EvoResultFile.read(results + name)
            let c = try XCTUnwrap(expected.cases[String(name.dropLast(4))], name)
            XCTAssertEqual(r.title, c.title, name)
            XCTAssertEqual(r.stats.map(\.name), ["rmse", "mean", "median", "std", "min", "max", "sse"], name)
            // expected.json and the zips come from separate evo runs, whose last digits differ
            // (evo's SVD runs on threaded OpenBLAS); each zip agrees with itself exactly.
            for (k, v) in r.stats { XCTAssertEqual(v, try XCTUnwrap(c.stats[k]), accuracy: 1e-12 * abs(v), "\(name) \(k)") }
            XCTAssertEqual(r.errorArray.count, c.n_errors, name)
            XCTAssertEqual(r.errorArray.max(), r.stats.first { $0.name == "max" }?.value, name)
        }
        let ape = try EvoResultFile.read(results + "ape_fr1xyz_rgbdslam_trans_part_sim3.zip")
        XCTAssertEqual(ape.label, "APE (m)")
        XCTAssertEqual(ape.estimateName, "freiburg1_xyz-rgbdslam.txt")
        XCTAssertEqual(Set(ape.arrays.map(\.name)), ["error_array", "seconds_from_start", "timestamps", "distances_from_start", "distances", "alignment_transformation_sim3"])
        XCTAssertEqual(ape.arrays.first { $0.name == "alignment_transformation_sim3" }?.shape, [4, 4])
        // Our .npy header is numpy's, byte for byte.
        let npy = try XCTUnwrap(try ZipMembers.read(results + "ape_fr1xyz_rgbdslam_trans_part_sim3.zip").first { $0.name == "error_array.npy" }?.data)
        let ours = NPYArray.file(ape.errorArray, shape: [ape.errorArray.count])
        XCTAssertEqual(ours, npy)
    }

    func testWriteThenReadIsExact() throws {
        let dir = TestSupport.temporaryDirectory("res")
        let r = EvoResultFile(title: "APE w.r.t. translation part (m)\n(not aligned)", referenceName: "a \"quoted\" é.txt", estimateName: "b.txt",
                              label: "APE (m)", stats: [("rmse", 0.1), ("mean", 1e-300), ("max", 12345.678)],
                              arrays: [.init(name: "error_array", shape: [3], values: [0.1, -0.0, .leastNonzeroMagnitude]),
                                       .init(name: "alignment_transformation_sim3", shape: [4, 4], values: (0..<16).map { Double($0) / 3 })],
                              trajectories: [("b.txt.tum", "1.0 0 0 0 0 0 0 1\n")])
        try r.write(to: dir + "/r.zip")
        XCTAssertEqual(try EvoResultFile.read(dir + "/r.zip"), r)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["r.zip"])
    }

    /// Not a zip, or a zip that lacks what evo_res needs: named, with what is missing.
    func testWhatIsNotAResultFileIsRefused() throws {
        let dir = TestSupport.temporaryDirectory("res-bad")
        TestSupport.writeText("1 2 3\n", dir + "/plain.zip")
        XCTAssertThrowsError(try EvoResultFile.read(dir + "/plain.zip")) { XCTAssertTrue("\($0)".contains("not a zip file"), "\($0)") }
        let info = Data("{\"title\": \"t\"}".utf8), stats = Data("{\"rmse\": 1.0}".utf8)
        let errors = NPYArray.file([1, 2], shape: [2])
        for (members, message) in [([("stats.json", stats), ("error_array.npy", errors)], "it has no info.json"),
                                   ([("info.json", info), ("error_array.npy", errors)], "it has no stats.json"),
                                   ([("info.json", info), ("stats.json", stats)], "it has no error_array.npy"),
                                   ([("info.json", info), ("stats.json", Data("{\"rmse\": \"x\"}".utf8)), ("error_array.npy", errors)], "stats.json: 'rmse' is not a finite number"),
                                   ([("info.json", info), ("stats.json", stats), ("error_array.npy", errors.dropLast(8))], "error_array.npy: ")] as [([(String, Data)], String)] {
            try ZipMembers.write(members.map { (name: $0.0, data: $0.1) }, to: dir + "/r.zip")
            XCTAssertThrowsError(try EvoResultFile.read(dir + "/r.zip"), message) {
                XCTAssertTrue("\($0)".contains("not an evo result file: \(message)"), "\($0)")
            }
        }
        let u16 = NPYArray.header(dtype: .uint16, rows: 1, cols: 1) + Data([0, 0])
        try ZipMembers.write([("info.json", info), ("stats.json", stats), ("error_array.npy", u16)], to: dir + "/r.zip")
        XCTAssertThrowsError(try EvoResultFile.read(dir + "/r.zip")) { XCTAssertTrue("\($0)".contains("expected <f8"), "\($0)") }
    }
}
