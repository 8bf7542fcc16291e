import FoundationEssentials
import Glibc
import GrowCLI

exit(MainActor.assumeIsolated { runGrow(Array(CommandLine.arguments.dropFirst())) })
