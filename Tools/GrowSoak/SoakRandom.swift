import Foundation

/// A small seeded generator (SplitMix64), so that a soak run is reproduced by its seed: the
/// same faults of the same kinds at the same offsets (the machine's timing still varies).
public struct SoakRandom: RandomNumberGenerator, Sendable {
  private var state: UInt64

  public init(seed: UInt64) { state = seed }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A duration in `range` seconds.
  public mutating func seconds(_ range: ClosedRange<Double>) -> Double {
    Double.random(in: range, using: &self)
  }

  /// A duration in `range` seconds, spread evenly over its orders of magnitude: as many
  /// between 1 and 3 s as between 10 and 30 s, so long stalls occur without dominating the
  /// run's time.
  public mutating func logUniformSeconds(_ range: ClosedRange<Double>) -> Double {
    exp(Double.random(in: log(range.lowerBound)...log(range.upperBound), using: &self))
  }

  public mutating func chance(_ probability: Double) -> Bool {
    Double.random(in: 0..<1, using: &self) < probability
  }
}
