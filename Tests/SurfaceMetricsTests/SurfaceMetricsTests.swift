import XCTest
@testable import SurfaceMetrics
