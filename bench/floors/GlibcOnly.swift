// The floor for a Swift program's memory and start-up (make bench, issue 17): the Swift
// runtime and Glibc, nothing else. Prints one line; with --stay it then sleeps until killed,
// so its resident memory can be read.
import Glibc

print("floor")
if CommandLine.arguments.contains("--stay") {
  while true { pause() }
}
