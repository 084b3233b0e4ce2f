import XCTest
import Plots
import ResultFiles
import TestSupport

final class ResultPlotsTests: XCTestCase {
    /// evo_res plots errors over seconds only when every result has them; a KITTI result has
    /// none, so both are drawn by index. The histogram's shares add up to 1 per result.
    func testMixedResultsAreDrawnByIndexAndHistogramsSumToOne() throws {
        let dir = TestSupport.repositoryRoot + "/Notebooks-data/evo/results/"
        let files = [dir + "ape_fr1xyz_rgbdslam_trans_part_sim3.zip", dir + "rpe_kitti00_ORB_angle_deg_raw_100m.zip"]
        let results = try files.map(EvoResultFile.read)
        let table = try ResultTable(files: files, results: results, useFilenames: false)
        let figures = ResultPlots.figures(table, results: results)
        XCTAssertEqual(figures.count, 3)
        XCTAssertEqual(figures[0].x.title, "index")
        XCTAssertEqual(figures[0].series[0].x, results[0].errorArray.indices.map(Double.init))
        XCTAssertEqual(figures[1].barLabels, ["rmse", "mean", "median", "std", "min", "max"])
        for s in figures[2].series {
            let shares = stride(from: 0, to: s.y.count, by: 2).map { s.y[$0] }
            XCTAssertEqual(shares.reduce(0, +), 1, accuracy: 1e-12, s.label)
        }
        let fr1Only = ResultPlots.figures(try ResultTable(files: [files[0]], results: [results[0]], useFilenames: false), results: [results[0]])
        XCTAssertEqual(fr1Only[0].x.title, "t (s)")
    }

    /// Regression: a column with no value in any row looped forever while trimming zeros.
    func testAColumnWithoutValuesPrintsNaN() throws {
        let file = TestSupport.repositoryRoot + "/Notebooks-data/evo/results/ape_fr1xyz_rgbdslam_trans_part_sim3.zip"
        var table = try ResultTable(files: [file], results: [try EvoResultFile.read(file)], useFilenames: true)
        table.rows = table.rows.map { [nil] + $0.dropFirst() }
        let lines = table.text.split(separator: "\n")
        XCTAssertTrue(lines[1].contains("NaN"), table.text)
        XCTAssertTrue(lines[1].hasPrefix(file), table.text)
    }
}
