import FoundationEssentials
import Glibc

/// The tray icon, drawn: a ring that fills clockwise from twelve o'clock as the phase passes,
/// in the phase's colour, over a faint track, and a dot in the middle in that colour (larger
/// while idle), so the state shows from the first second of a phase. Pixels are
/// ARGB32 in network byte order, as StatusNotifierItem's `IconPixmap` carries them.
enum TrayIcon {
  /// The sizes hosts ask for: panels of 16–48 px.
  static let sizes = [16, 22, 24, 32, 48]

  /// `size`×`size` pixels for `progress` (0…1) in `colour` (ARGB).
  static func pixels(size: Int, progress: Double, colour: UInt32, idle: Bool) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: size * size * 4)
    let centre = Double(size) / 2
    let outer = centre - 0.5
    let inner = outer - max(2, Double(size) / 5.5)
    let dot = Double(size) / (idle ? 5 : 7)
    let track: UInt32 = (colour & 0x00FF_FFFF) | 0x5000_0000
    // 4×4 samples a pixel: the ring's edges are smooth at 16 px.
    let samples = 4
    for y in 0..<size {
      for x in 0..<size {
        var ring = 0
        var filled = 0
        var centreDot = 0
        for sy in 0..<samples {
          for sx in 0..<samples {
            let px = Double(x) + (Double(sx) + 0.5) / Double(samples) - centre
            let py = Double(y) + (Double(sy) + 0.5) / Double(samples) - centre
            let distance = (px * px + py * py).squareRoot()
            if distance <= dot { centreDot += 1 }
            guard distance <= outer, distance >= inner else { continue }
            ring += 1
            // The angle from twelve o'clock, clockwise, as a share of the turn.
            var turn = atan2(px, -py) / (2 * Double.pi)
            if turn < 0 { turn += 1 }
            if turn < progress { filled += 1 }
          }
        }
        let total = Double(samples * samples)
        let colourShare = Double(filled + centreDot) / total
        let trackShare = Double(ring - filled) / total
        let pixel = blend(colour, colourShare, track, trackShare)
        let offset = (y * size + x) * 4
        bytes[offset] = UInt8(pixel >> 24)
        bytes[offset + 1] = UInt8((pixel >> 16) & 0xFF)
        bytes[offset + 2] = UInt8((pixel >> 8) & 0xFF)
        bytes[offset + 3] = UInt8(pixel & 0xFF)
      }
    }
    return bytes
  }

  /// `a` covering `shareA` of the pixel and `b` covering `shareB`, over transparency.
  private static func blend(_ a: UInt32, _ shareA: Double, _ b: UInt32, _ shareB: Double)
    -> UInt32
  {
    func channel(_ colour: UInt32, _ shift: UInt32) -> Double {
      Double((colour >> shift) & 0xFF) / 255
    }
    let alphaA = channel(a, 24) * shareA
    let alphaB = channel(b, 24) * shareB
    let alpha = min(1, alphaA + alphaB)
    guard alpha > 0 else { return 0 }
    var pixel = UInt32((alpha * 255).rounded()) << 24
    for shift: UInt32 in [16, 8, 0] {
      let value = (channel(a, shift) * alphaA + channel(b, shift) * alphaB) / (alphaA + alphaB)
      pixel |= UInt32((min(1, value) * 255).rounded()) << shift
    }
    return pixel
  }
}
