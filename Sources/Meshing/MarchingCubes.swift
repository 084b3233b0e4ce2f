/// The marching-cubes case table, derived here from the cube's geometry rather than copied:
/// for each of the 256 inside/outside patterns of a cube's corners, the triangles (as cube
/// edges) of the surface that separates inside corners (value < 0) from outside ones.
///
/// How a case is triangulated: on each face, walking its corners counter-clockwise as seen
/// from outside the cube, the surface crosses the face on a segment from the edge where the
/// walk leaves an inside run of corners back to the edge where it entered that run — so on
/// a face with two diagonal inside corners (the ambiguous face) the inside corners are kept
/// apart, always. Each crossed edge is left by one face's segment and entered by its
/// neighbour face's, so the segments chain into closed loops, each fanned into triangles.
/// Because the choice on a face depends only on that face's four corners, the two cubes
/// sharing a face cut it the same way, and the surface has no cracks between cubes (the
/// classic table's face ambiguity; tested on random fields). The triangles' winding puts
/// their right-hand normal on the outside (positive, free-space) side.
///
/// Corner `i` sits at (i & 1, i >> 1 & 1, i >> 2 & 1); edge `e` runs from corner
/// `edges[e].from` along axis `edges[e].axis` (`from` is its lower corner).
public enum MarchingCubes {
    public struct Edge: Sendable { public let from: Int, to: Int, axis: Int }

    public static let edges: [Edge] = {
        var e: [Edge] = []
        for axis in 0..<3 {
            let bit = 1 << axis
            for c in 0..<8 where c & bit == 0 { e.append(Edge(from: c, to: c | bit, axis: axis)) }
        }
        return e
    }()

    /// Each case's triangles, three edge indices each, flattened; `offsets[case] ..<
    /// offsets[case + 1]` is a case's slice.
    public static let (triangles, offsets): ([UInt8], [Int]) = build()

    /// Corner `i`'s offset from the cube's lowest corner.
    static let corners = (0..<8).map { SIMD3<Int>($0 & 1, $0 >> 1 & 1, $0 >> 2 & 1) }

    static func corner(_ i: Int) -> SIMD3<Double> { SIMD3<Double>(corners[i]) }

    static func edgeIndex(_ a: Int, _ b: Int) -> Int {
        edges.firstIndex { ($0.from == a && $0.to == b) || ($0.from == b && $0.to == a) }!
    }

    /// The six faces as corner cycles, counter-clockwise seen from outside the cube.
    static let faces: [[Int]] = {
        var faces: [[Int]] = []
        for axis in 0..<3 {
            let bit = 1 << axis, (a, b) = ((axis + 1) % 3, (axis + 2) % 3)
            for side in 0..<2 {
                let base = side * bit
                // a cycle over the other two axes
                var cycle = [base, base | 1 << a, base | 1 << a | 1 << b, base | 1 << b]
                var outward = SIMD3<Double>(); outward[axis] = side == 0 ? -1 : 1
                let p = cycle.map(corner)
                let n = cross(p[1] - p[0], p[2] - p[1])
                if (n * outward).sum() < 0 { cycle.reverse() }
                faces.append(cycle)
            }
        }
        return faces
    }()

    static func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }

    /// The loops of case `inside` (bit i: corner i inside), as edge cycles.
    static func loops(_ inside: Int) -> [[Int]] {
        var next = [Int](repeating: -1, count: 12)
        func isIn(_ c: Int) -> Bool { inside >> c & 1 == 1 }
        for f in faces {
            // crossings in counter-clockwise order: (edge, entering)
            var crossings: [(edge: Int, entering: Bool)] = []
            for k in 0..<4 {
                let a = f[k], b = f[(k + 1) % 4]
                if isIn(a) != isIn(b) { crossings.append((edgeIndex(a, b), isIn(b))) }
            }
            guard !crossings.isEmpty else { continue }
            // start at an entering crossing; pairs (entering, leaving) bound inside runs
            let s = crossings.firstIndex { $0.entering }!
            let ordered = Array(crossings[s...] + crossings[..<s])
            for p in stride(from: 0, to: ordered.count, by: 2) {
                let enter = ordered[p].edge, leave = ordered[p + 1].edge
                precondition(next[leave] == -1, "marching cubes: an edge left twice")
                next[leave] = enter
            }
        }
        var seen = [Bool](repeating: false, count: 12), result: [[Int]] = []
        for e in 0..<12 where next[e] >= 0 && !seen[e] {
            var loop: [Int] = [], at = e
            while !seen[at] { seen[at] = true; loop.append(at); at = next[at] }
            result.append(loop)
        }
        return result
    }

    static func build() -> ([UInt8], [Int]) {
        func midpoint(_ e: Int) -> SIMD3<Double> { (corner(edges[e].from) + corner(edges[e].to)) / 2 }
        // Whether the loops as chained wind with the outside on the right-hand normal's side:
        // settled on corner 0 alone inside, whose outside lies towards (1, 1, 1).
        let probe = loops(1)[0]
        let n = cross(midpoint(probe[1]) - midpoint(probe[0]), midpoint(probe[2]) - midpoint(probe[0]))
        let reverse = (n * SIMD3(1, 1, 1)).sum() < 0
        var triangles: [UInt8] = [], offsets = [0]
        for c in 0..<256 {
            for var loop in loops(c) {
                if reverse { loop.reverse() }
                let s = fanStart(loop)
                loop = Array(loop[s...] + loop[..<s])
                for k in 1 ..< loop.count - 1 { triangles += [UInt8(loop[0]), UInt8(loop[k]), UInt8(loop[k + 1])] }
            }
            offsets.append(triangles.count)
        }
        return (triangles, offsets)
    }

    /// Where to start a loop's fan so that no diagonal joins two vertices on one cube face:
    /// the neighbouring cube across that face could draw the same chord, and the edge would
    /// then have four triangles. Every loop of every case has such a start (asserted).
    static func fanStart(_ loop: [Int]) -> Int {
        func faceMask(_ e: Int) -> Int {
            var m = 0
            for (f, cycle) in faces.enumerated() where cycle.contains(edges[e].from) && cycle.contains(edges[e].to) { m |= 1 << f }
            return m
        }
        let n = loop.count
        for s in 0..<n {
            var ok = true
            for k in 2 ..< max(2, n - 1) where faceMask(loop[s]) & faceMask(loop[(s + k) % n]) != 0 { ok = false }
            if ok { return s }
        }
        preconditionFailure("marching cubes: a loop with no crack-free fan")
    }
}
