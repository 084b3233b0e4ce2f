import XCTest
import Foundation
import TestSupport

/// The notebook a user starts from (`Notebooks-data/depthpose-tour.ipynb`) runs from top to
/// bottom, so it cannot rot: executed by nbclient with the tests' venv as its kernel against
/// the built binary, every cell without an error, and its two figures drawn.
final class NotebookTests: XCTestCase {
    func testTheNotebookRunsFromTopToBottom() throws {
        let python = try TestSupport.peerPython(needs: "nbclient, ipykernel, pandas, matplotlib and open3d",
                                                check: "import nbclient, nbformat, ipykernel, pandas, matplotlib, open3d")
        let out = TestSupport.temporaryDirectory("notebook")
        let notebooks = TestSupport.repositoryRoot + "/Notebooks-data"
        let execute = """
        import sys, nbformat, nbclient
        nb = nbformat.read(sys.argv[1], as_version=4)
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
        code = [c for c in nb.cells if c.cell_type == "code"]
        errors = [o for c in code for o in c.outputs if o.output_type == "error"]
        assert not errors, errors
        figures = sum(1 for c in code for o in c.outputs if o.output_type == "display_data" and "image/png" in o.data)
        print(len(code), figures)
        """
        let r = try TestSupport.run(python, ["-c", execute, notebooks + "/depthpose-tour.ipynb", notebooks],
                                    environment: ["DEPTHPOSE": TestSupport.productsDirectory + "/depthpose", "DEPTHPOSE_NOTEBOOK_OUT": out],
                                    timeout: 900)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "7 2")
        for f in ["sample/run.json", "sample/cloud.ply", "sample/mesh.ply", "sample/trajectory/report.json", "nightly/summary.json"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/" + f), f)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: notebooks + "/results"), "the notebook writes where it is told")
    }
}
