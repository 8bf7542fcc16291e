import Foundation

/// Wake-ups of a running process, read from /proc: a wake-up is a context switch (voluntary
/// or not) of any of its threads; a process asleep in epoll or poll has none.
public enum ContextSwitches {
  /// voluntary + nonvoluntary context switches of each thread of `pid`, by thread id, or only
  /// the voluntary ones: a thread that went to sleep and was woken, as opposed to one
  /// preempted by whatever else the machine runs. Read with FileHandle: Foundation's
  /// String(contentsOfFile:) stops short on /proc files.
  public static func perThread(of pid: Int32, voluntaryOnly: Bool = false) -> [String: Int] {
    let tasks = "/proc/\(pid)/task"
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
    var counts: [String: Int] = [:]
    for thread in threads {
      guard let handle = FileHandle(forReadingAtPath: "\(tasks)/\(thread)/status"),
        let data = try? handle.readToEnd()
      else { continue }
      try? handle.close()
      var total = 0
      for line in String(decoding: data, as: UTF8.self).split(separator: "\n")
      where line.hasPrefix("voluntary_ctxt_switches:")
        || (!voluntaryOnly && line.hasPrefix("nonvoluntary_ctxt_switches:"))
      {
        total += Int(line.split(separator: "\t").last ?? "") ?? 0
      }
      counts[thread] = total
    }
    return counts
  }

  /// Context switches over all threads of `pid` during `seconds`, sampled every 100 ms so
  /// that threads which start and end in the window count too (from their first sample), and
  /// the number of distinct threads seen.
  public static func during(seconds: TimeInterval, of pid: Int32, voluntaryOnly: Bool = false)
    -> (switches: Int, threads: Int)
  {
    during(seconds: seconds, of: [pid], voluntaryOnly: voluntaryOnly)[0]
  }

  /// `during(seconds:of:)` for several processes over the same window.
  public static func during(
    seconds: TimeInterval, of pids: [Int32], voluntaryOnly: Bool = false
  ) -> [(switches: Int, threads: Int)] {
    var first = pids.map { perThread(of: $0, voluntaryOnly: voluntaryOnly) }
    var last = first
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      Thread.sleep(forTimeInterval: 0.1)
      for index in pids.indices {
        for (thread, count) in perThread(of: pids[index], voluntaryOnly: voluntaryOnly) {
          if first[index][thread] == nil { first[index][thread] = 0 }
          last[index][thread] = count
        }
      }
    }
    return pids.indices.map { index in
      (last[index].reduce(0) { $0 + $1.value - (first[index][$1.key] ?? 0) }, last[index].count)
    }
  }
}
