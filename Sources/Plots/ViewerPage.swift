import Foundation
import FileIO
import Geometry

/// A 3-D view of a point cloud or a mesh with the camera path, as one HTML file that works
/// offline: Debian's three.js (`libjs-three`, r111, MIT) and its OrbitControls inlined at
/// write time, the geometry as base64 typed arrays. Decimated to what a browser draws
/// smoothly (`maxPoints`, `maxTriangles`: an even stride beyond them, said on the page);
/// colours where the scan has them, else height (`CloudPreview.heightColours`); the path as a red line with a camera
/// frustum every `frustumEvery`-th pose. Drag to orbit, wheel to zoom, right-drag to pan.
///
/// While the view moves (a drag or a wheel turn) it draws an even share of what it shows —
/// at most `movingPoints` points or `movingTriangles` triangles — and everything again once
/// it stops: the level-of-detail rule of point-cloud viewers (Potree's point budget,
/// CloudCompare's decimation while moving). Measured in headless Chromium's software WebGL,
/// 100,000 points take 50–80 ms a frame and 25,000 take 17–33 ms (docs/performance.md). The
/// geometry is stored so that its first part *is* that share (`movingFirst`): one draw range,
/// no second copy.
///
/// The page reports on itself for tests and curious users: `<body data-status="ok">` once
/// drawn (or the error); `window.viewer.frames` the `requestAnimationFrame` time of each draw
/// and how much it drew (points, or triangle indices), `window.viewer.moving` whether the
/// view is moving (scripts/bench-view.sh and the tests read them).
public enum ViewerPage {
    public static let threePath = "/usr/share/javascript/three/three.min.js"
    public static let orbitPath = "/usr/share/javascript/three/examples/js/controls/OrbitControls.js"
    public static let maxPoints = 100_000, maxTriangles = 400_000, maxFrustums = 60
    public static let movingPoints = 25_000, movingTriangles = 20_000

    /// An order of `count` items whose first part is every `step`-th item (0, step, 2·step, …)
    /// and the rest after it, each part in the original order; and the first part's length.
    static func movingFirst(count: Int, step: Int) -> (order: [Int], first: Int) {
        guard step > 1 else { return (Array(0 ..< count), count) }
        let first = Array(Swift.stride(from: 0, to: count, by: step))
        var order = first
        order.reserveCapacity(count)
        for i in 0 ..< count where i % step != 0 { order.append(i) }
        return (order, first.count)
    }

    /// `positions`, `colours` (or nil), `normals` (meshes, or nil) per vertex; `triangles`
    /// (three indices each) for a mesh, nil for a cloud; `cameras`: the path's poses
    /// (camera-to-world, ARKit camera axes: looking along −z, y up); `reference`: a path to
    /// compare with (grey, dashed), or empty; `up`: 1 for +y, 2 for +z. With no positions the
    /// page shows the paths alone (a trajectory report's view).
    public static func write(title: String, positions: [Float], colours: [UInt8]?, normals: [Float]?, triangles: [UInt32]?,
                             cameras: [Pose], reference: [Vec3] = [], up: Int, to file: String) throws {
        guard let three = FileManager.default.contents(atPath: threePath), let orbit = FileManager.default.contents(atPath: orbitPath) else {
            throw PlotError.missingLibrary("\(threePath) or \(orbitPath) not found: install Debian's libjs-three (scripts/setup.sh does)")
        }
        var notes: [String] = []
        let n = positions.count / 3
        var keptPositions = positions, keptColours = colours, keptNormals = normals, keptTriangles = triangles
        // What is shown: an even stride of the items (triangles or points) beyond the cap, in
        // the order whose first part is what a moving view draws.
        func shown(_ count: Int, cap: Int, moving: Int, _ what: String) -> (order: [Int], first: Int) {
            let step = max(1, (count + cap - 1) / cap)
            let kept = Array(Swift.stride(from: 0, to: count, by: step))
            if step > 1 { notes.append("every \(step)th of \(count) \(what) shown") }
            let share = movingFirst(count: kept.count, step: (kept.count + moving - 1) / moving)
            if share.first < kept.count { notes.append("\(share.first) while moving") }
            return (share.order.map { kept[$0] }, share.first)
        }
        func pick<T>(_ a: [T], _ items: [Int]) -> [T] {
            var out: [T] = []
            out.reserveCapacity(3 * items.count)
            for k in items { out += a[3 * k ..< 3 * k + 3] }
            return out
        }
        let movingCount: Int  // points, or triangle indices
        if let t = triangles {
            let (order, first) = shown(t.count / 3, cap: maxTriangles, moving: movingTriangles, "triangles")
            keptTriangles = pick(t, order)
            movingCount = 3 * first
        } else {
            let (order, first) = shown(n, cap: maxPoints, moving: movingPoints, "points")
            keptPositions = pick(positions, order); keptColours = colours.map { pick($0, order) }; keptNormals = normals.map { pick($0, order) }
            movingCount = first
        }
        let frustumStep = max(1, (cameras.count + maxFrustums - 1) / maxFrustums)
        let frustums = Swift.stride(from: 0, to: cameras.count, by: frustumStep).map { cameras[$0] }
        func base64<T>(_ a: [T]) -> String { a.withUnsafeBytes { Data($0).base64EncodedString() } }
        var data: [String: Any] = ["positions": base64(keptPositions), "up": up, "moving": movingCount]
        data["colours"] = base64(keptColours ?? CloudPreview.heightColours(keptPositions, up: up))
        data["normals"] = keptNormals.map { base64($0) as Any } ?? NSNull()
        data["triangles"] = keptTriangles.map { base64($0) as Any } ?? NSNull()
        var path: [Double] = []
        for c in cameras { path += [c.translation.x, c.translation.y, c.translation.z] }
        data["path"] = path
        data["reference"] = reference.flatMap { [$0.x, $0.y, $0.z] }
        data["frustums"] = frustums.map { c -> [Double] in
            let t = c.translation, r = c.rotation
            return [t.x, t.y, t.z, r.r0.x, r.r0.y, r.r0.z, r.r1.x, r.r1.y, r.r1.z, r.r2.x, r.r2.y, r.r2.z]
        }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: data, options: [.sortedKeys]), as: UTF8.self)  // same bytes every run
        let what = triangles != nil ? "\(keptTriangles!.count / 3) triangles" : "\(keptPositions.count / 3) points"
        let info = ((n > 0 ? [what] : []) + ["\(cameras.count) camera poses, a frustum every \(frustumStep)"] + notes).joined(separator: "; ")
        let legend = "path red, start green" + (reference.isEmpty ? "" : ", reference grey dashed")
        let page = """
        <!doctype html><html><head><meta charset="utf-8"><title>\(HTMLPlots.escape(title))</title>
        <style>html,body{margin:0;height:100%;overflow:hidden;font:13px sans-serif;background:#fff}
        #info{position:absolute;top:8px;left:8px;background:rgba(255,255,255,.85);padding:4px 8px;border-radius:4px}</style>
        </head><body data-status="loading"><div id="info"><b>\(HTMLPlots.escape(title))</b><br>\(HTMLPlots.escape(info))<br>
        drag: orbit · wheel: zoom · right-drag: pan · \(legend)</div>
        <script>\(String(decoding: three, as: UTF8.self))</script>
        <script>\(String(decoding: orbit, as: UTF8.self))</script>
        <script>
        window.onerror = function (m) { document.body.dataset.status = 'error: ' + m; };
        (function () {
          var d = \(json);
          function bytes(b64) { var s = atob(b64), u = new Uint8Array(s.length); for (var i = 0; i < s.length; i++) u[i] = s.charCodeAt(i); return u.buffer; }
          var up = d.up, pos = new Float32Array(bytes(d.positions));
          var geometry = new THREE.BufferGeometry();
          geometry.setAttribute('position', new THREE.BufferAttribute(pos, 3));
          var box = pos.length ? new THREE.Box3().setFromBufferAttribute(geometry.attributes.position) : new THREE.Box3().setFromArray(d.path.concat(d.reference));
          geometry.setAttribute('color', new THREE.BufferAttribute(new Uint8Array(bytes(d.colours)), 3, true));
          var scene = new THREE.Scene(), object;
          if (d.triangles) {
            geometry.setIndex(new THREE.BufferAttribute(new Uint32Array(bytes(d.triangles)), 1));
            if (d.normals) geometry.setAttribute('normal', new THREE.BufferAttribute(new Float32Array(bytes(d.normals)), 3));
            else geometry.computeVertexNormals();
            object = new THREE.Mesh(geometry, new THREE.MeshLambertMaterial({ vertexColors: THREE.VertexColors, side: THREE.DoubleSide }));
            scene.add(new THREE.AmbientLight(0xffffff, .55));
            var light = new THREE.DirectionalLight(0xffffff, .6); light.position.set(1, 2, 3); scene.add(light);
          } else {
            object = new THREE.Points(geometry, new THREE.PointsMaterial({ size: 2, sizeAttenuation: false, vertexColors: THREE.VertexColors }));
          }
          if (pos.length) scene.add(object);
          if (d.reference.length >= 6) {
            var ref = new THREE.BufferGeometry();
            ref.setAttribute('position', new THREE.BufferAttribute(new Float32Array(d.reference), 3));
            var refLine = new THREE.Line(ref, new THREE.LineDashedMaterial({ color: 0x777777, dashSize: .05, gapSize: .04 }));
            refLine.computeLineDistances(); scene.add(refLine);
          }
          // the path, its start, and a frustum (10 cm deep, 4:3) every few poses
          var path = new THREE.BufferGeometry();
          path.setAttribute('position', new THREE.BufferAttribute(new Float32Array(d.path), 3));
          scene.add(new THREE.Line(path, new THREE.LineBasicMaterial({ color: 0xd62728 })));
          if (d.path.length >= 3) {
            var start = new THREE.Mesh(new THREE.SphereGeometry(.03, 12, 8), new THREE.MeshBasicMaterial({ color: 0x2ca02c }));
            start.position.set(d.path[0], d.path[1], d.path[2]); scene.add(start);
          }
          var lines = [];
          d.frustums.forEach(function (f) {
            var c = [f[0], f[1], f[2]], r = f.slice(3);
            function world(x, y, z) { return [c[0] + r[0] * x + r[1] * y + r[2] * z, c[1] + r[3] * x + r[4] * y + r[5] * z, c[2] + r[6] * x + r[7] * y + r[8] * z]; }
            var k = [world(-.067, .05, -.1), world(.067, .05, -.1), world(.067, -.05, -.1), world(-.067, -.05, -.1)];
            for (var j = 0; j < 4; j++) { lines.push.apply(lines, c.concat(k[j])); lines.push.apply(lines, k[j].concat(k[(j + 1) % 4])); }
          });
          var fg = new THREE.BufferGeometry();
          fg.setAttribute('position', new THREE.BufferAttribute(new Float32Array(lines), 3));
          scene.add(new THREE.LineSegments(fg, new THREE.LineBasicMaterial({ color: 0x555555 })));

          var renderer = new THREE.WebGLRenderer({ antialias: false });
          renderer.setPixelRatio(window.devicePixelRatio || 1);
          renderer.setSize(window.innerWidth, window.innerHeight);
          renderer.setClearColor(0xffffff);
          document.body.appendChild(renderer.domElement);
          var centre = box.getCenter(new THREE.Vector3()), radius = Math.max(.1, box.getSize(new THREE.Vector3()).length() / 2);
          var camera = new THREE.PerspectiveCamera(50, window.innerWidth / window.innerHeight, radius / 1000, radius * 100);
          camera.up.set(0, 0, 0); camera.up.setComponent(up, 1);
          var away = new THREE.Vector3(-.6, 0, 0); away.setComponent(up, .8); away.setComponent(up === 1 ? 2 : 1, up === 1 ? .7 : -.7);
          camera.position.copy(centre).add(away.normalize().multiplyScalar(radius * 2.2));
          var controls = new THREE.OrbitControls(camera, renderer.domElement);
          controls.target.copy(centre); controls.update();
          // One draw per animation frame at most; while the view moves, only the first
          // d.moving points (indices) — an even share of them — then all once it stops.
          // viewer.frames: [time, points or indices drawn] of the last 1,000 draws
          var viewer = window.viewer = { frames: [], moving: false, pending: false };
          function frame(t) {
            viewer.pending = false;
            geometry.setDrawRange(0, viewer.moving ? d.moving : Infinity);
            renderer.render(scene, camera);
            viewer.frames.push([t, viewer.moving ? d.moving : (d.triangles ? geometry.index.count : pos.length / 3)]);
            if (viewer.frames.length > 1000) viewer.frames.shift();
          }
          function request() { if (!viewer.pending) { viewer.pending = true; requestAnimationFrame(frame); } }
          // at rest 150 ms after the last drag or wheel turn (a turn of the wheel is a start
          // and an end of its own: a spun wheel stays one movement)
          var rest = null;
          controls.addEventListener('change', request);
          controls.addEventListener('start', function () { viewer.moving = true; clearTimeout(rest); });
          controls.addEventListener('end', function () { clearTimeout(rest); rest = setTimeout(function () { viewer.moving = false; request(); }, 150); });
          window.addEventListener('resize', function () {
            camera.aspect = window.innerWidth / window.innerHeight; camera.updateProjectionMatrix();
            renderer.setSize(window.innerWidth, window.innerHeight); request();
          });
          frame(performance.now());
          if (document.body.dataset.status === 'loading') document.body.dataset.status = 'ok';
        })();
        </script></body></html>
        """
        try AtomicOutput.write(page, to: file)
    }
}
