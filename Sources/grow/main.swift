import Foundation
import GrowCLI

exit(MainActor.assumeIsolated { runGrow(Array(CommandLine.arguments.dropFirst())) })
