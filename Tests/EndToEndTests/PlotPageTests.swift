import Foundation
import Codecs
import Plots
import PointClouds
import TestSupport
import XCTest

/// eval's plots as a person sees them: the page opened in headless Chromium (Debian's), with no
/// JavaScript error on the console, and a screenshot in which Chart.js drew the figures.
final class PlotPageTests: XCTestCase {
    let data = TestSupport.repositoryRoot + "/Notebooks-data/evo/"

    /// `cloud --view`'s page in headless Chromium (software WebGL): it reports itself drawn
    /// with no script error (`data-status`, set by `window.onerror` otherwise); dragged, it
    /// draws the moving share and then everything; no console error; the screenshot shows the
    /// cloud (a good share of the canvas) and the red camera path; the page stays well under
    /// 20 MB.
    func testTheCloudViewDrawsInChromium() throws {
        let chromium = try TestSupport.requiredProgram("chromium", package: "chromium")
        let python = try TestSupport.peerPython(needs: "numpy and imageio", check: "import numpy, imageio")
        let dir = TestSupport.temporaryDirectory("view")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "120").status, 0)
        // 1 cm voxels: more points than the view's cap, so it shows an even stride of them
        let r = try TestSupport.depthpose("cloud", dir + "/scan", "--out", dir + "/room.ply", "--voxel", "0.01", "--view")
        XCTAssertEqual(r.status, 0, r.stderr)
        let page = dir + "/room.html"
        // the same page, byte for byte, from another process (no dictionary order leaks in)
        XCTAssertEqual(try TestSupport.depthpose("cloud", dir + "/scan", "--out", dir + "/again.ply", "--voxel", "0.01", "--view").status, 0)
        XCTAssertEqual(TestSupport.read(page), TestSupport.read(dir + "/again.html"))
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: page)[.size] as? Int)
        XCTAssertLessThan(size, 20 << 20)
        // Dragged with the mouse (real events, real clock): every frame while it moves draws
        // the moving share (an even stride of the points shown), the frame after
        // the release all of them.
        let driven = try TestSupport.drive(page, ["eval:window.viewer.frames.length = 0", "drag:400,400,600,420,20", "eval:new Promise(r => setTimeout(r, 300))",
                                                  "eval:window.viewer.frames.map(f => f[1])"])
        XCTAssertEqual(driven.status, "ok")
        XCTAssertEqual(driven.consoleErrors, [])
        let drawn = try XCTUnwrap(driven.results.last as? [Int])
        let header = String(decoding: try XCTUnwrap(FileManager.default.contents(atPath: dir + "/room.ply")).prefix(400), as: UTF8.self)
        let points = try XCTUnwrap(header.firstMatch(of: /element vertex (\d+)/).flatMap { Int($0.1) })
        func stride(_ n: Int, _ cap: Int) -> Int { let step = (n + cap - 1) / cap; return (n + step - 1) / step }
        let shown = stride(points, ViewerPage.maxPoints), moving = stride(shown, ViewerPage.movingPoints)
        XCTAssertGreaterThan(points, ViewerPage.maxPoints)
        XCTAssertGreaterThanOrEqual(drawn.count, 3, "a 20-step drag drew \(drawn.count) frames")
        XCTAssertEqual(drawn.last, shown, "the view at rest shows the whole stride of \(points) points")
        XCTAssertEqual(Set(drawn.dropLast()), [moving], "while moving: \(drawn)")
        XCTAssertLessThanOrEqual(moving, ViewerPage.movingPoints)
        let shot = dir + "/view.png"
        let c = try TestSupport.run(chromium, ["--headless", "--no-sandbox", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
                                                "--window-size=1000,700", "--screenshot=" + shot, "file://" + page], timeout: 120)
        XCTAssertEqual(c.stderr.split(separator: "\n").filter { $0.contains("CONSOLE") && ($0.contains("Uncaught") || $0.contains("Error")) }, [])
        let check = """
        import sys, numpy as np, imageio.v3 as iio
        img = iio.imread(sys.argv[1])[80:, :, :3].astype(int)  # below the caption
        drawn = (img.sum(axis=2) < 3 * 235).mean()
        red = ((img[..., 0] > 170) & (img[..., 1] < 90) & (img[..., 2] < 90)).sum()
        print(drawn, red)
        """
        let p = try TestSupport.run(python, ["-c", check, shot])
        XCTAssertEqual(p.status, 0, p.stderr)
        let v = p.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(v.count, 2, p.stdout)
        XCTAssertGreaterThan(v.first ?? 0, 0.05, "the cloud covers little of the view")
        XCTAssertGreaterThan(v.last ?? 0, 20, "no camera path drawn")

        // The mesh's view, the same way.
        XCTAssertEqual(try TestSupport.depthpose("mesh", dir + "/scan", "--out", dir + "/mesh.ply", "--view").status, 0)
        let meshDom = try TestSupport.run(chromium, ["--headless", "--no-sandbox", "--window-size=1000,700", "--dump-dom", "file://" + dir + "/mesh.html"], timeout: 120)
        XCTAssertTrue(meshDom.stdout.contains("<body data-status=\"ok\""), String(meshDom.stdout.prefix(300)))
        let meshShot = dir + "/mesh-view.png"
        _ = try TestSupport.run(chromium, ["--headless", "--no-sandbox", "--hide-scrollbars", "--window-size=1000,700", "--screenshot=" + meshShot,
                                           "file://" + dir + "/mesh.html"], timeout: 120)
        let m = try TestSupport.run(python, ["-c", check, meshShot])
        let mv = m.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertGreaterThan(mv.first ?? 0, 0.05, "the mesh covers little of the view: \(m.stdout) \(m.stderr)")
    }

    /// `trajectory`'s report page in headless Chromium: drawn with no script error, under
    /// 20 MB; the screenshot holds the RPE (orange), speed (blue) and tilt (purple) curves
    /// and the red path of the 3-D view embedded in it; the view alone draws the path against
    /// the grey dashed reference.
    func testTheTrajectoryReportDrawsInChromium() throws {
        let dir = TestSupport.temporaryDirectory("reportpage")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "300", "--drift", "0.02", "--width", "64", "--height", "48").status, 0)
        let r = try TestSupport.depthpose("trajectory", dir + "/scan", "--out", dir + "/report", "--reference", dir + "/scan/groundtruth.tum")
        XCTAssertEqual(r.status, 0, r.stderr)
        let page = dir + "/report/report.html"
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: page)[.size] as? Int)
        XCTAssertLessThan(size, 20 << 20)
        let v = try TestSupport.openInChromium(page, height: 5200, colours: ["#ff7f0e", "#2471a3", "#7d3c98", "#d62728"])
        XCTAssertEqual(v.status, "ok"); XCTAssertEqual(v.consoleErrors, [])
        XCTAssertGreaterThan(v.drawn, 0.04, "the page is nearly blank")
        XCTAssertEqual(v.shares.count, 4)
        // (the RPE curve has a point per metre travelled: a short line)
        for (k, what) in ["RPE curve", "speed curve", "tilt curve", "red path and markers"].enumerated() where k < v.shares.count {
            XCTAssertGreaterThan(v.shares[k], k == 0 ? 0.00004 : 0.0002, "\(what): \(v.shares)")
        }
        let view = try TestSupport.openInChromium(dir + "/report/view.html", height: 700, colours: ["#d62728", "#777777"], from: 80)
        XCTAssertEqual(view.status, "ok"); XCTAssertEqual(view.consoleErrors, [])
        XCTAssertGreaterThan(view.shares.first ?? 0, 0.0005, "no red path in the view")
        XCTAssertGreaterThan(view.shares.last ?? 0, 0.0002, "no grey reference in the view")
    }

    /// refine's report page draws in Chromium without console errors: the refined path and
    /// the correction over time (blue), the loop closures and the depth consistency before
    /// (red), after (green), the correction per metre walked (brown).
    func testTheRefineReportDrawsInChromium() throws {
        let dir = TestSupport.temporaryDirectory("refinepage")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "200", "--fps", "5", "--revisit", "--drift", "0.02",
                                                 "--width", "128", "--height", "96", "--seed", "4").status, 0)
        let r = try TestSupport.depthpose("refine", dir + "/scan", "--out", dir + "/refine")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("poses corrected"), r.stdout)
        let v = try TestSupport.openInChromium(dir + "/refine/report.html", height: 3000, colours: ["#1f77b4", "#d62728", "#2ca02c", "#8c564b"])
        XCTAssertEqual(v.status, "ok"); XCTAssertEqual(v.consoleErrors, [])
        XCTAssertEqual(v.shares.count, 4)
        for (k, what) in ["refined path and correction", "loop closures and consistency before", "consistency after", "correction per metre"].enumerated() where k < v.shares.count {
            XCTAssertGreaterThan(v.shares[k], 0.00005, "\(what): \(v.shares)")
        }
    }

    /// Zoom on a report's plot as a person does: drag a box over the "APE over time" figure
    /// with the mouse, and the axes become that box (the values under the corners); a
    /// double click brings back the whole figure and its round ticks.
    func testDraggingABoxZoomsAPlotAndDoubleClickResets() throws {
        let dir = TestSupport.temporaryDirectory("zoom")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "200", "--drift", "0.02", "--width", "64", "--height", "48").status, 0)
        XCTAssertEqual(try TestSupport.depthpose("trajectory", dir + "/scan", "--out", dir + "/report", "--reference", dir + "/scan/groundtruth.tum").status, 0)
        let page = dir + "/report/report.html"
        // scroll the figure to the top of the window, then: its axes' ranges, the chart area
        // in window pixels, and the values at 25% and 75% of that area
        let find = """
        eval:(() => { const c = Object.values(Chart.instances).find(c => String(c.options.plugins.title.text).startsWith('APE'));
          c.canvas.scrollIntoView(); const r = c.canvas.getBoundingClientRect(), a = c.chartArea, x = c.scales.x, y = c.scales.y;
          return [x.min, x.max, y.min, y.max, r.left + a.left, r.top + a.top, a.right - a.left, a.bottom - a.top,
                  x.getValueForPixel(a.left + 0.25 * (a.right - a.left)), x.getValueForPixel(a.left + 0.75 * (a.right - a.left)),
                  y.getValueForPixel(a.top + 0.75 * (a.bottom - a.top)), y.getValueForPixel(a.top + 0.25 * (a.bottom - a.top))]; })()
        """
        let ranges = "eval:(() => { const c = Object.values(Chart.instances).find(c => String(c.options.plugins.title.text).startsWith('APE')); return [c.scales.x.min, c.scales.x.max, c.scales.y.min, c.scales.y.max, c.scales.x.ticks.map(t => t.label).join(' ')]; })()"
        let before = try TestSupport.drive(page, height: 900, [find])
        XCTAssertEqual(before.status, "ok")
        let f = try XCTUnwrap(before.results.first as? [Double])
        XCTAssertEqual(f.count, 12)
        let (left, top, width, height) = (f[4], f[5], f[6], f[7])
        XCTAssertGreaterThan(width, 100); XCTAssertGreaterThan(height, 100)
        let drag = "drag:\(left + 0.25 * width),\(top + 0.25 * height),\(left + 0.75 * width),\(top + 0.75 * height)"
        let after = try TestSupport.drive(page, height: 900, [find, ranges, drag, ranges, "dblclick:\(left + width / 2),\(top + height / 2)", ranges])
        XCTAssertEqual(after.consoleErrors, [])
        let whole = try XCTUnwrap(after.results[1] as? [Any]), zoomed = try XCTUnwrap(after.results[3] as? [Any]), reset = try XCTUnwrap(after.results[5] as? [Any])
        let w = whole.prefix(4).compactMap { $0 as? Double }, z = zoomed.prefix(4).compactMap { $0 as? Double }, b = reset.prefix(4).compactMap { $0 as? Double }
        XCTAssertEqual(w, Array(f[0 ..< 4]))
        // the box's corners, to a pixel's worth of each axis
        for (k, expected) in [f[8], f[9], f[10], f[11]].enumerated() {
            let pixel = (k < 2 ? (f[1] - f[0]) / width : (f[3] - f[2]) / height)
            XCTAssertEqual(z[k], expected, accuracy: 1.5 * pixel, "axis limit \(k) after the drag: \(z) against \(f)")
        }
        XCTAssertNotEqual(zoomed[4] as? String, whole[4] as? String, "the ticks did not change with the zoom")
        XCTAssertEqual(b, w, "the double click did not bring the whole figure back")
        XCTAssertEqual(reset[4] as? String, whole[4] as? String)
    }

    func testEvalPlotsDrawInChromium() throws {
        let chromium = try TestSupport.requiredProgram("chromium", package: "chromium")
        let python = try TestSupport.peerPython(needs: "numpy and imageio", check: "import numpy, imageio")
        let dir = TestSupport.temporaryDirectory("plot")
        let check = """
        import sys, numpy, imageio.v3 as iio
        img = iio.imread(sys.argv[1])[:, :, :3].astype(int)
        def share(rgb): return float((numpy.abs(img - numpy.array(rgb)).sum(axis=2) < 30).mean())
        drawn = float((img.sum(axis=2) < 3 * 245).mean())
        print(drawn, share((0xd6, 0x27, 0x28)), share((0x1f, 0x77, 0xb4)), share((0x77, 0x77, 0x77)))
        """
        for (name, args) in [("ape", ["ape", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "-as"]),
                             ("rpe", ["rpe", "kitti", data + "KITTI_00_gt.txt", data + "KITTI_00_ORB.txt", "-d", "100", "-u", "m", "-r", "angle_deg", "--plot_mode", "xz"])] {
            let page = dir + "/\(name).html", shot = dir + "/\(name).png"
            let r = try TestSupport.depthpose(["eval"] + args + ["--save_plot", page])
            XCTAssertEqual(r.status, 0, r.stderr)
            let c = try TestSupport.run(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
                                                    "--window-size=1000,2600", "--virtual-time-budget=5000", "--screenshot=" + shot, "file://" + page], timeout: 120)
            let console = c.stderr.split(separator: "\n").filter { $0.contains("CONSOLE") }
            XCTAssertEqual(console.filter { $0.contains("Uncaught") || $0.contains("Error") }, [], name)
            XCTAssertTrue(FileManager.default.fileExists(atPath: shot), "\(name): \(c.stderr.suffix(500))")
            let p = try TestSupport.run(python, ["-c", check, shot])
            XCTAssertEqual(p.status, 0, p.stderr)
            let v = p.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            XCTAssertEqual(v.count, 4)
            guard v.count == 4 else { continue }
            XCTAssertGreaterThan(v[0], 0.02, "\(name): the page is nearly blank")
            XCTAssertGreaterThan(v[1], 0.00005, "\(name): no rmse line")
            XCTAssertGreaterThan(v[2], 0.0005, "\(name): no error curve or bars")
            XCTAssertGreaterThan(v[3], 0.0002, "\(name): no dashed reference path")
        }
        // res and traj draw on the same route.
        for (name, args) in [("res", ["res", data + "results/ape_fr1xyz_rgbdslam_trans_part_sim3.zip", data + "results/rpe_kitti00_ORB_angle_deg_raw_100m.zip", "--no_warnings"]),
                             ("traj", ["traj", "tum", data + "freiburg1_xyz-rgbdslam.txt", "--ref", data + "freiburg1_xyz-groundtruth.txt", "-as"])] {
            let page = dir + "/\(name).html", shot = dir + "/\(name).png"
            let r = try TestSupport.depthpose(args + ["--save_plot", page])
            XCTAssertEqual(r.status, 0, r.stderr)
            let c = try TestSupport.run(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
                                                    "--window-size=1000,2000", "--virtual-time-budget=5000", "--screenshot=" + shot, "file://" + page], timeout: 120)
            XCTAssertEqual(c.stderr.split(separator: "\n").filter { $0.contains("CONSOLE") && ($0.contains("Uncaught") || $0.contains("Error")) }, [], name)
            let p = try TestSupport.run(python, ["-c", check, shot])
            let v = p.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            XCTAssertGreaterThan(v.first ?? 0, 0.02, "\(name): the page is nearly blank")
            XCTAssertGreaterThan(v.count == 4 ? v[2] : 0, 0.0005, "\(name): no first series drawn")
        }
        // SVG, PDF and PNG: the same figures drawn by cairo; the PNG is checked like the screenshot.
        for ext in ["svg", "pdf", "png"] {
            let r = try TestSupport.depthpose("eval", "ape", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "-as", "--save_plot", dir + "/x." + ext)
            XCTAssertEqual(r.status, 0, r.stderr)
            let head = Array(TestSupport.read(dir + "/x." + ext).prefix(64))
            switch ext {
            case "png": XCTAssertEqual(Array(head.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
            case "pdf": XCTAssertEqual(Array(head.prefix(4)), Array("%PDF".utf8))
            default: XCTAssertTrue(String(decoding: head, as: UTF8.self).hasPrefix("<?xml") && TestSupport.readText(dir + "/x.svg").contains("<svg"))
            }
        }
        let p = try TestSupport.run(python, ["-c", check, dir + "/x.png"])
        let v = p.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(v.count, 4, p.stderr)
        if v.count == 4 {
            XCTAssertGreaterThan(v[0], 0.02, "cairo PNG nearly blank")
            XCTAssertGreaterThan(v[1], 0.00005, "cairo PNG: no rmse line")
            XCTAssertGreaterThan(v[2], 0.0005, "cairo PNG: no error curve or bars")
            XCTAssertGreaterThan(v[3], 0.0001, "cairo PNG: no dashed reference path")
        }
        let gif = try TestSupport.depthpose("eval", "ape", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "--save_plot", dir + "/x.gif")
        XCTAssertEqual(gif.status, 64)
        XCTAssertTrue(gif.stderr.contains(".gif is not supported"), gif.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/x.gif"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(".") }, [])
    }
}
